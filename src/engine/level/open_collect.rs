//! What an open-loop level makes of its records, wherever they were sent from: one process's
//! dispatcher (`open_here`) or the workers of a distributed run (`open_fleet`). The
//! [`OpenCollector`] folds each record into the level, samples the requests waiting four
//! times a second and says when they keep growing (the server cannot keep up with the rate:
//! whoever sends then stops), makes the live progress, and finishes the level's summary with
//! its rate and saturation.

use super::measure::{fold, progress, Follow, Sending};
use crate::engine::events::EngineEvent;
use crate::engine::intended::{Due, Intended};
use crate::engine::open_plan::OpenPlan;
use crate::engine::sink::RunSink;
use crate::metrics::progress::{LevelProgress, OpenProgress};
use crate::metrics::rate::{rate_held, RateSummary, Saturation};
use crate::metrics::{Histogram, RecentDurations};
use crate::metrics::{LevelAccumulator, LevelMeta, LevelSummary, LiveLevel};
use crate::plan::LevelPlanner;
use crate::record::RequestRecord;
use crate::workload::arrivals::LoadShape;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::time::Duration;
use tokio::sync::mpsc;

/// How often pending requests are sampled (and progress is sent).
pub(super) const SAMPLE: Duration = Duration::from_millis(250);
/// Samples in the saturation window (4 s).
const WINDOW_SAMPLES: usize = 16;

/// Stops a level whose pending requests keep growing. A stable open-loop server keeps about
/// rate x latency requests pending; past its capacity the count grows by the excess rate.
#[derive(Debug, Default)]
struct SaturationWatch {
    samples: VecDeque<(f64, f64)>,
}

impl SaturationWatch {
    /// Adds a sample (s since the start, pending requests); `Some` when the last
    /// [`WINDOW_SAMPLES`] show pending requests growing faster than a tenth of the rate (and
    /// at least 0.5/s), at least doubling, to 8 or more.
    fn sample(&mut self, t: f64, pending: f64, rate: f64) -> Option<(f64, f64, f64)> {
        self.samples.push_back((t, pending));
        if self.samples.len() > WINDOW_SAMPLES {
            self.samples.pop_front();
        }
        if self.samples.len() < WINDOW_SAMPLES {
            return None;
        }
        let n = self.samples.len() as f64;
        let (mt, mp) = self
            .samples
            .iter()
            .fold((0.0, 0.0), |a, (t, p)| (a.0 + t / n, a.1 + p / n));
        let sxy: f64 = self.samples.iter().map(|(t, p)| (t - mt) * (p - mp)).sum();
        let sxx: f64 = self.samples.iter().map(|(t, _)| (t - mt).powi(2)).sum();
        let slope = sxy / sxx;
        let first = self.samples.front()?.1;
        let last = self.samples.back()?.1;
        (slope > (0.1 * rate).max(0.5) && last >= 2.0 * first.max(1.0) && last >= 8.0)
            .then_some((slope, first, last))
    }
}

/// Seconds of history the live figures cover.
const RECENT_S: f64 = 5.0;

/// Width of the time buckets recent latencies are kept in.
const RECENT_BUCKET: Duration = Duration::from_millis(250);

/// The last [`RECENT_S`] seconds of a level, for [`OpenProgress`].
#[derive(Debug)]
struct Recent {
    /// TTFT and e2e of successes, by their end (ns since the level start).
    ttft: RecentDurations,
    e2e: RecentDurations,
    /// (t s, sent, finished) at each tick.
    counts: VecDeque<(f64, u64, u64)>,
}

impl Default for Recent {
    fn default() -> Self {
        let keep = Duration::from_secs_f64(RECENT_S);
        Recent {
            ttft: RecentDurations::new(RECENT_BUCKET, keep),
            e2e: RecentDurations::new(RECENT_BUCKET, keep),
            counts: VecDeque::new(),
        }
    }
}

impl Recent {
    fn record(&mut self, rec: &RequestRecord) {
        if rec.error.is_none() {
            if let Some(ttft) = rec.ttft_ns() {
                self.ttft.record(rec.end_ns, ttft);
            }
            self.e2e
                .record(rec.end_ns, rec.end_ns.saturating_sub(rec.start_ns));
        }
    }

