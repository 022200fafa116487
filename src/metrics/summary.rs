//! What one finished level measured: [`LevelSummary`], serialized in the shape of an AIPerf
//! export (`profile_export_aiperf.json`) so AIPerf readers find their metric objects, plus
//! rightsize's own fields (concurrency, partial, errors by kind, achieved concurrency, ...).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::histogram::{Stats, UNIT_MS, UNIT_TOKENS, UNIT_TOKENS_PER_SEC_PER_USER};
use crate::record::sla::{SlaCheck, Verdict};
use crate::record::ErrorKind;
use crate::record::Interval;

/// A level is held when its achieved concurrency over the steady window is at least this
/// share of the target.
pub const HELD_SHARE: f64 = 0.95;

/// A single-valued AIPerf metric object: `{"unit": "tokens/sec", "avg": 2782.3}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Scalar {
    /// Unit of `avg`: `"tokens/sec"`, `"requests/sec"`, `"requests"`, `"sec"`.
    pub unit: String,
    /// The value.
    pub avg: f64,
    /// Its 95 % interval where one is computed (the sustained throughput's); a side is
    /// `null` when the level had too few requests to bound it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci95: Option<Interval>,
}

impl Scalar {
    /// A scalar with its unit.
    pub fn new(unit: &str, avg: f64) -> Self {
        Scalar {
            unit: unit.to_string(),
            avg,
            ci95: None,
        }
    }
}

/// How late the client itself was, measured by the engine (a timer probe and the slot-to-send
/// delay). Large values mean the numbers describe the client, not the endpoint.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClientLag {
    /// p99 of how late a periodic timer fired (ms).
    pub timer_late_p99_ms: f64,
    /// Worst timer lateness (ms).
    pub timer_late_max_ms: f64,
    /// p99 of the delay between a slot becoming free and the request being sent (ms).
    pub slot_to_send_p99_ms: f64,
    /// A human-readable warning when the lag is large enough to distort results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
}

/// What the caller knows about a level that the records do not say.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LevelMeta {
    /// 0-based position of the level in the run.
    pub index: u32,
    /// Wall-clock start, RFC 3339.
    pub started_at: String,
    /// Wall-clock end, RFC 3339.
    pub ended_at: String,
    /// The level was interrupted before all its requests finished.
    pub partial: bool,
    /// Client lag measured by the engine, when it ran its probe.
    pub lag: Option<ClientLag>,
    /// Requests per level the run asked for (before raising to twice the concurrency).
    pub requests_asked: u64,
    /// How adaptive sampling went, when the level could take more requests.
    pub sampling: Option<AdaptiveSampling>,
}

/// Why a level stopped taking more requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SamplingStop {
    /// Every SLA verdict was decided (pass or fail).
    Decided,
    /// `--max-requests-per-level` was reached with a verdict still uncertain.
    Cap,
    /// The level did not hold its concurrency: more requests would not help.
    NotHeld,
    /// The run was stopped.
    Interrupted,
}

/// Adaptive sampling of one level: batches of requests at the same concurrency, without a
/// restart, until the SLA verdicts are decided or the cap is reached.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct AdaptiveSampling {
    /// Requests per batch (the level's first batch).
    pub batch: u64,
    /// Batches run (1: the level was decided by its first batch).
    pub batches: u32,
    /// The most requests the level could run.
    pub cap: u64,
    pub stopped: SamplingStop,
}

/// One measurement of a level: a stretch of requests run in one go (its batches), and the
/// level's verdict on every request measured so far when it ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Measurement {
    /// Its position among the run's measurements (0-based): the order the plan ran them in.
    pub order: u32,
    /// Batches it ran.
    pub batches: u32,
    /// Requests it ran (planned, every batch).
    pub requests: u64,
    /// It was a screen: its first batch only, to steer the search (`docs/search.md`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub screen: bool,
    /// The level's verdict on every SLA, over all its requests so far.
    pub verdict: Verdict,
    /// Whether the level, over all its requests so far, held its concurrency.
    pub held: bool,
    /// observed / limit for each SLA then, in the order the SLAs were given (`null`: it could
    /// not be measured, which counts as beyond any limit).
    pub ratios: Vec<Option<f64>>,
}

