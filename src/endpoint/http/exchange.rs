//! One generation request on a pooled connection, for `http://` and `https://` alike: the
//! worker takes a connection (`super::pool`), queues the request and writes what the socket
//! takes at once (or the open-loop dispatcher did, on its own thread: `super::direct`); the
//! first-token lane reads the answer up to its first token; the worker reads the rest.
//!
//! The first-token lane is one thread of its own, with its own small runtime, that reads each
//! answer up to its first token before handing the connection back to the worker for the rest
//! of the stream. Sends never queue behind the lane: the worker (or the dispatcher) writes the
//! request itself; the lane attaches the socket to its own reactor for the head and the first
//! events. Why: at high concurrency the workers' runtime is busy reading hundreds of streams,
//! and a stream's next read waits its turn behind all of them. A new request's first token
//! would wait the same way, and TTFT, the number a capacity plan leans on most, would grow with
//! the client's backlog rather than the server's. The lane holds only requests still waiting
//! for their first token, so it sleeps in `epoll_wait` and is woken by those bytes themselves;
//! it asks the kernel for a short time slice and, where the process may (root or
//! `CAP_SYS_NICE`), a priority above the workers' (`crate::sched::latency_critical`), so its
//! wake-ups run ahead of the busy workers. The timing rule is unchanged: the task that reads
//! the bytes reads the monotonic clock the moment its `read()` returns.

use std::future::Future;
use std::sync::{Arc, OnceLock};

use bytes::Bytes;
use http::header::{self, HeaderMap};
use http_body_util::Full;
use tokio::runtime::Handle;
use tokio::task::JoinHandle;
use url::Url;

use super::body::{read_answer, read_error, read_whole, unreadable, Body, Decoder};
use super::connection::{Conn, Pending, Request, Response, SendError};
use super::connection::{FIRST_TOKEN_READ_BYTES, READ_BUFFER_BYTES};
use super::failure::{fail_with, is_stale_connection};
use super::pool::{ConnectFailure, Pool, Target};
use super::request_head::{request_headers, target_uri};
use crate::endpoint::failure::{classify, describe};
use crate::endpoint::probe::Probe;
use crate::endpoint::stream::StreamReader;
use crate::record::ExchangeOutcome;

/// The client for one endpoint's generation requests.
pub(crate) struct HttpClient {
    pool: Arc<Pool>,
    /// The request target: origin form (`/v1/chat/completions`), or absolute form through an
    /// `http://` proxy.
    uri: http::Uri,
    /// Every request's headers (holding the bearer token: never logged).
    headers: HeaderMap,
}

impl HttpClient {
    /// A client posting to `generate_url` (streaming or not) with `headers` on every request,
    /// through the proxy `target` names, if any.
    pub fn new(
        generate_url: &Url,
        target: Target,
        headers: &HeaderMap,
        stream: bool,
        pool_size: usize,
    ) -> Result<HttpClient, String> {
        let pool = Pool::new(target, pool_size)?;
        let uri = target_uri(generate_url, pool.absolute_form())?;
        let proxy_auth = pool.absolute_form().then(|| pool.proxy_auth()).flatten();
        let headers = request_headers(generate_url, headers, stream, proxy_auth)?;
        // the lane's thread starts now, not on the first request (whose TTFT it would add to)
        start_lane();
        Ok(HttpClient {
            pool: Arc::new(pool),
            uri,
            headers,
        })
    }

    /// The connections.
    pub fn pool(&self) -> &Pool {
        &self.pool
    }

    /// The generation request with `body`.
    pub fn request(&self, body: Bytes) -> Request {
        let mut req = Request::new(Full::new(body));
        *req.method_mut() = http::Method::POST;
        *req.uri_mut() = self.uri.clone();
        *req.headers_mut() = self.headers.clone();
        req
    }

    /// One generation request with `body`: fills `out` (and `probe`). The worker writes the
    /// request; the first-token lane ([`on_lane`]) reads the answer up to its first token;
    /// the worker reads the rest of a stream. The pre-flight check (with `probe`) runs here
    /// whole.
    pub async fn exchange(
        &self,
        body: Bytes,
        stream: bool,
        out: &mut ExchangeOutcome,
        probe: Option<&mut Probe>,
    ) {
        if probe.is_some() {
            return self.exchange_here(body, stream, out, probe).await;
        }
        self.exchange_from(body, None, stream, out).await;
    }

    /// [`HttpClient::exchange`] of a request the open-loop dispatcher queued and wrote (or
    /// began to) on an idle connection of its own thread (`super::direct`).
    pub async fn exchange_early(
        &self,
        body: Bytes,
        early: Early,
        stream: bool,
        out: &mut ExchangeOutcome,
    ) {
        self.exchange_from(body, Some(early), stream, out).await;
    }

