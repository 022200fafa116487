//! The per-level reducer: folds each [`RequestRecord`] into histograms as it arrives and, when
//! the level ends, produces its [`LevelSummary`].
//!
//! Percentiles come from histograms, never from sorted sample vectors. The steady window
//! (all slots busy) can only be located once the level is over, so its figures are folded by
//! [`SteadyTally`] (`steady.rs`, where the window and what is counted in it are defined), which
//! keeps about one round of requests, not the level's. Achieved concurrency is the time
//! integral of requests in flight over the window divided by its length. The window is `None`
//! when fewer than `concurrency` requests (or workers) ran, when it has no length, and on an
//! open loop (no slots to fill). The level is *held* when its achieved concurrency is at least
//! [`HELD_SHARE`] of the target (no window: not held).
//!
//! Goodput counts, per request, whether it met every latency limit in [`RequestLimits`] (a
//! failed request is a miss), as AIPerf's goodput does.

use std::collections::BTreeMap;

use super::batch;
use super::histogram::{
    Histogram, Stats, UNIT_TOKENS, UNIT_TOKENS_PER_SEC, UNIT_TOKENS_PER_SEC_PER_USER,
};
use super::lengths::LengthTally;
use super::rate::OpenLoopTally;
use super::steady::{After, Span, SteadyTally, Window};
use super::summary::{
    ErrorDetails, ErrorSummaryEntry, LevelMeta, LevelSummary, Scalar, SteadyWindow,
    TokenSourceCounts, HELD_SHARE,
};
use super::tool_tally::ToolTally;
use super::turns::TurnTally;
use crate::record::{ErrorKind, Interval, RequestRecord, TokenSource};

/// Per-request latency limits (ms) a request must meet to count toward goodput; a limit
/// that is `None` is not checked. With no limit at all there is no goodput.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct RequestLimits {
    pub ttft_ms: Option<f64>,
    pub itl_ms: Option<f64>,
    pub e2e_ms: Option<f64>,
}

impl RequestLimits {
    fn any(&self) -> bool {
        self.ttft_ms.is_some() || self.itl_ms.is_some() || self.e2e_ms.is_some()
    }

    /// Whether a request with these measurements meets every limit. A limit on a metric the
    /// request does not have (TTFT of a non-streamed answer) is not met.
    fn met(&self, ttft_ms: Option<f64>, itl_ms: Option<f64>, e2e_ms: f64) -> bool {
        let ok =
            |limit: Option<f64>, v: Option<f64>| limit.is_none_or(|l| v.is_some_and(|v| v <= l));
        ok(self.ttft_ms, ttft_ms) && ok(self.itl_ms, itl_ms) && ok(self.e2e_ms, Some(e2e_ms))
    }
}

/// Folds one level's records into its summary.
#[derive(Debug, Clone)]
pub struct LevelAccumulator {
    concurrency: u32,
    /// Requests in flight together, for the intervals' blocks (`batch::blocks`): the
    /// concurrency of a closed loop, 0 on an open loop (no rounds).
    round: u32,
    planned_requests: u64,
    ttft: Histogram,
    itl: Histogram,
    icl: Histogram,
    e2e: Histogram,
    osl: Histogram,
    isl: Histogram,
    per_user: Histogram,
    slot_to_send: Histogram,
    /// The SLA metrics' values with their request's start, for intervals that allow for
    /// correlation in time (`batch.rs`).
    in_time: InTime,
    /// The steady window's figures, folded as requests finish.
    steady: SteadyTally,
    /// Earlier measurements of a level measured again ([`LevelAccumulator::resume`]).
    earlier: Vec<EarlierWindow>,
    /// Where the current measurement starts on the level's timeline (0 for the first).
    session_start_ns: u64,
    first_start_ns: u64,
    last_end_ns: u64,
    ok: u64,
    errors: u64,
    ok_output_tokens: u64,
    ok_input_tokens: u64,
    errors_by_kind: BTreeMap<ErrorKind, u64>,
    error_groups: BTreeMap<(ErrorKind, Option<u16>), (u64, String)>,
    sources: TokenSourceCounts,
    reconnects: u64,
    limits: RequestLimits,
    /// Successful requests that met every limit in `limits`.
    good: u64,