    fn snapshot(
        &mut self,
        t: f64,
        sent: u64,
        finished: u64,
        pending: u64,
        offered: f64,
    ) -> OpenProgress {
        self.counts.push_back((t, sent, finished));
        while self.counts.len() > 2 && self.counts.front().is_some_and(|c| c.0 < t - RECENT_S) {
            self.counts.pop_front();
        }
        let (t0, s0, f0) = *self.counts.front().unwrap_or(&(t, sent, finished));
        // over at least a second: a quarter second of Poisson sends read 4x the rate one
        // moment and 0 the next; in the level's first second the figure climbs to the rate
        let span = (t - t0).max(1.0);
        let rate = |a: u64, b: u64| a.saturating_sub(b) as f64 / span;
        let from = ((t - RECENT_S).max(0.0) * 1e9) as u64;
        let spread = |r: &RecentDurations| {
            let h = r.between(from, u64::MAX);
            Some([h.nearest_rank(0.5)?, h.nearest_rank(0.99)?])
        };
        OpenProgress {
            offered_rps: offered,
            sent_rps: rate(sent, s0),
            done_rps: rate(finished, f0),
            pending,
            ttft_ms: spread(&self.ttft),
            e2e_ms: spread(&self.e2e),
        }
    }
}

/// The rate the schedule offers at `now` (ns since the level start): a rate, steps or ramp
/// says it outright; a trace's is the intended sends over the last [`RECENT_S`] seconds (at
/// least one), so a burst in the trace shows as one, not as the trace's mean.
fn offered_at(shape: &LoadShape, trace: Option<&[u64]>, now: u64) -> f64 {
    match (shape, trace) {
        (LoadShape::Replay { .. }, Some(intended)) => {
            let span = (now as f64 / 1e9).clamp(1.0, RECENT_S);
            let from = now.saturating_sub((span * 1e9) as u64);
            let sent =
                intended.partition_point(|x| *x <= now) - intended.partition_point(|x| *x < from);
            sent as f64 / span
        }
        _ => shape.rate_at(now as f64 / 1e9),
    }
}

/// Requests a stable server keeps pending without a queue: the offered rate times the
/// median end-to-end latency of the level's first [`UNLOADED_SAMPLES`] successes (its
/// latency before any queue could form). Until those are in, nothing is expected.
#[derive(Debug)]
struct Expected {
    first_e2e: Histogram,
    latency_s: Option<f64>,
}

impl Default for Expected {
    fn default() -> Self {
        Expected {
            first_e2e: Histogram::latency(),
            latency_s: None,
        }
    }
}

/// Successes whose median latency sets [`Expected`].
const UNLOADED_SAMPLES: u64 = 20;

impl Expected {
    /// Counts a success that took `e2e_ns`.
    fn success(&mut self, e2e_ns: u64) {
        if self.latency_s.is_some() {
            return;
        }
        self.first_e2e.record_ns(e2e_ns);
        if self.first_e2e.len() == UNLOADED_SAMPLES {
            self.latency_s = self.first_e2e.nearest_rank(0.5).map(|ms| ms / 1e3);
        }
    }

    fn pending(&self, rate: f64) -> f64 {
        rate * self.latency_s.unwrap_or(0.0)
    }
}

/// The requests waiting at a time: due by it and not ended by it. Ends are counted by the
/// time they happened, not by when their records came, so a view taken `lag` behind now
/// (a distributed level's records come up to a report period after their end) counts
/// every request that ended before it, however its records were delayed or batched.
struct Waiting {
    due: Due,
    /// Ends after the last view, earliest first.
    ends: BinaryHeap<Reverse<u64>>,
    ended: u64,
}

impl Waiting {
    fn new(intended: &Intended) -> Waiting {
        Waiting {
            due: Due::new(intended),
            ends: BinaryHeap::new(),
            ended: 0,
        }
    }

    /// A request ended at `end_ns` (ns since the level's start).
    fn ended(&mut self, end_ns: u64) {
        self.ends.push(Reverse(end_ns));
    }

