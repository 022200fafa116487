//! One open-loop level (see `docs/open-loop.md`): requests go out when an arrival schedule
//! says, whether or not earlier ones have finished, so a slow server builds a queue the way
//! production traffic does. A dispatcher thread sleeps until each intended time (no busy
//! loop), optionally for a free slot under `--max-in-flight`, and spawns the request on the
//! same request path as the closed loop ([`super::workers::Sent`]); the collector folds the
//! records, reports progress, and stops the level early when requests waiting (in flight
//! or not yet sent) keep growing: the server cannot keep up with the rate.

use super::closed_loop::{finish_level, fold, prompts, LevelCtx};
use super::events::EngineEvent;
use super::intended::{Due, Intended};
use super::lag::LagProbe;
use super::workers::Sent;
use crate::clock::now_ns;
use crate::metrics::progress::OpenProgress;
use crate::metrics::rate::{rate_held, RateSummary, Saturation};
use crate::metrics::{Histogram, RecentDurations};
use crate::metrics::{LevelAccumulator, LevelMeta, LevelSummary, LiveLevel};
use crate::record::RequestRecord;
use crate::workload::arrivals::{Arrival, LoadShape, Schedule};
use crate::workload::{Prompt, WorkloadSpec};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, Semaphore};
use tokio_util::sync::CancellationToken;

/// How often pending requests are sampled (and progress is sent).
const SAMPLE: Duration = Duration::from_millis(250);
/// Samples in the saturation window (4 s).
const WINDOW_SAMPLES: usize = 16;

/// What to run for one open-loop level.
#[derive(Debug, Clone)]
pub struct OpenPlan {
    /// 0-based position of the level in the run.
    pub index: u32,
    pub shape: LoadShape,
    pub arrival: Arrival,
    pub seed: u64,
    /// Intended send times given outright (a trace replay), instead of drawn from the shape.
    pub times: Option<Arc<Vec<u64>>>,
    /// The most requests the level sends (a fixed rate runs exactly this many).
    pub max_requests: u64,
    pub max_in_flight: Option<u32>,
    /// Per-window metrics width.
    pub window: Duration,
}

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

