//! How a level begins, whatever its kind: the `LevelStarted` event and the client-lag probe
//! ([`announce`]), then a closed-loop level's accumulator, start and live figures
//! ([`begin`]; an open-loop level's collector holds its own, `open_collect`).

use super::{Earlier, LevelPlan};
use crate::engine::events::EngineEvent;
use crate::engine::lag::LagProbe;
use crate::metrics::{LevelAccumulator, LevelSummary, LiveLevel};
use crate::plan::LevelPlanner;
use std::time::Duration;
use tokio::sync::mpsc;

/// Says the level has begun (`started`, a `LevelStarted` event) and starts the client-lag
/// probe of a level sent from this process (`here`). A distributed level's client lag is its
/// workers' (they time the requests): the controller's own timer would only cost it wake-ups.
pub(super) async fn announce(
    events: &mpsc::Sender<EngineEvent>,
    started: EngineEvent,
    here: bool,
) -> LagProbe {
    let _ = events.send(started).await;
    if here {
        LagProbe::start()
    } else {
        LagProbe::off()
    }
}

/// A closed-loop level's `LevelStarted`: its first batch, its cap, and the requests of its
/// earlier measurements when it is measured again.
pub(super) fn closed_started(plan: &LevelPlan, earlier: Option<&Earlier>) -> EngineEvent {
    let base = u64::from(plan.request_count);
    EngineEvent::LevelStarted {
        shape: None,
        index: plan.index,
        concurrency: plan.concurrency,
        request_count: base,
        request_cap: plan.request_cap.max(base),
        earlier: earlier.map_or(0, |e| e.summary.planned_requests),
        warmup: plan.warmup,
    }
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
