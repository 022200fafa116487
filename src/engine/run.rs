//! A run: pre-flight, the results folder, then levels one after another as the plan asks,
//! each level's file written the moment it ends. Interruption keeps every finished level and
//! writes the cut one marked partial. A results write that fails stops the level at once and
//! ends the run with that error (nothing more is written; what was written stays valid), and
//! whatever the run started (the telemetry scraper) stops with it on every way out.

use super::closed_loop::{run_level, Earlier, LevelCtx, LevelPlan};
use super::events::EngineEvent;
use super::fleet::{Fleet, FleetRunSpec};
use super::fleet_level::run_fleet_level;
use super::fleet_open::run_fleet_open_level;
use super::open_loop::run_open_level;
use super::open_plan::OpenPlan;
use super::sink::{RunEcho, RunSink, StopOnFailure};
use crate::clock::now_ns;
use crate::endpoint::preflight::{preflight, PreflightError, ServerIdentity};
use crate::endpoint::{Endpoint, EndpointError, EndpointSpec};
use crate::fdlimit::{check_nofile, nofile_needed, raise_nofile_limit};
use crate::metrics::{LevelAccumulator, LevelSummary};
use crate::plan::LevelLoad;
pub use crate::plan::LevelPlanner;
use crate::telemetry::level::Recorder;
use crate::telemetry::scrape::Scraped;
use crate::workload::arrivals::{LoadShape, OpenSettings};
use crate::workload::WorkloadSpec;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// What a run needs.
pub struct RunRequest {
    /// `sweep` or `search`: names the run.
    pub kind: String,
    pub endpoint: EndpointSpec,
    pub workload: WorkloadSpec,
    pub request_count: u32,
    /// Warmup per closed-loop level (open-loop levels have none).
    pub warmup: super::Warmup,
    pub timeout: Duration,
    /// How long the pre-flight check waits for the endpoint before the run gives up.
    pub preflight_timeout: Duration,
    /// Between two samples of the server's `/metrics`; zero: not sampled.
    pub telemetry_interval: Duration,
    /// The GPUs' Prometheus exporter (dcgm-exporter or AMD's), sampled with the server.
    pub gpu_metrics: Option<String>,
    /// Where the results go (the results folder: `report::folder::FolderSink`).
    pub sink: Box<dyn RunSink>,
    /// The simulator runs in this process (its sockets count against the fd limit too).
    pub in_process_sim: bool,
    pub config_sources: Vec<String>,
    /// How open-loop levels send (unused by closed-loop levels).
    pub open: OpenSettings,
    /// A replay's traffic as recorded, echoed in `run.json`.
    pub traffic: Option<crate::workload::traffic::Traffic>,
    /// A distributed run: the workers that run each level's shares (`docs/distributed.md`);
    /// `None`: this process sends the load.
    pub fleet: Option<Arc<dyn Fleet>>,
}

/// Why a run could not start or had to stop.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Endpoint(#[from] EndpointError),
    // the cause is in the message: not also a `source`, or `{:#}` would print it twice
    #[error("pre-flight failed: {0}")]
    Preflight(PreflightError),
    /// A results file could not be written (the error names it).
    #[error("cannot write the results: {0}")]
    Results(std::io::Error),
    /// Stopped before the first level began (during pre-flight or calibration).
    #[error("stopped before any load was sent")]
    Cancelled,
    /// The open-file limit cannot hold the plan's highest concurrency.
    #[error(
        "the open-file limit is {soft} and cannot be raised, but the plan's highest \
         concurrency needs about {need} (a socket per stream); raise it with `ulimit -n {need}` \
         (or the service's LimitNOFILE) and run again"
    )]
    FdLimit { soft: u64, need: u64 },
    #[error(transparent)]
    Workload(#[from] crate::workload::WorkloadError),
    /// A distributed run's workers could not start, or one was lost (the message names it).
    #[error("{0}")]
    Fleet(String),
}

impl From<PreflightError> for RunError {
    fn from(e: PreflightError) -> Self {
        RunError::Preflight(e)
    }
}