    // The workload block (input lengths target / client / server, reasoning): `lengths.rs`.
    lengths: LengthTally,
    // The open-loop block (rate levels): `rate.rs`.
    open: OpenLoopTally,
    // Multi-turn sessions, per turn index: `turns.rs`.
    turns: TurnTally,
    tools: ToolTally,
}

/// A finished measurement of a pooled level: its own all-slots-busy window and what started
/// after it opened. Each measurement fills its slots anew, so windows are not joined across
/// them: their lengths, tokens and busy times add.
#[derive(Debug, Clone, Copy)]
struct EarlierWindow {
    start_ns: u64,
    window: Option<Window>,
    after: After,
    count: u64,
    busy_ns: u128,
}

/// The steady figures over every measurement's window.
#[derive(Debug, Clone, Copy)]
struct Pooled {
    /// The first window's start and the last one's end (on the level's timeline).
    span: (u64, u64),
    /// Tokens inside the windows per second of window.
    tps: f64,
    /// Time-weighted requests in flight over the windows.
    in_flight: f64,
    /// The requests started after their measurement's window opened.
    after: After,
}

/// Per SLA metric, `(start ns, value ms)` of every successful request that has it.
#[derive(Debug, Clone, Default)]
struct InTime {
    ttft: Vec<(u64, f64)>,
    itl: Vec<(u64, f64)>,
    e2e: Vec<(u64, f64)>,
    /// Output tokens of the request of each `e2e` entry, for the throughput's interval.
    tokens: Vec<u32>,
}

impl InTime {
    /// `h`'s statistics with intervals from `series` put in start order (batch means; `round`
    /// requests in flight together, 0 on an open loop), judged for correlation around `limit`
    /// (the run's SLA limit on the metric, if any).
    fn stats(
        h: &Histogram,
        series: &[(u64, f64)],
        limit: Option<f64>,
        round: u32,
    ) -> Option<Stats> {
        let mut sorted = series.to_vec();
        sorted.sort_by_key(|(at, _)| *at);
        let values: Vec<f64> = sorted.into_iter().map(|(_, v)| v).collect();
        h.stats_in_time(&values, limit, round)
    }

    /// The sustained throughput `tps`'s 95 % interval: the relative half-width of tokens over
    /// latency among the requests started after their measurement's window opened (`opened`:
    /// each measurement's start and window opening, in order), in start order, by batch
    /// means; open when too few requests followed it.
    fn sustained_interval(&self, opened: &[(u64, u64)], tps: f64) -> Interval {
        let after_opening = |at: u64| {
            opened
                .iter()
                .rev()
                .find(|(start, _)| *start <= at)
                .is_some_and(|(_, ws)| at > *ws)
        };
        let mut order: Vec<usize> = (0..self.e2e.len())
            .filter(|i| after_opening(self.e2e[*i].0))
            .collect();
        order.sort_by_key(|i| self.e2e[*i].0);
        let pairs: Vec<(f64, f64)> = order
            .into_iter()
            .map(|i| (self.e2e[i].1, f64::from(self.tokens[i])))
            .collect();
        match batch::ratio_half_width(&pairs) {
            Some(rel) => Interval(Some((tps * (1.0 - rel)).max(0.0)), Some(tps * (1.0 + rel))),
            None => Interval(None, None),
        }
    }
}

