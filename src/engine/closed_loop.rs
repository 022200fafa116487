//! One level: `concurrency` closed-loop workers that together complete the level's requests
//! over the shared endpoint, with a collector folding their records as they arrive. Each
//! worker takes the next request the moment its previous one ends, so the target concurrency
//! is held with no client-side queue.
//!
//! Adaptive sampling (see `docs/search.md`): when the workers reach the end of a batch, the
//! collector asks the planner whether the level's verdict is decided; while it is uncertain,
//! the level held its concurrency and the cap allows, another batch of requests runs at the
//! same concurrency without a restart.
//!
//! A level measured again (the SLA search pools, `docs/search.md`) resumes from what its
//! earlier measurements left ([`Earlier`]): the new requests join the old ones in the same
//! accumulator, on the level's timeline continued from its last request, so the level has one
//! summary and one verdict on all of them.

use super::events::EngineEvent;
use super::lag::{lag_warning, LagProbe};
use super::sink::RunSink;
use super::workers::{self, Handover, PromptMaker, SessionSource, Work};
use crate::clock::now_ns;
use crate::endpoint::Endpoint;
use crate::metrics::{
    AdaptiveSampling, ClientLag, LevelAccumulator, LevelMeta, LevelSummary, LiveLevel, Measurement,
    SamplingStop,
};
use crate::plan::LevelPlanner;
use crate::record::sla::Verdict;
use crate::record::RequestRecord;
use crate::workload::{Prompt, WorkloadSpec};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// How often a progress snapshot goes to the consumer.
pub const PROGRESS_PERIOD: Duration = Duration::from_millis(250);

/// Adaptive sampling stops adding batches to a level whose achieved concurrency so far is
/// below this share of its target (the held line is 95 %).
const STOP_SHARE: f64 = 0.9;

/// Warmup prompts are drawn from their own index range so they never repeat a measured one.
const WARMUP_INDEX_BASE: u64 = 1 << 40;
/// Warmup sessions likewise (multi-turn).
const WARMUP_SESSION_BASE: u64 = 1 << 40;

/// What to run for one level.
#[derive(Debug, Clone, Copy)]
pub struct LevelPlan {
    /// 0-based position of the level in the run.
    pub index: u32,
    pub concurrency: u32,
    /// The first batch: the run's request count, raised to at least twice the concurrency.
    pub request_count: u32,
    /// The run's request count as asked.
    pub requests_asked: u32,
    /// The most requests the level may run (adaptive sampling); `request_count` when the
    /// level may not grow.
    pub request_cap: u64,
    /// Requests sent first at the same concurrency and not counted.
    pub warmup: u32,
    /// The position of this measurement among the run's measurements (0-based); its prompts
    /// are that position's, so a level measured again sends new prompts, and no two
    /// measurements of a run send the same ones (without pooling it is the level's index).
    pub order: u32,
    /// A screen: the plan steers by it and takes its first batch only.
    pub screen: bool,
    /// The first prompt (and session) index of this measurement: 0 in one process; a
    /// worker's share of a distributed level starts where the shares before it end, so the
    /// workers together send the prompts one process would.
    pub prompt_base: u64,
}

/// What the earlier measurements of a level measured again left.
pub struct Earlier {
    /// The level's accumulator as its last measurement left it.
    pub acc: LevelAccumulator,
    /// The level as it stood (its start, batches and measurements).
    pub summary: LevelSummary,
}

/// A finished measurement: the level's summary (every measurement of it so far) and, when
/// the plan pools, the accumulator it can be resumed from.
pub struct Measured {
    pub summary: LevelSummary,
    pub acc: Option<LevelAccumulator>,
}

/// Everything a level needs from the run.
pub struct LevelCtx<'a> {
    pub endpoint: &'a Endpoint,
    pub workload: &'a WorkloadSpec,
    pub cancel: &'a CancellationToken,
    pub events: &'a mpsc::Sender<EngineEvent>,
    /// Where each request's record goes.
    pub sink: &'a mut dyn RunSink,
    /// Judges the level and decides whether it needs more requests.
    pub planner: &'a dyn LevelPlanner,
    /// A distributed run's share (`fleet_level`): its cooldown requests go on until this
    /// fires, when every share's measured requests have ended, not when its own have, so
    /// the level's last measured requests run with every stream of every worker busy.
    /// `None` in one process.
    pub hold: Option<&'a CancellationToken>,
}