impl From<std::io::Error> for RunError {
    fn from(e: std::io::Error) -> Self {
        RunError::Results(e)
    }
}

/// What a finished (or interrupted) run produced.
#[derive(Debug, Clone)]
pub struct RunOutcome {
    pub run_id: String,
    pub dir: PathBuf,
    pub echo: RunEcho,
    pub levels: Vec<LevelSummary>,
    pub interrupted: bool,
}

/// Runs a whole plan. Events go to `events`; `cancel` stops it at once.
pub async fn run(
    req: RunRequest,
    mut planner: Box<dyn LevelPlanner>,
    events: mpsc::Sender<EngineEvent>,
    cancel: CancellationToken,
) -> Result<RunOutcome, RunError> {
    let mut given = req.sink;
    // the levels run until the consumer cancels or a write fails
    let stop = cancel.child_token();
    let mut sink = StopOnFailure::new(&mut *given, stop.clone());
    let fleet = req.fleet.clone();
    // a distributed run's streams are its workers' sockets, not this process's
    let limits = raise_nofile_limit().filter(|_| fleet.is_none());
    if let Some((soft, _)) = limits {
        let need = nofile_needed(planner.max_concurrency(), req.in_process_sim);
        if soft < need {
            return Err(RunError::FdLimit { soft, need });
        }
    }
    // pre-flight and calibration wait on the network: a stop must not wait for them
    // boxed: the pre-flight's future is large, and a caller that polls the run on a small
    // stack (a test thread, 2 MiB, in a debug build) overflowed it
    let (endpoint, server, workload) = tokio::select! {
        r = Box::pin(setup(&req.endpoint, &req.workload, req.timeout, req.preflight_timeout, &events)) => r?,
        _ = cancel.cancelled() => return Err(RunError::Cancelled),
    };
    if let Some(fleet) = &fleet {
        let spec = FleetRunSpec {
            endpoint: endpoint.spec().clone(),
            workload: workload.clone(),
            timeout: req.timeout,
        };
        tokio::select! {
            r = fleet.prepare(spec) => r.map_err(RunError::Fleet)?,
            _ = cancel.cancelled() => return Err(RunError::Cancelled),
        }
    }
    let model = match &endpoint.spec().sagemaker {
        // a SageMaker container serves the model it holds, unnamed
        Some(sm) if endpoint.spec().model.is_empty() => {
            format!("the container's ({})", sm.format.as_str())
        }
        _ => endpoint.spec().model.clone(),
    };

    let wanted = crate::wallclock::new_run_id(&req.kind, crate::wallclock::now());
    let (run_id, dir) = sink.open(&wanted)?;
    // how often the server's /metrics (and the GPUs' exporter) is sampled, if at all: a
    // SageMaker endpoint has no /metrics route (its figures are in CloudWatch)
    let scrape_server = !endpoint.is_sagemaker();
    let sample_every = ((scrape_server || req.gpu_metrics.is_some())
        && !req.telemetry_interval.is_zero())
    .then_some(req.telemetry_interval);
    let mut echo = RunEcho {
        tool: "rightsize",
        version: env!("CARGO_PKG_VERSION"),
        run_id: run_id.clone(),
        kind: req.kind.clone(),
        endpoint: endpoint.spec().clone(),
        server: server.clone(),
        workload: workload.clone(),
        plan: planner.describe(),
        open_loop: planner.open_loop().then_some(req.open),
        request_count: req.request_count,
        warmup: req.warmup,
        timeout_s: req.timeout.as_secs_f64(),
        telemetry_interval_s: sample_every.map(|d| d.as_secs_f64()),
        gpu_metrics: sample_every
            .and(req.gpu_metrics.as_deref())
            .map(crate::secrets::redact_url),
        config_sources: req.config_sources.clone(),
        open_file_limit: limits.map(|l| l.0),
        started_at: crate::wallclock::rfc3339_utc(crate::wallclock::now()),
        ended_at: None,
        interrupted: false,
        failure: None,
        serving_config: None,
        traffic: req.traffic.clone(),
    };
    sink.write_run(&echo)?;
    let _ = events
        .send(EngineEvent::RunStarted {
            run_id: run_id.clone(),
            dir: dir.clone(),
            endpoint: crate::secrets::redact_url(&req.endpoint.name),
            model,
            server,
        })
        .await;

    let scrape_stop = CancellationToken::new();
    // the scraper stops however the run ends, an error included: its forwarder holds a
    // sender of `events`, and the consumer reads them until every sender is gone
    let _scrape_guard = scrape_stop.clone().drop_guard();
    // the server's samples, recorded per level (`telemetry.jsonl`, the level files' `server`)
    let recorder = Arc::new(Mutex::new(Recorder::default()));
    // a scrape at each level's start and end, and when the last sample arrived (run clock)
    let scrape_now = Arc::new(tokio::sync::Notify::new());
    let (sampled_tx, mut sampled) = tokio::sync::watch::channel(0u64);
    let run_origin = now_ns();
    let scraper = sample_every.map(|every| {
        let (tx, rx) = mpsc::channel(4);
        let targets = crate::telemetry::scrape::Targets {
            server: scrape_server
                .then(|| (endpoint.control_client(), endpoint.spec().base_url.clone())),
            gpu: req.gpu_metrics.clone(),
        };
        let scrape = tokio::spawn(crate::telemetry::scrape::scrape_on_demand(
            targets,
            every,
            tx,
            scrape_stop.clone(),
            scrape_now.clone(),
        ));
        let forward = forward_telemetry(
            rx,
            events.clone(),
            recorder.clone(),
            run_origin,
            sampled_tx.clone(),
        );
        (scrape, tokio::spawn(forward))
    });
    let mut levels: Vec<LevelSummary> = Vec::new();
    // each level's wall-clock span, for a SageMaker endpoint's per-minute CloudWatch metrics
    #[cfg(feature = "sagemaker")]
    let mut windows: HashMap<u32, crate::telemetry::cloudwatch::Window> = HashMap::new();
    // a pooling plan's closed-loop levels by index, as their last measurement left them
    let mut pooled: HashMap<u32, LevelAccumulator> = HashMap::new();
    let mut measurements = 0u32;
    let mut raised_said = false;
    // what deciding costs: said before the first level, and timed after it
    let mut need = None;
    // a distributed level that lost a worker: the run ends after keeping it
    let mut lost_worker: Option<String> = None;
    if !planner.open_loop() {
        if let Some(note) = planner.deciding_note(u64::from(req.request_count)) {
            need = Some(planner.min_requests());
            let _ = events.send(EngineEvent::Warning(note)).await;
        }
    }
    while !stop.is_cancelled() {
        let Some(load) = planner.next(&levels) else {
            break;
        };
        let _ = events
            .send(EngineEvent::LevelsLeft(planner.levels_left(&levels)))
            .await;
        // the search measuring a concurrency again: that level resumes (`Earlier`)
        let again = match &load {
            LevelLoad::Concurrency(c) if planner.pools() => levels
                .iter()
                .position(|l| !l.partial && l.load() == *c && pooled.contains_key(&l.index)),
            _ => None,
        };
        let index = again.map_or(levels.len() as u32, |p| levels[p].index);
        let order = measurements;
        measurements += 1;
        if scraper.is_some() {
            sample_now(&scrape_now, &mut sampled, run_origin).await;
        }
        recording(&recorder).begin(index);
        #[cfg(feature = "sagemaker")]
        let began = crate::wallclock::now();
        let ctx = LevelCtx {
            endpoint: &endpoint,
            workload: &workload,
            cancel: &stop,
            events: &events,
            sink: &mut sink,
            planner: &*planner,
            hold: None,
        };
        let mut summary = match load {
            LevelLoad::Concurrency(concurrency) => {
                if let Some(w) =
                    limits.and_then(|l| check_nofile(l.0, concurrency, req.in_process_sim))
                {
                    let _ = events.send(EngineEvent::Warning(w)).await;
                }
                let request_count = level_requests(req.request_count, concurrency);
                if request_count > req.request_count && !raised_said {
                    raised_said = true;
                    let _ = events
                        .send(EngineEvent::Warning(format!(
                            "{} requests per level cannot hold concurrency {concurrency}: levels \
                             run at least twice their concurrency in requests ({request_count} \
                             here); level files record both numbers",
                            req.request_count
                        )))
                        .await;
                }
                let plan = LevelPlan {
                    index,
                    concurrency,
                    request_count,
                    requests_asked: req.request_count,
                    request_cap: planner.request_cap(u64::from(request_count)),
                    warmup: req.warmup.requests(concurrency),
                    order,
                    screen: planner.screening(),
                    prompt_base: 0,
                };
                let earlier = again.and_then(|p| {
                    Some(Earlier {
                        acc: pooled.remove(&index)?,
                        summary: levels[p].clone(),
                    })
                });
                let measured = match &fleet {
                    Some(f) => run_fleet_level(ctx, plan, earlier, &**f).await,
                    None => run_level(ctx, plan, earlier).await,
                };
                if let Some(acc) = measured.acc {
                    pooled.insert(index, acc);
                }
                let mut summary = measured.summary;
                summary.warmup = Some(plan.warmup);
                summary
            }
            LevelLoad::Open(shape) => {
                let plan = open_plan(&req.open, &*planner, &workload, index, shape, None);
                match &fleet {
                    Some(f) => run_fleet_open_level(ctx, plan, &**f).await,
                    None => run_open_level(ctx, plan).await,
                }
            }
            LevelLoad::Replay { times, shape } => {
                let plan = open_plan(&req.open, &*planner, &workload, index, shape, Some(times));
                match &fleet {
                    Some(f) => run_fleet_open_level(ctx, plan, &**f).await,
                    None => run_open_level(ctx, plan).await,
                }
            }
        };
        #[cfg(feature = "sagemaker")]
        {
            // a level measured again spans all its measurements
            let now = crate::wallclock::now();
            windows.entry(index).and_modify(|w| w.end = now).or_insert(
                crate::telemetry::cloudwatch::Window {
                    start: began,
                    end: now,
                },
            );
        }
        // a level measured again: the server as its last measurement saw it
        if scraper.is_some() {
            sample_now(&scrape_now, &mut sampled, run_origin).await;
        }
        summary.server = recording(&recorder).end(
            summary.benchmark_duration.avg,
            summary.output_tps() * summary.benchmark_duration.avg,
        );
        let lines = recording(&recorder).take_lines();
        sink.append_telemetry(&lines)?;
        for w in check_lengths(&mut summary, &workload, endpoint.spec().exact_output_length) {
            let _ = events
                .send(EngineEvent::Warning(format!(
                    "level {} ({}): {w}",
                    index + 1,
                    crate::metrics::summary::load_label(&summary)
                )))
                .await;
        }
        if let Some(e) = sink.failure() {
            return Err(RunError::Results(e));
        }
        if let Some(lost) = summary
            .workers
            .as_ref()
            .map(|w| w.lost())
            .filter(|l| !l.is_empty())
        {
            lost_worker = Some(format!(
                "level {} ({}): lost {}",
                index + 1,
                crate::metrics::summary::load_label(&summary),
                lost.join("; ")
            ));
        }
        if let Some(p) = again.filter(|_| summary.partial) {
            // cut short while measured again: the level stays what its earlier measurements
            // made it (the cut measurement's requests are in the request log, not in it)
            let _ = events
                .send(EngineEvent::LevelFinished(Box::new(levels[p].clone())))
                .await;
            if lost_worker.is_some() {
                break;
            }
            continue;
        }
        sink.write_level(&summary)?;
        let _ = events
            .send(EngineEvent::LevelFinished(Box::new(summary.clone())))
            .await;
        if let Some(note) = need.take().and_then(|n| deciding_time(&summary, n)) {
            let _ = events.send(EngineEvent::Warning(note)).await;
        }
        match again {
            Some(p) => levels[p] = summary,
            None => levels.push(summary),
        }
        if lost_worker.is_some() {
            break;
        }
    }
    if let Some(f) = &fleet {
        for note in f.finish().await {
            let _ = events.send(EngineEvent::Warning(note)).await;
        }
    }
    scrape_stop.cancel();
    if let Some((scrape, forward)) = scraper {
        let _ = scrape.await;
        let _ = forward.await;
    }
    let lines = recording(&recorder).take_lines();
    sink.append_telemetry(&lines)?;
    echo.serving_config = recording(&recorder).serving_config().cloned();
    let interrupted = cancel.is_cancelled();
    // a SageMaker endpoint's own figures are CloudWatch's (not after an interrupt: whoever
    // stopped the run wants it to end now)
    #[cfg(feature = "sagemaker")]
    if let Some(target) = endpoint.spec().sagemaker.as_ref() {
        if !interrupted && !req.telemetry_interval.is_zero() {
            super::cloudwatch::record(
                target,
                req.timeout,
                &windows,
                &mut levels,
                &mut sink,
                &events,
            )
            .await?;
        }
    }
    echo.ended_at = Some(crate::wallclock::rfc3339_utc(crate::wallclock::now()));
    echo.interrupted = interrupted;
    echo.failure = lost_worker.clone();
    sink.write_run(&echo)?;
    let mut summary = serde_json::json!({
        "run_id": run_id,
        "kind": req.kind,
        "interrupted": interrupted,
        "levels": levels,
    });
    if let (Some(s), serde_json::Value::Object(extra)) =
        (summary.as_object_mut(), planner.report(&levels))
    {
        s.extend(extra);
    }
    sink.write_summary(&summary)?;
    let _ = events.send(EngineEvent::RunFinished { interrupted }).await;
    if let Some(lost) = lost_worker {
        return Err(RunError::Fleet(format!(
            "{lost}; the run ended there: finished levels are kept in {} (the cut level is \
             partial, and a search does not use it)",
            dir.display()
        )));
    }
    Ok(RunOutcome {
        run_id,
        dir,
        echo,
        levels,
        interrupted,
    })
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
        duration_text(took),
        duration_text(took / n * need as f64),
    ))
}

