//! What a controller and its workers say to each other: JSON over HTTP/1.1, every call but
//! `/healthz` carrying the run's token as `Authorization: Bearer TOKEN`.
//!
//! | call | from | what |
//! |---|---|---|
//! | `GET /healthz` | probes | `ok` (no token) |
//! | `GET /v1/clock` | worker | the controller's monotonic clock, for the offset |
//! | `POST /v1/join` | worker | its index, host and clock samples; answers its place |
//! | `GET /v1/next?worker=P` | worker | the next order (long poll): the run's spec, a share, idle, stop |
//! | `POST /v1/report?worker=P` | worker | readiness, a share's records and status, its end |
//!
//! Each call is a heartbeat: a worker idle between levels polls `next` (which answers `idle`
//! after a few seconds); one running a share reports every [`REPORT_PERIOD`].

use crate::record::RequestRecord;
use crate::workload::WorkloadSpec;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// How often a worker running a share sends its records and status.
pub const REPORT_PERIOD: Duration = Duration::from_millis(250);
/// How long `next` waits for an order before it answers `idle`.
pub const POLL_WAIT: Duration = Duration::from_secs(2);
/// A worker not heard from for this long is lost.
pub const HEARTBEAT_TIMEOUT: Duration = Duration::from_secs(5);
/// The most a report's body may be (a share's records of a quarter second).
pub const MAX_BODY: usize = 64 << 20;

/// One round trip for the clock offset, on the worker's clock around the controller's
/// reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClockSample {
    pub sent_ns: u64,
    pub controller_ns: u64,
    pub received_ns: u64,
}

impl ClockSample {
    /// The controller's clock minus the worker's, and half the round trip (how far off it
    /// may be).
    pub fn offset(&self) -> (i128, u64) {
        let mid = (i128::from(self.sent_ns) + i128::from(self.received_ns)) / 2;
        (
            i128::from(self.controller_ns) - mid,
            self.received_ns.saturating_sub(self.sent_ns) / 2,
        )
    }
}

