//! How a level ends, whatever its kind ([`finish`]): the request log flushed, the level judged
//! against the plan's SLAs, the client's own lag measured and, when large, said, and a
//! distributed level's workers block. A closed-loop level's summary is told its meta
//! ([`level_meta`]) and, when the plan pools, its measurements ([`with_measurement`]).

use super::crew::Crewed;
use super::{LevelCtx, LevelPlan};
use crate::engine::events::EngineEvent;
use crate::engine::lag::{lag_warning, LagProbe};
use crate::metrics::{AdaptiveSampling, ClientLag, LevelMeta, LevelSummary, Measurement};
use crate::record::sla::Verdict;
use tokio::sync::mpsc;

/// The end of any level: [`finish_level`] with the client lag of the level's workers when it
/// was distributed (`crew`), then their block (and what it warns about). `label` names the
/// level in warnings.
pub(super) async fn finish(
    ctx: &mut LevelCtx<'_>,
    summary: LevelSummary,
    probe: LagProbe,
    crew: Option<Crewed>,
    label: &str,
) -> LevelSummary {
    let workers_lag = crew.as_ref().map_or((0.0, 0.0), Crewed::lag);
    let mut summary = finish_level(ctx, summary, probe, workers_lag, label).await;
    if let Some(crew) = crew {
        let block = crew.block(summary.benchmark_duration.avg);
        if let Some(w) = &block.warning {
            warn(ctx.events, summary.index, label, w).await;
        }
        summary.workers = Some(block);
    }
    summary
}

/// The end of any level: the request log flushed, the level
/// judged against the plan's SLAs, and the client's own lag measured and, when large, said.
/// `workers_lag` is the worst timer lag (p99, max; ms) of a distributed level's workers,
/// zero in one process: the level's client lag is the worse of it and this process's.
async fn finish_level(
    ctx: &mut LevelCtx<'_>,
    mut summary: LevelSummary,
    probe: LagProbe,
    workers_lag: (f64, f64),
    label: &str,
) -> LevelSummary {
    let (timer_p99, timer_max) = probe.stop().await;
    let (timer_p99, timer_max) = (timer_p99.max(workers_lag.0), timer_max.max(workers_lag.1));
    // a failed write stops the run through the engine's sink, which keeps the error for
    // the run to end with: nothing to do with it here
    let _ = ctx.sink.flush_requests();
    ctx.planner.judge(&mut summary);
    let slot_p99 = summary.slot_to_send.as_ref().map_or(0.0, |s| s.p99);
    let typical = summary.ttft_p(50.0).or(summary.e2e_p50_ms()).unwrap_or(0.0);
    let warning = lag_warning(timer_p99, slot_p99, typical);
    if let Some(w) = &warning {
        warn(ctx.events, summary.index, label, w).await;
    }
    summary.client_lag = Some(ClientLag {
        timer_late_p99_ms: timer_p99,
        timer_late_max_ms: timer_max,
        slot_to_send_p99_ms: slot_p99,
        warning,
    });
    summary
}

/// Says `what` of level `index` (named `label`) as a warning.
pub(super) async fn warn(events: &mpsc::Sender<EngineEvent>, index: u32, label: &str, what: &str) {
    let _ = events
        .send(EngineEvent::Warning(format!(
            "level {} ({label}): {what}",
            index + 1
        )))
        .await;
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