/// `42 s`, `8.1 min`, `2.3 h`.
fn duration_text(s: f64) -> String {
    if s < 120.0 {
        format!("{s:.0} s")
    } else if s < 7200.0 {
        format!("{:.1} min", s / 60.0)
    } else {
        format!("{:.1} h", s / 3600.0)
    }
}

/// The longest a level waits at its start or end for the sample it asked for: a server whose
/// `/metrics` is slow or gone costs the run no more than this.
const SAMPLE_NOW_WAIT: Duration = Duration::from_millis(500);

/// Asks the scraper for a sample now and waits (up to [`SAMPLE_NOW_WAIT`]) until one taken
/// from now on has been recorded.
async fn sample_now(
    now: &tokio::sync::Notify,
    sampled: &mut tokio::sync::watch::Receiver<u64>,
    origin: u64,
) {
    let asked = now_ns().saturating_sub(origin);
    now.notify_one();
    let _ = tokio::time::timeout(SAMPLE_NOW_WAIT, sampled.wait_for(|t| *t >= asked)).await;
}

/// The recorder, whoever else held it: a panic elsewhere leaves its samples as they were.
fn recording(recorder: &Mutex<Recorder>) -> std::sync::MutexGuard<'_, Recorder> {
    recorder
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The scraper's findings: each sample recorded (its stamp counted on the run's monotonic
/// clock from `origin`) and sent as a snapshot event (dropped when the consumer is behind), the one note
/// of a server without known metrics as a warning.
async fn forward_telemetry(
    mut rx: mpsc::Receiver<Scraped>,
    events: mpsc::Sender<EngineEvent>,
    recorder: Arc<Mutex<Recorder>>,
    origin: u64,
    sampled: tokio::sync::watch::Sender<u64>,
) {
    while let Some(s) = rx.recv().await {
        match s {
            Scraped::Sample { sample, at_ns } => {
                let t = at_ns.saturating_sub(origin);
                recording(&recorder).record(t, sample.clone());
                sampled.send_replace(t);
                let _ = events.try_send(EngineEvent::Telemetry(sample));
            }
            Scraped::Missing(note) => {
                let _ = events.send(EngineEvent::Warning(note)).await;
            }
        }
    }
}

