//! One level, whatever its kind: the one place a level begins, runs its load and finishes.
//!
//! A level is two choices. What drives its requests: a closed loop (`concurrency` streams,
//! each sending its next request the moment its previous one ends, [`LevelJob::Closed`]) or
//! a schedule (an open loop: requests go out when an arrival schedule says,
//! [`LevelJob::Open`]). And where they are sent from: this process, or the workers of a
//! distributed run (`docs/distributed.md`), each running a share of the level with the same
//! engine and sending its records back. [`run`] is the entry point for all four:
//!
//! - `begin`: the `LevelStarted` event and the client-lag probe (off when workers time the
//!   requests), the accumulator (a level measured again resumes its own, [`Earlier`]), the
//!   level's start and its live figures;
//! - the load, by drive (`closed`, `open`) and by place: `closed_here` and `closed_fleet`,
//!   `open_here` and `open_fleet`, which share what they fold (`measure`), a closed loop's
//!   batches (`sampling`) and a distributed level's workers (`crew`);
//! - `finish`: the request log flushed, the level judged, its client lag, a distributed
//!   level's workers block and a pooling plan's measurements.
//!
//! A new kind of level (a ramp, another place to send from) is one more load between the
//! same begin and finish.

mod begin;
mod closed;
mod closed_fleet;
mod closed_here;
mod crew;
mod dispatch;
mod finish;
mod measure;
mod open;
mod open_collect;
mod open_fleet;
mod open_here;
mod sampling;

pub use open_here::run_open_share;

use super::events::EngineEvent;
use super::fleet::Fleet;
use super::open_plan::OpenPlan;
use super::sink::RunSink;
use crate::endpoint::Endpoint;
use crate::metrics::{LevelAccumulator, LevelSummary};
use crate::plan::LevelPlanner;
use crate::workload::{Prompt, WorkloadSpec};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// How often a progress snapshot goes to the consumer.
pub const PROGRESS_PERIOD: Duration = Duration::from_millis(250);

/// What a level runs: a closed loop at a concurrency, or an open loop's schedule.
pub enum LevelJob {
    Closed(LevelPlan),
    Open(OpenPlan),
}

/// What to run for one closed-loop level.
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
    /// A distributed run's share (`closed_fleet`): its cooldown requests go on until this
    /// fires, when every share's measured requests have ended, not when its own have, so
    /// the level's last measured requests run with every stream of every worker busy.
    /// `None` in one process.
    pub hold: Option<&'a CancellationToken>,
}

/// Runs one level to its end (or until cancelled: then the summary is marked partial), in
/// this process or, with `fleet`, on its workers; with `earlier`, one more measurement of a
/// closed-loop level measured before, pooled with it (an open-loop level is measured once).
///
/// Each step is boxed: a level's state (its accumulator, the live figures) is tens of
/// kilobytes, and unoptimised builds poll nested steps in frames as large as their states,
/// which overflowed a 2 MiB thread stack (a test's, or a runtime worker's) in the search
/// tests.
pub async fn run(
    mut ctx: LevelCtx<'_>,
    job: LevelJob,
    earlier: Option<Earlier>,
    fleet: Option<&dyn Fleet>,
) -> Measured {
    let here = fleet.is_none();
    match job {
        LevelJob::Closed(plan) => {
            let load = match fleet {
                None => ClosedLoad::Here(closed_here::book(ctx.workload, &plan)),
                Some(fleet) => ClosedLoad::Fleet(fleet),
            };
            let (probe, mut begun) = Box::pin(closed::start(&mut ctx, &plan, earlier, here)).await;
            let ran = match load {
                ClosedLoad::Here(work) => {
                    Box::pin(closed_here::run(&mut ctx, plan, &mut begun, work)).await
                }
                ClosedLoad::Fleet(fleet) => {
                    Box::pin(closed_fleet::run(&mut ctx, plan, &mut begun, fleet)).await
                }
            };
            Box::pin(closed::end(&mut ctx, plan, begun, ran, probe)).await
        }
        LevelJob::Open(plan) => {
            let (probe, mut collector) = Box::pin(open::start(&mut ctx, &plan, fleet)).await;
            let (partial, crew) = match fleet {
                None => (
                    Box::pin(open_here::run(&mut ctx, &plan, &mut collector)).await,
                    None,
                ),
                Some(fleet) => {
                    Box::pin(open_fleet::run(&mut ctx, &plan, &mut collector, fleet)).await
                }
            };
            let summary =
                Box::pin(open::end(&mut ctx, &plan, collector, partial, probe, crew)).await;
            Measured { summary, acc: None }
        }
    }
}

/// Where a closed-loop level's load runs, ready to begin.
enum ClosedLoad<'f> {
    /// In this process, on its first batch's work (made before the level begins).
    Here(std::sync::Arc<super::workers::Work>),
    /// On the workers of a distributed run.
    Fleet(&'f dyn Fleet),
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
