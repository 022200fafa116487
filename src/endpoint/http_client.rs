//! The generation requests' client, for `http://` and `https://` alike: the request built once
//! per endpoint, and one exchange on a pooled connection. The calling task queues the request
//! and writes what the socket takes at once (or the open-loop dispatcher did, on its own
//! thread: `super::direct`), the first-token lane reads the answer up to its first token, and
//! the calling task reads the rest.

use std::sync::Arc;

use base64::Engine as _;
use bytes::Bytes;
use http::header::{self, HeaderMap, HeaderValue};
use http_body_util::Full;
use reqwest::Url;

use super::conn::{Conn, Pending, Request, Response};
use super::lane;
use super::pool::{ConnectFailure, Pool, Target};
use super::response::{
    read_answer, read_error, read_whole, unreadable, Body, Decoder, Probe, StreamReader,
};
use super::socket::{FIRST_TOKEN_READ_BYTES, READ_BUFFER_BYTES};
use super::transport::{error_text, fail_with, is_stale_connection, Transport};
use crate::record::ExchangeOutcome;

/// Headers hyper writes from the body itself; a custom header of that name would break the
/// framing and is left out.
const FRAMING_HEADERS: [header::HeaderName; 2] =
    [header::CONTENT_LENGTH, header::TRANSFER_ENCODING];

/// The client for one endpoint's generation requests.
pub(crate) struct HttpClient {
    pool: Arc<Pool>,
    /// The request target: origin form (`/v1/chat/completions`), or absolute form through an
    /// `http://` proxy.
    uri: http::Uri,
    /// Every request's headers (holding the bearer token: never logged).
    headers: HeaderMap,
}

/// `Basic` credentials from a URL's user name and password, if it has any.
pub(crate) fn basic_credentials(url: &Url) -> Option<HeaderValue> {
    if url.username().is_empty() && url.password().is_none() {
        return None;
    }
    let decode = |s: &str| percent_encoding::percent_decode_str(s).collect::<Vec<u8>>();
    let mut creds = decode(url.username());
    creds.push(b':');
    creds.extend(decode(url.password().unwrap_or_default()));
    let encoded = base64::engine::general_purpose::STANDARD.encode(creds);
    let mut v = HeaderValue::from_str(&format!("Basic {encoded}")).ok()?;
    v.set_sensitive(true);
    Some(v)
}

/// The request target: `path?query` of `url`, or its whole form without credentials.
fn target(url: &Url, absolute: bool) -> Result<http::Uri, String> {
    let text = if absolute {
        let mut bare = url.clone();
        let _ = bare.set_username("");
        let _ = bare.set_password(None);
        bare.set_fragment(None);
        bare.to_string()
    } else {
        match url.query() {
            Some(q) => format!("{}?{q}", url.path()),
            None => url.path().to_string(),
        }
    };
    text.parse().map_err(|e| format!("{e}"))
}

/// `scheme://host:port` of `url`.
pub(crate) fn origin(url: &Url) -> Result<http::Uri, String> {
    let host = url.host_str().unwrap_or_default();
    let port = url.port_or_known_default().unwrap_or(80);
    format!("{}://{host}:{port}", url.scheme())
        .parse()
        .map_err(|e| format!("{e}"))
}

/// The headers every request carries: `Host`, credentials from the URL as `Basic`
/// authorization (unless one is set), a proxy's credentials, what this client expects (JSON
/// or an event stream, uncompressed), then the endpoint's own headers, sent as given.
fn request_headers(
    url: &Url,
    custom: &HeaderMap,
    stream: bool,
    proxy_auth: Option<HeaderValue>,
) -> Result<HeaderMap, String> {
    let mut h = HeaderMap::new();
    let host = match (url.host_str(), url.port()) {
        (Some(host), Some(p)) => format!("{host}:{p}"),
        (Some(host), None) => host.to_string(),
        (None, _) => String::new(),
    };
    h.insert(
        header::HOST,
        HeaderValue::from_str(&host).map_err(|e| e.to_string())?,
    );
    if let Some(creds) = basic_credentials(url) {
        h.insert(header::AUTHORIZATION, creds);
    }
    if let Some(auth) = proxy_auth {
        h.insert(header::PROXY_AUTHORIZATION, auth);
    }
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    h.insert(
        header::ACCEPT,
        HeaderValue::from_static(if stream {
            "text/event-stream"
        } else {
            "application/json"
        }),
    );
    // timing the bytes as they arrive: nothing asks for compression (gzip is decoded if a
    // server or proxy compresses anyway)
    h.insert(
        header::ACCEPT_ENCODING,
        HeaderValue::from_static("identity"),
    );
    // the endpoint's own headers replace these (an `Accept` of its own, a `Host`)
    let mut replaced: Vec<&header::HeaderName> = Vec::new();
    for (name, value) in custom {
        if FRAMING_HEADERS.contains(name) {
            continue;
        }
        if !replaced.contains(&name) {
            h.remove(name);
            replaced.push(name);
        }
        h.append(name.clone(), value.clone());
    }
    Ok(h)
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
        lane::start();
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
    /// request; the first-token lane ([`super::lane`]) reads the answer up to its first token;
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
            let (lane_out, after) = lane::run(async move {
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
                Err(e) => return fail_with(out, Transport::Other, no_response(&e), probe),
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

/// `url` as this client's request target.
fn target_uri(url: &Url, absolute: bool) -> Result<http::Uri, String> {
    target(url, absolute).map_err(|e| format!("the URL cannot be a request target: {e}"))
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
fn stale(e: &super::conn::SendError) -> bool {
    e.message().is_some() || is_stale_connection(e.error())
}

/// Why a request got no response, without the URL: an unparsable head says so first.
fn no_response(e: &super::conn::SendError) -> String {
    let text = error_text(e.error());
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
            fail_with(out, Transport::Other, no_response(&e), None);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_have_host_credentials_and_custom_headers_as_given() {
        let url =
            Url::parse("http://us%40er:p%3Ass@h.example:8000/v1/chat/completions?x=1").unwrap();
        let mut custom = HeaderMap::new();
        custom.insert("x-team", "perf".parse().unwrap());
        custom.insert("accept", "text/html".parse().unwrap());
        custom.insert("content-length", "5".parse().unwrap());
        let h = request_headers(&url, &custom, true, None).unwrap();
        let get = |n: &str| h.get(n).map(|v| v.to_str().unwrap().to_string());
        assert_eq!(get("host").as_deref(), Some("h.example:8000"));
        // base64 of "us@er:p:ss"
        assert_eq!(
            get("authorization").as_deref(),
            Some("Basic dXNAZXI6cDpzcw==")
        );
        assert_eq!(get("x-team").as_deref(), Some("perf"));
        assert_eq!(get("accept").as_deref(), Some("text/html"));
        assert_eq!(get("accept-encoding").as_deref(), Some("identity"));
        assert_eq!(get("content-type").as_deref(), Some("application/json"));
        assert_eq!(get("content-length"), None);
        assert_eq!(
            target(&url, false).unwrap().to_string(),
            "/v1/chat/completions?x=1"
        );
        // through a proxy: the absolute URL without its credentials, the proxy's own ones
        assert_eq!(
            target(&url, true).unwrap().to_string(),
            "http://h.example:8000/v1/chat/completions?x=1"
        );
        let proxy = Url::parse("http://pu:pp@proxy:3128").unwrap();
        let h = request_headers(&url, &custom, true, basic_credentials(&proxy)).unwrap();
        assert_eq!(
            h.get("proxy-authorization").unwrap().to_str().unwrap(),
            "Basic cHU6cHA="
        );
    }
}
