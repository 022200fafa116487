//! The open-file limit: every concurrent stream holds a socket (on the client and on the
//! simulator), so a run at high concurrency needs a high soft limit. Both raise it to the
//! hard limit at start. A Unix notion: elsewhere there is nothing to raise or check.

/// File descriptors the process needs beyond its sockets (stdio, log, results, runtime).
const SPARE_FDS: u64 = 64;

/// No open-file limit to raise outside Unix (Windows has none per process worth raising).
#[cfg(not(unix))]
pub fn raise_nofile_limit() -> Option<(u64, u64)> {
    None
}

/// The soft and hard `RLIMIT_NOFILE` after trying to raise the soft limit to the hard one.
#[cfg(unix)]
pub fn raise_nofile_limit() -> Option<(u64, u64)> {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit only read and write the struct we pass.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) != 0 {
            return None;
        }
        if lim.rlim_cur < lim.rlim_max {
            let raised = libc::rlimit {
                rlim_cur: lim.rlim_max,
                rlim_max: lim.rlim_max,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                lim.rlim_cur = lim.rlim_max;
            }
        }
    }
    #[allow(clippy::unnecessary_cast)] // rlim_t is not u64 on every platform
    Some((lim.rlim_cur as u64, lim.rlim_max as u64))
}

/// Open files `concurrency` streams need: a socket each (two when the simulator runs in the
/// same process), plus what the process needs besides.
pub fn nofile_needed(concurrency: u32, in_process_sim: bool) -> u64 {
    let per_stream = if in_process_sim { 2 } else { 1 };
    concurrency as u64 * per_stream + SPARE_FDS
}

/// A warning when `soft` open files cannot hold `concurrency` streams (one socket each, two
/// when the simulator runs in the same process).
pub fn check_nofile(soft: u64, concurrency: u32, in_process_sim: bool) -> Option<String> {
    let need = nofile_needed(concurrency, in_process_sim);
    (soft < need).then(|| {
        format!(
            "open-file limit is {soft} but concurrency {concurrency} needs about {need}; \
             raise it (ulimit -n {need}) or requests will fail to connect"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nofile_checks_table() {
        assert_eq!(check_nofile(1024, 256, false), None);
        assert!(check_nofile(1024, 1024, false).is_some());
        assert_eq!(check_nofile(4096, 1024, true), None);
        assert_eq!(
            check_nofile(1024, 4096, false).unwrap(),
            "open-file limit is 1024 but concurrency 4096 needs about 4160; \
             raise it (ulimit -n 4160) or requests will fail to connect"
        );
    }

    #[test]
    fn raising_reports_limits() {
        let (soft, hard) = raise_nofile_limit().unwrap();
        assert!(soft <= hard && soft > 0);
    }
}
