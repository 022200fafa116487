//! A rate level's own block (see `docs/open-loop.md`): the schedule lag (actual send minus
//! intended send), latencies counted from the intended send (what a user waiting in a queue
//! sees), the offered and achieved rates, a saturation verdict with its evidence, and the
//! metrics per time window that replays and schedules report.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

use super::histogram::{Histogram, Stats};
use crate::record::RequestRecord;
use crate::workload::arrivals::{Arrival, LoadShape};

/// Achieved rate within this share of the offered one: the level held its rate.
pub const RATE_HELD_SHARE: f64 = 0.05;

/// Why a rate level was stopped early: requests waiting (in flight or not yet sent) kept
/// growing, so the server could not keep up with the rate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Saturation {
    /// When the level was stopped (s since its start).
    pub at_s: f64,
    /// Growth of excess pending requests over the last window (requests/s).
    pub pending_slope_per_s: f64,
    /// Excess pending requests at the window's start and end: pending less what the offered
    /// rate keeps pending at the level's unloaded latency.
    pub pending_first: f64,
    pub pending_last: f64,
    /// Median schedule lag plus TTFT of the requests started in the window's first and last
    /// seconds (ms): how the wait grew.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait_first_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait_last_ms: Option<f64>,
    /// Every slot of `--max-in-flight` was taken: requests waited in the client, not the
    /// server.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub at_cap: bool,
}

/// The rates of a rate level.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RateSummary {
    /// How the offered rate changed over time.
    pub shape: LoadShape,
    pub arrival: Arrival,
    /// Requests/s the schedule offered (intended sends over their span).
    pub offered_rps: f64,
    /// Requests/s actually sent (sends over their span).
    pub achieved_rps: f64,
    /// The most requests in flight at once, when capped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_in_flight: Option<u32>,
    /// Set when the level was stopped early for saturation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub saturated: Option<Saturation>,
}

/// One time window of a rate level (by intended send time).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimeWindow {
    /// Start and end (s since the level's start).
    pub start_s: f64,
    pub end_s: f64,
    /// Requests meant to be sent in the window, and its rate.
    pub offered: u64,
    pub offered_rps: f64,
    /// Successful and failed requests among them.
    pub ok: u64,
    pub errors: u64,
    /// Percentiles over the window's successful requests (ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_to_first_token: Option<WindowStats>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_latency: Option<WindowStats>,
    /// Schedule lag of the window's requests (ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule_lag: Option<WindowStats>,
}

/// p50 / p90 / p99 of one metric in a window (ms).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct WindowStats {
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
}

impl WindowStats {
    fn of(h: &Histogram) -> Option<WindowStats> {
        h.stats().map(|s| WindowStats {
            p50: s.p50,
            p90: s.p90,
            p99: s.p99,
        })
    }
}

/// The open-loop block of a level summary; empty for a closed-loop level.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct OpenLoopMetrics {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<RateSummary>,
    /// Actual send minus intended send (ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule_lag: Option<Stats>,
    /// First token minus the intended send (ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_to_first_token_from_intended: Option<Stats>,
    /// Last token (or body) minus the intended send (ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_latency_from_intended: Option<Stats>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub windows: Vec<TimeWindow>,
}

#[derive(Debug, Clone)]
struct WindowAcc {
    offered: u64,
    ok: u64,
    errors: u64,
    ttft: Histogram,
    e2e: Histogram,
    lag: Histogram,
}

impl WindowAcc {
    fn new() -> Self {
        WindowAcc {
            offered: 0,
            ok: 0,
            errors: 0,
            ttft: Histogram::latency(),
            e2e: Histogram::latency(),
            lag: Histogram::latency(),
        }
    }
}

/// Folds a rate level's records into its open-loop block.
#[derive(Debug, Clone)]
pub struct OpenLoopTally {
    lag: Histogram,
    ttft: Histogram,
    e2e: Histogram,
    window_ns: u64,
    windows: BTreeMap<u64, WindowAcc>,
    intended: (u64, u64, u64),
    sent: (u64, u64, u64),
}

impl Default for OpenLoopTally {
    fn default() -> Self {
        OpenLoopTally::new(std::time::Duration::from_secs(10))
    }
}

fn span((first, last, n): (u64, u64, u64)) -> f64 {
    if n < 2 || last <= first {
        return 0.0;
    }
    (n - 1) as f64 / ((last - first) as f64 / 1e9)
}

fn extend((first, last, n): &mut (u64, u64, u64), t: u64) {
    if *n == 0 {
        *first = t;
        *last = t;
    }
    *first = (*first).min(t);
    *last = (*last).max(t);
    *n += 1;
}

impl OpenLoopTally {
    /// A tally with time windows of `window`.
    pub fn new(window: std::time::Duration) -> Self {
        OpenLoopTally {
            lag: Histogram::latency(),
            ttft: Histogram::latency(),
            e2e: Histogram::latency(),
            window_ns: (window.as_nanos() as u64).max(1),
            windows: BTreeMap::new(),
            intended: (0, 0, 0),
            sent: (0, 0, 0),
        }
    }