    /// Requests waiting at `view` (ns since the level's start); `view` never goes back.
    fn at(&mut self, view: u64) -> u64 {
        while self.ends.peek().is_some_and(|e| e.0 <= view) {
            self.ends.pop();
            self.ended += 1;
        }
        self.due.by(view).saturating_sub(self.ended)
    }
}

/// One open-loop level's records made into its measurement (see the module header).
pub(super) struct OpenCollector {
    plan: OpenPlan,
    intended: Intended,
    n: u64,
    cap: u32,
    acc: LevelAccumulator,
    live: LiveLevel,
    watch: SaturationWatch,
    saturated: Option<Saturation>,
    /// schedule lag + TTFT of recent successes, by their end: the wait users saw
    waits: RecentDurations,
    recent: Recent,
    expected: Expected,
    due_by: Due,
    /// The requests waiting, as of `view_lag` before each sample.
    waiting: Waiting,
    view_lag: u64,
    started_at: String,
}

impl OpenCollector {
    /// The level of `plan`, whose requests go out at `intended`.
    pub fn new(plan: &OpenPlan, intended: Intended, planner: &dyn LevelPlanner) -> OpenCollector {
        let n = intended.count();
        let cap = plan.max_in_flight.unwrap_or(0);
        let mut recent = Recent::default();
        recent.counts.push_back((0.0, 0, 0));
        OpenCollector {
            acc: LevelAccumulator::new(cap, n)
                .with_goodput(planner.goodput_limits())
                .with_windows(plan.window),
            live: LiveLevel::new(plan.index, cap, n, Duration::from_millis(500), 20),
            watch: SaturationWatch::default(),
            saturated: None,
            waits: RecentDurations::new(
                RECENT_BUCKET,
                SAMPLE * WINDOW_SAMPLES as u32 + Duration::from_secs(2),
            ),
            recent,
            expected: Expected::default(),
            due_by: Due::new(&intended),
            waiting: Waiting::new(&intended),
            view_lag: 0,
            started_at: crate::wallclock::rfc3339_utc(crate::wallclock::now()),
            plan: plan.clone(),
            intended,
            n,
            cap,
        }
    }

    /// Judges the requests waiting `lag` behind each sample: a request's record can come
    /// that long after it ended (a distributed level's, a report period and the trip).
    pub fn viewed_late(mut self, lag: Duration) -> OpenCollector {
        self.view_lag = lag.as_nanos() as u64;
        self
    }

    /// Requests the level sends.
    pub fn count(&self) -> u64 {
        self.n
    }

    /// The level's intended send times.
    pub fn intended(&self) -> &Intended {
        &self.intended
    }

    /// The level's `LevelStarted`: its requests, its in-flight cap and its shape.
    pub fn started(&self) -> EngineEvent {
        EngineEvent::LevelStarted {
            index: self.plan.index,
            concurrency: self.cap,
            request_count: self.n,
            request_cap: self.n,
            earlier: 0,
            warmup: 0,
            shape: Some(self.plan.shape.clone()),
        }
    }

    /// The level's summary: its rate, whether it held, where it saturated (said as a
    /// warning); the level's end (`finish`) judges it.
    pub async fn summary(self, partial: bool, events: &mpsc::Sender<EngineEvent>) -> LevelSummary {
        let (offered, achieved) = self.acc.rates();
        let plan = self.plan;
        let meta = LevelMeta {
            index: plan.index,
            started_at: self.started_at,
            ended_at: crate::wallclock::rfc3339_utc(crate::wallclock::now()),
            partial,
            lag: None,
            requests_asked: self.n,
            sampling: None,
        };
        let mut summary = self.acc.finish(meta);
        summary.held = rate_held(offered, achieved);
        summary.open_loop.rate = Some(RateSummary {
            shape: plan.shape.clone(),
            arrival: plan.arrival,
            offered_rps: offered,
            achieved_rps: achieved,
            max_in_flight: plan.max_in_flight,
            saturated: self.saturated.clone(),
        });
        if let Some(s) = &self.saturated {
            let _ = events
                .send(EngineEvent::Warning(format!(
                    "level {}: stopped at {:.1} s: requests waiting past what the rate keeps in \
                     flight grew from {:.0} to {:.0} ({:.1}/s): the server cannot keep up with \
                     this rate",
                    plan.index + 1,
                    s.at_s,
                    s.pending_first,
                    s.pending_last,
                    s.pending_slope_per_s
                )))
                .await;
        }
        summary
    }
}