impl LevelAccumulator {
    /// An empty accumulator for a level of `concurrency` workers planned to send
    /// `request_count` requests.
    pub fn new(concurrency: u32, request_count: u64) -> Self {
        LevelAccumulator {
            concurrency,
            round: concurrency,
            planned_requests: request_count,
            ttft: Histogram::latency(),
            itl: Histogram::latency(),
            icl: Histogram::latency(),
            e2e: Histogram::latency(),
            osl: Histogram::tokens(),
            isl: Histogram::tokens(),
            per_user: Histogram::values(UNIT_TOKENS_PER_SEC_PER_USER, 1000.0),
            slot_to_send: Histogram::latency(),
            in_time: InTime::default(),
            steady: SteadyTally::new(concurrency),
            earlier: Vec::new(),
            session_start_ns: 0,
            first_start_ns: u64::MAX,
            last_end_ns: 0,
            ok: 0,
            errors: 0,
            ok_output_tokens: 0,
            ok_input_tokens: 0,
            errors_by_kind: BTreeMap::new(),
            error_groups: BTreeMap::new(),
            sources: TokenSourceCounts::default(),
            reconnects: 0,
            limits: RequestLimits::default(),
            good: 0,
            lengths: LengthTally::default(),
            open: OpenLoopTally::default(),
            turns: TurnTally::default(),
            tools: ToolTally::default(),
        }
    }

    /// An open-loop level: rate metrics per time window of `window` (default 10 s), and no
    /// steady window (its requests have no slots to fill).
    pub fn with_windows(mut self, window: std::time::Duration) -> Self {
        self.open = OpenLoopTally::new(window);
        self.steady = SteadyTally::new(0);
        self.round = 0;
        self
    }

    /// Requests/s offered and achieved so far (rate levels).
    pub fn rates(&self) -> (f64, f64) {
        self.open.rates()
    }

    /// Counts goodput against these per-request limits.
    pub fn with_goodput(mut self, limits: RequestLimits) -> Self {
        self.limits = limits;
        self
    }

    /// Raises the planned request count by `more` (an adaptive-sampling batch).
    pub fn plan_more(&mut self, more: u64) {
        self.planned_requests += more;
    }

    /// Requests folded so far (warmup excluded), earlier measurements included.
    pub fn completed(&self) -> u64 {
        self.steady.count() + self.earlier.iter().map(|e| e.count).sum::<u64>()
    }

    /// Ends the current measurement of a closed-loop level so that another one at the same
    /// concurrency adds to it: the level measured again. Returns where the next measurement
    /// starts on the level's timeline (the end of the last request so far): its requests'
    /// times are to continue from there, so the level reads as one stretch in start order
    /// with the pause between the measurements left out.
    pub fn resume(&mut self) -> u64 {
        let window = self.steady.window();
        self.earlier.push(EarlierWindow {
            start_ns: self.session_start_ns,
            window,
            after: window.map_or_else(After::default, |w| self.steady.after(w.start_ns)),
            count: self.steady.count(),
            busy_ns: self.steady.busy_ns(),
        });
        self.steady = SteadyTally::new(self.concurrency);
        self.session_start_ns = self.last_end_ns;
        self.last_end_ns
    }

    /// Every measurement's (start, window, requests after its opening), the current one last.
    fn measurements(&self) -> Vec<(u64, Option<Window>, After)> {
        let mut out: Vec<(u64, Option<Window>, After)> = self
            .earlier
            .iter()
            .map(|e| (e.start_ns, e.window, e.after))
            .collect();
        let window = self.steady.window();
        let after = window.map_or_else(After::default, |w| self.steady.after(w.start_ns));
        out.push((self.session_start_ns, window, after));
        out
    }

