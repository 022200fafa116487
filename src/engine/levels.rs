//! A run's levels, one after another as the plan asks: each level's load made from the plan's
//! next step (a concurrency, measured again when the search pools; a rate or schedule; a
//! replayed trace), the server's prefix cache kept or emptied before it (`prefix_reset`), run
//! (`level::run`) and kept: its telemetry, its lengths checked, its file written the moment
//! it ends. A level cut short while measured again stays what its earlier measurements made
//! it; a level that lost a worker ends the run after it is kept.

use super::events::EngineEvent;
use super::fleet::Fleet;
use super::level::{self, Earlier, LevelCtx, LevelJob, LevelPlan};
use super::open_plan::OpenPlan;
use super::prefix_reset::PrefixReset;
use super::scraping::Scraping;
use super::sink::{RunSink, StopOnFailure};
use crate::endpoint::Endpoint;
use crate::fdlimit::check_nofile;
use crate::metrics::{LevelAccumulator, LevelSummary};
use crate::plan::{LevelLoad, LevelPlanner};
use crate::workload::arrivals::{LoadShape, OpenSettings};
use crate::workload::WorkloadSpec;
use std::collections::HashMap;
use std::sync::Arc;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// What the run asked of every level.
#[derive(Debug, Clone, Copy)]
pub(super) struct LevelAsk {
    pub request_count: u32,
    pub warmup: super::Warmup,
    pub open: OpenSettings,
    /// The simulator runs in this process (its sockets count against the fd limit too).
    pub in_process_sim: bool,
    /// The open-file limit (soft, hard), when raised here (not in a distributed run).
    pub limits: Option<(u64, u64)>,
}

/// What every level of the run shares.
pub(super) struct RunCtx<'a> {
    pub endpoint: &'a Endpoint,
    pub workload: &'a WorkloadSpec,
    pub stop: &'a CancellationToken,
    pub events: &'a mpsc::Sender<EngineEvent>,
    pub fleet: Option<&'a dyn Fleet>,
    pub ask: LevelAsk,
}

/// The run's levels so far, and what the next ones need.
#[derive(Default)]
pub(super) struct Levels {
    pub done: Vec<LevelSummary>,
    /// A pooling plan's closed-loop levels by index, as their last measurement left them.
    pooled: HashMap<u32, LevelAccumulator>,
    measurements: u32,
    raised_said: bool,
    /// What deciding costs: said before the first level, and timed after it.
    need: Option<u64>,
    /// A distributed level that lost a worker: the run ends after keeping it.
    pub lost_worker: Option<String>,
    /// The server's prefix cache before each level: kept, or emptied.
    pub prefix_cache: PrefixReset,
    /// Each level's wall-clock span, for a SageMaker endpoint's per-minute CloudWatch metrics.
    #[cfg(feature = "sagemaker")]
    pub windows: HashMap<u32, crate::telemetry::cloudwatch::Window>,
}

impl Levels {
    /// Runs the plan's levels until it has no more, the run is stopped or a worker is lost;
    /// a results write that fails ends them with its error.
    pub async fn run(
        &mut self,
        on: &RunCtx<'_>,
        planner: &mut dyn LevelPlanner,
        sink: &mut StopOnFailure<'_>,
        scraping: &mut Scraping,
    ) -> std::io::Result<()> {
        if !planner.open_loop() {
            if let Some(note) = planner.deciding_note(u64::from(on.ask.request_count)) {
                self.need = Some(planner.min_requests());
                let _ = on.events.send(EngineEvent::Warning(note)).await;
            }
        }
        while !on.stop.is_cancelled() {
            let Some(load) = planner.next(&self.done) else {
                break;
            };
            let _ = on
                .events
                .send(EngineEvent::LevelsLeft(planner.levels_left(&self.done)))
                .await;
            // the search measuring a concurrency again: that level resumes (`Earlier`)
            let again = match &load {
                LevelLoad::Concurrency(c) if planner.pools() => self.done.iter().position(|l| {
                    !l.partial && l.load() == *c && self.pooled.contains_key(&l.index)
                }),
                _ => None,
            };
            let index = again.map_or(self.done.len() as u32, |p| self.done[p].index);
            let order = self.measurements;
            self.measurements += 1;
            // the cache emptied (or not) before the level's warm-up and its telemetry
            // window, so the level's hit rate is the one after the reset; a stop meanwhile
            // begins no level
            let cache = tokio::select! {
                c = self.prefix_cache.before_level(on.endpoint, on.events, index) => c,
                _ = on.stop.cancelled() => break,
            };
            scraping.begin(index).await;
            #[cfg(feature = "sagemaker")]
            let began = crate::wallclock::now();
            let (job, earlier) = self.job(on, &*planner, load, (index, order), again).await;
            let ctx = LevelCtx {
                endpoint: on.endpoint,
                workload: on.workload,
                cancel: on.stop,
                events: on.events,
                sink: &mut *sink,
                planner: &*planner,
                hold: None,
            };
            let measured = Box::pin(level::run(ctx, job, earlier, on.fleet)).await;
            if let Some(acc) = measured.acc {
                self.pooled.insert(index, acc);
            }
            let mut summary = measured.summary;
            summary.prefix_cache = Some(cache);
            #[cfg(feature = "sagemaker")]
            {
                // a level measured again spans all its measurements
                let now = crate::wallclock::now();
                self.windows
                    .entry(index)
                    .and_modify(|w| w.end = now)
                    .or_insert(crate::telemetry::cloudwatch::Window {
                        start: began,
                        end: now,
                    });
            }
            scraping.end(&mut summary, sink).await?;
            if !self.keep(on, summary, again, sink).await? {
                break;
            }
        }
        Ok(())
    }

