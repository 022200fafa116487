//! The client-lag probe: how late a periodic task wakes while a level runs. When the client
//! machine is saturated, every timestamp it takes is late too, so the figure tells whether the
//! client distorted the measurement.

use crate::clock::now_ns;
use hdrhistogram::Histogram;
use std::time::Duration;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// How often the probe wakes.
pub const PROBE_PERIOD: Duration = Duration::from_millis(20);

/// A running probe; stop it to get the lateness histogram (microseconds).
pub struct LagProbe {
    stop: CancellationToken,
    /// `None`: no probe runs ([`LagProbe::off`]).
    handle: Option<JoinHandle<Histogram<u64>>>,
}

impl LagProbe {
    /// Starts the probe on the current runtime.
    pub fn start() -> Self {
        let stop = CancellationToken::new();
        let token = stop.clone();
        let handle = tokio::spawn(async move {
            let mut hist = Histogram::<u64>::new(3).expect("3 significant figures is valid");
            let period_ns = PROBE_PERIOD.as_nanos() as u64;
            let mut deadline = now_ns() + period_ns;
            let mut next = tokio::time::Instant::now() + PROBE_PERIOD;
            loop {
                tokio::select! {
                    _ = token.cancelled() => break,
                    _ = tokio::time::sleep_until(next) => {}
                }
                let now = now_ns();
                hist.saturating_record(now.saturating_sub(deadline) / 1_000);
                // schedule from now, so one long stall counts once rather than as a burst
                deadline = now + period_ns;
                next = tokio::time::Instant::now() + PROBE_PERIOD;
            }
            hist
        });
        LagProbe {
            stop,
            handle: Some(handle),
        }
    }

    /// No probe: a process that times no request (a distributed run's controller, whose
    /// level's lag is its workers') does not wake 50 times a second to measure its own.
    pub fn off() -> Self {
        LagProbe {
            stop: CancellationToken::new(),
            handle: None,
        }
    }

    /// Stops the probe and returns (p99, max) wake-up lateness in milliseconds.
    pub async fn stop(self) -> (f64, f64) {
        self.stop.cancel();
        let Some(handle) = self.handle else {
            return (0.0, 0.0);
        };
        match handle.await {
            Ok(h) if !h.is_empty() => {
                (h.value_at_quantile(0.99) as f64 / 1e3, h.max() as f64 / 1e3)
            }
            _ => (0.0, 0.0),
        }
    }
}

/// Wake-up lateness (p99) above which timing is suspect, whatever the latencies measured.
pub const LAG_WARN_FLOOR_MS: f64 = 2.0;

/// A warning when client lag is large next to what is being measured: p99 timer lateness
/// or slot-to-send delay over max(2 ms, 5 % of the median TTFT (or e2e when not streaming)).
pub fn lag_warning(timer_p99_ms: f64, slot_to_send_p99_ms: f64, typical_ms: f64) -> Option<String> {
    let limit = LAG_WARN_FLOOR_MS.max(0.05 * typical_ms);
    let worst = timer_p99_ms.max(slot_to_send_p99_ms);
    (worst > limit).then(|| {
        format!(
            "client lag: p99 {worst:.1} ms (timer {timer_p99_ms:.1} ms, slot-to-send \
             {slot_to_send_p99_ms:.1} ms) exceeds {limit:.1} ms; the client is a bottleneck \
             and latencies at this level are inflated"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lag_warning_table() {
        assert_eq!(lag_warning(0.5, 0.1, 100.0), None);
        assert_eq!(lag_warning(1.9, 0.0, 10.0), None); // under the 2 ms floor
        assert!(lag_warning(3.0, 0.0, 10.0).is_some());
        assert_eq!(lag_warning(4.0, 0.0, 200.0), None); // under 5 % of 200 ms
        assert_eq!(
            lag_warning(1.0, 12.0, 200.0).unwrap(),
            "client lag: p99 12.0 ms (timer 1.0 ms, slot-to-send 12.0 ms) exceeds 10.0 ms; \
             the client is a bottleneck and latencies at this level are inflated"
        );
    }

    #[tokio::test]
    async fn idle_probe_is_not_late() {
        let p = LagProbe::start();
        tokio::time::sleep(Duration::from_millis(60)).await;
        let (p99, max) = p.stop().await;
        assert!(p99 < 20.0 && max >= p99, "{p99} {max}");
    }
}
