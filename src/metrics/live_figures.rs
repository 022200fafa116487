//! The running level's latency figures as they stand ([`LiveFigures`], part of each
//! [`super::LevelProgress`] snapshot), folded by [`LiveTally`] from the level's finished,
//! counted requests: TTFT, inter-token and end-to-end latency percentiles, successful
//! requests per second, the latest error, and a small histogram of end-to-end latency.
//!
//! The percentiles are read as the level's own are (`histogram.rs`, [`super::Stats`]): each
//! metric is recorded in an HDR histogram at 1 µs ticks and 3 significant figures, and a
//! percentile `q` is the value at nearest rank `ceil(q * n)` (at least 1), read at the upper
//! edge of its HDR bucket and clamped to the exact `[min, max]`. Each request adds the values
//! the level file counts (its TTFT, its mean inter-token gap `(e2e - TTFT) / (tokens - 1)`,
//! its e2e), so when the level ends the live figures are its final ones. Nothing is kept
//! per request: a snapshot reads three quantiles of each of three HDR histograms and walks
//! the e2e one once for the bars.

use serde::{Deserialize, Serialize};

use super::window::RollingRate;
use crate::endpoint::openai::truncate_chars;
use crate::record::{ErrorKind, RequestRecord};

/// Buckets of the live latency histogram ([`LiveFigures::e2e_histogram`]).
pub const LIVE_BUCKETS: usize = 16;

/// Longest message kept of the latest error, in characters (`...` added when cut).
pub const LIVE_ERROR_CHARS: usize = 200;

/// p50, p95 and p99 of one metric (ms).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Percentiles {
    pub p50: f64,
    pub p95: f64,
    pub p99: f64,
}

/// The latest failure of the running level (by when it ended). A request cut by the run's
/// stop (`cancelled`) is no failure of the endpoint and is not taken here.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LastError {
    pub kind: ErrorKind,
    /// HTTP status, when there was one.
    pub status: Option<u16>,
    /// The request's message as the level file keeps it (never holds headers, credentials
    /// or the URL), control characters made spaces, cut to [`LIVE_ERROR_CHARS`].
    pub message: String,
    /// When it ended (s since the level started).
    pub at_s: f64,
}

/// One bar of the live latency histogram: the successful requests whose e2e latency is
/// above the previous bar's `upper_ms` (the level's minimum for the first bar) and at most
/// this one's.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LatencyBucket {
    pub upper_ms: f64,
    pub count: u64,
}

/// The running level's figures over its finished, counted requests so far (warmup and
/// cooldown left out); latencies are of successful requests only.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct LiveFigures {
    /// Time to first token (ms); `None` until a successful streamed request ended.
    pub ttft_ms: Option<Percentiles>,
    /// Inter-token latency (ms), each request's mean gap `(e2e - TTFT) / (tokens - 1)` as
    /// the level's `inter_token_latency`; `None` until a request with 2 tokens or more.
    pub itl_ms: Option<Percentiles>,
    /// End-to-end latency (ms); `None` until a request succeeded.
    pub e2e_ms: Option<Percentiles>,
    /// Successful requests per second, by when they ended, over the same rolling window as
    /// the token rate (the level's `request_throughput` counts the same requests).
    pub requests_per_sec: f64,
    /// The latest failure (cancelled requests aside); the count by kind is
    /// [`super::LevelProgress::errors_by_kind`].
    pub last_error: Option<LastError>,
    /// End-to-end latency of the successful requests in [`LIVE_BUCKETS`] bars whose upper
    /// edges are log-spaced from the level's minimum to its maximum (the last edge is the
    /// maximum); the counts add up to the successful requests. One bar when every request
    /// took the same time, none before the first success.
    pub e2e_histogram: Vec<LatencyBucket>,
    /// The fastest successful request's e2e latency (ms), where the first bar starts.
    pub e2e_min_ms: Option<f64>,
}

/// One metric's HDR histogram (1 µs ticks, 3 significant figures, as
/// [`super::Histogram::latency`]) with its exact min and max (ms).
#[derive(Debug, Clone)]
struct LiveHist {
    hist: hdrhistogram::Histogram<u64>,
    min: f64,
    max: f64,
}

/// Ticks per millisecond: 1 µs resolution, as the level's latency histograms.
const TICKS_PER_MS: f64 = 1_000.0;

impl LiveHist {
    fn new() -> Self {
        let mut hist = hdrhistogram::Histogram::<u64>::new(3)
            .expect("3 significant figures is within hdrhistogram's 0..=5");
        hist.auto(true);
        LiveHist {
            hist,
            min: f64::INFINITY,
            max: f64::NEG_INFINITY,
        }
    }

    /// Records a value in ms exactly as [`super::Histogram::record_value`] does.
    fn record_ms(&mut self, value: f64) {
        if !value.is_finite() {
            return;
        }
        let v = value.max(0.0);
        self.min = self.min.min(v);
        self.max = self.max.max(v);
        let ticks = (v * TICKS_PER_MS).round();
        if self.hist.record(ticks as u64).is_err() {
            self.hist.saturating_record(ticks as u64);
        }
    }