fn held_default() -> bool {
    true
}

/// The interval over which every concurrency slot was busy (seconds since level start).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SteadyWindow {
    /// Start (s): when the `concurrency`-th request (in start order) was sent.
    pub start_s: f64,
    /// End (s): the earliest end among the workers' last requests.
    pub end_s: f64,
}

impl SteadyWindow {
    /// Length of the window (s).
    pub fn duration_s(&self) -> f64 {
        self.end_s - self.start_s
    }
}

/// Where the output token counts of successful requests came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TokenSourceCounts {
    /// Counted from the server's `usage.completion_tokens`.
    pub server: u64,
    /// Counted by the client's tokenizer.
    pub client: u64,
}

/// What an AIPerf `error_summary` entry says about an error.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorDetails {
    /// HTTP status, when there was one.
    #[serde(default)]
    pub code: Option<u16>,
    /// The error class (`ErrorKind` name).
    #[serde(rename = "type")]
    pub kind: String,
    /// The first message seen for this class and code.
    pub message: String,
}

/// One AIPerf `error_summary` entry: errors grouped by kind and HTTP status.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorSummaryEntry {
    pub error_details: ErrorDetails,
    pub count: u64,
}

/// The summary of one level. Latency stats are in ms, token stats in tokens; every metric
/// object carries its unit. `None` metrics are left out of the JSON (AIPerf: "any may be
/// absent"), e.g. TTFT when not streaming.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LevelSummary {
    /// 0-based position of the level in the run.
    pub index: u32,
    /// Target concurrency (number of closed-loop workers).
    pub concurrency: u32,
    /// Requests the level sent (planned), adaptive-sampling batches included.
    pub planned_requests: u64,
    /// Requests per level the run asked for; a level runs at least twice its concurrency
    /// (0 in files written before levels were raised).
    #[serde(default)]
    pub requests_asked: u64,
    /// The level held its concurrency: achieved concurrency over the steady window at least
    /// 95 % of the target. A level not held is never an answer, a knee or an ideal balance.
    /// (Files and imports that cannot say count as held.)
    #[serde(default = "held_default")]
    pub held: bool,
    /// Warmup requests sent at the level's concurrency before it (before each measurement of
    /// a level measured again), not counted; `0`: a cold start, every stream sent at once.
    /// Closed-loop levels only; absent for open-loop levels and in files written before levels
    /// started warm by default (those were cold unless `run.json`'s `warmup` says otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup: Option<u32>,
    /// Adaptive sampling, when the plan could extend the level.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampling: Option<AdaptiveSampling>,
    /// Each time the plan measured this concurrency, in the run's order. The SLA search pools:
    /// a concurrency measured again keeps its earlier requests and adds the new ones, so the
    /// level has one verdict on all of them (`docs/search.md`, "Measuring a level again").
    /// Empty in files written before pooling, and for plans that do not pool.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub measurements: Vec<Measurement>,
    /// What the server's own `/metrics` said while the level ran (`docs/telemetry.md`);
    /// absent when it exposes nothing rightsize knows, and in files from before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<crate::record::ServerSummary>,
    /// What the server's prefix cache held as the level began (`--prefix-cache`): `keep`
    /// (what the levels before it cached), `reset` (emptied before the level and its
    /// warm-up), or `reset_refused` / `reset_unsupported` (a reset was asked and not done:
    /// the cache was kept). Absent in files from before, and in imported levels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix_cache: Option<crate::record::PrefixCacheState>,
    /// Each SLA of the run (the error-rate limit included) judged on this level.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub slas: Vec<SlaCheck>,
    /// Every SLA together: `pass`, `uncertain` or `fail`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Verdict>,
    /// Wall-clock start and end, RFC 3339.
    pub start_time: String,
    pub end_time: String,
    /// The level was interrupted; its numbers cover only what finished.
    pub partial: bool,

    // AIPerf metric objects (successful requests only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_to_first_token: Option<Stats>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inter_token_latency: Option<Stats>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inter_chunk_latency: Option<Stats>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_latency: Option<Stats>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_sequence_length: Option<Stats>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_sequence_length: Option<Stats>,
    /// Per request: (output tokens - 1) / (e2e - TTFT) = 1 / inter-token latency,
    /// tokens/sec/user (streamed requests of at least two tokens).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_token_throughput_per_user: Option<Stats>,
    /// Output tokens of successful requests / `benchmark_duration` (tokens/sec).
    pub output_token_throughput: Scalar,
    /// Output tokens produced inside `steady_window` / its length (tokens/sec).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_token_throughput_steady: Option<Scalar>,
    /// Output tokens/sec by the response-time law: achieved concurrency × output tokens /
    /// summed latency, over the requests started after `steady_window` opened (at least
    /// `concurrency` of them); what the knee reads (see [`LevelSummary::sustained_tps`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_token_throughput_sustained: Option<Scalar>,
    /// Successful requests / `benchmark_duration` (requests/sec).
    pub request_throughput: Scalar,
    /// Successful requests (requests).
    pub request_count: Scalar,
    /// Failed requests, not counting `cancelled` (requests).
    pub error_request_count: Scalar,
    /// First request start to last request end (sec).
    pub benchmark_duration: Scalar,
    /// Output tokens of successful requests (tokens).
    pub total_osl: Scalar,
    /// Input tokens of successful requests (tokens).
    pub total_isl: Scalar,
    /// Requests per second that met every latency SLA (a failed request is a miss), over
    /// `benchmark_duration`; present when the run has a latency SLA.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub goodput: Option<Scalar>,
    /// AIPerf-style error list, grouped by kind and HTTP status (includes cancelled).
    #[serde(default)]
    pub error_summary: Vec<ErrorSummaryEntry>,

    // rightsize's own fields.
    /// errors / (successes + errors), cancelled requests excluded from both; 0 when nothing
    /// completed.
    pub error_rate: f64,
    /// Failed requests by kind, including `cancelled`.
    #[serde(default)]
    pub errors_by_kind: BTreeMap<ErrorKind, u64>,
    /// Requests stopped by cancellation (not endpoint errors).
    #[serde(default)]
    pub cancelled_count: u64,
    /// The all-slots-busy window; `None` when the level never filled every slot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady_window: Option<SteadyWindow>,
    /// Time-weighted mean number of requests in flight over `steady_window`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub achieved_concurrency: Option<f64>,
    /// Time-weighted mean number of requests in flight over the whole level.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_in_flight: Option<f64>,
    /// Delay from a slot becoming free to its request being sent (ms), all requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slot_to_send: Option<Stats>,
    /// Where output token counts came from (successful requests).
    #[serde(default)]
    pub output_tokens_source: TokenSourceCounts,
    /// Requests retried once on a fresh connection.
    #[serde(default)]
    pub reconnect_count: u64,
    /// Client lag measured by the engine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_lag: Option<ClientLag>,
    /// A distributed level (`--workers`): each worker's share and how far apart they
    /// started (`docs/distributed.md`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workers: Option<super::fleet::FleetLevel>,

    // The workload block (docs/workloads.md): lengths target / client / server, reasoning.
    #[serde(flatten)]
    pub workload: super::lengths::WorkloadMetrics,

    // The open-loop block (docs/open-loop.md): rates, schedule lag, latency from the
    // intended send, saturation, time windows. Empty for closed-loop levels.
    #[serde(flatten)]
    pub open_loop: super::rate::OpenLoopMetrics,
}

