//! A closed-loop level's begin and end, wherever its load runs (`closed_here`,
//! `closed_fleet`): it begins with its accumulator (a level measured again resumes from what
//! its earlier measurements left, [`super::Earlier`]: the new requests join the old ones on
//! the level's timeline continued from its last request, so the level has one summary and
//! one verdict on all of them), and ends with its summary: its sampling, a note when its
//! start holds its TTFT tail (`start_note`), and a pooling plan's measurements.

use super::begin::{announce, begin, closed_started, Begun};
use super::crew::Crewed;
use super::finish::{finish, level_meta, warn, with_measurement};
use super::{Earlier, LevelCtx, LevelPlan, Measured};
use crate::engine::lag::LagProbe;
use crate::engine::start_note::FirstRound;
use crate::metrics::AdaptiveSampling;

/// What a closed-loop level's load leaves beside its accumulator.
pub(super) struct Ran {
    /// How its adaptive sampling went (kept when the level may grow).
    pub sampling: AdaptiveSampling,
    /// Cut short: cancelled, or a worker lost.
    pub partial: bool,
    /// A level's first measurement without warmup in this process: whether its start holds
    /// its TTFT tail.
    pub first_round: Option<FirstRound>,
    /// A distributed level's workers.
    pub crew: Option<Crewed>,
}

/// Says the level has begun and begins its measurement.
pub(super) async fn start(
    ctx: &mut LevelCtx<'_>,
    plan: &LevelPlan,
    earlier: Option<Earlier>,
    here: bool,
) -> (LagProbe, Begun) {
    let probe = announce(ctx.events, closed_started(plan, earlier.as_ref()), here).await;
    (probe, begin(plan, earlier, ctx.planner))
}

/// The level's summary from its accumulator (kept for the next measurement when the plan
/// pools), finished and told its measurements.
pub(super) async fn end(
    ctx: &mut LevelCtx<'_>,
    plan: LevelPlan,
    begun: Begun,
    ran: Ran,
    probe: LagProbe,
) -> Measured {
    let Begun {
        acc,
        before,
        started_at,
        ..
    } = begun;
    let may_grow = plan.request_cap > u64::from(plan.request_count);
    let batches = ran.sampling.batches;
    let sampling = may_grow.then_some(ran.sampling);
    let meta = level_meta(&plan, &started_at, ran.partial, sampling);
    let (summary, kept) = if ctx.planner.pools() {
        (acc.clone().finish(meta), Some(acc))
    } else {
        (acc.finish(meta), None)
    };
    let label = format!("concurrency {}", plan.concurrency);
    let summary = finish(ctx, summary, probe, ran.crew, &label).await;
    if let Some(note) = summary
        .ttft_p95_ms()
        .filter(|_| !ran.partial)
        .zip(ran.first_round.as_ref())
        .and_then(|(p95, f)| f.note(p95, summary.ok_count()))
    {
        warn(ctx.events, plan.index, &label, &note).await;
    }
    let mut summary = match kept {
        Some(_) => with_measurement(summary, before, plan, batches),
        None => summary,
    };
    summary.warmup = Some(plan.warmup);
    Measured { summary, acc: kept }
}
