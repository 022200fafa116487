//! Scheduling hints for the client's few latency-critical threads (the first-token lane, the
//! open-loop dispatcher): they sleep almost all the time, and when they wake they must run
//! at once rather than after the busy workers' time slices.

/// Asks the kernel for a short time slice for the calling thread (Linux 6.12+: a waking
/// thread with a short slice preempts the running one sooner). Unprivileged; ignored where
/// the kernel does not know it.
pub fn short_slice() {
    #[cfg(target_os = "linux")]
    {
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
            nice: 0,
            priority: 0,
            runtime: 100_000,
            deadline: 0,
            period: 0,
            util_min: 0,
            util_max: 0,
        };
        // SAFETY: sched_setattr reads `attr`, which lives across the call.
        unsafe { libc::syscall(libc::SYS_sched_setattr, 0, &attr as *const SchedAttr, 0) };
    }
}