/// Before any load: the workload's prompts and tokenizer, the endpoint (its model asked of
/// the server when none is named), the pre-flight check and calibration.
async fn setup(
    spec: &EndpointSpec,
    workload: &WorkloadSpec,
    timeout: Duration,
    preflight_timeout: Duration,
    events: &mpsc::Sender<EngineEvent>,
) -> Result<(Endpoint, ServerIdentity, WorkloadSpec), RunError> {
    let mut workload = workload.clone().ensure_loaded()?;
    let counter = workload.loaded().tokenizer.tokenizer.clone();
    let max_pool = 4096usize;
    // a SageMaker container serves the one model it holds: no name needed
    let waited = PreflightWait::new(spec, preflight_timeout, events);
    let endpoint = if spec.model.is_empty() && spec.sagemaker.is_none() {
        // no model named: use the one the server lists (or say which to pick)
        let probe = Endpoint::new(spec, 1, timeout)?;
        let mut spec = spec.clone();
        spec.model = waited
            .run(crate::endpoint::preflight::only_model(&probe))
            .await??;
        Endpoint::new(&spec, max_pool, timeout)?
    } else {
        Endpoint::new(spec, max_pool, timeout)?
    }
    .with_tokenizer(counter);
    let server = waited.run(preflight(&endpoint)).await??;
    if workload.calibrate {
        let c = crate::endpoint::calibrate::calibrate(&endpoint, &workload).await;
        if let (false, Some(note)) = (c.applied, &c.note) {
            let _ = events
                .send(EngineEvent::Warning(format!("calibration: {note}")))
                .await;
        }
        workload.calibration = Some(c);
    }
    Ok((endpoint, server, workload))
}

