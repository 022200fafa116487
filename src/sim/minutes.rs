//! What the simulator's endpoint did each wall-clock minute, as SageMaker publishes it to
//! CloudWatch: requests completed (`Invocations`), their mean time from arrival to last token
//! (`ModelLatency`, µs) and the share of the minute its GPU was stepping (`GPUUtilization`).
//! The scheduler thread writes it; the CloudWatch API (`sim::cloudwatch`) reads it.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::SystemTime;

/// One minute's totals.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Minute {
    pub invocations: u64,
    /// Arrival to last token, summed, microseconds.
    pub latency_us: f64,
    /// Real time spent in steps, nanoseconds.
    pub busy_ns: u64,
}

/// Minutes by their start, seconds since the epoch.
#[derive(Debug, Default)]
pub struct MinuteHistory {
    minutes: Mutex<BTreeMap<u64, Minute>>,
}

/// The start of the minute `t` falls in, seconds since the epoch.
fn minute_of(t: SystemTime) -> u64 {
    let s = t
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    s / 60 * 60
}

impl MinuteHistory {
    fn with(&self, t: SystemTime, f: impl FnOnce(&mut Minute)) {
        let mut m = self.minutes.lock().unwrap_or_else(|e| e.into_inner());
        f(m.entry(minute_of(t)).or_default());
    }

    /// A request finished at `t` after `latency_ns` since it arrived.
    pub fn finished(&self, t: SystemTime, latency_ns: u64) {
        self.with(t, |m| {
            m.invocations += 1;
            m.latency_us += latency_ns as f64 / 1e3;
        });
    }

    /// A step of `ns` real nanoseconds ended at `t`.
    pub fn stepped(&self, t: SystemTime, ns: u64) {
        self.with(t, |m| m.busy_ns += ns);
    }

    /// The minutes starting in [from, to) (seconds since the epoch), in order.
    #[cfg_attr(not(feature = "sagemaker"), allow(dead_code))]
    pub fn between(&self, from: u64, to: u64) -> Vec<(u64, Minute)> {
        let m = self.minutes.lock().unwrap_or_else(|e| e.into_inner());
        m.range(from..to).map(|(k, v)| (*k, *v)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn events_land_in_their_minute() {
        let h = MinuteHistory::default();
        let at = |s: u64| SystemTime::UNIX_EPOCH + Duration::from_secs(s);
        h.finished(at(61), 2_000_000);
        h.finished(at(119), 4_000_000);
        h.stepped(at(119), 30_000_000_000);
        h.finished(at(120), 1_000);
        assert_eq!(
            h.between(60, 120),
            [(
                60,
                Minute {
                    invocations: 2,
                    latency_us: 6_000.0,
                    busy_ns: 30_000_000_000
                }
            )]
        );
        assert_eq!(h.between(0, 600).len(), 2);
        assert!(h.between(180, 600).is_empty());
    }
}