/// The distribution metrics of a level by their AIPerf names, with the unit each is recorded
/// in, in the order results, exports and imports list them.
pub const DISTRIBUTIONS: [(&str, &str); 8] = [
    ("time_to_first_token", UNIT_MS),
    ("inter_token_latency", UNIT_MS),
    ("inter_chunk_latency", UNIT_MS),
    ("request_latency", UNIT_MS),
    ("output_sequence_length", UNIT_TOKENS),
    ("input_sequence_length", UNIT_TOKENS),
    (
        "output_token_throughput_per_user",
        UNIT_TOKENS_PER_SEC_PER_USER,
    ),
    ("slot_to_send", UNIT_MS),
];

impl LevelSummary {
    /// Every measurement of it was a search's screen (its first batch only): it steered the
    /// search and was never measured until decided. False for levels without measurements.
    pub fn screened_only(&self) -> bool {
        !self.measurements.is_empty() && self.measurements.iter().all(|m| m.screen)
    }

    /// The distribution named `name` (one of [`DISTRIBUTIONS`]), if it was measured.
    pub fn distribution(&self, name: &str) -> Option<&Stats> {
        match name {
            "time_to_first_token" => self.time_to_first_token.as_ref(),
            "inter_token_latency" => self.inter_token_latency.as_ref(),
            "inter_chunk_latency" => self.inter_chunk_latency.as_ref(),
            "request_latency" => self.request_latency.as_ref(),
            "output_sequence_length" => self.output_sequence_length.as_ref(),
            "input_sequence_length" => self.input_sequence_length.as_ref(),
            "output_token_throughput_per_user" => self.output_token_throughput_per_user.as_ref(),
            "slot_to_send" => self.slot_to_send.as_ref(),
            _ => None,
        }
    }