    /// The level the plan's next step asks for: a closed-loop level (one measured again
    /// resumes from its earlier measurements) or an open-loop one.
    async fn job(
        &mut self,
        on: &RunCtx<'_>,
        planner: &dyn LevelPlanner,
        load: LevelLoad,
        (index, order): (u32, u32),
        again: Option<usize>,
    ) -> (LevelJob, Option<Earlier>) {
        let ask = &on.ask;
        let concurrency = match load {
            LevelLoad::Concurrency(concurrency) => concurrency,
            LevelLoad::Open(shape) => {
                let plan = open_plan(&ask.open, planner, on.workload, index, shape, None);
                return (LevelJob::Open(plan), None);
            }
            LevelLoad::Replay { times, shape } => {
                let plan = open_plan(&ask.open, planner, on.workload, index, shape, Some(times));
                return (LevelJob::Open(plan), None);
            }
        };
        if let Some(w) = ask
            .limits
            .and_then(|l| check_nofile(l.0, concurrency, ask.in_process_sim))
        {
            let _ = on.events.send(EngineEvent::Warning(w)).await;
        }
        let request_count = level_requests(ask.request_count, concurrency);
        if request_count > ask.request_count && !self.raised_said {
            self.raised_said = true;
            let _ = on
                .events
                .send(EngineEvent::Warning(format!(
                    "{} requests per level cannot hold concurrency {concurrency}: levels \
                     run at least twice their concurrency in requests ({request_count} \
                     here); level files record both numbers",
                    ask.request_count
                )))
                .await;
        }
        let plan = LevelPlan {
            index,
            concurrency,
            request_count,
            requests_asked: ask.request_count,
            request_cap: planner.request_cap(u64::from(request_count)),
            warmup: ask.warmup.requests(concurrency),
            order,
            screen: planner.screening(),
            prompt_base: 0,
        };
        let earlier = again.and_then(|p| {
            Some(Earlier {
                acc: self.pooled.remove(&index)?,
                summary: self.done[p].clone(),
            })
        });
        (LevelJob::Closed(plan), earlier)
    }

