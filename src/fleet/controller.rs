//! The controller's server: workers join it, poll it for orders and report to it (the calls
//! are in `protocol`). It implements the engine's [`Fleet`]: `prepare` hands every worker the
//! run, `start` a batch's shares, and the records that come back go to the level being run.
//!
//! Hand-written on hyper's server (which owns the HTTP framing) rather than a web framework:
//! five routes do not need one, and hyper is already in the tree for the simulator.
//!
//! A worker is lost when nothing has been heard from it for [`HEARTBEAT_TIMEOUT`] (a worker
//! sends a heartbeat every second, and reports four times a second while it runs a share),
//! when its running share has sent no report for as long (the share hung while the heartbeat
//! went on, or its order never reached the worker), or at once when its local process exits
//! ([`Losses::lose`]). Its running share then ends with [`FleetMsg::Lost`], naming it.

use super::protocol::{
    best_offset, Clock, Join, Joined, Order, Report, ReportReply, WireShare, HEARTBEAT_TIMEOUT,
    MAX_BODY, POLL_WAIT,
};
use crate::clock::now_ns;
use crate::engine::fleet::{Fleet, FleetMsg, FleetRunSpec, FleetWorker, Share};
use bytes::Bytes;
use futures_util::future::BoxFuture;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::{mpsc, Notify};
use tokio_util::sync::CancellationToken;

/// A running share, as the controller tracks it.
struct Active {
    id: u64,
    /// Where its messages go; dropped when the share ends, so the batch's receiver closes
    /// once every share has.
    tx: mpsc::UnboundedSender<FleetMsg>,
    stop: bool,
    /// Its measured requests have all ended.
    measured_done: bool,
    /// When a report last named it (controller's clock; its start instant before the
    /// first): a share silent for a heartbeat's time is lost even while its worker's
    /// heartbeat goes on (the share hung, or its order never reached the worker).
    last_report: u64,
    /// The number of the last report whose records were taken.
    taken: u64,
}

/// One worker's place.
struct Slot {
    place: usize,
    index: u32,
    host: String,
    /// The controller's clock minus the worker's (ns), and how far off it may be.
    offset: i128,
    uncertainty: u64,
    last_seen: u64,
    ready: Option<Result<(), String>>,
    orders: VecDeque<Order>,
    wake: Arc<Notify>,
    share: Option<Active>,
    spec_sent: bool,
    lost: Option<String>,
    stopped: bool,
}

impl Slot {
    fn name(&self) -> String {
        format!("worker {} ({})", self.index, self.host)
    }
}

#[derive(Default)]
struct State {
    /// By place; `None` until a worker takes it.
    slots: Vec<Option<Slot>>,
    spec: Option<Order>,
    /// The generation of `spec`: one more each time a run prepares the fleet.
    generation: u64,
    next_share: u64,
    finished: bool,
    /// Workers gone before they joined (a local process that exited), by index.
    gone_early: Vec<(u32, String)>,
}

struct Shared {
    token: String,
    refused: AtomicU64,
    state: Mutex<State>,
    /// Joins, readiness and losses: `prepare` waits on it.
    changed: Notify,
}