impl Follow for OpenCollector {
    /// Folds one finished request (its times from the level's start) into the level.
    fn record(&mut self, rec: &RequestRecord, sink: &mut dyn RunSink) {
        if let (Some(i), Some(f)) = (rec.detail.intended_ns, rec.first_token_ns) {
            self.waits.record(rec.end_ns, f.saturating_sub(i));
        }
        self.recent.record(rec);
        self.waiting.ended(rec.end_ns);
        if rec.error.is_none() {
            self.expected
                .success(rec.end_ns.saturating_sub(rec.start_ns));
        }
        fold(self.plan.index, rec, &mut self.acc, &mut self.live, sink);
    }

    /// A sample at `now` (ns since the level's start) while `sending` (the level has not
    /// been stopped): the level's progress, and `true` when the requests waiting have
    /// just been found to keep growing (the caller stops sending). Both read the requests
    /// waiting as of the view (`now` less the view lag); before the view reaches the
    /// level's start nothing is judged.
    fn progress(&mut self, now: u64, sending: bool, s: Sending) -> (LevelProgress, bool) {
        let t = now as f64 / 1e9;
        let due = self.due_by.by(now);
        let view = now.checked_sub(self.view_lag);
        let pending = view.map_or(0, |v| self.waiting.at(v)) as f64;
        let offered = offered_at(&self.plan.shape, self.intended.trace(), now);
        let mut saturated_now = false;
        if let (None, true, Some(view)) = (&self.saturated, sending, view) {
            let t = view as f64 / 1e9;
            let offered = offered_at(&self.plan.shape, self.intended.trace(), view);
            // what a rising rate keeps pending by itself (a ramp) is not a queue
            let excess = pending - self.expected.pending(offered);
            if let Some((slope, first, last)) = self.watch.sample(t, excess, offered) {
                let ns = |s: f64| (s.max(0.0) * 1e9) as u64;
                let waits = &self.waits;
                let wait = |from: f64, to: f64| waits.between(ns(from), ns(to)).nearest_rank(0.5);
                let start = t - SAMPLE.as_secs_f64() * WINDOW_SAMPLES as f64;
                self.saturated = Some(Saturation {
                    at_s: t,
                    pending_slope_per_s: slope,
                    pending_first: first,
                    pending_last: last,
                    wait_first_ms: wait(start, start + 1.0),
                    wait_last_ms: wait(t - 1.0, t + 1.0),
                    at_cap: self.cap > 0 && s.in_flight >= u64::from(self.cap),
                });
                saturated_now = true;
            }
        }
        let mut snapshot = progress(&mut self.live, now, s);
        snapshot.open = Some(self.recent.snapshot(
            t,
            s.sent,
            self.acc.completed(),
            pending as u64,
            if due < self.n { offered } else { 0.0 },
        ));
        (snapshot, saturated_now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn live_rates_span_at_least_a_second_and_a_trace_offers_what_it_holds() {
        let mut r = Recent::default();
        r.counts.push_back((0.0, 0, 0));
        // 3 sent, 1 finished a quarter second in: 3/s, not 12/s
        let p = r.snapshot(0.25, 3, 1, 2, 10.0);
        assert_eq!((p.sent_rps, p.done_rps), (3.0, 1.0));
        // 20 sent by 2 s: 10/s
        let p = r.snapshot(2.0, 20, 18, 2, 10.0);
        assert_eq!(p.sent_rps, 10.0);
        // a trace with 10 sends in its first second and 2 in the next four
        let ms = 1_000_000u64;
        let times: Vec<u64> = (0..10)
            .map(|i| i * 100 * ms)
            .chain([2_000 * ms, 4_000 * ms])
            .collect();
        let shape = LoadShape::Replay {
            records: 12,
            span_s: 4.0,
            speedup: 1.0,
        };
        assert_eq!(offered_at(&shape, Some(&times), 1_000 * ms), 10.0);
        assert_eq!(offered_at(&shape, Some(&times), 5_000 * ms), 12.0 / 5.0);
        let rate = LoadShape::Rate { rps: 7.0 };
        assert_eq!(offered_at(&rate, Some(&times), 3_000 * ms), 7.0);
    }

    #[test]
    fn a_ramp_keeps_no_excess_pending_once_its_latency_is_known() {
        let mut e = Expected::default();
        assert_eq!(e.pending(50.0), 0.0);
        for i in 0..UNLOADED_SAMPLES {
            e.success(400_000_000 + i * 10_000_000);
        }
        // the nearest-rank median of 400..590 ms (rank 10 of 20): 490 ms, read off the
        // histogram at its resolution: the top of the bucket 490 ms falls in (3 significant figures)
        assert_eq!(e.latency_s, Some(0.490_239));
        e.success(5_000_000_000);
        assert_eq!(e.latency_s, Some(0.490_239));
        // a ramp from 10 to 90 req/s at 0.5 s keeps 5 to 45 pending: no growth of the excess
        let mut w = SaturationWatch::default();
        for i in 0..40 {
            let t = i as f64 * 0.25;
            let rate = 10.0 + 8.0 * t;
            let pending = rate * 0.5 + (i % 2) as f64;
            assert_eq!(
                w.sample(t, pending - e.pending(rate), rate),
                None,
                "at {t} s"
            );
        }
    }

    #[test]
    fn requests_waiting_are_counted_by_when_they_ended_not_when_their_records_came() {
        let ms = 1_000_000u64;
        // 100 req/s for 10 s, each taking 50 ms: 5 waiting between any two arrivals
        let times: Vec<u64> = (0..1000).map(|i| i * 10 * ms).collect();
        let mut w = Waiting::new(&Intended::Trace(std::sync::Arc::new(times.clone())));
        let mut delivered = 0;
        for k in 2..=40u64 {
            // a worker's report 100 ms before the sample brings, last first, every record
            // that ended by it; the sample looks 500 ms back
            let now = k * 250 * ms + 5 * ms;
            let reported = k * 250 * ms - 100 * ms;
            let mut batch = Vec::new();
            while delivered < times.len() && times[delivered] + 50 * ms <= reported {
                batch.push(times[delivered] + 50 * ms);
                delivered += 1;
            }
            batch.into_iter().rev().for_each(|e| w.ended(e));
            let view = now - 500 * ms;
            // due by now less the records come would read 5 + 100/s x 105 ms = 15 or so,
            // rising and falling with each report
            let want = if view < 50 * ms { 1 } else { 5 };
            assert_eq!(w.at(view), want, "view at {} ms", view / ms);
        }
    }

    #[test]
    fn saturation_needs_sustained_growth() {
        // steady at ~10 pending: never
        let mut w = SaturationWatch::default();
        for i in 0..40 {
            let t = i as f64 * 0.25;
            assert_eq!(w.sample(t, 10.0 + (i % 3) as f64, 20.0), None);
        }
        // growing by 4/s from 4 (rate 20: the threshold is 2/s): after a full window, yes
        let mut w = SaturationWatch::default();
        let mut hit = None;
        for i in 0..40 {
            let t = i as f64 * 0.25;
            if let Some(h) = w.sample(t, 4.0 + 4.0 * t, 20.0) {
                hit = Some((i, h));
                break;
            }
        }
        let (i, (slope, first, last)) = hit.expect("saturated");
        assert_eq!(i, 15);
        assert!((slope - 4.0).abs() < 1e-9 && first == 4.0 && last == 19.0);
        // growing slowly (1/s at rate 20): not saturated
        let mut w = SaturationWatch::default();
        for i in 0..40 {
            assert_eq!(w.sample(i as f64 * 0.25, 4.0 + i as f64 * 0.25, 20.0), None);
        }
    }
}
