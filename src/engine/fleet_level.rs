//! One closed-loop level run by the workers of a distributed run (`docs/distributed.md`).
//!
//! Each batch of the level is split over the workers ([`split_level`]): streams as even as
//! possible, requests in proportion, consecutive prompt ranges, one start instant. Every
//! worker runs its share with the same engine as one process (its own warmup, cooldown and
//! timing in the task that reads the bytes) and sends each request's record back; here the
//! records are put on the level's timeline (the share's start is the batch's start on every
//! worker's clock) and folded into one accumulator, exactly as one process folds its own. So
//! every percentile is the percentile of the union of the workers' requests, the steady
//! window is where every stream of every worker was busy, and the intervals and verdict use
//! the same method on the same records.
//!
//! Adaptive sampling runs batch by batch: when a batch's shares have all ended, the planner
//! reads the level and, while it is undecided, the next batch is split and sent. Unlike one
//! process, the workers drain between batches; each batch counts as its own measurement of
//! the level (`LevelAccumulator::resume`), so the pause is left out of its timeline.
//!
//! A worker lost mid-batch (no word for a heartbeat's time, its process gone) stops every
//! share: the level is kept partial with that worker named, and the run ends.

use super::closed_loop::{
    begin, finish_level, fold, level_meta, next_batch, with_measurement, Begun,
};
use super::closed_loop::{Earlier, LevelCtx, LevelPlan, Measured, PROGRESS_PERIOD};
use super::events::EngineEvent;
use super::fleet::{split_level, BatchSplit, Fleet, FleetMsg, FleetWorker};
use super::lag::LagProbe;
use crate::clock::now_ns;
use crate::metrics::fleet::{FleetLevel, WorkerShare};
use crate::metrics::{AdaptiveSampling, SamplingStop};
use crate::record::RequestRecord;
use std::time::Duration;

/// How far ahead of now a batch's start instant is set: time for every worker to get its
/// share and be ready before it.
pub const START_LEAD: Duration = Duration::from_millis(300);

/// Per worker, over the level's batches.
#[derive(Debug, Clone, Default)]
pub(super) struct Tally {
    /// It was sent a share of the level.
    pub took: bool,
    pub concurrency: u32,
    requests: u64,
    errors: u64,
    timer_p99: f64,
    timer_max: f64,
    lost: Option<String>,
    pub in_flight: u64,
    /// Requests its share has sent (an open-loop share's).
    pub sent: u64,
    /// Content chunks its share of the running batch has received.
    pub chunks: u64,
    cpu_s: f64,
}

impl Tally {
    /// Counts a measured request as the level counts it: a request the stop cut is not the
    /// endpoint's error.
    pub(super) fn count(&mut self, rec: &RequestRecord) {
        if rec.counted() {
            self.requests += 1;
            self.errors += u64::from(
                rec.error
                    .as_ref()
                    .is_some_and(|e| e.kind != crate::record::ErrorKind::Cancelled),
            );
        }
    }
}

/// What a worker's message changes: the records are the caller's to place and fold.
pub(super) enum Heard {
    Records(usize, Vec<RequestRecord>),
    /// A worker was lost: every share stops.
    Lost,
    Noted,
}

/// Whether a level's running shares were told to stop, and whether a worker was lost.
#[derive(Debug, Default)]
pub(super) struct Halt {
    pub stopping: bool,
    pub lost: bool,
}

impl Halt {
    /// Stops every running share, once.
    pub(super) fn stop(&mut self, fleet: &dyn Fleet) {
        if !self.stopping {
            self.stopping = true;
            fleet.stop_shares();
        }
    }

    /// A worker was lost: every share stops, and the level is partial.
    pub(super) fn lose(&mut self, fleet: &dyn Fleet) {
        self.lost = true;
        self.stop(fleet);
    }
}