    /// A level that has ended, kept: its lengths checked, its file written and the consumer
    /// told (a level cut short while measured again stays as it was). Whether the run goes
    /// on (not after a lost worker); a results write that failed ends the run.
    async fn keep(
        &mut self,
        on: &RunCtx<'_>,
        mut summary: LevelSummary,
        again: Option<usize>,
        sink: &mut StopOnFailure<'_>,
    ) -> std::io::Result<bool> {
        let index = summary.index;
        let exact = on.endpoint.spec().exact_output_length;
        for w in check_lengths(&mut summary, on.workload, exact) {
            let _ = on
                .events
                .send(EngineEvent::Warning(format!(
                    "level {} ({}): {w}",
                    index + 1,
                    crate::metrics::summary::load_label(&summary)
                )))
                .await;
        }
        if let Some(e) = sink.failure() {
            return Err(e);
        }
        if let Some(lost) = summary
            .workers
            .as_ref()
            .map(|w| w.lost())
            .filter(|l| !l.is_empty())
        {
            self.lost_worker = Some(format!(
                "level {} ({}): lost {}",
                index + 1,
                crate::metrics::summary::load_label(&summary),
                lost.join("; ")
            ));
        }
        if let Some(p) = again.filter(|_| summary.partial) {
            // cut short while measured again: the level stays what its earlier measurements
            // made it (the cut measurement's requests are in the request log, not in it)
            let _ = on
                .events
                .send(EngineEvent::LevelFinished(Box::new(self.done[p].clone())))
                .await;
            return Ok(self.lost_worker.is_none());
        }
        sink.write_level(&summary)?;
        let _ = on
            .events
            .send(EngineEvent::LevelFinished(Box::new(summary.clone())))
            .await;
        if let Some(note) = self.need.take().and_then(|n| deciding_time(&summary, n)) {
            let _ = on.events.send(EngineEvent::Warning(note)).await;
        }
        match again {
            Some(p) => self.done[p] = summary,
            None => self.done.push(summary),
        }
        Ok(self.lost_worker.is_none())
    }
}

/// After the first level: what deciding a level on `need` requests takes at this server's
/// pace, so the user can tell what the levels the answer rests on will cost.
fn deciding_time(level: &LevelSummary, need: u64) -> Option<String> {
    let n = level.request_count.avg + level.error_request_count.avg;
    let took = level.benchmark_duration.avg;
    if n < 1.0 || took <= 0.0 {
        return None;
    }
    Some(format!(
        "level {} ({}) ran {n:.0} requests in {}: at that pace a level decided on {need} \
         requests takes about {} (at higher concurrency less: requests x latency / concurrency)",
        level.index + 1,
        crate::metrics::summary::load_label(level),
        crate::values::fmt_duration(took),
        crate::values::fmt_duration(took / n * need as f64),
    ))
}

/// Requests an open-loop level may send at most: a schedule's (steps, ramp) shape ends it
/// first; a rate given on the command line was checked against it before the run, and one
/// the run spreads itself (`--rates auto`) is held to it.
const LEVEL_MAX_REQUESTS: u64 = crate::workload::bounds::MAX_LEVEL_REQUESTS;

/// An open-loop level's plan: a fixed rate runs the run's request count; a schedule runs to
/// its end; a replay sends the whole trace.
fn open_plan(
    open: &OpenSettings,
    planner: &dyn LevelPlanner,
    workload: &WorkloadSpec,
    index: u32,
    shape: LoadShape,
    times: Option<Arc<Vec<u64>>>,
) -> OpenPlan {
    let max_requests = match (&times, &shape) {
        (Some(t), _) => open.requests.map_or(t.len() as u64, u64::from),
        (None, LoadShape::Rate { rps }) => open
            .rate_requests(*rps, planner.min_requests())
            .min(LEVEL_MAX_REQUESTS),
        (None, _) => LEVEL_MAX_REQUESTS,
    };
    OpenPlan {
        index,
        shape,
        arrival: open.arrival,
        // each level its own arrivals, the same for the same seed
        seed: crate::rng::mix64(workload.seed ^ u64::from(index).wrapping_mul(0x9E37_79B9)),
        times,
        max_requests,
        max_in_flight: open.max_in_flight,
        window: open.window_s,
    }
}

/// A level's first batch: the run's request count, raised to twice the concurrency so every
/// slot runs at least two requests and the steady window (all slots busy) exists.
pub fn level_requests(asked: u32, concurrency: u32) -> u32 {
    asked.max(concurrency.saturating_mul(2))
}

/// Sets the level's input target and compares the lengths (see `metrics::lengths`); returns
/// the warnings.
fn check_lengths(summary: &mut LevelSummary, w: &WorkloadSpec, exact_output: bool) -> Vec<String> {
    let target = w.target_input_mean(summary.index, summary.planned_requests);
    let calibrated = w.calibration.as_ref().is_some_and(|c| c.applied);
    match &mut summary.workload.token_counts {
        Some(c) => {
            c.check(target, calibrated, exact_output);
            c.warnings.clone()
        }
        None => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_run_at_least_twice_their_concurrency() {
        assert_eq!(level_requests(1024, 16), 1024);
        assert_eq!(level_requests(256, 4096), 8192);
        assert_eq!(level_requests(16, 8), 16);
        assert_eq!(level_requests(1, u32::MAX), u32::MAX);
    }
}
