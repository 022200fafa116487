//! A run: pre-flight, the results folder, then levels one after another as the plan asks,
//! each level's file written the moment it ends. Interruption keeps every finished level and
//! writes the cut one marked partial. A results write that fails stops the level at once and
//! ends the run with that error (nothing more is written; what was written stays valid), and
//! whatever the run started (the telemetry scraper) stops with it on every way out.

use super::events::EngineEvent;
use super::fleet::{Fleet, FleetRunSpec};
use super::levels::{LevelAsk, Levels, RunCtx};
use super::prefix_reset::PrefixReset;
use super::scraping::Scraping;
use super::sink::{RunEcho, RunSink, StopOnFailure};
use crate::endpoint::preflight::{preflight, PreflightError, ServerIdentity};
use crate::endpoint::{Endpoint, EndpointError, EndpointSpec};
use crate::fdlimit::{nofile_needed, raise_nofile_limit};
use crate::metrics::LevelSummary;
pub use crate::plan::LevelPlanner;
use crate::workload::arrivals::OpenSettings;
use crate::workload::WorkloadSpec;
use std::path::PathBuf;
use std::sync::Arc;
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
    /// The server's prefix cache before each level: kept, or emptied (`--prefix-cache`).
    pub prefix_cache: crate::record::PrefixCachePolicy,
    /// `--prefix-cache-reset-url`: a POST that empties it, instead of the server's own.
    pub prefix_cache_reset_url: Option<String>,
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
    // the levels run until the consumer cancels or a write fails
    let stop = cancel.child_token();
    let fleet = req.fleet.clone();
    let limits = open_file_limit(&*planner, fleet.is_some(), req.in_process_sim)?;
    let (endpoint, server, workload) = ready(
        (&req.endpoint, &req.workload),
        (req.timeout, req.preflight_timeout),
        fleet.as_deref(),
        &events,
        &cancel,
    )
    .await?;
    // how often the server's /metrics (and the GPUs' exporter) is sampled, if at all: a
    // SageMaker endpoint has no /metrics route (its figures are in CloudWatch)
    let scrape_server = !endpoint.is_sagemaker();
    let sample_every = ((scrape_server || req.gpu_metrics.is_some())
        && !req.telemetry_interval.is_zero())
    .then_some(req.telemetry_interval);
    let asked = Asked {
        planner: &*planner,
        sample_every,
        limits,
    };
    let mut echo = run_echo(&req, (&endpoint, &server, &workload), asked);
    let ask = LevelAsk {
        request_count: req.request_count,
        warmup: req.warmup,
        open: req.open,
        in_process_sim: req.in_process_sim,
        limits,
    };
    let mut given = req.sink;
    let mut sink = StopOnFailure::new(&mut *given, stop.clone());
    let owned_by = server.owned_by.clone();
    let named = (req.endpoint.name.as_str(), &endpoint, server);
    let (run_id, dir) = open_run(&mut sink, &mut echo, named, &events).await?;
    let mut scraping = Scraping::start(
        sample_every,
        (&endpoint, scrape_server),
        req.gpu_metrics.clone(),
        &events,
    );
    let on = RunCtx {
        endpoint: &endpoint,
        workload: &workload,
        stop: &stop,
        events: &events,
        fleet: fleet.as_deref(),
        ask,
    };
    let mut levels = Levels::default();
    levels.prefix_cache = PrefixReset::new(
        req.prefix_cache,
        req.prefix_cache_reset_url.clone(),
        owned_by,
    );
    levels
        .run(&on, &mut *planner, &mut sink, &mut scraping)
        .await?;
    if let Some(f) = &fleet {
        for note in f.finish().await {
            let _ = events.send(EngineEvent::Warning(note)).await;
        }
    }
    echo.serving_config = scraping.finish(&mut sink).await?;
    let interrupted = cancel.is_cancelled();
    let ended = Ended {
        kind: &req.kind,
        timeout: req.timeout,
        telemetry_interval: req.telemetry_interval,
        interrupted,
    };
    write_end(ended, &on, &mut echo, &mut levels, (&*planner, &mut sink)).await?;
    let _ = events.send(EngineEvent::RunFinished { interrupted }).await;
    if let Some(lost) = levels.lost_worker {
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
        levels: levels.done,
        interrupted,
    })
}

/// The open-file limit, raised as far as it goes (not for a distributed run: its streams
/// are its workers' sockets, not this process's); an error when it cannot hold the plan's
/// highest concurrency.
fn open_file_limit(
    planner: &dyn LevelPlanner,
    distributed: bool,
    in_process_sim: bool,
) -> Result<Option<(u64, u64)>, RunError> {
    let limits = raise_nofile_limit().filter(|_| !distributed);
    if let Some((soft, _)) = limits {
        let need = nofile_needed(planner.max_concurrency(), in_process_sim);
        if soft < need {
            return Err(RunError::FdLimit { soft, need });
        }
    }
    Ok(limits)
}