/// Notes a worker's message in its tally (and when its share began, on the controller's
/// clock, in `starts`).
pub(super) fn hear(tally: &mut [Tally], starts: &mut [Option<u64>], msg: FleetMsg) -> Heard {
    match msg {
        FleetMsg::Records { worker, records } => return Heard::Records(worker, records),
        FleetMsg::Status {
            worker,
            in_flight,
            sent,
            chunks,
        } => {
            let t = &mut tally[worker];
            t.in_flight = in_flight;
            t.sent = t.sent.max(sent);
            t.chunks = t.chunks.max(chunks);
        }
        FleetMsg::Started { worker, at_ns } => starts[worker] = Some(at_ns),
        FleetMsg::Done {
            worker,
            timer_late_p99_ms,
            timer_late_max_ms,
            cpu_s,
        } => {
            let t = &mut tally[worker];
            t.cpu_s += cpu_s;
            t.timer_p99 = t.timer_p99.max(timer_late_p99_ms);
            t.timer_max = t.timer_max.max(timer_late_max_ms);
            t.in_flight = 0;
        }
        FleetMsg::Lost { worker, why } => {
            tally[worker].lost = Some(why);
            tally[worker].in_flight = 0;
            return Heard::Lost;
        }
    }
    Heard::Noted
}

/// How far apart the shares that have begun began (ns), at least `before`.
pub(super) fn spread(starts: &[Option<u64>], before: u64) -> u64 {
    let began = starts.iter().flatten();
    match (began.clone().min(), began.max()) {
        (Some(a), Some(b)) => before.max(b - a),
        _ => before,
    }
}

/// The timer lag of the level's workers (p99, max; ms): the level's client lag.
pub(super) fn workers_lag(tally: &[Tally]) -> (f64, f64) {
    tally.iter().fold((0.0f64, 0.0f64), |(p, m), t| {
        (p.max(t.timer_p99), m.max(t.timer_max))
    })
}

/// Moves a record from its share's timeline onto the level's: its times start `shift` ns
/// later, its stream and index are numbered after the shares before it.
fn place(rec: &mut RequestRecord, shift: u64, slot_base: u32, index_base: u64) {
    let at = |t: &mut u64| *t += shift;
    at(&mut rec.slot_free_ns);
    at(&mut rec.start_ns);
    at(&mut rec.end_ns);
    for t in [
        &mut rec.first_token_ns,
        &mut rec.last_token_ns,
        &mut rec.server_first_sent_ns,
        &mut rec.server_last_sent_ns,
        &mut rec.detail.first_output_ns,
        &mut rec.detail.intended_ns,
    ]
    .into_iter()
    .flatten()
    {
        at(t);
    }
    rec.worker += slot_base;
    rec.index += index_base;
}