/// The pre-flight's own clock: it gives up after `--preflight-timeout` (the requests inside
/// it keep the run's longer request timeout), and says what it waits for once it has waited
/// [`PREFLIGHT_SAY_AFTER`] (a server that accepts and never answers used to leave the run
/// silent for the whole ten-minute request timeout).
struct PreflightWait<'a> {
    url: String,
    limit: Duration,
    started: tokio::time::Instant,
    events: &'a mpsc::Sender<EngineEvent>,
}

/// How long the pre-flight waits before it says what it is waiting for.
const PREFLIGHT_SAY_AFTER: Duration = Duration::from_secs(5);

impl<'a> PreflightWait<'a> {
    fn new(spec: &EndpointSpec, limit: Duration, events: &'a mpsc::Sender<EngineEvent>) -> Self {
        PreflightWait {
            url: crate::secrets::redact_url(&spec.name),
            limit,
            started: tokio::time::Instant::now(),
            events,
        }
    }

    /// `step`, or the pre-flight's timeout once its time since the start is up.
    async fn run<T>(&self, step: impl std::future::Future<Output = T>) -> Result<T, RunError> {
        let step = std::pin::pin!(step);
        let deadline = self.started + self.limit;
        let say_at = self.started + PREFLIGHT_SAY_AFTER;
        let mut step = step;
        let mut said = tokio::time::Instant::now() >= say_at;
        loop {
            tokio::select! {
                out = &mut step => return Ok(out),
                _ = tokio::time::sleep_until(say_at), if !said && say_at < deadline => {
                    said = true;
                    let _ = self
                        .events
                        .send(EngineEvent::Warning(format!(
                            "pre-flight: waiting for {} to answer ({} s so far; gives up after \
                             {} s, --preflight-timeout)",
                            self.url,
                            PREFLIGHT_SAY_AFTER.as_secs(),
                            self.limit.as_secs_f64()
                        )))
                        .await;
                }
                _ = tokio::time::sleep_until(deadline) => {
                    return Err(RunError::Preflight(PreflightError::Timeout {
                        url: self.url.clone(),
                        timeout_ms: u64::try_from(self.limit.as_millis()).unwrap_or(u64::MAX),
                    }));
                }
            }
        }
    }
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
