//! Scheduling hints for the client's few latency-critical threads (the first-token lane, the
//! open-loop dispatcher): they sleep almost all the time, and when they wake they must run
//! at once rather than after the busy workers' time slices.

/// Asks the kernel for a short time slice for the calling thread (Linux 6.12+: a waking
/// thread with a short slice preempts the running one sooner). Unprivileged; ignored where
/// the kernel does not know it. For the runtime's workers.
pub fn short_slice() {
    set_attr(None);
}

/// For the threads that read the clock for a measurement as they wake (the first-token lane,
/// the open-loop dispatcher): a short time slice, and a priority above the client's own
/// workers and other processes (nice -10) where the process may raise it (root or
/// `CAP_SYS_NICE`; Linux). Without that permission the thread keeps the default priority
/// with the short slice. Returns true when the priority was raised.
pub fn latency_critical() -> bool {
    set_attr(Some(RAISED_NICE)) || {
        set_attr(None);
        false
    }
}

/// The nice value [`latency_critical`] asks for: ahead of the workers (nice 0) in the
/// kernel's fair scheduler by a weight of about 9 to 1, well short of real-time priority.
const RAISED_NICE: i32 = -10;

/// `sched_setattr` with the normal policy, `nice` (`None`: the thread's own, so a user's
/// `nice rightsize ...` is kept), and a 100 µs slice; true when the kernel took it.
#[allow(unused_variables)]
fn set_attr(nice: Option<i32>) -> bool {
    #[cfg(target_os = "linux")]
    {
        let nice = match nice {
            Some(n) => n,
            None => match this_thread_nice() {
                Some(n) => n,
                None => return false,
            },
        };
        #[repr(C)]
        struct SchedAttr {
            size: u32,
            policy: u32,
            flags: u64,
            nice: i32,
            priority: u32,
            runtime: u64,
            deadline: u64,
            period: u64,
            util_min: u32,
            util_max: u32,
        }
        let attr = SchedAttr {
            size: std::mem::size_of::<SchedAttr>() as u32,
            policy: 0,
            flags: 0,
            nice,
            priority: 0,
            runtime: 100_000,
            deadline: 0,
            period: 0,
            util_min: 0,
            util_max: 0,
        };
        // SAFETY: sched_setattr reads `attr`, which lives across the call.
        let r = unsafe { libc::syscall(libc::SYS_sched_setattr, 0, &attr as *const SchedAttr, 0) };
        r == 0
    }
    #[cfg(not(target_os = "linux"))]
    false
}

/// The calling thread's nice value (`None` if it cannot be read).
#[cfg(target_os = "linux")]
fn this_thread_nice() -> Option<i32> {
    // SAFETY: gettid takes no arguments; getpriority reads the thread's nice value, and errno
    // tells a nice of -1 from a failure.
    unsafe {
        let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
        *libc::__errno_location() = 0;
        let n = libc::getpriority(libc::PRIO_PROCESS, tid);
        (n != -1 || *libc::__errno_location() == 0).then_some(n)
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::this_thread_nice;

    #[test]
    fn a_latency_critical_thread_is_raised_exactly_when_it_says_so() {
        let (before, raised, after) = std::thread::spawn(|| {
            let before = this_thread_nice().unwrap();
            let raised = super::latency_critical();
            (before, raised, this_thread_nice().unwrap())
        })
        .join()
        .unwrap();
        assert_eq!(after, if raised { super::RAISED_NICE } else { before });
    }

    #[test]
    fn a_short_slice_keeps_the_thread_s_priority() {
        for niced in [0, 3] {
            let (before, after) = std::thread::spawn(move || {
                // SAFETY: raising the calling thread's own nice value is always allowed.
                unsafe {
                    let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
                    let n = this_thread_nice().unwrap();
                    libc::setpriority(libc::PRIO_PROCESS, tid, n + niced);
                }
                let before = this_thread_nice().unwrap();
                super::short_slice();
                (before, this_thread_nice().unwrap())
            })
            .join()
            .unwrap();
            assert_eq!(after, before, "niced by {niced}");
        }
    }
}