/// Runs one open-loop level to its end, to saturation, or until cancelled.
pub async fn run_open_level(ctx: LevelCtx<'_>, plan: OpenPlan) -> LevelSummary {
    let LevelCtx {
        endpoint,
        workload,
        cancel,
        events,
        sink,
        planner,
        ..
    } = ctx;
    let schedule = Schedule {
        shape: plan.shape.clone(),
        arrival: plan.arrival,
        seed: plan.seed,
    };
    let intended = match &plan.times {
        Some(t) if t.len() as u64 <= plan.max_requests => Intended::Trace(t.clone()),
        Some(t) => Intended::Trace(Arc::new(t[..plan.max_requests as usize].to_vec())),
        None => Intended::Drawn {
            schedule,
            max: plan.max_requests,
        },
    };
    let n = intended.count();
    let feed = PromptFeed::start(workload, plan.index, n);
    let cap = plan.max_in_flight.unwrap_or(0);
    let _ = events
        .send(EngineEvent::LevelStarted {
            index: plan.index,
            concurrency: cap,
            request_count: n,
            request_cap: n,
            earlier: 0,
            shape: Some(plan.shape.clone()),
        })
        .await;
    let started_at = crate::wallclock::rfc3339_utc(std::time::SystemTime::now());
    let probe = LagProbe::start();
    let stop = cancel.child_token();
    let in_flight = Arc::new(AtomicU64::new(0));
    let dispatched = Arc::new(AtomicU64::new(0));
    let live_chunks = Arc::new(AtomicU64::new(0));
    let (tx, mut rx) = mpsc::unbounded_channel::<RequestRecord>();
    let level_start = now_ns() + 2_000_000;
    let rt = tokio::runtime::Handle::current();
    let dispatch_args = Dispatch {
        endpoint: endpoint.clone(),
        intended: intended.clone(),
        level_start,
        slots: (cap > 0).then(|| Arc::new(Semaphore::new(cap as usize))),
        in_flight: in_flight.clone(),
        dispatched: dispatched.clone(),
        live: live_chunks.clone(),
        stop: stop.clone(),
        tx,
    };
    let dispatcher = std::thread::Builder::new()
        .name("rightsize-dispatch".into())
        .spawn(move || dispatch(dispatch_args, feed, rt))
        .expect("a thread for the dispatcher");

    let mut acc = LevelAccumulator::new(cap, n)
        .with_goodput(planner.goodput_limits())
        .with_windows(plan.window);
    let mut live = LiveLevel::new(plan.index, cap, n, Duration::from_millis(500), 20);
    let mut watch = SaturationWatch::default();
    let mut saturated: Option<Saturation> = None;
    // schedule lag + TTFT of recent successes, by their end: the wait users saw
    let mut waits = RecentDurations::new(
        RECENT_BUCKET,
        SAMPLE * WINDOW_SAMPLES as u32 + Duration::from_secs(2),
    );
    let mut recent = Recent::default();
    recent.counts.push_back((0.0, 0, 0));
    let mut expected = Expected::default();
    let mut due_by = Due::new(&intended);
    let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + SAMPLE, SAMPLE);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            biased;
            rec = rx.recv() => match rec {
                Some(rec) => {
                    if let (Some(i), Some(f)) = (rec.detail.intended_ns, rec.first_token_ns) {
                        waits.record(rec.end_ns, f.saturating_sub(i));
                    }
                    recent.record(&rec);
                    if rec.error.is_none() {
                        expected.success(rec.end_ns.saturating_sub(rec.start_ns));
                    }
                    fold(plan.index, &rec, &mut acc, &mut live, sink);
                }
                None => break,
            },
            _ = tick.tick() => {
                let now = now_ns().saturating_sub(level_start);
                let t = now as f64 / 1e9;
                let due = due_by.by(now);
                let pending = due.saturating_sub(acc.completed()) as f64;
                let offered = offered_at(&plan.shape, intended.trace(), now);
                if saturated.is_none() && !stop.is_cancelled() {
                    // what a rising rate keeps pending by itself (a ramp) is not a queue
                    let excess = pending - expected.pending(offered);
                    if let Some((slope, first, last)) = watch.sample(t, excess, offered) {
                        let ns = |s: f64| (s.max(0.0) * 1e9) as u64;
                        let wait = |from: f64, to: f64| waits.between(ns(from), ns(to)).nearest_rank(0.5);
                        let start = t - SAMPLE.as_secs_f64() * WINDOW_SAMPLES as f64;
                        saturated = Some(Saturation {
                            at_s: t,
                            pending_slope_per_s: slope,
                            pending_first: first,
                            pending_last: last,
                            wait_first_ms: wait(start, start + 1.0),
                            wait_last_ms: wait(t - 1.0, t + 1.0),
                            at_cap: cap > 0 && in_flight.load(Ordering::Relaxed) >= u64::from(cap),
                        });
                        stop.cancel();
                    }
                }
                live.on_chunks(now, live_chunks.load(Ordering::Relaxed));
                let mut snapshot = live.snapshot(now);
                snapshot.in_flight = in_flight.load(Ordering::Relaxed);
                snapshot.open = Some(recent.snapshot(
                    t,
                    dispatched.load(Ordering::Relaxed),
                    acc.completed(),
                    pending as u64,
                    if due < n { offered } else { 0.0 },
                ));
                let _ = events.try_send(EngineEvent::Progress(snapshot));
            }
        }
    }
    // the channel closed: every sender (the dispatcher's and each request's) is gone
    let _ = tokio::task::spawn_blocking(move || dispatcher.join()).await;
    let (offered, achieved) = acc.rates();
    let meta = LevelMeta {
        index: plan.index,
        started_at,
        ended_at: crate::wallclock::rfc3339_utc(std::time::SystemTime::now()),
        partial: cancel.is_cancelled(),
        lag: None,
        requests_asked: n,
        sampling: None,
    };
    let mut summary = acc.finish(meta);
    summary.held = rate_held(offered, achieved);
    summary.open_loop.rate = Some(RateSummary {
        shape: plan.shape.clone(),
        arrival: plan.arrival,
        offered_rps: offered,
        achieved_rps: achieved,
        max_in_flight: plan.max_in_flight,
        saturated,
    });
    if let Some(s) = &summary
        .open_loop
        .rate
        .as_ref()
        .and_then(|r| r.saturated.clone())
    {
        let _ = events
            .send(EngineEvent::Warning(format!(
                "level {}: stopped at {:.1} s: requests waiting past what the rate keeps in flight \
                 grew from {:.0} to {:.0} ({:.1}/s): the server cannot keep up with this rate",
                plan.index + 1,
                s.at_s,
                s.pending_first,
                s.pending_last,
                s.pending_slope_per_s
            )))
            .await;
    }
    let label = plan.shape.label();
    finish_level(
        summary,
        probe,
        (0.0, 0.0),
        sink,
        events,
        planner,
        plan.index,
        &label,
    )
    .await
}

/// How many prompts are made ahead of the dispatcher.
const PROMPTS_AHEAD: usize = 4096;