    /// Folds one counted record; records without an intended time are not open-loop.
    pub fn add(&mut self, rec: &RequestRecord) {
        let Some(intended) = rec.detail.intended_ns else {
            return;
        };
        let lag = rec.start_ns.saturating_sub(intended);
        self.lag.record_ns(lag);
        extend(&mut self.intended, intended);
        extend(&mut self.sent, rec.start_ns);
        let w = self
            .windows
            .entry(intended / self.window_ns)
            .or_insert_with(WindowAcc::new);
        w.offered += 1;
        w.lag.record_ns(lag);
        if rec.error.is_some() {
            w.errors += 1;
            return;
        }
        w.ok += 1;
        if let Some(t) = rec.first_token_ns {
            self.ttft.record_ns(t.saturating_sub(intended));
            w.ttft.record_ns(t.saturating_sub(rec.start_ns));
        }
        if let Some(t) = rec.last_token_ns {
            self.e2e.record_ns(t.saturating_sub(intended));
            w.e2e.record_ns(t.saturating_sub(rec.start_ns));
        }
    }

    /// Requests/s offered and achieved so far.
    pub fn rates(&self) -> (f64, f64) {
        (span(self.intended), span(self.sent))
    }

    /// The block (without the rate summary, which the engine adds: it knows the schedule).
    pub fn finish(&self) -> OpenLoopMetrics {
        let w_s = self.window_ns as f64 / 1e9;
        OpenLoopMetrics {
            rate: None,
            schedule_lag: self.lag.stats(),
            time_to_first_token_from_intended: self.ttft.stats(),
            request_latency_from_intended: self.e2e.stats(),
            windows: self
                .windows
                .iter()
                .map(|(k, w)| TimeWindow {
                    start_s: *k as f64 * w_s,
                    end_s: (*k + 1) as f64 * w_s,
                    offered: w.offered,
                    offered_rps: w.offered as f64 / w_s,
                    ok: w.ok,
                    errors: w.errors,
                    time_to_first_token: WindowStats::of(&w.ttft),
                    request_latency: WindowStats::of(&w.e2e),
                    schedule_lag: WindowStats::of(&w.lag),
                })
                .collect(),
        }
    }
}

/// Whether the achieved rate is within [`RATE_HELD_SHARE`] of the offered one.
pub fn rate_held(offered_rps: f64, achieved_rps: f64) -> bool {
    offered_rps > 0.0 && (achieved_rps - offered_rps).abs() <= RATE_HELD_SHARE * offered_rps
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::RequestDetail;

    fn rec(index: u64, intended_ms: u64, start_ms: u64, e2e_ms: u64, ok: bool) -> RequestRecord {
        let ms = 1_000_000;
        let mut r =
            crate::metrics::fixtures::record(index, start_ms * ms, (start_ms + e2e_ms) * ms);
        r.first_token_ns = ok.then_some((start_ms + 10) * ms);
        if !ok {
            r.error = Some(crate::record::RequestError {
                kind: crate::record::ErrorKind::HttpStatus,
                status: Some(503),
                message: "full".into(),
            });
            r.last_token_ns = None;
        }
        r.detail = RequestDetail {
            intended_ns: Some(intended_ms * ms),
            ..Default::default()
        };
        r
    }

    #[test]
    fn lag_latency_from_intended_rates_and_windows() {
        let mut t = OpenLoopTally::new(std::time::Duration::from_secs(1));
        // intended every 100 ms; sends late by 0, 50, 0 ms; the fourth fails in window 1
        t.add(&rec(0, 0, 0, 200, true));
        t.add(&rec(1, 100, 150, 200, true));
        t.add(&rec(2, 200, 200, 200, true));
        t.add(&rec(3, 1100, 1100, 5, false));
        let m = t.finish();
        let lag = m.schedule_lag.unwrap();
        assert_eq!((lag.count, lag.max, lag.min), (4, 50.0, 0.0));
        let e2e = m.request_latency_from_intended.unwrap();
        // 200, 250 and 200 ms from the intended send; 200 each from the actual one
        assert_eq!((e2e.count, e2e.max), (3, 250.0));
        assert_eq!(m.windows.len(), 2);
        assert_eq!((m.windows[0].offered, m.windows[0].ok), (3, 3));
        assert_eq!((m.windows[1].offered, m.windows[1].errors), (1, 1));
        assert_eq!(m.windows[0].request_latency.unwrap().p99, 200.0);
        // 4 intended over 1.1 s, 4 sent over 1.1 s
        let (offered, achieved) = t.rates();
        assert!((offered - 3.0 / 1.1).abs() < 1e-9 && (achieved - 3.0 / 1.1).abs() < 1e-9);
        assert!(rate_held(10.0, 9.6) && !rate_held(10.0, 9.4) && !rate_held(0.0, 0.0));
    }
}
