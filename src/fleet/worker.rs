//! `rightsize worker --controller URL`: a worker of a distributed run. It joins the
//! controller (with the run's token and a few clock round trips), takes the run's endpoint
//! and workload and runs its own pre-flight, then runs each share it is given with the same
//! engine as one process (`engine::level::run`), starting at the instant the controller set,
//! and sends every request's record back four times a second. An open-loop level's share is
//! its segment of the level's schedule (`engine::level::run_open_share`).
//!
//! It never sends load on its own: a share runs only while the controller answers. A report
//! that cannot be delivered stops the share; a worker that cannot reach its controller for
//! `--connect-timeout` exits non-zero. A heartbeat goes every second whatever it is doing.

use super::protocol::{
    Clock, ClockSample, Join, Joined, Order, Report, ReportReply, ShareLag, WireRecord, WireShare,
    REPORT_PERIOD,
};
use crate::clock::now_ns;
use crate::endpoint::control::ControlClient;
use crate::endpoint::{Endpoint, EndpointSpec};
use crate::engine::level::{self, run_open_share, LevelCtx, LevelJob, LevelPlan};
use crate::engine::sink::{RunEcho, RunSink};
use crate::engine::EngineEvent;
use crate::metrics::LevelSummary;
use crate::plan::{LevelLoad, LevelPlanner};
use crate::record::RequestRecord;
use crate::telemetry::level::TelemetryLine;
use crate::workload::WorkloadSpec;
use http::{Method, StatusCode};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// How a worker reaches its controller.
#[derive(Debug, Clone)]
pub struct WorkerConfig {
    /// The controller's base URL, e.g. `http://rightsize.perf.svc:7077`.
    pub controller: String,
    /// Its index in the run (`--index`, `JOB_COMPLETION_INDEX`); `None`: the controller
    /// gives the first free place.
    pub index: Option<u32>,
    pub token: String,
    /// Exit when the controller cannot be reached for this long.
    pub connect_timeout: Duration,
}

/// Why a worker stopped before the run's end.
#[derive(Debug, thiserror::Error)]
pub enum WorkerError {
    #[error("cannot reach the controller at {url} for {secs:.0} s: {last} (is the run started, and the URL right?)")]
    Unreachable {
        url: String,
        secs: f64,
        last: String,
    },
    #[error(
        "the controller refused this worker's token: set RIGHTSIZE_WORKER_TOKEN to the run's token"
    )]
    Refused,
    #[error("the controller said no: {0}")]
    Rejected(String),
    #[error("the controller sent a message this worker cannot read: {0}")]
    Protocol(String),
}

/// One HTTP client to the controller, with the token.
#[derive(Clone)]
struct Link {
    http: ControlClient,
    base: String,
}

/// A call's failure: the controller said no (a status), could not be reached, or answered
/// what this worker cannot read.
enum CallError {
    Status(StatusCode, String),
    Net(String),
    Decode(String),
}

impl Link {
    async fn call<T: serde::de::DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        body: Option<Vec<u8>>,
    ) -> Result<T, CallError> {
        let (status, bytes) = self
            .http
            .call(method, &format!("{}{path}", self.base), body)
            .await
            .map_err(|e| CallError::Net(e.to_string()))?;
        if !status.is_success() {
            return Err(CallError::Status(
                status,
                String::from_utf8_lossy(&bytes).trim().to_string(),
            ));
        }
        serde_json::from_slice(&bytes).map_err(|e| CallError::Decode(e.to_string()))
    }

    async fn report(&self, place: usize, r: &Report) -> Result<ReportReply, CallError> {
        let body = serde_json::to_vec(r).map_err(|e| CallError::Net(e.to_string()))?;
        self.call(
            Method::POST,
            &format!("/v1/report?worker={place}"),
            Some(body),
        )
        .await
    }
}

fn host_name() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "localhost".into());
    format!("{host}:{}", std::process::id())
}