    /// The level's place on the load axis: its concurrency, or for a rate level its target
    /// rate in hundredths of a request per second (a level whose rate changes over time,
    /// a schedule or a replay, has no single place: 0).
    pub fn load(&self) -> u32 {
        match &self.open_loop.rate {
            None => self.concurrency,
            Some(r) => match r.shape {
                crate::workload::arrivals::LoadShape::Rate { rps } => rps_to_load(rps),
                _ => 0,
            },
        }
    }

    /// Every interval the level carries holds its own estimate: each latency's mean and
    /// percentiles, the sustained throughput, and each SLA check's observed value. `Err`
    /// names the first that does not (`docs/search.md`, "Confidence"). Level files are
    /// checked with it as they are written in debug builds, so the test suite checks every
    /// level it makes.
    pub fn intervals_hold_estimates(&self) -> Result<(), String> {
        let metrics = [
            ("time_to_first_token", &self.time_to_first_token),
            ("inter_token_latency", &self.inter_token_latency),
            ("request_latency", &self.request_latency),
        ];
        for (name, stats) in metrics {
            let Some(st) = stats else { continue };
            let Some(ci) = &st.ci95 else { continue };
            let pairs = [
                ("avg", st.avg, ci.avg),
                ("p50", st.p50, ci.p50),
                ("p90", st.p90, ci.p90),
                ("p95", st.p95, ci.p95),
                ("p99", st.p99, ci.p99),
            ];
            for (stat, v, iv) in pairs {
                if !iv.holds(v) {
                    return Err(format!("{name} {stat} {v} outside its interval {iv:?}"));
                }
            }
        }
        if let Some(Scalar {
            avg,
            ci95: Some(iv),
            ..
        }) = &self.output_token_throughput_sustained
        {
            if !iv.holds(*avg) {
                return Err(format!("sustained throughput {avg} outside {iv:?}"));
            }
        }
        for c in &self.slas {
            if let (Some(o), Some(iv)) = (c.observed, c.ci) {
                if !iv.holds(o) {
                    return Err(format!(
                        "{:?} {} observed {o} outside {iv:?}",
                        c.threshold.metric, c.threshold.stat
                    ));
                }
            }
        }
        Ok(())
    }