/// The offset from the fastest round trip (the one the network delayed least).
pub fn best_offset(samples: &[ClockSample]) -> Option<(i128, u64)> {
    samples
        .iter()
        .min_by_key(|s| s.received_ns.saturating_sub(s.sent_ns))
        .map(ClockSample::offset)
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Join {
    /// The worker's index when it has one (`--index`, `JOB_COMPLETION_INDEX`).
    pub index: Option<u32>,
    /// Host name and process id.
    pub host: String,
    /// rightsize's version: a controller refuses a worker of another.
    pub version: String,
    pub clock: Vec<ClockSample>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Joined {
    /// The worker's place in the fleet: it names itself by it in every later call.
    pub place: usize,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Clock {
    pub ns: u64,
}

/// What a worker is told to do next.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "do", rename_all = "snake_case")]
pub enum Order {
    /// The run: the worker builds its client, runs its own pre-flight and reports ready.
    Spec {
        /// Which of the controller's runs this is (a campaign prepares its workers once per
        /// candidate): the worker's `ready` names it, so a late answer to an earlier run's
        /// spec is not taken for this one's.
        #[serde(default)]
        generation: u64,
        /// The endpoint spec as JSON, secrets unmasked (they go only to the run's workers,
        /// over the token-checked connection; API keys stay in each worker's environment).
        endpoint: serde_json::Value,
        workload: Box<WorkloadSpec>,
        timeout_s: f64,
    },
    /// A share of one batch of a level.
    Share(WireShare),
    /// Nothing yet: poll again.
    Idle,
    /// The run is over: exit.
    Stop,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WireShare {
    /// Names the share in the worker's reports.
    pub id: u64,
    pub level: u32,
    pub order: u32,
    pub concurrency: u32,
    pub requests: u32,
    pub warmup: u32,
    pub prompt_base: u64,
    /// When to start, on the worker's own monotonic clock (ns).
    pub start_at_ns: u64,
    /// An open-loop level's share (its schedule and the worker's segment of it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open: Option<Box<crate::engine::fleet::OpenShare>>,
}

/// A request's record as sent: the record and its inter-chunk gaps (which `requests.jsonl`
/// leaves out, and the level's ITL needs).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WireRecord {
    pub record: RequestRecord,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gaps: Vec<u64>,
}

impl WireRecord {
    pub fn of(record: &RequestRecord) -> WireRecord {
        WireRecord {
            gaps: record.chunk_gaps_ns.clone(),
            record: record.clone(),
        }
    }

    pub fn into_record(self) -> RequestRecord {
        let mut r = self.record;
        r.chunk_gaps_ns = self.gaps;
        r
    }
}

/// A worker's report.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Report {
    /// After the run's `Spec` order: the worker's pre-flight passed (`Ok`) or why not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready: Option<Result<(), String>>,
    /// The generation of the `Spec` order `ready` answers.
    #[serde(default)]
    pub ready_for: u64,
    /// The share this report is about.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub share: Option<u64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub records: Vec<WireRecord>,
    #[serde(default)]
    pub in_flight: u64,
    /// Requests the share has sent (an open-loop share's; 0 otherwise).
    #[serde(default)]
    pub sent: u64,
    /// Content chunks the share has received so far (its live token count).
    #[serde(default)]
    pub chunks: u64,
    /// Every measured request of the share has ended (its cooldown requests run on until
    /// the controller says every share's have).
    #[serde(default)]
    pub measured_done: bool,
    /// When the share's first request went out (worker's clock, ns).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_ns: Option<u64>,
    /// The report's number in its share (from 1; 0: none). A report that got no answer is
    /// sent again with its number, so the controller takes its records once even when it
    /// had them and only the answer was lost.
    #[serde(default)]
    pub number: u64,
    /// The share ended (every record is in this report or an earlier one): its timer lag.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub done: Option<ShareLag>,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ShareLag {
    pub timer_late_p99_ms: f64,
    pub timer_late_max_ms: f64,
    /// CPU time the worker process used while the share ran (s).
    #[serde(default)]
    pub cpu_s: f64,
}

#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize)]
pub struct ReportReply {
    /// Stop the share now (the level was cut: an interrupt or a lost worker).
    pub stop: bool,
    /// Every share's measured requests have ended: stop the cooldown requests.
    #[serde(default)]
    pub settle: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fastest_round_trip_gives_the_offset() {
        let samples = [
            // 10 ms round trip, controller read at 1_000_000_000 + 4 ms
            ClockSample {
                sent_ns: 100_000_000,
                controller_ns: 1_004_000_000,
                received_ns: 110_000_000,
            },
            // 2 ms round trip: the controller is 900 ms ahead (mid 101 ms, read 1001 ms)
            ClockSample {
                sent_ns: 100_000_000,
                controller_ns: 1_001_000_000,
                received_ns: 102_000_000,
            },
        ];
        assert_eq!(best_offset(&samples), Some((900_000_000, 1_000_000)));
        assert_eq!(best_offset(&[]), None);
    }

    #[test]
    fn orders_and_records_round_trip() {
        let share = Order::Share(WireShare {
            id: 3,
            level: 1,
            order: 1,
            concurrency: 4,
            requests: 8,
            warmup: 0,
            prompt_base: 16,
            start_at_ns: 99,
            open: None,
        });
        let text = serde_json::to_string(&share).unwrap();
        assert!(text.starts_with(r#"{"do":"share","id":3"#), "{text}");
        let back: Order = serde_json::from_str(&text).unwrap();
        assert!(matches!(back, Order::Share(s) if s.prompt_base == 16));
        let stop: Order = serde_json::from_str(r#"{"do":"stop"}"#).unwrap();
        assert!(matches!(stop, Order::Stop));
    }
}