/// Runs a worker until the controller says the run is over.
pub async fn run_worker(cfg: WorkerConfig) -> Result<(), WorkerError> {
    let link = Link {
        // a call that connects and is never answered (a half-open connection) fails within
        // 10 s, so no retry loop waits on it for good; the longest answer is a 2 s long poll
        http: ControlClient::with_bearer(
            &cfg.token,
            Duration::from_secs(5),
            Duration::from_secs(10),
        )
        .map_err(|e| WorkerError::Protocol(e.to_string()))?,
        base: cfg.controller.trim_end_matches('/').to_string(),
    };
    let _ = crate::fdlimit::raise_nofile_limit();
    let place = join(&link, &cfg).await?;
    // the controller is gone for good: whatever runs stops
    let gone = CancellationToken::new();
    let last_contact = Arc::new(std::sync::atomic::AtomicU64::new(now_ns()));
    let beat = tokio::spawn(heartbeat(
        link.clone(),
        place,
        cfg.connect_timeout,
        last_contact.clone(),
        gone.clone(),
    ));
    let _beat_guard = AbortOnDrop(beat);
    let mut run: Option<(Endpoint, WorkloadSpec)> = None;
    let next_path = format!("/v1/next?worker={place}");
    loop {
        let order = tokio::select! {
            _ = gone.cancelled() => return Err(unreachable(&cfg, &last_contact, "no answer")),
            o = link.call::<Order>(Method::GET, &next_path, None) => o,
        };
        let order = match order {
            Ok(o) => {
                last_contact.store(now_ns(), std::sync::atomic::Ordering::Relaxed);
                o
            }
            Err(CallError::Status(s, _)) if s == StatusCode::UNAUTHORIZED => {
                return Err(WorkerError::Refused)
            }
            Err(CallError::Status(_, why)) => return Err(WorkerError::Rejected(why)),
            Err(CallError::Decode(why)) => return Err(WorkerError::Protocol(why)),
            Err(CallError::Net(why)) => {
                if gone.is_cancelled() {
                    return Err(unreachable(&cfg, &last_contact, &why));
                }
                tokio::time::sleep(Duration::from_millis(200)).await;
                continue;
            }
        };
        match order {
            Order::Idle => {}
            Order::Stop => return Ok(()),
            Order::Spec {
                generation,
                endpoint,
                workload,
                timeout_s,
            } => {
                let ready = prepare(endpoint, *workload, timeout_s).await;
                let report = Report {
                    ready: Some(ready.as_ref().map(|_| ()).map_err(Clone::clone)),
                    ready_for: generation,
                    ..Report::default()
                };
                run = ready.ok();
                // the run waits for this answer: it goes again until it gets through
                while let Err(CallError::Net(why)) = link.report(place, &report).await {
                    tracing::warn!("worker: cannot say it is ready ({why}): trying again");
                    tokio::select! {
                        _ = gone.cancelled() => {
                            return Err(unreachable(&cfg, &last_contact, &why))
                        }
                        _ = tokio::time::sleep(Duration::from_millis(200)) => {}
                    }
                }
            }
            Order::Share(share) => {
                let Some((endpoint, workload)) = run.as_ref() else {
                    return Err(WorkerError::Protocol(
                        "a share came before the run's spec".into(),
                    ));
                };
                run_share(&link, place, share, endpoint, workload, &gone).await;
            }
        }
    }
}

fn unreachable(cfg: &WorkerConfig, last: &std::sync::atomic::AtomicU64, why: &str) -> WorkerError {
    let since = now_ns().saturating_sub(last.load(std::sync::atomic::Ordering::Relaxed));
    WorkerError::Unreachable {
        url: cfg.controller.clone(),
        secs: since as f64 / 1e9,
        last: why.to_string(),
    }
}

struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Reaches the controller (retrying until `connect_timeout`), samples its clock and joins.
async fn join(link: &Link, cfg: &WorkerConfig) -> Result<usize, WorkerError> {
    let began = now_ns();
    let timeout_ns = cfg.connect_timeout.as_nanos() as u64;
    let mut last;
    loop {
        match clock_samples(link).await {
            Ok(clock) => {
                let join = Join {
                    index: cfg.index,
                    host: host_name(),
                    version: env!("CARGO_PKG_VERSION").into(),
                    clock,
                };
                let body =
                    serde_json::to_vec(&join).map_err(|e| WorkerError::Protocol(e.to_string()))?;
                match link
                    .call::<Joined>(Method::POST, "/v1/join", Some(body))
                    .await
                {
                    Ok(j) => return Ok(j.place),
                    Err(CallError::Net(why)) => last = why,
                    Err(CallError::Status(s, _)) if s == StatusCode::UNAUTHORIZED => {
                        return Err(WorkerError::Refused)
                    }
                    Err(CallError::Status(_, why)) => return Err(WorkerError::Rejected(why)),
                    Err(CallError::Decode(why)) => return Err(WorkerError::Protocol(why)),
                }
            }
            Err(CallError::Status(s, _)) if s == StatusCode::UNAUTHORIZED => {
                return Err(WorkerError::Refused)
            }
            Err(CallError::Status(_, why)) => return Err(WorkerError::Rejected(why)),
            Err(CallError::Decode(why)) => return Err(WorkerError::Protocol(why)),
            Err(CallError::Net(why)) => last = why,
        }
        if now_ns().saturating_sub(began) > timeout_ns {
            return Err(WorkerError::Unreachable {
                url: cfg.controller.clone(),
                secs: cfg.connect_timeout.as_secs_f64(),
                last,
            });
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// Eight round trips to the controller's clock (the offset takes the fastest).
async fn clock_samples(link: &Link) -> Result<Vec<ClockSample>, CallError> {
    let mut out = Vec::new();
    for _ in 0..8 {
        let sent_ns = now_ns();
        let c: Clock = link.call(Method::GET, "/v1/clock", None).await?;
        out.push(ClockSample {
            sent_ns,
            controller_ns: c.ns,
            received_ns: now_ns(),
        });
    }
    Ok(out)
}

/// Every second, an empty report: the controller's proof this worker lives. When none has
/// got through for `timeout`, `gone` fires.
async fn heartbeat(
    link: Link,
    place: usize,
    timeout: Duration,
    last_contact: Arc<std::sync::atomic::AtomicU64>,
    gone: CancellationToken,
) {
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    loop {
        tick.tick().await;
        match link.report(place, &Report::default()).await {
            Ok(_) => last_contact.store(now_ns(), std::sync::atomic::Ordering::Relaxed),
            Err(_) => {
                let silent = now_ns()
                    .saturating_sub(last_contact.load(std::sync::atomic::Ordering::Relaxed));
                if silent > timeout.as_nanos() as u64 {
                    gone.cancel();
                    return;
                }
            }
        }
    }
}

/// The run's endpoint and workload as this worker will send them, after its own pre-flight
/// (the controller's network is not the worker's).
async fn prepare(
    endpoint: serde_json::Value,
    workload: WorkloadSpec,
    timeout_s: f64,
) -> Result<(Endpoint, WorkloadSpec), String> {
    let spec: EndpointSpec =
        serde_json::from_value(endpoint).map_err(|e| format!("the endpoint spec: {e}"))?;
    let workload = workload.ensure_loaded().map_err(|e| e.to_string())?;
    let counter = workload.loaded().tokenizer.tokenizer.clone();
    let timeout = Duration::from_secs_f64(timeout_s.max(0.001));
    let endpoint = Endpoint::new(&spec, 4096, timeout)
        .map_err(|e| e.to_string())?
        .with_tokenizer(counter)
        .with_tools(workload.tools.as_ref());
    crate::endpoint::preflight::preflight(&endpoint)
        .await
        .map_err(|e| format!("pre-flight failed: {e}"))?;
    Ok((endpoint, workload))
}

/// Runs one share: waits for its start instant, runs it as a level of its own that never
/// grows (a closed-loop batch) or its segment of the level's schedule counted from that
/// instant (an open-loop level), and reports its records as they finish; stops when the
/// controller says so or cannot be told.
async fn run_share(
    link: &Link,
    place: usize,
    share: WireShare,
    endpoint: &Endpoint,
    workload: &WorkloadSpec,
    gone: &CancellationToken,
) {
    // an open-loop share's dispatcher makes its prompts before the instant and sends each
    // request at its time from it; a closed-loop share starts its streams at it
    if share.open.is_none() {
        let wait = share.start_at_ns.saturating_sub(now_ns());
        tokio::time::sleep(Duration::from_nanos(wait)).await;
    }
    let stop = gone.child_token();
    let hold = CancellationToken::new();
    let out: Arc<Mutex<Vec<WireRecord>>> = Arc::default();
    let measured = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let mut sink = ForwardSink(out.clone(), measured.clone());
    let (events_tx, events) = mpsc::channel(64);
    // when the share began, on this clock (0: not yet): an order taken late starts late, and
    // an open-loop share begins when its first prompts are made, if that is after the
    // instant; the spread says so
    let started = Arc::new(AtomicU64::new(0));
    if share.open.is_none() {
        started.store(now_ns().max(share.start_at_ns), Relaxed);
    }
    let cpu_before = crate::clock::process_cpu_ns();
    let reporter = tokio::spawn(report_share(
        link.clone(),
        place,
        Share {
            id: share.id,
            requests: u64::from(share.requests),
            measured,
        },
        started.clone(),
        out.clone(),
        events,
        (stop.clone(), hold.clone()),
    ));
    let planner = ShareOnly(share.concurrency);
    let ctx = LevelCtx {
        endpoint,
        workload,
        cancel: &stop,
        events: &events_tx,
        sink: &mut sink,
        planner: &planner,
        hold: Some(&hold),
    };
    let (timer_late_p99_ms, timer_late_max_ms) = match &share.open {
        Some(open) => run_open_share(ctx, share.level, open, (share.start_at_ns, &started)).await,
        None => {
            let plan = LevelPlan {
                index: share.level,
                concurrency: share.concurrency,
                request_count: share.requests,
                requests_asked: share.requests,
                request_cap: u64::from(share.requests),
                warmup: share.warmup,
                order: share.order,
                screen: false,
                prompt_base: share.prompt_base,
            };
            let measured = level::run(ctx, LevelJob::Closed(plan), None, None).await;
            measured
                .summary
                .client_lag
                .as_ref()
                .map_or((0.0, 0.0), |l| (l.timer_late_p99_ms, l.timer_late_max_ms))
        }
    };
    drop(events_tx);
    // the reporter sends what is left, then the end
    let (in_flight, sent, unanswered) = reporter.await.unwrap_or((0, 0, None));
    // its records may not have come: without them the share must not end as if whole, so
    // no end is sent and the controller's watchdog makes the level partial, naming this worker
    if let Some(r) = unanswered {
        if !deliver(link, place, &r).await {
            tracing::warn!("worker: a report of the share could not be delivered: no end sent");
            return;
        }
    }
    let last = Report {
        share: Some(share.id),
        records: std::mem::take(&mut *out.lock().unwrap_or_else(|e| e.into_inner())),
        in_flight,
        sent,
        started_ns: Some(started.load(Relaxed)).filter(|t| *t > 0),
        done: Some(ShareLag {
            timer_late_p99_ms,
            timer_late_max_ms,
            cpu_s: crate::clock::process_cpu_ns().saturating_sub(cpu_before) as f64 / 1e9,
        }),
        ..Report::default()
    };
    deliver(link, place, &last).await;
}

/// Sends a report that must get through (a share's end, or its last report that had no
/// answer): a few tries, then the controller's watchdog decides.
/// Returns whether it got an answer.
async fn deliver(link: &Link, place: usize, r: &Report) -> bool {
    for _ in 0..5 {
        match link.report(place, r).await {
            Ok(_) | Err(CallError::Status(..)) | Err(CallError::Decode(_)) => return true,
            Err(CallError::Net(_)) => tokio::time::sleep(Duration::from_millis(200)).await,
        }
    }
    false
}

/// A running share, as its reporter sees it.
struct Share {
    id: u64,
    /// Its measured requests, and how many have ended.
    requests: u64,
    measured: Arc<std::sync::atomic::AtomicU64>,
}

/// Four times a second until the share's events end: the records so far, the requests in
/// flight, whether its measured requests have all ended. A stop from the controller, or two
/// reports in a row that cannot be delivered, stop the share (`stop`); the controller's
/// word that every share's measured requests have ended stops its cooldown (`hold`).
/// A report that gets no answer goes again as it was, with its number, so the controller
/// takes its records once. Returns the last in-flight and sent counts, and a report still
/// unanswered (the caller sends it before the end).
async fn report_share(
    link: Link,
    place: usize,
    share: Share,
    started: Arc<AtomicU64>,
    out: Arc<Mutex<Vec<WireRecord>>>,
    mut events: mpsc::Receiver<EngineEvent>,
    (stop, hold): (CancellationToken, CancellationToken),
) -> (u64, u64, Option<Report>) {
    let id = share.id;
    let mut tick = tokio::time::interval(REPORT_PERIOD);
    let (mut in_flight, mut sent, mut chunks) = (0u64, 0u64, 0u64);
    let mut failed = 0u32;
    let (mut number, mut unanswered) = (0u64, None::<Report>);
    loop {
        tokio::select! {
            e = events.recv() => match e {
                Some(EngineEvent::Progress(p)) => {
                    (in_flight, sent, chunks) = (p.in_flight, p.sent, p.chunks);
                }
                Some(_) => {}
                None => return (in_flight, sent, unanswered),
            },
            _ = tick.tick() => {
                let r = unanswered.take().unwrap_or_else(|| {
                    number += 1;
                    Report {
                        share: Some(id),
                        number,
                        records: std::mem::take(&mut *out.lock().unwrap_or_else(|e| e.into_inner())),
                        ..Report::default()
                    }
                });
                let r = Report {
                    in_flight,
                    sent,
                    chunks,
                    measured_done: share.measured.load(Relaxed) >= share.requests,
                    started_ns: Some(started.load(Relaxed)).filter(|t| *t > 0),
                    ..r
                };
                match link.report(place, &r).await {
                    Ok(reply) => {
                        failed = 0;
                        if reply.stop {
                            stop.cancel();
                        }
                        if reply.settle {
                            hold.cancel();
                        }
                    }
                    Err(CallError::Status(..)) | Err(CallError::Decode(_)) => stop.cancel(),
                    Err(CallError::Net(why)) => {
                        // it goes again as it is: the controller may have had it
                        unanswered = Some(r);
                        failed += 1;
                        if failed >= 2 {
                            tracing::warn!("worker: the controller does not answer ({why}): share stopped");
                            stop.cancel();
                        }
                    }
                }
            }
        }
    }
}

/// The records of a share go to the controller; nothing is written here. Counts the
/// measured ones.
struct ForwardSink(
    Arc<Mutex<Vec<WireRecord>>>,
    Arc<std::sync::atomic::AtomicU64>,
);

impl RunSink for ForwardSink {
    fn open(&mut self, run_id: &str) -> std::io::Result<(String, PathBuf)> {
        Ok((run_id.to_string(), PathBuf::new()))
    }
    fn write_run(&mut self, _echo: &RunEcho) -> std::io::Result<()> {
        Ok(())
    }
    fn append_request(&mut self, _level: u32, record: &RequestRecord) -> std::io::Result<()> {
        if record.counted() {
            self.1.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(WireRecord::of(record));
        Ok(())
    }
    fn flush_requests(&mut self) -> std::io::Result<()> {
        Ok(())
    }
    fn append_telemetry(&mut self, _lines: &[TelemetryLine]) -> std::io::Result<()> {
        Ok(())
    }
    fn write_level(&mut self, _level: &LevelSummary) -> std::io::Result<()> {
        Ok(())
    }
    fn write_summary(&mut self, _summary: &serde_json::Value) -> std::io::Result<()> {
        Ok(())
    }
}

/// A share is a level of fixed size: never judged, never grown (the controller judges the
/// merged level and decides its batches).
struct ShareOnly(u32);

impl LevelPlanner for ShareOnly {
    fn next(&mut self, _finished: &[LevelSummary]) -> Option<LevelLoad> {
        None
    }
    fn describe(&self) -> serde_json::Value {
        serde_json::json!({"share": true})
    }
    fn max_concurrency(&self) -> u32 {
        self.0
    }
}
