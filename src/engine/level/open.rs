//! An open-loop level's begin and end, wherever it is sent from (`open_here`, `open_fleet`):
//! its collector ([`OpenCollector`]) is made from its schedule and says the level has begun,
//! and at the end makes the level's summary (its rate, whether it held, where it saturated)
//! for the level's end to judge.

use super::begin::announce;
use super::crew::Crewed;
use super::finish::finish;
use super::open_collect::OpenCollector;
use super::LevelCtx;
use crate::engine::fleet::Fleet;
use crate::engine::lag::LagProbe;
use crate::engine::open_plan::OpenPlan;
use crate::metrics::LevelSummary;

/// Says the level has begun; its collector. A distributed level's records come a report
/// period or so after their requests end (`Fleet::records_lag`): its collector judges the
/// requests waiting that far back.
pub(super) async fn start(
    ctx: &mut LevelCtx<'_>,
    plan: &OpenPlan,
    fleet: Option<&dyn Fleet>,
) -> (LagProbe, OpenCollector) {
    let collector = OpenCollector::new(plan, plan.intended(), ctx.planner);
    let collector = match fleet {
        Some(fleet) => collector.viewed_late(fleet.records_lag()),
        None => collector,
    };
    let probe = announce(ctx.events, collector.started(), fleet.is_none()).await;
    (probe, collector)
}

/// The level's summary, finished (`partial`: cut short, cancelled or a worker lost).
pub(super) async fn end(
    ctx: &mut LevelCtx<'_>,
    plan: &OpenPlan,
    collector: OpenCollector,
    partial: bool,
    probe: LagProbe,
    crew: Option<Crewed>,
) -> LevelSummary {
    let label = plan.shape.label();
    let summary = collector.summary(partial, ctx.events).await;
    finish(ctx, summary, probe, crew, &label).await
}