/// The prompts of requests `from..from + count` of level `level`. With multi-turn sessions a
/// request's messages depend on the answers before it, so workers build each turn as it
/// comes and the book holds empty prompts, one per index.
pub(super) fn prompts(workload: &WorkloadSpec, level: u32, from: u64, count: u64) -> Vec<Prompt> {
    if workload.sessions.is_some() {
        return (0..count).map(|_| Prompt::turn_placeholder()).collect();
    }
    (from..from + count)
        .map(|i| workload.prompt(level, i))
        .collect()
}

/// Runs one level to its end (or until cancelled: then the summary is marked partial); with
/// `earlier`, one more measurement of a level measured before, pooled with it.
pub async fn run_level(ctx: LevelCtx<'_>, plan: LevelPlan, earlier: Option<Earlier>) -> Measured {
    let LevelCtx {
        endpoint,
        workload,
        cancel,
        events,
        sink,
        planner,
        hold,
    } = ctx;
    let base = u64::from(plan.request_count);
    let may_grow = plan.request_cap > base;
    let work = Work::with_sessions(
        prompts(workload, plan.order, plan.prompt_base, base),
        SessionSource::of(workload, plan.order, plan.prompt_base),
        Some(PromptMaker {
            workload: workload.clone(),
            level: plan.order,
            cap: plan.request_cap,
            base: plan.prompt_base,
        }),
    );
    let _ = events
        .send(EngineEvent::LevelStarted {
            shape: None,
            index: plan.index,
            concurrency: plan.concurrency,
            request_count: base,
            request_cap: plan.request_cap.max(base),
            earlier: earlier.as_ref().map_or(0, |e| e.summary.planned_requests),
            warmup: plan.warmup,
        })
        .await;
    let probe = LagProbe::start();
    let (tx, mut rx) = mpsc::unbounded_channel::<RequestRecord>();
    let Begun {
        mut acc,
        from_ns,
        index_offset,
        before,
        started_at,
        mut live,
    } = begin(&plan, earlier, planner);
    let done_before = acc.completed();
    let level_start = now_ns().saturating_sub(from_ns);
    // The warmup flows into the level: its workers run the warmup requests and each leaves
    // when none is left for it, giving its place to one of the level's workers, so the
    // level's first requests meet a server already at the load, not one that all the
    // level's streams reach at once (whose queue for its prefills would be measured).
    // A level measured again warms again: other levels ran in between and the server has
    // drained, so its new requests would meet it idle, and their start would be pooled with
    // the earlier requests; a level's later batches (adaptive sampling) run on without a
    // restart and need none.
    let handover_flows = plan.warmup > 0;
    // When the level's first request ends, the server has run at the level's load for a whole
    // request: a warmup request that has had no answer yet then is cut (its record says so)
    // and its place goes to the level. Without the cut the level fills its last slots only
    // when the slowest warmup request ends; where most streams wait in the server's queue (or
    // in the listen backlog, for a connection), that is rounds late, and a level of a few
    // rounds never has every slot busy (`tests/hold/hold_10k.rs`). A warmup request already
    // answering runs on: its answer is at most one request's length (`warmup_lengths`), and
    // cutting the ones still decoding put their places into the level at once, as a wave.
    let warmup_cut = cancel.child_token();
    let handover = if handover_flows && !cancel.is_cancelled() {
        let mut first = prompts(
            workload,
            plan.order,
            WARMUP_INDEX_BASE + plan.prompt_base,
            u64::from(plan.warmup),
        );
        super::warmup_lengths::spread(&mut first, plan.concurrency);
        let warmup = Work::warmup(
            first,
            SessionSource::of(workload, plan.order, WARMUP_SESSION_BASE + plan.prompt_base),
            warmup_cut.clone(),
        );
        let places = Arc::new(tokio::sync::Semaphore::new(0));
        workers::spawn(
            endpoint,
            plan.concurrency,
            &warmup,
            level_start,
            cancel,
            tx.clone(),
            Handover::Gives(places.clone()),
        );
        Handover::Takes(places)
    } else {
        Handover::None
    };
    workers::spawn(
        endpoint,
        plan.concurrency,
        &work,
        level_start,
        cancel,
        tx,
        handover,
    );
    // a share's cooldown ends when the controller says every share's measured requests have
    let settles_here = hold.is_none();
    if let Some(hold) = hold {
        let (hold, work) = (hold.clone(), work.clone());
        tokio::spawn(async move {
            hold.cancelled().await;
            work.settled.cancel();
        });
    }
    let settle = |work: &Work, completed: u64| {
        if settles_here {
            settle(work, completed);
        }
    };
    let meta = |partial: bool, sampling: Option<AdaptiveSampling>| {
        level_meta(&plan, &started_at, partial, sampling)
    };
    let mut sampling = AdaptiveSampling {
        batch: base,
        batches: 1,
        cap: plan.request_cap,
        stopped: SamplingStop::Decided,
    };
    // the next batch's prompts are made while the current batch runs and put in the book;
    // a worker that gets there first makes its own (`PromptMaker`)
    let next_prompts = |from: u64| {
        let room = plan.request_cap.saturating_sub(from).min(base);
        let (w, level) = (workload.clone(), plan.order);
        (room > 0).then(|| tokio::task::spawn_blocking(move || prompts(&w, level, from, room)))
    };
    let mut upcoming = if may_grow {
        next_prompts(base)
    } else {
        // a fixed count: the workers run the book and leave
        work.done.cancel();
        None
    };
    // Records of requests started past the limit wait here until the level grows over them:
    // `acc` holds exactly the requests below the limit until the level is done, so a decision
    // reads a whole batch, not the requests that happened to finish first (quick failures,
    // short answers). The snapshot is summarised on a blocking thread: it reads every
    // histogram, which must not hold up the reads on the runtime's threads.
    let mut ahead: Vec<RequestRecord> = Vec::new();
    // a level's first measurement without warmup: whether its start holds its TTFT tail
    let mut first_round = (!handover_flows && index_offset == 0)
        .then(|| super::start_note::FirstRound::new(plan.concurrency));
    let mut pending: Option<tokio::task::JoinHandle<LevelSummary>> = None;
    let mut tick = tokio::time::interval(PROGRESS_PERIOD);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            // records first: a decision reads what the collector has folded
            biased;
            rec = rx.recv() => match rec {
                // the warmup's requests are logged, not measured
                Some(mut rec) if rec.warmup => {
                    if !cancel.is_cancelled() {
                        cut_note(&mut rec);
                    }
                    let _ = sink.append_request(plan.index, &rec);
                }
                Some(mut rec) => {
                    warmup_cut.cancel();
                    let at = rec.index;
                    rec.index += index_offset;
                    if let Some(f) = first_round.as_mut() {
                        f.add(&rec);
                    }
                    if at < work.limit() {
                        fold(plan.index, &rec, &mut acc, &mut live, sink);
                    } else if work.done.is_cancelled() {
                        rec.cooldown = true;
                        fold(plan.index, &rec, &mut acc, &mut live, sink);
                    } else {
                        ahead.push(rec);
                    }
                    settle(&work, acc.completed() - done_before);
                    let batch_done = acc.completed() - done_before >= work.limit();
                    if batch_done && pending.is_none() && !work.done.is_cancelled() {
                        let (snapshot_of, meta_now) = (acc.clone(), meta(false, None));
                        pending =
                            Some(tokio::task::spawn_blocking(move || snapshot_of.finish(meta_now)));
                    }
                }
                None => break,
            },
            stocked = async {
                match upcoming.as_mut() {
                    Some(h) => h.await,
                    None => std::future::pending().await,
                }
            }, if upcoming.is_some() => {
                upcoming = None;
                work.stock(stocked.unwrap_or_default());
            }
            snapshot = async {
                match pending.as_mut() {
                    Some(p) => p.await,
                    None => std::future::pending().await,
                }
            }, if pending.is_some() => {
                pending = None;
                let grow = snapshot.is_ok_and(|snapshot| {
                    next_batch(&snapshot, work.limit(), planner, plan, cancel, &mut sampling)
                });
                if grow && !work.stocked() {
                    if let Some(h) = upcoming.take() {
                        work.stock(h.await.unwrap_or_default());
                    }
                }
                let before = work.limit();
                if grow && work.stocked() {
                    work.grow();
                    acc.plan_more(work.limit() - before);
                    live.set_total(work.limit());
                    sampling.batches += 1;
                    upcoming = next_prompts(work.limit());
                } else {
                    work.done.cancel();
                }
                // below the limit if the level grew over them, else they were cooldown
                for mut rec in ahead.drain(..) {
                    rec.cooldown = rec.index - index_offset >= work.limit();
                    fold(plan.index, &rec, &mut acc, &mut live, sink);
                }
                settle(&work, acc.completed() - done_before);
                // a batch the run-ahead already finished is decided at once
                if !work.done.is_cancelled() && acc.completed() - done_before >= work.limit() {
                    let (snapshot_of, meta_now) = (acc.clone(), meta(false, None));
                    pending =
                        Some(tokio::task::spawn_blocking(move || snapshot_of.finish(meta_now)));
                }
            }
            _ = tick.tick() => {
                let now = now_ns().saturating_sub(level_start);
                live.on_chunks(now, work.live_chunks.load(Ordering::Relaxed));
                let mut snapshot = live.snapshot(now);
                snapshot.in_flight = work.in_flight.load(Ordering::Relaxed);
                // a snapshot may be dropped when the consumer lags; the next one replaces it
                let _ = events.try_send(EngineEvent::Progress(snapshot));
            }
        }
    }
    // cut short (cancelled) while some ran ahead: past the limit, not measured
    for mut rec in ahead.drain(..) {
        rec.cooldown = true;
        fold(plan.index, &rec, &mut acc, &mut live, sink);
    }
    let partial = cancel.is_cancelled();
    if partial {
        sampling.stopped = SamplingStop::Interrupted;
    }
    let batches = sampling.batches;
    let sampling = may_grow.then_some(sampling);
    let (summary, kept) = if planner.pools() {
        (acc.clone().finish(meta(partial, sampling)), Some(acc))
    } else {
        (acc.finish(meta(partial, sampling)), None)
    };
    let label = format!("concurrency {}", plan.concurrency);
    let summary = finish_level(
        summary,
        probe,
        (0.0, 0.0),
        sink,
        events,
        planner,
        plan.index,
        &label,
    )
    .await;
    if let Some(note) = summary
        .ttft_p95_ms()
        .filter(|_| !partial)
        .zip(first_round.as_ref())
        .and_then(|(p95, f)| f.note(p95, summary.ok_count()))
    {
        let _ = events
            .send(EngineEvent::Warning(format!(
                "level {} ({label}): {note}",
                plan.index + 1
            )))
            .await;
    }
    if kept.is_none() {
        return Measured { summary, acc: None };
    }
    let summary = with_measurement(summary, before, plan, batches);
    Measured { summary, acc: kept }
}

