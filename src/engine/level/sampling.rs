//! Adaptive sampling of a closed-loop level (see `docs/search.md`), wherever it runs: when a
//! batch's requests have finished, the planner reads a snapshot of the level
//! ([`snapshot`]) and, while its verdict is uncertain, the level held its concurrency and
//! the cap allows, another batch runs at the same concurrency ([`next_batch`]).

use super::begin::Begun;
use super::finish::level_meta;
use super::LevelPlan;
use crate::metrics::{AdaptiveSampling, LevelSummary, SamplingStop};
use crate::plan::LevelPlanner;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// Adaptive sampling stops adding batches to a level whose achieved concurrency so far is
/// below this share of its target (the held line is 95 %).
const STOP_SHARE: f64 = 0.9;

/// A level's sampling as its first batch begins: `batches` run so far (the first counted
/// where its workers start it, 1, or as each batch is sent, 0).
pub(super) fn first_batch(plan: &LevelPlan, batches: u32) -> AdaptiveSampling {
    AdaptiveSampling {
        batch: u64::from(plan.request_count),
        batches,
        cap: plan.request_cap,
        stopped: SamplingStop::Decided,
    }
}

/// The level as it stands, summarised on a blocking thread: it reads every histogram, which
/// must not hold up the reads on the runtime's threads.
pub(super) fn snapshot(begun: &Begun, plan: &LevelPlan) -> JoinHandle<LevelSummary> {
    let (snapshot_of, meta_now) = (
        begun.acc.clone(),
        level_meta(plan, &begun.started_at, false, None),
    );
    tokio::task::spawn_blocking(move || snapshot_of.finish(meta_now))
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