/// A level's prompts in order, made as they are used: the first [`PROMPTS_AHEAD`] before the
/// level starts, the rest on a thread of their own that stays that far ahead of the
/// dispatcher. A long high-rate level holds a few thousand prompts, not millions (a
/// 100,000 req/s level used to grow by 170 MB/s while it made all of them up front).
struct PromptFeed {
    next: std::sync::mpsc::Receiver<Prompt>,
}

impl PromptFeed {
    fn start(workload: &WorkloadSpec, level: u32, n: u64) -> PromptFeed {
        let (tx, next) = std::sync::mpsc::sync_channel(PROMPTS_AHEAD);
        let first = n.min(PROMPTS_AHEAD as u64);
        for p in prompts(workload, level, 0, first) {
            // room for all of them: the channel holds PROMPTS_AHEAD
            let _ = tx.send(p);
        }
        if first < n {
            let w = workload.clone();
            std::thread::Builder::new()
                .name("rightsize-prompts".into())
                .spawn(move || {
                    for i in first..n {
                        let Some(p) = prompts(&w, level, i, 1).pop() else {
                            return;
                        };
                        // the dispatcher has stopped: so does this
                        if tx.send(p).is_err() {
                            return;
                        }
                    }
                })
                .expect("a thread for the prompts");
        }
        PromptFeed { next }
    }
}

/// What the dispatcher needs.
struct Dispatch {
    endpoint: crate::endpoint::Endpoint,
    intended: Intended,
    level_start: u64,
    slots: Option<Arc<Semaphore>>,
    in_flight: Arc<AtomicU64>,
    dispatched: Arc<AtomicU64>,
    live: Arc<AtomicU64>,
    stop: CancellationToken,
    tx: mpsc::UnboundedSender<RequestRecord>,
}

/// The longest the dispatcher sleeps before looking at the stop token again.
const STOP_CHECK: Duration = Duration::from_millis(20);

/// Sends each request at its intended time (after a free slot, when capped), each read on a
/// task of its own; returns when every request is sent (or the level stops).
///
/// It runs on a thread of its own, not on the runtime: tokio's timer wheel fires to the
/// millisecond and late when the workers are busy, while a thread sleeping on the system
/// clock wakes within tens of microseconds. On an `http://` endpoint it writes the request
/// itself the moment it wakes, on an idle connection or one it connected ahead
/// ([`crate::endpoint::DirectWriter`]), and the runtime only reads the answer: a send waits
/// on this thread's wake-up alone. Without a ready connection (or over `https://`) the
/// runtime sends it, one wake-up later. Either way the send is stamped where the bytes go
/// out, so any delay shows in the schedule lag.
fn dispatch(d: Dispatch, feed: PromptFeed, rt: tokio::runtime::Handle) {
    crate::sched::latency_critical();
    let d = Arc::new(d);
    let mut writer = d.endpoint.direct_writer();
    for (i, at) in d.intended.iter().enumerate() {
        let due = d.level_start + at;
        let Ok(prompt) = feed.next.recv() else {
            return;
        };
        // the bytes are built before the sleep, not at the intended time
        let prepared = writer
            .as_ref()
            .map(|w| d.endpoint.prepare(w, prompt.input(), prompt.max_tokens));
        loop {
            if d.stop.is_cancelled() {
                return;
            }
            if let Some(w) = writer.as_mut() {
                w.get_ready(due);
            }
            let now = now_ns();
            if now >= due {
                break;
            }
            std::thread::sleep(Duration::from_nanos(due - now).min(STOP_CHECK));
        }
        let permit = match &d.slots {
            Some(s) => {
                let s = s.clone();
                let stop = d.stop.clone();
                let p = rt.block_on(async move {
                    tokio::select! {
                        _ = stop.cancelled() => None,
                        p = s.acquire_owned() => p.ok(),
                    }
                });
                if p.is_none() {
                    return;
                }
                p
            }
            None => None,
        };
        d.dispatched.fetch_add(1, Ordering::Relaxed);
        let released = now_ns();
        let written = match (writer.as_mut(), prepared) {
            (Some(w), Some(p)) => w.write(p),
            _ => None,
        };
        let d = d.clone();
        rt.spawn(async move {
            let sent = Sent {
                endpoint: &d.endpoint,
                in_flight: &d.in_flight,
                live: &d.live,
                cancel: &d.stop,
                drop_on: &CancellationToken::new(),
                released_ns: Some(released),
            };
            let rec = match written {
                Some(w) => {
                    sent.send_written(&prompt, w, i as u64, i as u32, d.level_start)
                        .await
                }
                None => sent.send(&prompt, i as u64, i as u32, d.level_start).await,
            };
            if let Some(mut rec) = rec {
                rec.detail.intended_ns = Some(at);
                let _ = d.tx.send(rec);
            }
            drop(permit);
        });
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