    /// Sends the request (unless `early` says it is on its way) and reads the answer: the
    /// lane up to the first token, this task the rest of a stream.
    async fn exchange_from(
        &self,
        body: Bytes,
        mut early: Option<Early>,
        stream: bool,
        out: &mut ExchangeOutcome,
    ) {
        let mut reuse = true;
        let rest = loop {
            let (conn, answer, reused) = match early.take() {
                Some(Early { conn, answer }) => (conn, answer, true),
                None => {
                    let (mut conn, reused) = match self.pool.open(reuse).await {
                        Ok(x) => x,
                        Err(ConnectFailure { transport, detail }) => {
                            return fail_with(out, transport, detail, None)
                        }
                    };
                    let answer = conn.send(self.request(body.clone()));
                    // written here, now: the lane's wake-up is not in the send time
                    conn.write_now();
                    (conn, answer, reused)
                }
            };
            // The lane fills its own outcome (the start time and the chunk-time buffer come
            // along): if this wait is dropped (timeout, cancel), `out` keeps its start.
            let mut lane_out = ExchangeOutcome {
                start_ns: out.start_ns,
                reconnected: out.reconnected,
                content_chunk_ns: std::mem::take(&mut out.content_chunk_ns),
                live_chunks: out.live_chunks.clone(),
                ..ExchangeOutcome::default()
            };
            let pool = self.pool.clone();
            let conn = conn.release();
            let (lane_out, after) = on_lane(async move {
                let after =
                    until_first_token(&pool, conn, answer, stream, reused, &mut lane_out).await;
                (lane_out, after)
            })
            .await;
            *out = lane_out;
            match after {
                AfterSend::Stale => {
                    out.reconnected = true;
                    reuse = false;
                }
                AfterSend::Done => return,
                AfterSend::Rest(rest) => break rest,
            }
        };
        let StreamRest {
            mut conn,
            mut body,
            mut decoder,
            mut stream,
        } = *rest;
        conn.link().set_read_cap(READ_BUFFER_BYTES);
        let mut resp = Body::new(&mut conn, &mut body, &mut decoder);
        stream.read(&mut resp, out, None, false).await;
        stream.finish(out, None);
        self.pool.put(conn).await;
    }

    /// Sends the request and reads the answer whole, in the calling task.
    async fn exchange_here(
        &self,
        body: Bytes,
        stream: bool,
        out: &mut ExchangeOutcome,
        mut probe: Option<&mut Probe>,
    ) {
        let mut reuse = true;
        let (mut conn, resp) = loop {
            let (mut conn, reused) = match self.pool.open(reuse).await {
                Ok(x) => x,
                Err(ConnectFailure { transport, detail }) => {
                    return fail_with(out, transport, detail, probe)
                }
            };
            let answer = conn.send(self.request(body.clone()));
            match conn.drive(answer).await {
                Ok(resp) => break (conn, resp),
                Err(e) if reused && stale(&e) => {
                    out.reconnected = true;
                    reuse = false;
                }
                Err(e) => return fail_with(out, classify(e.error()), no_response(&e), probe),
            }
        };
        let (head, mut body) = resp.into_parts();
        let facts = HeadFacts::of(&head);
        if let Some(p) = probe.as_deref_mut() {
            p.status = Some(facts.status);
            p.content_type.clone_from(&facts.content_type);
            p.server_header.clone_from(&facts.server);
            p.location.clone_from(&facts.location);
        }
        let mut decoder = Decoder::for_encoding(facts.content_encoding.as_deref());
        let refused = unreadable(facts.content_type.as_deref(), &decoder);
        let mut resp = Body::new(&mut conn, &mut body, &mut decoder);
        if !(200..300).contains(&facts.status) {
            read_error(&mut resp, facts.status, out, probe).await;
        } else {
            read_answer(&mut resp, stream, refused, out, probe).await;
        }
        self.pool.put(conn).await;
    }
}

/// A request the open-loop dispatcher queued on an idle connection and wrote what the socket
/// took of it (`super::direct`).
pub(crate) struct Early {
    pub conn: Conn,
    pub answer: Pending,
}

/// A request that got no response on a reused connection, in a way that says the server had
/// closed it while idle: hyper never wrote it, or the connection closed or was reset before
/// any response byte.
fn stale(e: &SendError) -> bool {
    e.message().is_some() || is_stale_connection(e.error())
}

/// Why a request got no response, without the URL: an unparsable head says so first.
fn no_response(e: &SendError) -> String {
    let text = describe(e.error());
    if e.error().is_parse() {
        format!("invalid response head: {text}")
    } else {
        text
    }
}

/// The parts of a response head the client uses.
struct HeadFacts {
    status: u16,
    content_type: Option<String>,
    content_encoding: Option<String>,
    server: Option<String>,
    location: Option<String>,
}

impl HeadFacts {
    fn of(head: &http::response::Parts) -> HeadFacts {
        let text = |name: header::HeaderName| {
            head.headers
                .get(name)
                .map(|v| String::from_utf8_lossy(v.as_bytes()).trim().to_string())
        };
        HeadFacts {
            status: head.status.as_u16(),
            content_type: text(header::CONTENT_TYPE),
            content_encoding: text(header::CONTENT_ENCODING),
            server: text(header::SERVER),
            location: text(header::LOCATION),
        }
    }
}