    /// The steady figures over the windows of every measurement (one, unless the level was
    /// measured again); `None` when a measurement has no window.
    fn pooled(&self) -> Option<Pooled> {
        let all = self.measurements();
        let windows: Vec<(Window, After)> = all
            .iter()
            .map(|(_, w, a)| w.map(|w| (w, *a)))
            .collect::<Option<_>>()?;
        let len = |w: &Window| (w.end_ns - w.start_ns) as f64;
        let total: f64 = windows.iter().map(|(w, _)| len(w)).sum();
        let after = windows.iter().fold(After::default(), |s, (_, a)| After {
            requests: s.requests + a.requests,
            tokens: s.tokens + a.tokens,
            busy_ns: s.busy_ns + a.busy_ns,
        });
        Some(Pooled {
            span: (windows.first()?.0.start_ns, windows.last()?.0.end_ns),
            tps: windows.iter().map(|(w, _)| w.tokens).sum::<f64>() / (total / 1e9),
            in_flight: windows
                .iter()
                .map(|(w, _)| w.in_flight * len(w))
                .sum::<f64>()
                / total,
            after,
        })
    }

    /// Folds one finished request. Warmup records are ignored.
    pub fn add(&mut self, rec: &RequestRecord) {
        if !rec.counted() {
            return;
        }
        self.open.add(rec);
        self.turns.add(rec);
        self.tools.add(rec);
        let end_ns = rec.end_ns.max(rec.start_ns);
        self.first_start_ns = self.first_start_ns.min(rec.start_ns);
        self.last_end_ns = self.last_end_ns.max(end_ns);
        self.slot_to_send
            .record_ns(rec.start_ns.saturating_sub(rec.slot_free_ns));
        if rec.reconnected {
            self.reconnects += 1;
        }
        // a session thinking before this turn held its slot (docs/workloads.md)
        let busy_from = rec
            .start_ns
            .saturating_sub(rec.detail.think_ns.unwrap_or(0));
        let mut span = Span {
            start_ns: busy_from,
            end_ns,
            tokens: None,
        };
        match &rec.error {
            Some(err) => {
                *self.errors_by_kind.entry(err.kind).or_insert(0) += 1;
                if err.kind != ErrorKind::Cancelled {
                    self.errors += 1;
                }
                let group = self
                    .error_groups
                    .entry((err.kind, err.status))
                    .or_insert_with(|| (0, err.message.clone()));
                group.0 += 1;
            }
            None => {
                self.ok += 1;
                self.add_success(rec, &mut span);
            }
        }
        self.steady.add(rec.worker, rec.start_ns, span);
    }

    fn add_success(&mut self, rec: &RequestRecord, span: &mut Span) {
        let ttft = rec.ttft_ns();
        let e2e = rec
            .e2e_ns()
            .unwrap_or(rec.end_ns.saturating_sub(rec.start_ns));
        let at = rec.start_ns;
        if let Some(t) = ttft {
            self.ttft.record_ns(t);
            self.in_time.ttft.push((at, t as f64 / 1e6));
        }
        self.e2e.record_ns(e2e);
        self.in_time.e2e.push((at, e2e as f64 / 1e6));
        self.in_time.tokens.push(rec.output_tokens.unwrap_or(0));
        let itl_ms = rec.itl_ns().map(|itl| itl / 1e6);
        if let Some(itl) = itl_ms.filter(|v| v.is_finite()) {
            self.itl.record_value(itl);
            self.in_time.itl.push((at, itl.max(0.0)));
        }
        if self
            .limits
            .met(ttft.map(|t| t as f64 / 1e6), itl_ms, e2e as f64 / 1e6)
        {
            self.good += 1;
        }
        for gap in &rec.chunk_gaps_ns {
            self.icl.record_ns(*gap);
        }
        self.lengths.add(rec);
        self.isl
            .record_value(f64::from(rec.input_sequence_length()));
        self.ok_input_tokens += u64::from(rec.input_sequence_length());
        if let Some(n) = rec.output_tokens {
            self.osl.record_value(f64::from(n));
            self.ok_output_tokens += u64::from(n);
            match rec.output_tokens_source {
                TokenSource::Server => self.sources.server += 1,
                TokenSource::Client => self.sources.client += 1,
            }
            // AIPerf's definition: 1 / inter-token latency = (n - 1) / (e2e - TTFT)
            if let (Some(t), true) = (ttft, n >= 2) {
                let decode_ns = e2e.saturating_sub(t);
                if decode_ns > 0 {
                    self.per_user
                        .record_value(f64::from(n - 1) / (decode_ns as f64 / 1e9));
                }
            }
            let a = rec.first_token_ns.unwrap_or(rec.start_ns);
            let b = rec.last_token_ns.unwrap_or(rec.end_ns).max(a);
            span.tokens = Some((n, a, b));
        }
    }