/// A measurement as it begins: the level's accumulator (a level measured again resumes its
/// own: its timeline continues where its last request ended, `from_ns`, and its requests are
/// numbered on from its earlier ones, `index_offset`), the level as it stood, its start and
/// its live figures. One process's level and a distributed one begin alike.
pub(super) struct Begun {
    pub acc: LevelAccumulator,
    pub from_ns: u64,
    pub index_offset: u64,
    pub before: Option<LevelSummary>,
    pub started_at: String,
    pub live: LiveLevel,
}

pub(super) fn begin(
    plan: &LevelPlan,
    earlier: Option<Earlier>,
    planner: &dyn LevelPlanner,
) -> Begun {
    let base = u64::from(plan.request_count);
    let started_at = match &earlier {
        Some(e) => e.summary.start_time.clone(),
        None => crate::wallclock::rfc3339_utc(crate::wallclock::now()),
    };
    let (acc, from_ns, index_offset, before) = match earlier {
        Some(Earlier { mut acc, summary }) => {
            let from = acc.resume();
            acc.plan_more(base);
            let offset = summary.planned_requests;
            (acc, from, offset, Some(summary))
        }
        None => (
            LevelAccumulator::new(plan.concurrency, base).with_goodput(planner.goodput_limits()),
            0,
            0,
            None,
        ),
    };
    Begun {
        acc,
        from_ns,
        index_offset,
        before,
        started_at,
        live: LiveLevel::new(
            plan.index,
            plan.concurrency,
            base,
            Duration::from_millis(500),
            20,
        ),
    }
}

