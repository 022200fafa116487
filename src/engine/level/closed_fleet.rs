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

use super::begin::Begun;
use super::closed::Ran;
use super::crew::{Crew, Running};
use super::measure::{fold, progress, ticks, Follow, Sending};
use super::sampling::{first_batch, next_batch, snapshot};
use super::{LevelCtx, LevelPlan, PROGRESS_PERIOD};
use crate::clock::now_ns;
use crate::engine::fleet::{split_level, BatchSplit, Fleet};
use crate::engine::sink::RunSink;
use crate::metrics::progress::LevelProgress;
use crate::metrics::{LevelAccumulator, LiveLevel, SamplingStop};
use crate::record::RequestRecord;
use std::time::Duration;

/// How far ahead of now a batch's start instant is set: time for every worker to get its
/// share and be ready before it.
const START_LEAD: Duration = Duration::from_millis(300);

/// Runs a closed-loop level's load on the fleet (see the module header), batch by batch,
/// folding the records into `begun`.
pub(super) async fn run(
    ctx: &mut LevelCtx<'_>,
    plan: LevelPlan,
    begun: &mut Begun,
    fleet: &dyn Fleet,
) -> Ran {
    let base = u64::from(plan.request_count);
    let may_grow = plan.request_cap > base;
    let mut sampling = first_batch(&plan, 0);
    let mut crew = Crew::new(fleet);
    // a level measured again: its workers block goes on from its earlier measurements'
    if let Some(prev) = begun.before.as_ref().and_then(|b| b.workers.as_ref()) {
        crew.go_on_from(prev);
    }
    let mut batch = Batch {
        requests: base,
        planned: 0,
        shift: begun.from_ns,
        level_origin: now_ns(),
        chunks_before: 0,
    };
    while !ctx.cancel.is_cancelled() {
        sampling.batches += 1;
        run_batch(ctx, &plan, begun, &mut crew, &batch).await;
        batch.planned += batch.requests;
        // the next batch's shares count their chunks from zero
        batch.chunks_before += crew.take_chunks();
        if crew.halt.lost || ctx.cancel.is_cancelled() {
            sampling.stopped = SamplingStop::Interrupted;
            break;
        }
        if !may_grow {
            break;
        }
        let Ok(snapshot) = snapshot(begun, &plan).await else {
            break;
        };
        if !next_batch(
            &snapshot,
            batch.planned,
            ctx.planner,
            plan,
            ctx.cancel,
            &mut sampling,
        ) {
            break;
        }
        batch.requests = base.min(plan.request_cap.saturating_sub(batch.planned));
        begun.acc.plan_more(batch.requests);
        begun.live.set_total(batch.planned + batch.requests);
        batch.shift = begun.acc.resume();
    }
    let partial = crew.halt.lost || ctx.cancel.is_cancelled();
    Ran {
        sampling,
        partial,
        first_round: None,
        crew: Some(crew.end()),
    }
}

/// The batch about to run.
struct Batch {
    /// Its requests.
    requests: u64,
    /// Requests of this measurement's batches before it (its prompts start there).
    planned: u64,
    /// Where its records go on the level's timeline (ns).
    shift: u64,
    /// When the level's snapshots count from (the controller's clock).
    level_origin: u64,
    /// Content chunks of the level's finished batches (the live token count goes on from it).
    chunks_before: u64,
}

/// Splits one batch over the workers, starts it and folds its records until every share has
/// ended (or stopped).
async fn run_batch(
    ctx: &mut LevelCtx<'_>,
    plan: &LevelPlan,
    begun: &mut Begun,
    crew: &mut Crew<'_>,
    b: &Batch,
) {
    let start_at_ns = now_ns() + START_LEAD.as_nanos() as u64;
    // the batch's records go on the level's timeline from `shift`, its snapshots count
    // from `level_origin`: the live figures take each record's end on the snapshots' clock
    begun
        .live
        .set_record_offset(start_at_ns.saturating_sub(b.level_origin) as i64 - b.shift as i64);
    let shares = split_level(
        BatchSplit {
            level: plan.index,
            order: plan.order,
            concurrency: plan.concurrency,
            requests: b.requests,
            // each measurement warms up once, before its first batch
            warmup: if b.planned == 0 { plan.warmup } else { 0 },
            prompt_base: plan.prompt_base + b.planned,
            start_at_ns,
        },
        crew.fleet.size(),
    );
    crew.took(&shares);
    let mut bases = vec![(0u32, 0u64); crew.fleet.size()];
    for s in &shares {
        bases[s.worker] = (s.slot_base, s.prompt_base - plan.prompt_base);
    }
    let rx = crew.fleet.start(shares);
    // cooldown records are numbered past the batch's requests
    let index_offset = begun.index_offset;
    let mut cooldown_index = index_offset + b.planned + b.requests;
    let place_record = |worker: usize, rec: &mut RequestRecord, began: Option<u64>| {
        let (slot_base, index_base) = bases[worker];
        let index_base = if rec.cooldown {
            rec.index = 0;
            cooldown_index += 1;
            cooldown_index - 1
        } else {
            index_offset + index_base
        };
        // a share's records count from when it really began: they go onto the level's
        // timeline that much after the batch's start
        let late = began.map_or(0, |s| s.saturating_sub(start_at_ns));
        place(rec, b.shift + late, slot_base, index_base);
    };
    // a lost worker ends the level; a batch's stop is its own
    crew.halt.stopping = false;
    let running = Running {
        rx,
        tick: ticks(tokio::time::Instant::now(), PROGRESS_PERIOD),
        origin: b.level_origin,
        index: plan.index,
    };
    let mut folds = Folds {
        index: plan.index,
        acc: &mut begun.acc,
        live: &mut begun.live,
        chunks_before: b.chunks_before,
    };
    crew.receive(ctx, running, &mut folds, place_record).await;
}

/// A batch's records folded into the level, its progress the level's live figures.
struct Folds<'a> {
    index: u32,
    acc: &'a mut LevelAccumulator,
    live: &'a mut LiveLevel,
    chunks_before: u64,
}

impl Follow for Folds<'_> {
    fn record(&mut self, rec: &RequestRecord, sink: &mut dyn RunSink) {
        fold(self.index, rec, self.acc, self.live, sink);
    }

    fn progress(&mut self, now: u64, _sending: bool, s: Sending) -> (LevelProgress, bool) {
        let s = Sending {
            chunks: self.chunks_before + s.chunks,
            ..s
        };
        (progress(self.live, now, s), false)
    }
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
