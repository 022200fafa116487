//! The one clock rightsize measures with: the system-wide monotonic clock, read as nanoseconds.
//!
//! `CLOCK_MONOTONIC` is shared by every process on a Unix machine, so a time stamped by the
//! simulator in one process can be compared with a time read by the client in another. That is
//! what lets tests and benchmarks measure the client's timing error exactly. Elsewhere the
//! clock is `std::time::Instant`'s, counted from the process's first reading.

/// Nanoseconds on the system monotonic clock (arbitrary epoch, never goes backwards).
#[cfg(unix)]
#[inline]
pub fn now_ns() -> u64 {
    read_clock(libc::CLOCK_MONOTONIC)
}

/// One of the system's clocks, in nanoseconds (zero if the call fails, which it cannot for
/// the clocks read here: CLOCK_MONOTONIC and CLOCK_PROCESS_CPUTIME_ID are always available
/// on the platforms rightsize supports).
#[cfg(unix)]
#[inline]
fn read_clock(id: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec.
    unsafe {
        libc::clock_gettime(id, &mut ts);
    }
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Nanoseconds on the monotonic clock `std::time::Instant` reads, counted from the first
/// call in this process (elsewhere than Unix, stamps from another process cannot be
/// compared with it).
#[cfg(not(unix))]
#[inline]
pub fn now_ns() -> u64 {
    static EPOCH: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    EPOCH
        .get_or_init(std::time::Instant::now)
        .elapsed()
        .as_nanos() as u64
}

/// CPU time this process has used so far (every thread), in nanoseconds; 0 where the
/// platform does not say.
#[cfg(unix)]
pub fn process_cpu_ns() -> u64 {
    read_clock(libc::CLOCK_PROCESS_CPUTIME_ID)
}

/// CPU time this process has used so far: not known here.
#[cfg(not(unix))]
pub fn process_cpu_ns() -> u64 {
    0
}

/// Nanoseconds to milliseconds, as a float for reporting.
#[inline]
pub fn ns_to_ms(ns: u64) -> f64 {
    ns as f64 / 1e6
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monotonic_and_close_to_std_instant() {
        let a = now_ns();
        let t = std::time::Instant::now();
        std::thread::sleep(std::time::Duration::from_millis(5));
        let b = now_ns();
        let elapsed = t.elapsed().as_nanos() as u64;
        assert!(b > a);
        // both read CLOCK_MONOTONIC: the two spans agree to well under a millisecond
        assert!(
            (b - a).abs_diff(elapsed) < 1_000_000,
            "{} vs {}",
            b - a,
            elapsed
        );
    }
}