    /// A duration in ns, as [`super::Histogram::record_ns`].
    fn record_ns(&mut self, ns: u64) {
        self.record_ms(ns as f64 / 1e6);
    }

    /// An HDR value read as the level reads it: its bucket's upper edge, in ms, within the
    /// exact min and max.
    fn read(&self, ticks: u64) -> f64 {
        (self.hist.highest_equivalent(ticks) as f64 / TICKS_PER_MS).clamp(self.min, self.max)
    }

    /// p50, p95, p99: the values [`super::Stats`] gives (`value_at_quantile`).
    fn percentiles(&self) -> Option<Percentiles> {
        if self.hist.is_empty() {
            return None;
        }
        let q = |quantile: f64| self.read(self.hist.value_at_quantile(quantile));
        Some(Percentiles {
            p50: q(0.50),
            p95: q(0.95),
            p99: q(0.99),
        })
    }

    /// The counts in [`LIVE_BUCKETS`] log-spaced bars from min to max (see
    /// [`LiveFigures::e2e_histogram`]); each HDR bucket goes whole to the bar its read value
    /// falls in.
    fn bars(&self) -> Vec<LatencyBucket> {
        if self.hist.is_empty() {
            return Vec::new();
        }
        // log spacing needs a positive start: 1 µs, the resolution, below that
        let lo = self.min.max(1.0 / TICKS_PER_MS);
        if self.max <= lo {
            return vec![LatencyBucket {
                upper_ms: self.max,
                count: self.hist.len(),
            }];
        }
        let ratio = self.max / lo;
        let mut bars: Vec<LatencyBucket> = (1..=LIVE_BUCKETS)
            .map(|i| LatencyBucket {
                upper_ms: if i == LIVE_BUCKETS {
                    self.max
                } else {
                    lo * ratio.powf(i as f64 / LIVE_BUCKETS as f64)
                },
                count: 0,
            })
            .collect();
        for v in self.hist.iter_recorded() {
            let at = self.read(v.value_iterated_to());
            let i = bars
                .partition_point(|b| b.upper_ms < at)
                .min(LIVE_BUCKETS - 1);
            bars[i].count += v.count_at_value();
        }
        bars
    }
}

/// Folds a level's finished records into its [`LiveFigures`].
#[derive(Debug, Clone)]
pub struct LiveTally {
    ttft: LiveHist,
    itl: LiveHist,
    e2e: LiveHist,
    /// Successful requests by when they ended.
    requests: RollingRate,
    last_error: Option<(u64, LastError)>,
}

impl LiveTally {
    /// Requests per second averaged over `rate` (the token rate's window).
    pub fn new(rate: RollingRate) -> Self {
        LiveTally {
            ttft: LiveHist::new(),
            itl: LiveHist::new(),
            e2e: LiveHist::new(),
            requests: rate,
            last_error: None,
        }
    }

    /// Folds one finished request that ended at `end_ns` (ns since level start, on the
    /// snapshots' clock). Warmup and cooldown records are the caller's to leave out.
    pub fn add(&mut self, rec: &RequestRecord, end_ns: u64) {
        match &rec.error {
            Some(e) if e.kind == ErrorKind::Cancelled => {}
            Some(e) => {
                if self.last_error.as_ref().is_none_or(|(at, _)| end_ns >= *at) {
                    let clean: String = e
                        .message
                        .chars()
                        .map(|c| if c.is_control() { ' ' } else { c })
                        .collect();
                    let last = LastError {
                        kind: e.kind,
                        status: e.status,
                        message: truncate_chars(&clean, LIVE_ERROR_CHARS),
                        at_s: end_ns as f64 / 1e9,
                    };
                    self.last_error = Some((end_ns, last));
                }
            }
            None => {
                // the values the level's accumulator records (`LevelAccumulator::add`)
                if let Some(t) = rec.ttft_ns() {
                    self.ttft.record_ns(t);
                }
                self.e2e.record_ns(
                    rec.e2e_ns()
                        .unwrap_or(rec.end_ns.saturating_sub(rec.start_ns)),
                );
                if let Some(itl) = rec.itl_ns() {
                    self.itl.record_ms(itl / 1e6);
                }
                self.requests.add(end_ns, 1.0);
            }
        }
    }

    /// The figures at `now_ns` (ns since level start).
    pub fn figures(&self, now_ns: u64) -> LiveFigures {
        LiveFigures {
            ttft_ms: self.ttft.percentiles(),
            itl_ms: self.itl.percentiles(),
            e2e_ms: self.e2e.percentiles(),
            requests_per_sec: self.requests.rate_per_sec(now_ns),
            last_error: self.last_error.as_ref().map(|(_, e)| e.clone()),
            e2e_histogram: self.e2e.bars(),
            e2e_min_ms: self.e2e.min.is_finite().then_some(self.e2e.min),
        }
    }
}