/// Runs one level on the fleet (see the module header); with `earlier`, one more
/// measurement of a level measured before, pooled with it.
pub async fn run_fleet_level(
    ctx: LevelCtx<'_>,
    plan: LevelPlan,
    earlier: Option<Earlier>,
    fleet: &dyn Fleet,
) -> Measured {
    let LevelCtx {
        cancel,
        events,
        sink,
        planner,
        ..
    } = ctx;
    let base = u64::from(plan.request_count);
    let may_grow = plan.request_cap > base;
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
    // the level's client lag is the workers' (they time the requests); the controller's own
    // timer would only cost it wake-ups
    let probe = LagProbe::off();
    let Begun {
        mut acc,
        from_ns: mut shift,
        index_offset,
        before,
        started_at,
        mut live,
    } = begin(&plan, earlier, planner);
    let meta = |partial: bool, sampling: Option<AdaptiveSampling>| {
        level_meta(&plan, &started_at, partial, sampling)
    };
    let mut sampling = AdaptiveSampling {
        batch: base,
        batches: 0,
        cap: plan.request_cap,
        stopped: SamplingStop::Decided,
    };
    let workers = fleet.workers();
    let mut tally = vec![Tally::default(); fleet.size()];
    let mut spread_ns = 0u64;
    // a level measured again: its workers block goes on from its earlier measurements'
    let mut cpu_earlier = 0.0;
    if let Some(prev) = before.as_ref().and_then(|b| b.workers.as_ref()) {
        for s in &prev.shares {
            if let Some(t) = workers
                .iter()
                .position(|w| w.index == s.worker)
                .and_then(|i| tally.get_mut(i))
            {
                t.requests += s.requests;
                t.errors += s.errors;
                t.cpu_s += s.cpu_s;
                t.timer_p99 = t.timer_p99.max(s.timer_late_p99_ms);
            }
        }
        spread_ns = (prev.start_spread_ms * 1e6) as u64;
        cpu_earlier = prev.controller_cpu_s;
    }
    // requests of this measurement's batches so far (the next batch's prompts start there)
    let mut planned = 0u64;
    // content chunks of the level's finished batches (the live token count goes on from it)
    let mut chunks_before = 0u64;
    let mut halt = Halt::default();
    let level_origin = now_ns();
    let cpu_before = crate::clock::process_cpu_ns();
    while !cancel.is_cancelled() {
        let batch = if planned == 0 {
            base
        } else {
            base.min(plan.request_cap.saturating_sub(planned))
        };
        let start_at_ns = now_ns() + START_LEAD.as_nanos() as u64;
        // the batch's records go on the level's timeline from `shift`, its snapshots count
        // from `level_origin`: the live figures take each record's end on the snapshots' clock
        live.set_record_offset(start_at_ns.saturating_sub(level_origin) as i64 - shift as i64);
        let shares = split_level(
            BatchSplit {
                level: plan.index,
                order: plan.order,
                concurrency: plan.concurrency,
                requests: batch,
                // each measurement warms up once, before its first batch
                warmup: if planned == 0 { plan.warmup } else { 0 },
                prompt_base: plan.prompt_base + planned,
                start_at_ns,
            },
            fleet.size(),
        );
        for s in &shares {
            tally[s.worker].took = true;
            tally[s.worker].concurrency = s.concurrency;
        }
        sampling.batches += 1;
        let bases: Vec<(u32, u64, u32)> = {
            let mut b = vec![(0u32, 0u64, 0u32); fleet.size()];
            for s in &shares {
                b[s.worker] = (s.slot_base, s.prompt_base - plan.prompt_base, s.requests);
            }
            b
        };
        let mut rx = fleet.start(shares.clone());
        // when each share really began, on the controller's clock: its records' times count
        // from there, so they go onto the level's timeline that much after the batch's start
        let mut starts: Vec<Option<u64>> = vec![None; fleet.size()];
        // cooldown records are numbered past the batch's requests
        let mut cooldown_index = index_offset + planned + batch;
        let mut tick = tokio::time::interval(PROGRESS_PERIOD);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        // a lost worker ends the level; a batch's stop is its own
        halt.stopping = false;
        loop {
            tokio::select! {
                biased;
                msg = rx.recv() => match msg.map(|m| hear(&mut tally, &mut starts, m)) {
                    Some(Heard::Records(worker, records)) => {
                        let (slot_base, index_base, _) = bases[worker];
                        for mut rec in records {
                            let index_base = if rec.cooldown {
                                rec.index = 0;
                                cooldown_index += 1;
                                cooldown_index - 1
                            } else {
                                index_offset + index_base
                            };
                            let late = starts[worker].map_or(0, |s| s.saturating_sub(start_at_ns));
                            place(&mut rec, shift + late, slot_base, index_base);
                            if rec.warmup {
                                let _ = sink.append_request(plan.index, &rec);
                                continue;
                            }
                            tally[worker].count(&rec);
                            fold(plan.index, &rec, &mut acc, &mut live, sink);
                        }
                    }
                    Some(Heard::Lost) => halt.lose(fleet),
                    Some(Heard::Noted) => {}
                    None => break,
                },
                _ = cancel.cancelled(), if !halt.stopping => halt.stop(fleet),
                _ = tick.tick() => {
                    let live_workers = fleet_level(&workers, &tally, spread(&starts, spread_ns), 0.0, 0.0);
                    let _ = events.try_send(EngineEvent::Workers(Box::new(live_workers)));
                    let now = now_ns().saturating_sub(level_origin);
                    live.on_chunks(now, chunks_before + tally.iter().map(|t| t.chunks).sum::<u64>());
                    let mut snapshot = live.snapshot(now);
                    snapshot.in_flight = tally.iter().map(|t| t.in_flight).sum();
                    let _ = events.try_send(EngineEvent::Progress(snapshot));
                }
            }
        }
        spread_ns = spread(&starts, spread_ns);
        planned += batch;
        // the next batch's shares count their chunks from zero
        chunks_before += tally
            .iter_mut()
            .map(|t| std::mem::take(&mut t.chunks))
            .sum::<u64>();
        if halt.lost || cancel.is_cancelled() {
            sampling.stopped = SamplingStop::Interrupted;
            break;
        }
        if !may_grow {
            break;
        }
        let (snapshot_of, meta_now) = (acc.clone(), meta(false, None));
        let Ok(snapshot) = tokio::task::spawn_blocking(move || snapshot_of.finish(meta_now)).await
        else {
            break;
        };
        if !next_batch(&snapshot, planned, planner, plan, cancel, &mut sampling) {
            break;
        }
        let more = base.min(plan.request_cap.saturating_sub(planned));
        acc.plan_more(more);
        live.set_total(planned + more);
        shift = acc.resume();
    }
    let controller_cpu_s =
        cpu_earlier + crate::clock::process_cpu_ns().saturating_sub(cpu_before) as f64 / 1e9;
    let partial = halt.lost || cancel.is_cancelled();
    let batches = sampling.batches;
    let sampling = may_grow.then_some(sampling);
    let (summary, kept) = if planner.pools() {
        (acc.clone().finish(meta(partial, sampling)), Some(acc))
    } else {
        (acc.finish(meta(partial, sampling)), None)
    };
    let label = format!("concurrency {}", plan.concurrency);
    let mut summary = finish_level(
        summary,
        probe,
        workers_lag(&tally),
        sink,
        events,
        planner,
        plan.index,
        &label,
    )
    .await;
    let fleet_block = fleet_level(
        &workers,
        &tally,
        spread_ns,
        controller_cpu_s,
        summary.benchmark_duration.avg,
    );
    with_workers(&mut summary, fleet_block, events, &label).await;
    let summary = match kept {
        Some(_) => with_measurement(summary, before, plan, batches),
        None => summary,
    };
    Measured { summary, acc: kept }
}