/// A streamed answer whose first token has been read: what the worker needs to read the rest.
struct StreamRest {
    conn: Conn,
    body: hyper::body::Incoming,
    decoder: Decoder,
    stream: StreamReader,
}

/// How the lane left a sent request.
enum AfterSend {
    /// A reused connection closed before any response byte: send again on a new one.
    Stale,
    /// The answer is read whole (or failed): `out` is complete.
    Done,
    /// A stream whose first token is read.
    Rest(Box<StreamRest>),
}

/// On the lane: reads the answer to a request queued on `conn` up to its first token (writing
/// what the worker could not). An error answer, a whole (non-streamed) body and a stream that
/// ends before any token are read to the end here.
async fn until_first_token(
    pool: &Pool,
    mut conn: Conn,
    answer: Pending,
    stream: bool,
    reused: bool,
    out: &mut ExchangeOutcome,
) -> AfterSend {
    // a short read takes the head and the first events; a whole body takes full reads
    conn.link().set_read_cap(if stream {
        FIRST_TOKEN_READ_BYTES
    } else {
        READ_BUFFER_BYTES
    });
    let resp: Response = match conn.drive(answer).await {
        Ok(r) => r,
        Err(e) if reused && stale(&e) => return AfterSend::Stale,
        Err(e) => {
            fail_with(out, classify(e.error()), no_response(&e), None);
            return AfterSend::Done;
        }
    };
    let (head, mut body) = resp.into_parts();
    let facts = HeadFacts::of(&head);
    let mut decoder = Decoder::for_encoding(facts.content_encoding.as_deref());
    let refused = unreadable(facts.content_type.as_deref(), &decoder);
    let mut resp = Body::new(&mut conn, &mut body, &mut decoder);
    if !(200..300).contains(&facts.status) {
        read_error(&mut resp, facts.status, out, None).await;
    } else if refused.is_some() {
        read_answer(&mut resp, stream, refused, out, None).await;
    } else if !stream {
        read_whole(&mut resp, out, None).await;
    } else {
        let mut reader = StreamReader::default();
        if !reader.read(&mut resp, out, None, true).await {
            return AfterSend::Rest(Box::new(StreamRest {
                conn: conn.release(),
                body,
                decoder,
                stream: reader,
            }));
        }
        reader.finish(out, None);
    }
    pool.put(conn).await;
    AfterSend::Done
}

static LANE: OnceLock<Option<Handle>> = OnceLock::new();

/// The lane's runtime, started on first use; `None` if its thread could not be started.
fn lane() -> Option<&'static Handle> {
    LANE.get_or_init(|| {
        let (tx, rx) = std::sync::mpsc::channel();
        let started = std::thread::Builder::new()
            .name("rightsize-lane".into())
            .spawn(move || {
                let rt = match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(rt) => rt,
                    Err(_) => {
                        let _ = tx.send(None);
                        return;
                    }
                };
                if crate::sched::latency_critical() {
                    tracing::debug!(
                        "first-token lane: priority raised 10 nice steps above the workers"
                    );
                } else {
                    tracing::debug!(
                        "first-token lane: default priority (raising it needs root or CAP_SYS_NICE)"
                    );
                }
                let _ = tx.send(Some(rt.handle().clone()));
                rt.block_on(std::future::pending::<()>());
            });
        match started {
            Ok(_) => rx.recv().ok().flatten(),
            Err(_) => None,
        }
    })
    .as_ref()
}

/// Starts the lane's thread if it is not running yet.
pub(crate) fn start_lane() {
    lane();
}

/// Aborts the lane task when the worker stops waiting for it (timeout, cancel).
struct AbortOnDrop<T>(JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Runs `fut` on the lane and waits for its output; runs it in place when there is no lane.
/// Dropping the returned future stops the lane task too.
pub(crate) async fn on_lane<F>(fut: F) -> F::Output
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    let Some(handle) = lane() else {
        return fut.await;
    };
    let mut task = AbortOnDrop(handle.spawn(fut));
    match (&mut task.0).await {
        Ok(v) => v,
        Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
        Err(e) => panic!("the first-token lane stopped a request: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn runs_on_its_own_thread_and_returns_the_output() {
        let here = std::thread::current().id();
        let (there, name) = on_lane(async {
            let t = std::thread::current();
            (t.id(), t.name().map(str::to_string))
        })
        .await;
        assert_ne!(here, there);
        assert_eq!(name.as_deref(), Some("rightsize-lane"));
    }

    #[tokio::test]
    async fn dropping_the_wait_stops_the_lane_task() {
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let waiting = on_lane(async move {
            // held until the task is dropped: the receiver sees the sender go away
            let _tx = tx;
            std::future::pending::<()>().await;
        });
        let timed_out = tokio::time::timeout(std::time::Duration::from_millis(20), waiting).await;
        assert!(timed_out.is_err());
        assert!(rx.await.is_err(), "the lane task was not stopped");
    }
}