    /// Successful requests.
    pub fn ok_count(&self) -> u64 {
        self.request_count.avg as u64
    }

    /// Failed requests, not counting cancelled.
    pub fn error_count(&self) -> u64 {
        self.error_request_count.avg as u64
    }

    /// Output tokens/sec over the whole level.
    pub fn output_tps(&self) -> f64 {
        self.output_token_throughput.avg
    }

    /// Output tokens/sec the level sustained at its load, for the knee: on a held closed
    /// loop, `output_token_throughput_sustained`; else the whole-level figure.
    ///
    /// The whole-level figure (measured tokens over first start to last end) swings with the
    /// level's last moments: past the server's slots the last measured requests share it with
    /// cooldown requests whose tokens it does not count, and with equal answer lengths a few
    /// requests that miss a batch make a round of their own (1,024 requests at 304 on 256
    /// slots read 47k tok/s where 256 and 512 read 57k). The steady-window figure cuts the
    /// same rounds at arbitrary points. Little's law needs neither end: with the load held,
    /// latencies add up to the concurrency times the time.
    pub fn sustained_tps(&self) -> f64 {
        match &self.output_token_throughput_sustained {
            Some(s) if self.held && self.open_loop.rate.is_none() => s.avg,
            _ => self.output_tps(),
        }
    }

    /// The 95 % half-width of [`LevelSummary::sustained_tps`]: infinite when the level had
    /// too few requests to bound it, `None` when no interval was recorded (the whole-level
    /// figure, files from before intervals, imports).
    pub fn sustained_tps_half_width(&self) -> Option<f64> {
        match &self.output_token_throughput_sustained {
            Some(s) if self.held && self.open_loop.rate.is_none() => {
                let ci = s.ci95?;
                Some(match (ci.lo(), ci.hi()) {
                    (Some(lo), Some(hi)) => (hi - lo) / 2.0,
                    _ => f64::INFINITY,
                })
            }
            _ => None,
        }
    }

    /// Successful requests/sec.
    pub fn requests_per_sec(&self) -> f64 {
        self.request_throughput.avg
    }

    /// TTFT percentile `q` (percent, e.g. 95.0) in ms.
    pub fn ttft_p(&self, q: f64) -> Option<f64> {
        self.time_to_first_token.as_ref()?.percentile(q)
    }

    /// Inter-token latency (TPOT) percentile `q` in ms.
    pub fn itl_p(&self, q: f64) -> Option<f64> {
        self.inter_token_latency.as_ref()?.percentile(q)
    }

    /// End-to-end latency percentile `q` in ms.
    pub fn e2e_p(&self, q: f64) -> Option<f64> {
        self.request_latency.as_ref()?.percentile(q)
    }

    /// End-to-end p50 in ms.
    pub fn e2e_p50_ms(&self) -> Option<f64> {
        self.e2e_p(50.0)
    }

    /// End-to-end p99 in ms.
    pub fn e2e_p99_ms(&self) -> Option<f64> {
        self.e2e_p(99.0)
    }

    /// TTFT p95 in ms.
    pub fn ttft_p95_ms(&self) -> Option<f64> {
        self.ttft_p(95.0)
    }
}

/// Load units of a rate level: hundredths of a request per second.
pub const LOAD_PER_RPS: f64 = 100.0;

/// A rate (requests/s) as load units.
pub fn rps_to_load(rps: f64) -> u32 {
    (rps * LOAD_PER_RPS).round().clamp(0.0, u32::MAX as f64) as u32
}

/// Load units of a rate level back to requests/s.
pub fn load_to_rps(load: u32) -> f64 {
    load as f64 / LOAD_PER_RPS
}

/// How a level is named in tables and messages: `c=64`, `2.5 req/s`, or the schedule.
pub fn load_label(level: &LevelSummary) -> String {
    match &level.open_loop.rate {
        None => format!("c={}", level.concurrency),
        Some(r) => r.shape.label(),
    }
}