/// The endpoint ready for load: set up ([`setup`]) and, for a distributed run, every
/// worker joined and past its own pre-flight. A stop ends the wait.
async fn ready(
    (spec, workload): (&EndpointSpec, &WorkloadSpec),
    (timeout, preflight_timeout): (Duration, Duration),
    fleet: Option<&dyn Fleet>,
    events: &mpsc::Sender<EngineEvent>,
    cancel: &CancellationToken,
) -> Result<(Endpoint, ServerIdentity, WorkloadSpec), RunError> {
    // pre-flight and calibration wait on the network: a stop must not wait for them
    // boxed: the pre-flight's future is large, and a caller that polls the run on a small
    // stack (a test thread, 2 MiB, in a debug build) overflowed it
    let (endpoint, server, workload) = tokio::select! {
        r = Box::pin(setup(spec, workload, timeout, preflight_timeout, events)) => r?,
        _ = cancel.cancelled() => return Err(RunError::Cancelled),
    };
    if let Some(fleet) = fleet {
        let spec = FleetRunSpec {
            endpoint: endpoint.spec().clone(),
            workload: workload.clone(),
            timeout,
        };
        tokio::select! {
            r = fleet.prepare(spec) => r.map_err(RunError::Fleet)?,
            _ = cancel.cancelled() => return Err(RunError::Cancelled),
        }
    }
    Ok((endpoint, server, workload))
}

/// The results folder opened under the run's id (the folder may name it otherwise, when one
/// of that name exists), `run.json` written and the run's start said.
async fn open_run(
    sink: &mut StopOnFailure<'_>,
    echo: &mut RunEcho,
    (name, endpoint, server): (&str, &Endpoint, ServerIdentity),
    events: &mpsc::Sender<EngineEvent>,
) -> Result<(String, PathBuf), RunError> {
    let (run_id, dir) = sink.open(&echo.run_id)?;
    echo.run_id = run_id.clone();
    sink.write_run(echo)?;
    let _ = events
        .send(EngineEvent::RunStarted {
            run_id: run_id.clone(),
            dir: dir.clone(),
            endpoint: crate::secrets::redact_url(name),
            model: model_name(endpoint),
            server,
        })
        .await;
    Ok((run_id, dir))
}

/// The model as the run shows it.
fn model_name(endpoint: &Endpoint) -> String {
    match &endpoint.spec().sagemaker {
        // a SageMaker container serves the model it holds, unnamed
        Some(sm) if endpoint.spec().model.is_empty() => {
            format!("the container's ({})", sm.format.as_str())
        }
        _ => endpoint.spec().model.clone(),
    }
}

/// What the run decided beside the request: its plan, how often it samples telemetry, the
/// open-file limit.
struct Asked<'a> {
    planner: &'a dyn LevelPlanner,
    sample_every: Option<Duration>,
    limits: Option<(u64, u64)>,
}

/// `run.json` as the run begins, under the run id it asks the folder for.
fn run_echo(
    req: &RunRequest,
    (endpoint, server, workload): (&Endpoint, &ServerIdentity, &WorkloadSpec),
    asked: Asked<'_>,
) -> RunEcho {
    RunEcho {
        tool: "rightsize",
        version: env!("CARGO_PKG_VERSION"),
        run_id: crate::wallclock::new_run_id(&req.kind, crate::wallclock::now()),
        kind: req.kind.clone(),
        endpoint: endpoint.spec().clone(),
        server: server.clone(),
        workload: workload.clone(),
        plan: asked.planner.describe(),
        open_loop: asked.planner.open_loop().then_some(req.open),
        request_count: req.request_count,
        warmup: req.warmup,
        timeout_s: req.timeout.as_secs_f64(),
        telemetry_interval_s: asked.sample_every.map(|d| d.as_secs_f64()),
        gpu_metrics: asked
            .sample_every
            .and(req.gpu_metrics.as_deref())
            .map(crate::secrets::redact_url),
        config_sources: req.config_sources.clone(),
        open_file_limit: asked.limits.map(|l| l.0),
        started_at: crate::wallclock::rfc3339_utc(crate::wallclock::now()),
        ended_at: None,
        interrupted: false,
        failure: None,
        serving_config: None,
        traffic: req.traffic.clone(),
    }
}

/// How the run ended, for its last writes.
struct Ended<'a> {
    kind: &'a str,
    timeout: Duration,
    telemetry_interval: Duration,
    interrupted: bool,
}

/// The run's last writes: a SageMaker endpoint's CloudWatch figures into its levels (not
/// after an interrupt: whoever stopped the run wants it to end now), `run.json` as it ended,
/// and `summary.json` (its levels and the plan's report).
async fn write_end(
    ended: Ended<'_>,
    on: &RunCtx<'_>,
    echo: &mut RunEcho,
    levels: &mut Levels,
    (planner, sink): (&dyn LevelPlanner, &mut StopOnFailure<'_>),
) -> Result<(), RunError> {
    let interrupted = ended.interrupted;
    // a SageMaker endpoint's own figures are CloudWatch's
    #[cfg(feature = "sagemaker")]
    if let Some(target) = on.endpoint.spec().sagemaker.as_ref() {
        if !interrupted && !ended.telemetry_interval.is_zero() {
            super::cloudwatch::record(
                target,
                ended.timeout,
                &levels.windows,
                &mut levels.done,
                sink,
                on.events,
            )
            .await?;
        }
    }
    #[cfg(not(feature = "sagemaker"))]
    let _ = (on, ended.timeout, ended.telemetry_interval);
    echo.ended_at = Some(crate::wallclock::rfc3339_utc(crate::wallclock::now()));
    echo.interrupted = interrupted;
    echo.failure = levels.lost_worker.clone();
    sink.write_run(echo)?;
    let mut summary = serde_json::json!({
        "run_id": echo.run_id,
        "kind": ended.kind,
        "interrupted": interrupted,
        "levels": levels.done,
    });
    if let (Some(s), serde_json::Value::Object(extra)) =
        (summary.as_object_mut(), planner.report(&levels.done))
    {
        s.extend(extra);
    }
    sink.write_summary(&summary)?;
    Ok(())
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
    .with_tokenizer(counter)
    .with_tools(workload.tools.as_ref());
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