impl Shared {
    fn new(token: String, workers: usize) -> Shared {
        Shared {
            token,
            refused: AtomicU64::new(0),
            state: Mutex::new(State {
                slots: (0..workers).map(|_| None).collect(),
                ..State::default()
            }),
            changed: Notify::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// The controller of a distributed run: its server runs until it is dropped.
pub struct Controller {
    shared: Arc<Shared>,
    addr: SocketAddr,
    stop: CancellationToken,
    children: Mutex<Option<super::local::LocalWorkers>>,
}

impl Drop for Controller {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// Why the controller could not start.
#[derive(Debug, thiserror::Error)]
#[error("cannot listen for workers on {addr}: {source} (choose another with --controller-listen)")]
pub struct ListenError {
    addr: String,
    source: std::io::Error,
}

impl Controller {
    /// Listens on `addr` for `workers` workers that present `token`.
    pub async fn start(
        addr: &str,
        workers: usize,
        token: String,
    ) -> Result<Controller, ListenError> {
        let listener = TcpListener::bind(addr)
            .await
            .map_err(|source| ListenError {
                addr: addr.to_string(),
                source,
            })?;
        let bound = listener.local_addr().map_err(|source| ListenError {
            addr: addr.to_string(),
            source,
        })?;
        let shared = Arc::new(Shared::new(token, workers));
        let stop = CancellationToken::new();
        tokio::spawn(accept_loop(listener, shared.clone(), stop.clone()));
        tokio::spawn(watchdog(shared.clone(), stop.clone()));
        Ok(Controller {
            shared,
            addr: bound,
            stop,
            children: Mutex::new(None),
        })
    }

    /// Where the workers reach it.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Calls refused for a missing or wrong token.
    pub fn refused(&self) -> u64 {
        self.shared.refused.load(Ordering::Relaxed)
    }

    /// What tells the controller a worker's process is gone ([`Losses::lose`]).
    pub fn losses(&self) -> Losses {
        Losses(self.shared.clone())
    }

    /// Worker processes this controller started and stops with the run.
    pub fn adopt(&self, workers: super::local::LocalWorkers) {
        *self
            .children
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(workers);
    }
}

/// Tells the controller a worker is gone.
#[derive(Clone)]
pub struct Losses(Arc<Shared>);

impl Losses {
    /// The worker of index `index` is gone (its local process exited): its share ends now,
    /// naming `why`. Ignored once the run is finished.
    pub fn lose(&self, index: u32, why: String) {
        let mut st = self.0.lock();
        if st.finished {
            return;
        }
        match st
            .slots
            .iter_mut()
            .flatten()
            .find(|s| s.index == index && s.lost.is_none())
        {
            Some(slot) => mark_lost(slot, why),
            None => st.gone_early.push((index, why)),
        }
        drop(st);
        self.0.changed.notify_waiters();
    }
}

impl Controller {
    /// Workers that have not taken the Stop order yet.
    fn running(&self) -> usize {
        let st = self.shared.lock();
        st.slots
            .iter()
            .flatten()
            .filter(|s| s.lost.is_none() && !s.stopped)
            .count()
    }
}

fn mark_lost(slot: &mut Slot, why: String) {
    if let Some(active) = slot.share.take() {
        let _ = active.tx.send(FleetMsg::Lost {
            worker: slot.place,
            why: why.clone(),
        });
    }
    slot.lost = Some(why);
    slot.wake.notify_one();
}

impl Fleet for Controller {
    fn size(&self) -> usize {
        self.shared.lock().slots.len()
    }

    fn workers(&self) -> Vec<FleetWorker> {
        self.shared
            .lock()
            .slots
            .iter()
            .enumerate()
            .map(|(place, s)| match s {
                Some(s) => FleetWorker {
                    index: s.index,
                    host: s.host.clone(),
                    clock_uncertainty_ns: s.uncertainty,
                },
                None => FleetWorker {
                    index: place as u32,
                    host: String::new(),
                    clock_uncertainty_ns: 0,
                },
            })
            .collect()
    }

    fn prepare(&self, spec: FleetRunSpec) -> BoxFuture<'_, Result<(), String>> {
        Box::pin(async move {
            let mut endpoint = serde_json::to_value(&spec.endpoint).map_err(|e| e.to_string())?;
            // the masked forms are for files; the workers need what the requests carry
            endpoint["name"] = spec.endpoint.name.clone().into();
            endpoint["base_url"] = spec.endpoint.base_url.clone().into();
            endpoint["headers"] =
                serde_json::to_value(&spec.endpoint.headers).map_err(|e| e.to_string())?;
            {
                let mut st = self.shared.lock();
                st.generation += 1;
                st.spec = Some(Order::Spec {
                    generation: st.generation,
                    endpoint,
                    workload: Box::new(spec.workload.clone()),
                    timeout_s: spec.timeout.as_secs_f64(),
                });
                // a fleet that served a run before (a campaign's): every worker takes the
                // new run and passes its pre-flight again
                for s in st.slots.iter_mut().flatten() {
                    s.spec_sent = false;
                    s.ready = None;
                    s.wake.notify_one();
                }
            }
            loop {
                let changed = self.shared.changed.notified();
                tokio::pin!(changed);
                changed.as_mut().enable();
                {
                    let st = self.shared.lock();
                    if let Some((index, why)) = st.gone_early.first() {
                        return Err(format!("worker {index} did not join: {why}"));
                    }
                    let mut all_ready = true;
                    for s in st.slots.iter() {
                        match s {
                            None => all_ready = false,
                            Some(s) => {
                                if let Some(why) = &s.lost {
                                    return Err(format!("{} was lost: {why}", s.name()));
                                }
                                match &s.ready {
                                    Some(Err(why)) => {
                                        return Err(format!(
                                            "{} cannot run the load: {why}",
                                            s.name()
                                        ))
                                    }
                                    Some(Ok(())) => {}
                                    None => all_ready = false,
                                }
                            }
                        }
                    }
                    if all_ready {
                        return Ok(());
                    }
                }
                // a loss is noticed by the watchdog, which wakes this too
                let _ = tokio::time::timeout(Duration::from_secs(1), changed).await;
            }
        })
    }

    fn start(&self, shares: Vec<Share>) -> mpsc::UnboundedReceiver<FleetMsg> {
        let (tx, rx) = mpsc::unbounded_channel();
        let mut st = self.shared.lock();
        for s in shares {
            st.next_share += 1;
            let id = st.next_share;
            let Some(slot) = st.slots.get_mut(s.worker).and_then(Option::as_mut) else {
                let _ = tx.send(FleetMsg::Lost {
                    worker: s.worker,
                    why: "never joined".into(),
                });
                continue;
            };
            if let Some(why) = &slot.lost {
                let _ = tx.send(FleetMsg::Lost {
                    worker: s.worker,
                    why: why.clone(),
                });
                continue;
            }
            let start = i128::from(s.start_at_ns) - slot.offset;
            slot.orders.push_back(Order::Share(WireShare {
                id,
                level: s.level,
                order: s.order,
                concurrency: s.concurrency,
                requests: s.requests,
                warmup: s.warmup,
                prompt_base: s.prompt_base,
                start_at_ns: start.max(0) as u64,
                open: s.open,
            }));
            slot.share = Some(Active {
                id,
                tx: tx.clone(),
                stop: false,
                measured_done: false,
                last_report: s.start_at_ns,
                taken: 0,
            });
            slot.wake.notify_one();
        }
        rx
    }

    fn stop_shares(&self) {
        let mut st = self.shared.lock();
        for slot in st.slots.iter_mut().flatten() {
            if let Some(a) = slot.share.as_mut() {
                a.stop = true;
            }
            // a share not yet taken is not sent, and ends here: no report will end it
            let before = slot.orders.len();
            slot.orders.retain(|o| !matches!(o, Order::Share(_)));
            if slot.orders.len() < before {
                slot.share = None;
            }
        }
    }

    /// A record is sent at the worker's next report (a period at most) and takes its trip;
    /// a second period leaves room for the trip and a late report.
    fn records_lag(&self) -> Duration {
        super::protocol::REPORT_PERIOD * 2
    }

    fn finish(&self) -> BoxFuture<'_, Vec<String>> {
        Box::pin(async move {
            {
                let mut st = self.shared.lock();
                st.finished = true;
                for s in st.slots.iter().flatten() {
                    s.wake.notify_one();
                }
            }
            // the workers take the Stop order at their next poll
            let deadline = now_ns() + POLL_WAIT.as_nanos() as u64 * 2;
            while self.running() > 0 && now_ns() < deadline {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            let mut notes = Vec::new();
            let children = self
                .children
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .take();
            if let Some(children) = children {
                notes.extend(children.shutdown().await);
            }
            let refused = self.refused();
            if refused > 0 {
                notes.push(format!(
                    "the controller refused {refused} call{} without the run's token \
                     (something other than this run's workers called it)",
                    if refused == 1 { "" } else { "s" }
                ));
            }
            notes
        })
    }
}

/// Every quarter second: a worker silent for a heartbeat's time is lost.
async fn watchdog(shared: Arc<Shared>, stop: CancellationToken) {
    let mut tick = tokio::time::interval(Duration::from_millis(250));
    loop {
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = tick.tick() => {}
        }
        let now = now_ns();
        let mut any = false;
        let mut st = shared.lock();
        if st.finished {
            continue;
        }
        let limit = HEARTBEAT_TIMEOUT.as_nanos() as u64;
        for slot in st.slots.iter_mut().flatten() {
            if slot.lost.is_some() {
                continue;
            }
            let silent = now.saturating_sub(slot.last_seen);
            let share_silent = slot
                .share
                .as_ref()
                .map_or(0, |a| now.saturating_sub(a.last_report));
            if silent > limit {
                let why = format!(
                    "nothing heard from it for {:.1} s: it died, hung or lost its connection",
                    silent as f64 / 1e9
                );
                mark_lost(slot, why);
                any = true;
            } else if share_silent > limit {
                let why = format!(
                    "its share sent no report for {:.1} s: it hung, or never got the share",
                    share_silent as f64 / 1e9
                );
                mark_lost(slot, why);
                any = true;
            }
        }
        drop(st);
        if any {
            shared.changed.notify_waiters();
        }
    }
}

async fn accept_loop(listener: TcpListener, shared: Arc<Shared>, stop: CancellationToken) {
    loop {
        let accepted = tokio::select! {
            _ = stop.cancelled() => return,
            r = listener.accept() => r,
        };
        let Ok((stream, _)) = accepted else {
            tokio::time::sleep(Duration::from_millis(10)).await;
            continue;
        };
        let _ = stream.set_nodelay(true);
        let shared = shared.clone();
        let stop = stop.clone();
        tokio::spawn(async move {
            let svc = service_fn(move |req| {
                let shared = shared.clone();
                async move { Ok::<_, std::convert::Infallible>(handle(&shared, req).await) }
            });
            let conn = http1::Builder::new().serve_connection(TokioIo::new(stream), svc);
            tokio::select! {
                _ = conn => {}
                _ = stop.cancelled() => {}
            }
        });
    }
}

type Body = Full<Bytes>;

fn reply(status: StatusCode, body: impl Into<Bytes>) -> Response<Body> {
    let mut r = Response::new(Full::new(body.into()));
    *r.status_mut() = status;
    r
}

fn json<T: serde::Serialize>(value: &T) -> Response<Body> {
    let mut r = reply(
        StatusCode::OK,
        serde_json::to_vec(value).unwrap_or_default(),
    );
    r.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json"),
    );
    r
}

fn authorized(shared: &Shared, req: &Request<Incoming>) -> bool {
    let given = req
        .headers()
        .get(hyper::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or("");
    crate::secrets::same_secret(given.as_bytes(), shared.token.as_bytes())
}

/// `worker=P` of the query.
fn place_of(req: &Request<Incoming>) -> Option<usize> {
    req.uri()
        .query()?
        .split('&')
        .find_map(|kv| kv.strip_prefix("worker="))?
        .parse()
        .ok()
}

async fn body_json<T: serde::de::DeserializeOwned>(req: Request<Incoming>) -> Result<T, String> {
    let bytes = Limited::new(req.into_body(), MAX_BODY)
        .collect()
        .await
        .map_err(|e| format!("cannot read the body: {e}"))?
        .to_bytes();
    serde_json::from_slice(&bytes).map_err(|e| format!("not a valid message: {e}"))
}

async fn handle(shared: &Shared, req: Request<Incoming>) -> Response<Body> {
    let path = req.uri().path().to_string();
    if path == "/healthz" {
        return reply(StatusCode::OK, "ok\n");
    }
    if !authorized(shared, &req) {
        shared.refused.fetch_add(1, Ordering::Relaxed);
        return reply(
            StatusCode::UNAUTHORIZED,
            "this controller needs the run's token (RIGHTSIZE_WORKER_TOKEN)\n",
        );
    }
    match (req.method(), path.as_str()) {
        (&Method::GET, "/v1/clock") => json(&Clock { ns: now_ns() }),
        (&Method::POST, "/v1/join") => match body_json::<Join>(req).await {
            Ok(j) => join(shared, j),
            Err(e) => reply(StatusCode::BAD_REQUEST, e),
        },
        (&Method::GET, "/v1/next") => match place_of(&req) {
            Some(p) => next(shared, p).await,
            None => reply(StatusCode::BAD_REQUEST, "worker=PLACE missing\n"),
        },
        (&Method::POST, "/v1/report") => match place_of(&req) {
            Some(p) => match body_json::<Report>(req).await {
                Ok(r) => report(shared, p, r),
                Err(e) => reply(StatusCode::BAD_REQUEST, e),
            },
            None => reply(StatusCode::BAD_REQUEST, "worker=PLACE missing\n"),
        },
        _ => reply(StatusCode::NOT_FOUND, "no such call\n"),
    }
}

fn join(shared: &Shared, j: Join) -> Response<Body> {
    if j.version != env!("CARGO_PKG_VERSION") {
        return reply(
            StatusCode::CONFLICT,
            format!(
                "the controller runs rightsize {}, this worker {}: run the same version\n",
                env!("CARGO_PKG_VERSION"),
                j.version
            ),
        );
    }
    let mut st = shared.lock();
    if st.finished {
        return reply(StatusCode::GONE, "the run is over\n");
    }
    let n = st.slots.len();
    let place = match j.index {
        Some(i) if (i as usize) < n => {
            if st.slots[i as usize].is_some() {
                return reply(
                    StatusCode::CONFLICT,
                    format!("worker index {i} has already joined this run\n"),
                );
            }
            i as usize
        }
        Some(i) => {
            return reply(
                StatusCode::CONFLICT,
                format!("worker index {i} is out of range: this run has {n} workers (0..{n})\n"),
            )
        }
        None => match st.slots.iter().position(Option::is_none) {
            Some(p) => p,
            None => {
                return reply(
                    StatusCode::CONFLICT,
                    format!("this run has its {n} workers already\n"),
                )
            }
        },
    };
    let (offset, uncertainty) = best_offset(&j.clock).unwrap_or((0, u64::MAX / 4));
    st.slots[place] = Some(Slot {
        place,
        index: j.index.unwrap_or(place as u32),
        host: j.host,
        offset,
        uncertainty,
        last_seen: now_ns(),
        ready: None,
        orders: VecDeque::new(),
        wake: Arc::new(Notify::new()),
        share: None,
        spec_sent: false,
        lost: None,
        stopped: false,
    });
    drop(st);
    shared.changed.notify_waiters();
    json(&Joined { place })
}

/// The next order for the worker at `place`, waiting up to [`POLL_WAIT`] for one.
async fn next(shared: &Shared, place: usize) -> Response<Body> {
    let deadline = tokio::time::Instant::now() + POLL_WAIT;
    loop {
        let wake = {
            let mut st = shared.lock();
            let finished = st.finished;
            let spec = st.spec.clone();
            let Some(slot) = st.slots.get_mut(place).and_then(Option::as_mut) else {
                return reply(
                    StatusCode::NOT_FOUND,
                    "no worker at that place: join first\n",
                );
            };
            slot.last_seen = now_ns();
            if slot.lost.is_some() {
                return json(&Order::Stop);
            }
            if finished {
                slot.stopped = true;
                return json(&Order::Stop);
            }
            if let (false, Some(spec)) = (slot.spec_sent, spec) {
                slot.spec_sent = true;
                return json(&spec);
            }
            if let Some(o) = slot.orders.pop_front() {
                return json(&o);
            }
            slot.wake.clone()
        };
        if tokio::time::timeout_at(deadline, wake.notified())
            .await
            .is_err()
        {
            return json(&Order::Idle);
        }
    }
}

fn report(shared: &Shared, place: usize, r: Report) -> Response<Body> {
    let mut st = shared.lock();
    let generation = st.generation;
    let Some(slot) = st.slots.get_mut(place).and_then(Option::as_mut) else {
        return reply(
            StatusCode::NOT_FOUND,
            "no worker at that place: join first\n",
        );
    };
    slot.last_seen = now_ns();
    let mut changed = false;
    // an answer to an earlier run's spec (a campaign's candidate before) is not this one's
    if let Some(ready) = r.ready.filter(|_| r.ready_for == generation) {
        slot.ready = Some(ready);
        changed = true;
    }
    let mut stop = false;
    if let (Some(id), true) = (r.share, r.measured_done) {
        if let Some(a) = slot.share.as_mut().filter(|a| a.id == id) {
            a.measured_done = true;
        }
    }
    if let Some(a) = r
        .share
        .and_then(|id| slot.share.as_mut().filter(|a| a.id == id))
    {
        a.last_report = now_ns();
    }
    if let Some(id) = r.share {
        let offset = slot.offset;
        match slot.share.as_mut().filter(|a| a.id == id) {
            // a share that ended (or was never this worker's): stop it
            None => stop = true,
            Some(active) => {
                // a report sent again whose records came the first time
                let again = r.number != 0 && r.number <= active.taken;
                active.taken = active.taken.max(r.number);
                let tx = &active.tx;
                stop = active.stop;
                if let Some(at) = r.started_ns {
                    let at = (i128::from(at) + offset).max(0) as u64;
                    let _ = tx.send(FleetMsg::Started {
                        worker: place,
                        at_ns: at,
                    });
                }
                if !r.records.is_empty() && !again {
                    let records = r.records.into_iter().map(|w| w.into_record()).collect();
                    let _ = tx.send(FleetMsg::Records {
                        worker: place,
                        records,
                    });
                }
                let _ = tx.send(FleetMsg::Status {
                    worker: place,
                    in_flight: r.in_flight,
                    sent: r.sent,
                    chunks: r.chunks,
                });
                if let Some(lag) = r.done {
                    let _ = tx.send(FleetMsg::Done {
                        worker: place,
                        timer_late_p99_ms: lag.timer_late_p99_ms,
                        timer_late_max_ms: lag.timer_late_max_ms,
                        cpu_s: lag.cpu_s,
                    });
                    slot.share = None;
                }
            }
        }
    }
    // the batch's cooldown ends once every running share's measured requests have
    let settle = r.share.is_some()
        && st
            .slots
            .iter()
            .flatten()
            .filter_map(|s| s.share.as_ref())
            .all(|a| a.measured_done);
    drop(st);
    if changed {
        shared.changed.notify_waiters();
    }
    json(&ReportReply { stop, settle })
}

#[cfg(test)]
#[path = "controller_tests.rs"]
mod tests;
