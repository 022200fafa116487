//! The served run's HTTP routes, on hyper's server (which owns the framing; three routes need
//! no web framework, and hyper is already in the tree for the simulator and the controller):
//!
//! - `GET /events[?from=N]`: the run's events (a campaign's, for a campaign) from number `N`
//!   (0: the start) as JSON lines, `{"seq": N, "event": {...}}`, kept open while the run goes
//!   on and ended after its last event;
//! - `GET /metrics`: the Prometheus text ([`super::metrics_text`]);
//! - `GET /run`: the run's plan as `run.json` records it, and its capacity inputs (what a
//!   watcher reads the levels with); for a campaign, its record as `campaign.json` holds it;
//! - `POST /stop`: stops the run as Ctrl-C would (only with the token).
//!
//! On a loopback address the two reads need no token; on any other, every route needs
//! `Authorization: Bearer TOKEN` (the run's `RIGHTSIZE_SERVE_TOKEN`).

use super::log::{EventLog, Logged};
use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use std::convert::Infallible;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use tokio::net::TcpListener;
use tokio::sync::{mpsc, Notify};
use tokio_util::sync::CancellationToken;

type Body = BoxBody<Bytes, Infallible>;

/// `/metrics`' text of what the events folded into.
pub type MetricsOf<E> = Box<dyn Fn(&<E as Logged>::Folded) -> String + Send + Sync>;

/// What every connection shares.
pub struct Shared<E: Logged> {
    pub log: Arc<EventLog<E>>,
    pub token: Option<String>,
    /// Reads need no token (the server listens on a loopback address).
    pub open_reads: bool,
    /// Stops the run (`POST /stop`).
    pub run_cancel: CancellationToken,
    pub metrics: MetricsOf<E>,
    /// `GET /run`'s answer.
    pub described: String,
    /// `/events` streams still sending; [`Shared::drained`] wakes when one ends.
    pub streams: AtomicUsize,
    pub drained: Notify,
}

/// Serves connections until `stop` fires.
pub async fn accept_loop<E: Logged>(
    listener: TcpListener,
    shared: Arc<Shared<E>>,
    stop: CancellationToken,
) {
    loop {
        let accepted = tokio::select! {
            _ = stop.cancelled() => return,
            r = listener.accept() => r,
        };
        let Ok((stream, _)) = accepted else {
            continue;
        };
        let (shared, stop) = (shared.clone(), stop.clone());
        tokio::spawn(async move {
            let svc = service_fn(move |req| {
                let (shared, stop) = (shared.clone(), stop.clone());
                async move { Ok::<_, Infallible>(route(req, &shared, &stop)) }
            });
            let conn = http1::Builder::new().serve_connection(TokioIo::new(stream), svc);
            let _ = conn.await;
        });
    }
}

fn route<E: Logged>(
    req: Request<Incoming>,
    shared: &Arc<Shared<E>>,
    stop: &CancellationToken,
) -> Response<Body> {
    let authorized =
        given_token(&req)
            .zip(shared.token.as_deref())
            .is_some_and(|(given, token)| {
                crate::secrets::same_secret(given.as_bytes(), token.as_bytes())
            });
    let reads = authorized || shared.open_reads;
    match (req.method(), req.uri().path()) {
        (&Method::GET, "/events") if reads => events(shared.clone(), from_of(&req), stop.clone()),
        (&Method::GET, "/metrics") if reads => {
            let text = shared.log.read_folded(|f| (shared.metrics)(f));
            with_type(text, "text/plain; version=0.0.4; charset=utf-8")
        }
        (&Method::GET, "/run") if reads => with_type(shared.described.clone(), "application/json"),
        (&Method::POST, "/stop") if authorized => {
            shared.run_cancel.cancel();
            with_type("stopping the run\n".into(), "text/plain; charset=utf-8")
        }
        (&Method::POST, "/stop") if shared.token.is_none() => plain(
            StatusCode::FORBIDDEN,
            "this run takes no stop: it was started without RIGHTSIZE_SERVE_TOKEN\n",
        ),
        (_, "/events" | "/metrics" | "/run" | "/stop") => plain(
            StatusCode::UNAUTHORIZED,
            "give the run's token: Authorization: Bearer $RIGHTSIZE_SERVE_TOKEN\n",
        ),
        _ => plain(
            StatusCode::NOT_FOUND,
            "not found: GET /events, GET /metrics, GET /run, POST /stop\n",
        ),
    }
}

/// The `/events` stream from `from` on: a task sends each line as the log gets it and ends
/// after the run's last event (or when the server stops).
fn events<E: Logged>(shared: Arc<Shared<E>>, from: u64, stop: CancellationToken) -> Response<Body> {
    let (tx, rx) = mpsc::channel::<Result<Frame<Bytes>, Infallible>>(64);
    shared.streams.fetch_add(1, Ordering::SeqCst);
    tokio::spawn(async move {
        let mut changed = shared.log.subscribe();
        let mut cursor = from;
        'sending: loop {
            changed.mark_unchanged();
            let (lines, ended) = shared.log.since(cursor);
            for line in &lines {
                let frame = Frame::data(Bytes::copy_from_slice(line.text.as_bytes()));
                if tx.send(Ok(frame)).await.is_err() {
                    break 'sending;
                }
                cursor = line.seq + 1;
            }
            if ended {
                break;
            }
            tokio::select! {
                r = changed.changed() => if r.is_err() { break },
                _ = stop.cancelled() => break,
                _ = tx.closed() => break,
            }
        }
        shared.streams.fetch_sub(1, Ordering::SeqCst);
        shared.drained.notify_waiters();
    });
    let body = StreamBody::new(tokio_stream_of(rx));
    let mut r = Response::new(BodyExt::boxed(body));
    r.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/x-ndjson"),
    );
    r
}

/// The receiver as a stream of frames.
fn tokio_stream_of(
    mut rx: mpsc::Receiver<Result<Frame<Bytes>, Infallible>>,
) -> impl futures_util::Stream<Item = Result<Frame<Bytes>, Infallible>> {
    futures_util::stream::poll_fn(move |cx| rx.poll_recv(cx))
}

/// `from=N` of the query; 0 when absent or not a number.
fn from_of(req: &Request<Incoming>) -> u64 {
    req.uri()
        .query()
        .and_then(|q| q.split('&').find_map(|kv| kv.strip_prefix("from=")))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

fn given_token(req: &Request<Incoming>) -> Option<&str> {
    req.headers()
        .get(hyper::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
}

fn with_type(text: String, content_type: &'static str) -> Response<Body> {
    let mut r = Response::new(Full::new(Bytes::from(text)).boxed());
    r.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static(content_type),
    );
    r
}

fn plain(status: StatusCode, text: &'static str) -> Response<Body> {
    let mut r = with_type(text.into(), "text/plain; charset=utf-8");
    *r.status_mut() = status;
    r
}