/// What a closed-loop level's summary is told beside its records.
pub(super) fn level_meta(
    plan: &LevelPlan,
    started_at: &str,
    partial: bool,
    sampling: Option<AdaptiveSampling>,
) -> LevelMeta {
    LevelMeta {
        index: plan.index,
        started_at: started_at.to_string(),
        ended_at: crate::wallclock::rfc3339_utc(crate::wallclock::now()),
        partial,
        lag: None,
        requests_asked: u64::from(plan.requests_asked),
        sampling,
    }
}

/// A pooling plan's level after a measurement: its measurements (the earlier ones of
/// `before`, then this one of `batches` batches), with batches and cap over all of them.
pub(super) fn with_measurement(
    mut summary: LevelSummary,
    before: Option<LevelSummary>,
    plan: LevelPlan,
    batches: u32,
) -> LevelSummary {
    let before_requests = before.as_ref().map_or(0, |b| b.planned_requests);
    let mut measurements = before.map(|b| b.measurements).unwrap_or_default();
    measurements.push(Measurement {
        order: plan.order,
        batches,
        requests: summary.planned_requests - before_requests,
        screen: plan.screen,
        verdict: summary.verdict.unwrap_or(Verdict::Uncertain),
        held: summary.held,
        ratios: summary
            .slas
            .iter()
            .map(|c| Some(c.ratio()).filter(|r| r.is_finite()))
            .collect(),
    });
    // batches and cap over every measurement (a screen ran one batch and had no sampling)
    if let Some(s) = summary.sampling.as_mut() {
        s.batches = measurements.iter().map(|m| m.batches).sum();
        s.cap += before_requests;
    }
    summary.measurements = measurements;
    summary
}