    /// Output tokens/sec by the response-time law over the requests that started after the
    /// all-slots-busy window opened at `lo`: `achieved × Σ tokens / Σ latency` (Little's law:
    /// over a stretch with `achieved` requests in flight, their latencies add up to `achieved`
    /// times its length). The first `concurrency` requests are left out: they all start at
    /// once and queue behind each other only partly, so their mean latency reads low (by a
    /// quarter at 1,024 on 256 slots with 2,048 requests). `None` until at least
    /// `concurrency` requests started after the window opened (one full turnover).
    fn sustained_tps(after: After, concurrency: u32, achieved: f64) -> Option<f64> {
        (after.requests >= u64::from(concurrency) && after.busy_ns > 0)
            .then(|| achieved * after.tokens as f64 / (after.busy_ns as f64 / 1e9))
    }

    /// Ends the level and summarizes it.
    pub fn finish(self, meta: LevelMeta) -> LevelSummary {
        let (first, last) = self.span_ns();
        let duration_s = last.saturating_sub(first) as f64 / 1e9;
        let per_sec = |x: f64| {
            if duration_s > 0.0 {
                x / duration_s
            } else {
                0.0
            }
        };
        let steady = self.steady_figures();
        let stats = |h: &Histogram| -> Option<Stats> { h.stats() };
        let in_time = |h: &Histogram, series: &[(u64, f64)], limit: Option<f64>| {
            InTime::stats(h, series, limit, self.round)
        };
        LevelSummary {
            index: meta.index,
            concurrency: self.concurrency,
            planned_requests: self.planned_requests,
            requests_asked: meta.requests_asked,
            held: steady.held,
            // the engine says (closed-loop levels)
            warmup: None,
            sampling: meta.sampling,
            measurements: Vec::new(),
            server: None,
            prefix_cache: None,
            slas: Vec::new(),
            verdict: None,
            start_time: meta.started_at,
            end_time: meta.ended_at,
            partial: meta.partial,
            time_to_first_token: in_time(&self.ttft, &self.in_time.ttft, self.limits.ttft_ms),
            inter_token_latency: in_time(&self.itl, &self.in_time.itl, self.limits.itl_ms),
            inter_chunk_latency: stats(&self.icl),
            request_latency: in_time(&self.e2e, &self.in_time.e2e, self.limits.e2e_ms),
            output_sequence_length: stats(&self.osl),
            input_sequence_length: stats(&self.isl),
            output_token_throughput_per_user: stats(&self.per_user),
            output_token_throughput: Scalar::new(
                UNIT_TOKENS_PER_SEC,
                per_sec(self.ok_output_tokens as f64),
            ),
            output_token_throughput_steady: steady.tps,
            output_token_throughput_sustained: steady.sustained,
            request_throughput: Scalar::new("requests/sec", per_sec(self.ok as f64)),
            request_count: Scalar::new("requests", self.ok as f64),
            error_request_count: Scalar::new("requests", self.errors as f64),
            benchmark_duration: Scalar::new("sec", duration_s),
            total_osl: Scalar::new(UNIT_TOKENS, self.ok_output_tokens as f64),
            total_isl: Scalar::new(UNIT_TOKENS, self.ok_input_tokens as f64),
            goodput: self
                .limits
                .any()
                .then(|| Scalar::new("requests/sec", per_sec(self.good as f64))),
            error_summary: self.error_summary(),
            error_rate: self.error_rate(),
            cancelled_count: self
                .errors_by_kind
                .get(&ErrorKind::Cancelled)
                .copied()
                .unwrap_or(0),
            errors_by_kind: self.errors_by_kind.clone(),
            steady_window: steady.window.map(|w| SteadyWindow {
                start_s: w.span.0 as f64 / 1e9,
                end_s: w.span.1 as f64 / 1e9,
            }),
            achieved_concurrency: steady.achieved,
            mean_in_flight: self.mean_in_flight(first, last),
            slot_to_send: stats(&self.slot_to_send),
            output_tokens_source: self.sources,
            reconnect_count: self.reconnects,
            client_lag: meta.lag,
            workers: None,
            workload: super::lengths::WorkloadMetrics {
                turns: self.turns.finish(),
                tools: self.tools.finish(),
                ..self.lengths.finish()
            },
            open_loop: self.open.finish(),
        }
    }

