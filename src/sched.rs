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
/// the open-loop dispatcher): a short time slice, and a priority 10 nice steps above the
/// thread's own (so above the client's workers; a user's `nice -n 5 rightsize` puts the
/// workers at 5 and this thread at -5) where the process may raise it (root or
/// `CAP_SYS_NICE`; Linux). Without that permission the thread keeps its priority with the
/// short slice. Returns true when the priority was raised.
pub fn latency_critical() -> bool {
    set_attr(Some(RAISE)) || {
        set_attr(None);
        false
    }
}

/// How many nice steps [`latency_critical`] raises a thread: ahead of the workers in the
/// kernel's fair scheduler by a weight of about 9 to 1, well short of real-time priority.
const RAISE: i32 = 10;

/// The nice value `raise` steps above `own`, within the kernel's range (-20 at most).
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn raised(own: i32, raise: i32) -> i32 {
    (own - raise).max(-20)
}

/// `sched_setattr` with the normal policy, the thread's own nice raised `raise` steps (`None`:
/// kept as it is, so a user's `nice rightsize ...` holds), and a 100 µs slice; true when the
/// kernel took it.
#[allow(unused_variables)]
fn set_attr(raise: Option<i32>) -> bool {
    #[cfg(target_os = "linux")]
    {
        let Some(own) = this_thread_nice() else {
            return false;
        };
        let nice = raised(own, raise.unwrap_or(0));
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

#[cfg(test)]
mod range_tests {
    #[test]
    fn the_raise_is_relative_and_within_the_kernels_range() {
        // (own nice, steps, wanted)
        let cases = [
            (0, 10, -10),
            (5, 10, -5),
            (19, 10, 9),
            (-15, 10, -20),
            (3, 0, 3),
        ];
        for (own, raise, want) in cases {
            assert_eq!(super::raised(own, raise), want, "{own} raised {raise}");
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::this_thread_nice;

    #[test]
    fn a_latency_critical_thread_is_raised_exactly_when_it_says_so() {
        for niced in [0, 4] {
            let (before, raised, after) = std::thread::spawn(move || {
                nice_this_thread_by(niced);
                let before = this_thread_nice().unwrap();
                let raised = super::latency_critical();
                (before, raised, this_thread_nice().unwrap())
            })
            .join()
            .unwrap();
            let want = if raised {
                super::raised(before, super::RAISE)
            } else {
                before
            };
            assert_eq!(after, want, "niced by {niced}");
        }
    }

    /// Lowers the calling thread's priority by `n` nice steps (always allowed).
    fn nice_this_thread_by(n: i32) {
        // SAFETY: gettid takes no arguments; setpriority changes only this thread's nice.
        unsafe {
            let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
            let own = this_thread_nice().unwrap();
            libc::setpriority(libc::PRIO_PROCESS, tid, own + n);
        }
    }

    #[test]
    fn a_short_slice_keeps_the_thread_s_priority() {
        for niced in [0, 3] {
            let (before, after) = std::thread::spawn(move || {
                nice_this_thread_by(niced);
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