/// The end of any level: the request log flushed, the level
/// judged against the plan's SLAs, and the client's own lag measured and, when large, said.
/// `workers_lag` is the worst timer lag (p99, max; ms) of a distributed level's workers,
/// zero in one process: the level's client lag is the worse of it and this process's.
#[allow(clippy::too_many_arguments)]
pub(super) async fn finish_level(
    mut summary: LevelSummary,
    probe: LagProbe,
    workers_lag: (f64, f64),
    sink: &mut dyn RunSink,
    events: &mpsc::Sender<EngineEvent>,
    planner: &dyn LevelPlanner,
    index: u32,
    label: &str,
) -> LevelSummary {
    let (timer_p99, timer_max) = probe.stop().await;
    let (timer_p99, timer_max) = (timer_p99.max(workers_lag.0), timer_max.max(workers_lag.1));
    // a failed write stops the run through the engine's sink, which keeps the error for
    // the run to end with: nothing to do with it here
    let _ = sink.flush_requests();
    planner.judge(&mut summary);
    let slot_p99 = summary.slot_to_send.as_ref().map_or(0.0, |s| s.p99);
    let typical = summary.ttft_p(50.0).or(summary.e2e_p50_ms()).unwrap_or(0.0);
    let warning = lag_warning(timer_p99, slot_p99, typical);
    if let Some(w) = &warning {
        let _ = events
            .send(EngineEvent::Warning(format!(
                "level {} ({label}): {w}",
                index + 1
            )))
            .await;
    }
    summary.client_lag = Some(ClientLag {
        timer_late_p99_ms: timer_p99,
        timer_late_max_ms: timer_max,
        slot_to_send_p99_ms: slot_p99,
        warning,
    });
    summary
}

/// A warmup request cut when the level's first request ended (the run goes on) says so.
fn cut_note(rec: &mut RequestRecord) {
    if let Some(e) = rec
        .error
        .as_mut()
        .filter(|e| e.kind == crate::record::ErrorKind::Cancelled)
    {
        e.message = "warmup request cut: the level's first request had ended".into();
    }
}

/// Logs a record and, unless it is warmup or cooldown, folds it into the level.
pub(super) fn fold(
    level: u32,
    rec: &RequestRecord,
    acc: &mut LevelAccumulator,
    live: &mut LiveLevel,
    sink: &mut dyn RunSink,
) {
    live.on_record(rec);
    acc.add(rec);
    // a failed write has stopped the run (the engine's sink says so, once)
    let _ = sink.append_request(level, rec);
}

/// Once the level takes no more and every measured request of this measurement (`completed`)
/// has finished, cooldown stops.
fn settle(work: &Work, completed: u64) {
    if work.done.is_cancelled() && completed >= work.limit() {
        work.settled.cancel();
    }
}

/// Near the end of a batch: whether the level runs another one, and why it stops when it
/// does not. The verdict is read from `snapshot`, what had finished by then.
pub(super) fn next_batch(
    snapshot: &LevelSummary,
    limit: u64,
    planner: &dyn LevelPlanner,
    plan: LevelPlan,
    cancel: &CancellationToken,
    sampling: &mut AdaptiveSampling,
) -> bool {
    if cancel.is_cancelled() {
        sampling.stopped = SamplingStop::Interrupted;
        return false;
    }
    // More requests cannot make a level held that is clearly short of its target. The first
    // batch's window is too short to tell (it may cover little more than the start), and
    // near the line more requests may hold it: then sampling goes on and the whole level
    // decides.
    let clearly_short = snapshot
        .achieved_concurrency
        .is_some_and(|a| a < STOP_SHARE * f64::from(plan.concurrency));
    if sampling.batches >= 2 && clearly_short {
        sampling.stopped = SamplingStop::NotHeld;
        return false;
    }
    // nothing finished yet (the records lag the notice): nothing is decided
    let finished = snapshot.ok_count() + snapshot.error_count();
    if finished > 0 && !planner.needs_more(snapshot) {
        sampling.stopped = SamplingStop::Decided;
        return false;
    }
    if limit >= plan.request_cap {
        sampling.stopped = SamplingStop::Cap;
        return false;
    }
    true
}