    /// The level's first start and last end (both 0 when no request completed).
    fn span_ns(&self) -> (u64, u64) {
        if self.completed() == 0 {
            (0, 0)
        } else {
            (self.first_start_ns, self.last_end_ns)
        }
    }

    /// What the all-slots-busy windows say: the achieved concurrency, whether the level held,
    /// the steady and the sustained throughput.
    fn steady_figures(&self) -> SteadyFigures {
        let window = self.pooled();
        let achieved = window.map(|w| w.in_flight);
        let opened: Vec<(u64, u64)> = self
            .measurements()
            .iter()
            .filter_map(|(start, w, _)| Some((*start, w.as_ref()?.start_ns)))
            .collect();
        let sustained = window
            .and_then(|w| Self::sustained_tps(w.after, self.concurrency, w.in_flight))
            .map(|tps| Scalar {
                ci95: Some(self.in_time.sustained_interval(&opened, tps)),
                ..Scalar::new(UNIT_TOKENS_PER_SEC, tps)
            });
        SteadyFigures {
            window,
            tps: window.map(|w| Scalar::new(UNIT_TOKENS_PER_SEC, w.tps)),
            sustained,
            achieved,
            held: achieved.is_some_and(|a| a >= HELD_SHARE * f64::from(self.concurrency)),
        }
    }

    /// The failed requests grouped by kind and status, each with its first message.
    fn error_summary(&self) -> Vec<ErrorSummaryEntry> {
        self.error_groups
            .iter()
            .map(|((kind, code), (count, message))| ErrorSummaryEntry {
                error_details: ErrorDetails {
                    code: *code,
                    kind: kind.as_str().to_string(),
                    message: message.clone(),
                },
                count: *count,
            })
            .collect()
    }

    /// Failed requests over attempted ones (cancelled ones are neither).
    fn error_rate(&self) -> f64 {
        let attempted = self.ok + self.errors;
        if attempted > 0 {
            self.errors as f64 / attempted as f64
        } else {
            0.0
        }
    }

    /// Requests in flight on average between the level's first start and last end.
    fn mean_in_flight(&self, first: u64, last: u64) -> Option<f64> {
        // a think follows a turn of its own session, so no span starts before `first`
        (last > first).then(|| {
            let busy = self.steady.busy_ns() + self.earlier.iter().map(|e| e.busy_ns).sum::<u128>();
            busy as f64 / (last - first) as f64
        })
    }
}

/// The figures of a level's all-slots-busy windows.
struct SteadyFigures {
    window: Option<Pooled>,
    /// Output tokens/sec inside the windows.
    tps: Option<Scalar>,
    /// Output tokens/sec by the response-time law, with its interval.
    sustained: Option<Scalar>,
    /// Time-weighted requests in flight over the windows.
    achieved: Option<f64>,
    /// The achieved concurrency is at least [`HELD_SHARE`] of the target.
    held: bool,
}

#[cfg(test)]
#[path = "accumulator_tests.rs"]
mod tests;