/// Gives the level its workers block, and says what the block warns about.
pub(super) async fn with_workers(
    summary: &mut crate::metrics::LevelSummary,
    block: FleetLevel,
    events: &tokio::sync::mpsc::Sender<EngineEvent>,
    label: &str,
) {
    if let Some(w) = &block.warning {
        let _ = events
            .send(EngineEvent::Warning(format!(
                "level {} ({label}): {w}",
                summary.index + 1
            )))
            .await;
    }
    summary.workers = Some(block);
}

/// The level's workers block: each share, the start spread and what to warn about (a spread
/// is warned about against the level's `duration_s`; 0 while it runs).
pub(super) fn fleet_level(
    workers: &[FleetWorker],
    tally: &[Tally],
    spread_ns: u64,
    controller_cpu_s: f64,
    duration_s: f64,
) -> FleetLevel {
    let shares: Vec<WorkerShare> = tally
        .iter()
        .enumerate()
        .filter(|(_, t)| t.took)
        .map(|(i, t)| WorkerShare {
            worker: workers.get(i).map_or(i as u32, |w| w.index),
            host: workers.get(i).map_or_else(String::new, |w| w.host.clone()),
            concurrency: t.concurrency,
            requests: t.requests,
            errors: t.errors,
            timer_late_p99_ms: t.timer_p99,
            cpu_s: t.cpu_s,
            in_flight: t.in_flight,
            lost: t.lost.clone(),
        })
        .collect();
    let mut level = FleetLevel {
        workers: shares.len() as u32,
        start_spread_ms: spread_ns as f64 / 1e6,
        clock_uncertainty_ms: workers
            .iter()
            .map(|w| w.clock_uncertainty_ns)
            .max()
            .unwrap_or(0) as f64
            / 1e6,
        controller_cpu_s,
        shares,
        warning: None,
    };
    let lost = level.lost();
    level.warning = if lost.is_empty() {
        level.spread_warning(duration_s)
    } else {
        Some(format!(
            "lost {}: the level is partial, and a search does not use it",
            lost.join("; ")
        ))
    };
    level
}
