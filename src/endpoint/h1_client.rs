//! The `http://` client: request heads built once per endpoint, and one exchange on a pooled
//! connection: the calling task writes the request (or the open-loop dispatcher did, on its
//! own thread: `super::direct`), the first-token lane reads the answer up to its first token,
//! and the calling task reads the rest.

use reqwest::header::HeaderMap;
use reqwest::Url;

use std::sync::Arc;

use super::h1::{BodyReader, Conn, DetachedConn, Head, FIRST_TOKEN_READ_BYTES, READ_BUFFER_BYTES};
use super::h1_pool::{ConnectFailure, Pool};
use super::lane;
use super::outcome::ExchangeOutcome;
use super::response::{
    broken_stream, read_answer, read_error, read_whole, unreadable, Body, Probe, StreamReader,
};
use super::transport::{fail_with, Transport};

/// Largest `GET /models` body read.
const MAX_MODELS_BODY_BYTES: usize = 4 * 1024 * 1024;

/// Headers this client writes itself; a custom header of that name is left out.
const OWN_HEADERS: [&str; 5] = [
    "content-type",
    "accept",
    "content-length",
    "transfer-encoding",
    "connection",
];

/// A plain-HTTP/1.1 client for one endpoint.
pub(crate) struct H1Client {
    pool: Arc<Pool>,
    /// The generation request's head up to `Content-Length: ` (holds the bearer token).
    generate_head: Vec<u8>,
    /// The whole `GET /models` request.
    models_request: Vec<u8>,
}

/// An answer read whole (`GET /models`).
pub(crate) struct Fetched {
    pub status: u16,
    pub server: Option<String>,
    pub body: Vec<u8>,
}

/// Why a `GET` got no answer.
pub(crate) enum FetchError {
    /// No response: how it failed and its text.
    Transport(Transport, String),
    /// The answer broke off inside its body.
    Body,
}

/// The request target: `path?query` of `url`, or through a proxy the whole URL without its
/// credentials (the absolute form a proxy needs).
fn target(url: &Url, proxied: bool) -> String {
    if proxied {
        let mut bare = url.clone();
        let _ = bare.set_username("");
        let _ = bare.set_password(None);
        bare.set_fragment(None);
        return bare.to_string();
    }
    match url.query() {
        Some(q) => format!("{}?{q}", url.path()),
        None => url.path().to_string(),
    }
}

/// `Basic` credentials from a URL's user name and password, if it has any.
fn basic_credentials(url: &Url) -> Option<String> {
    if url.username().is_empty() && url.password().is_none() {
        return None;
    }
    let mut creds = percent_decode(url.username());
    creds.push(b':');
    creds.extend(percent_decode(url.password().unwrap_or_default()));
    Some(format!("Basic {}", base64(&creds)))
}

/// Standard base64 (with padding), for the `Basic` credentials of a URL.
fn base64(input: &[u8]) -> String {
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(input.len().div_ceil(3) * 4);
    for c in input.chunks(3) {
        let b = |i: usize| u32::from(c.get(i).copied().unwrap_or(0));
        let n = (b(0) << 16) | (b(1) << 8) | b(2);
        for (k, shift) in [18u32, 12, 6, 0].into_iter().enumerate() {
            if k <= c.len() {
                out.push(T[((n >> shift) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// `%XX` sequences decoded (user names and passwords in URLs are percent-encoded).
fn percent_decode(s: &str) -> Vec<u8> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |j: usize| b.get(j).and_then(|&c| (c as char).to_digit(16));
        match (b[i], hex(i + 1), hex(i + 2)) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            (c, _, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    out
}

/// Request line, `Host` and the endpoint's headers (custom, `Authorization`, sim timing).
/// Credentials in the URL become `Basic` authorization when no other is set, as reqwest does;
/// a proxy's credentials become `Proxy-Authorization`.
fn head_start(method: &str, url: &Url, headers: &HeaderMap, proxy: Option<&Url>) -> Vec<u8> {
    let mut h = format!("{method} {} HTTP/1.1\r\n", target(url, proxy.is_some())).into_bytes();
    if let Some(creds) = proxy.and_then(basic_credentials) {
        h.extend_from_slice(format!("proxy-authorization: {creds}\r\n").as_bytes());
    }
    if !headers.contains_key(reqwest::header::HOST) {
        let host = url.host_str().unwrap_or_default();
        let line = match url.port() {
            Some(p) => format!("host: {host}:{p}\r\n"),
            None => format!("host: {host}\r\n"),
        };
        h.extend_from_slice(line.as_bytes());
    }
    if !headers.contains_key(reqwest::header::AUTHORIZATION) {
        if let Some(creds) = basic_credentials(url) {
            h.extend_from_slice(format!("authorization: {creds}\r\n").as_bytes());
        }
    }
    for (name, value) in headers {
        if OWN_HEADERS.contains(&name.as_str()) {
            continue;
        }
        h.extend_from_slice(name.as_str().as_bytes());
        h.extend_from_slice(b": ");
        h.extend_from_slice(value.as_bytes());
        h.extend_from_slice(b"\r\n");
    }
    h
}

impl H1Client {
    /// A client posting to `generate_url` (streaming or not) with `headers` on every request,
    /// through `proxy` when there is one (see [`super::proxy`]).
    pub fn new(
        generate_url: &Url,
        models_url: &Url,
        headers: &HeaderMap,
        stream: bool,
        pool_size: usize,
        proxy: Option<&Url>,
    ) -> H1Client {
        let accept = if stream {
            "text/event-stream"
        } else {
            "application/json"
        };
        let mut generate_head = head_start("POST", generate_url, headers, proxy);
        generate_head.extend_from_slice(
            format!("content-type: application/json\r\naccept: {accept}\r\ncontent-length: ")
                .as_bytes(),
        );
        // the lane's thread starts now, not on the first request (whose TTFT it would add to)
        lane::start();
        let mut models_request = head_start("GET", models_url, headers, proxy);
        models_request.extend_from_slice(b"accept: application/json\r\n\r\n");
        H1Client {
            pool: Arc::new(Pool::new(
                proxy.unwrap_or(generate_url),
                pool_size,
                proxy.is_some(),
            )),
            generate_head,
            models_request,
        }
    }

    /// The idle connections.
    pub fn pool(&self) -> &Pool {
        &self.pool
    }

    /// The whole generation request (head and `body`).
    pub fn request_bytes(&self, body: &[u8]) -> Vec<u8> {
        let mut request = Vec::with_capacity(self.generate_head.len() + 24 + body.len());
        request.extend_from_slice(&self.generate_head);
        request.extend_from_slice(format!("{}\r\n\r\n", body.len()).as_bytes());
        request.extend_from_slice(body);
        request
    }

    /// One generation request with `body`: fills `out` (and `probe`) like the reqwest path.
    /// The worker writes the request; the first-token lane ([`super::lane`]) reads the answer
    /// up to its first token; the worker reads the rest of a stream. The pre-flight check
    /// (with `probe`) runs here whole.
    pub async fn exchange(
        &self,
        body: &[u8],
        stream: bool,
        out: &mut ExchangeOutcome,
        probe: Option<&mut Probe>,
    ) {
        let request = self.request_bytes(body);
        if probe.is_some() {
            return exchange_here(&self.pool, &request, stream, out, probe).await;
        }
        self.exchange_from(&request, None, stream, out).await;
    }

    /// [`H1Client::exchange`] of `request`, which the open-loop dispatcher wrote (or tried
    /// to) on an idle connection of its own thread (`super::direct`).
    pub async fn exchange_early(
        &self,
        request: &[u8],
        early: Early,
        stream: bool,
        out: &mut ExchangeOutcome,
    ) {
        self.exchange_from(request, Some(early), stream, out).await;
    }

    /// Sends `request` (unless `early` says it went out already) and reads the answer: the
    /// lane up to the first token, this task the rest of a stream.
    async fn exchange_from(
        &self,
        request: &[u8],
        mut early: Option<Early>,
        stream: bool,
        out: &mut ExchangeOutcome,
    ) {
        let mut reuse = true;
        let rest = loop {
            let (conn, reused) = match early.take() {
                // written whole by the dispatcher on an idle connection
                Some(Early::Written { conn, sent }) if sent == request.len() => (conn, true),
                // the dispatcher's write failed: the idle connection was stale
                Some(Early::Stale) => {
                    out.reconnected = true;
                    reuse = false;
                    continue;
                }
                // the socket took part of it: the rest is written here
                Some(Early::Written { conn, sent }) => {
                    let conn = match conn.attach(READ_BUFFER_BYTES) {
                        Ok(c) => c,
                        Err(e) => return fail_with(out, Transport::Other, e.to_string(), None),
                    };
                    match write_then_detach(conn, &request[sent..], true, out).await {
                        Some(c) => (c, true),
                        None if out.error.is_none() => {
                            reuse = false;
                            continue;
                        }
                        None => return,
                    }
                }
                None => {
                    let (conn, reused) = match self.pool.open(reuse, READ_BUFFER_BYTES).await {
                        Ok(x) => x,
                        Err(ConnectFailure { transport, detail }) => {
                            return fail_with(out, transport, detail, None)
                        }
                    };
                    match write_then_detach(conn, request, reused, out).await {
                        Some(c) => (c, reused),
                        None if out.error.is_none() => {
                            reuse = false;
                            continue;
                        }
                        None => return,
                    }
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
            let (lane_out, after) = lane::run(async move {
                let after = until_first_token(&pool, conn, stream, reused, &mut lane_out).await;
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
            conn,
            head,
            mut reader,
            mut stream,
        } = *rest;
        let mut conn = match conn.attach(READ_BUFFER_BYTES) {
            Ok(c) => c,
            Err(e) => {
                out.error = Some(broken_stream(&e.to_string()));
                return stream.finish(out, None);
            }
        };
        let mut resp = Body::H1 {
            conn: &mut conn,
            reader: &mut reader,
        };
        stream.read(&mut resp, out, None, false).await;
        stream.finish(out, None);
        give_back(&self.pool, conn, &head, &reader);
    }

    /// `GET /models`, read whole (up to 4 MiB).
    pub async fn get_models(&self) -> Result<Fetched, FetchError> {
        let mut ignored = false;
        let (mut conn, head) = self
            .pool
            .send(&self.models_request, READ_BUFFER_BYTES, &mut ignored)
            .await
            .map_err(|f| FetchError::Transport(f.transport, f.detail))?;
        let mut reader = BodyReader::new(&head);
        let mut body = Vec::new();
        loop {
            match conn.body_next(&mut reader).await {
                Ok(Some((range, _))) => {
                    body.extend_from_slice(conn.bytes(range));
                    if body.len() > MAX_MODELS_BODY_BYTES {
                        break;
                    }
                }
                Ok(None) => break,
                Err(_) => return Err(FetchError::Body),
            }
        }
        give_back(&self.pool, conn, &head, &reader);
        Ok(Fetched {
            status: head.status,
            server: head.server,
            body,
        })
    }
}

/// How the open-loop dispatcher left a request it wrote on its own thread (`super::direct`).
pub(crate) enum Early {
    /// `sent` bytes of the request went out on `conn`, an idle connection.
    Written { conn: DetachedConn, sent: usize },
    /// The write failed on an idle connection: the server had closed it; the request goes
    /// out again on a new one.
    Stale,
}

/// Writes `request` on `conn` and detaches it for the lane. On a failure, `None`: with
/// `out.error` unset when the connection was `reused` and failed before any response (stale:
/// `out.reconnected` is set and the request goes out on a new connection), else with the
/// failure in `out`.
async fn write_then_detach(
    mut conn: Conn,
    request: &[u8],
    reused: bool,
    out: &mut ExchangeOutcome,
) -> Option<DetachedConn> {
    if let Err(e) = conn.write_request(request).await {
        if reused && e.before_response {
            out.reconnected = true;
        } else {
            fail_with(out, Transport::Other, e.message, None);
        }
        return None;
    }
    match conn.detach() {
        Ok(c) => Some(c),
        Err(e) => {
            fail_with(out, Transport::Other, e.to_string(), None);
            None
        }
    }
}

/// Returns `conn` to the pool when the response left it clean.
fn give_back(pool: &Pool, conn: Conn, head: &Head, reader: &BodyReader) {
    if conn.reusable_after(head, reader) {
        pool.put(conn);
    }
}

/// A streamed answer whose first token has been read: what the worker needs to read the rest.
struct StreamRest {
    conn: DetachedConn,
    head: Head,
    reader: BodyReader,
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

/// Sends `request` and reads the answer whole, in the calling task.
async fn exchange_here(
    pool: &Pool,
    request: &[u8],
    stream: bool,
    out: &mut ExchangeOutcome,
    mut probe: Option<&mut Probe>,
) {
    let (mut conn, head) = match pool
        .send(request, READ_BUFFER_BYTES, &mut out.reconnected)
        .await
    {
        Ok(x) => x,
        Err(ConnectFailure { transport, detail }) => {
            return fail_with(out, transport, detail, probe)
        }
    };
    if let Some(p) = probe.as_deref_mut() {
        p.status = Some(head.status);
        p.content_type.clone_from(&head.content_type);
        p.server_header.clone_from(&head.server);
        p.location.clone_from(&head.location);
    }
    let mut reader = BodyReader::new(&head);
    let mut resp = Body::H1 {
        conn: &mut conn,
        reader: &mut reader,
    };
    if !(200..300).contains(&head.status) {
        read_error(&mut resp, head.status, out, probe).await;
    } else {
        let refused = unreadable(
            head.content_type.as_deref(),
            head.content_encoding.as_deref(),
        );
        read_answer(&mut resp, stream, refused, out, probe).await;
    }
    give_back(pool, conn, &head, &reader);
}

/// On the lane: reads the answer to a request sent on `conn` up to its first token. An error
/// answer, a whole (non-streamed) body and a stream that ends before any token are read to
/// the end here.
async fn until_first_token(
    pool: &Pool,
    conn: DetachedConn,
    stream: bool,
    reused: bool,
    out: &mut ExchangeOutcome,
) -> AfterSend {
    // a short read takes the head and the first events; a whole body takes full reads
    let cap = if stream {
        FIRST_TOKEN_READ_BYTES
    } else {
        READ_BUFFER_BYTES
    };
    let mut conn = match conn.attach(cap) {
        Ok(c) => c,
        Err(e) => {
            fail_with(out, Transport::Other, e.to_string(), None);
            return AfterSend::Done;
        }
    };
    let head = match conn.read_head().await {
        Ok(h) => h,
        Err(e) if reused && e.before_response => return AfterSend::Stale,
        Err(e) => {
            fail_with(out, Transport::Other, e.message, None);
            return AfterSend::Done;
        }
    };
    let mut reader = BodyReader::new(&head);
    let mut resp = Body::H1 {
        conn: &mut conn,
        reader: &mut reader,
    };
    let refused = unreadable(
        head.content_type.as_deref(),
        head.content_encoding.as_deref(),
    );
    if !(200..300).contains(&head.status) {
        read_error(&mut resp, head.status, out, None).await;
    } else if refused.is_some() {
        read_answer(&mut resp, stream, refused, out, None).await;
    } else if !stream {
        read_whole(&mut resp, out, None).await;
    } else {
        let mut stream = StreamReader::default();
        let ended = stream.read(&mut resp, out, None, true).await;
        if ended {
            stream.finish(out, None);
        } else {
            return match conn.detach() {
                Ok(conn) => AfterSend::Rest(Box::new(StreamRest {
                    conn,
                    head,
                    reader,
                    stream,
                })),
                Err(e) => {
                    out.error = Some(broken_stream(&e.to_string()));
                    stream.finish(out, None);
                    AfterSend::Done
                }
            };
        }
    }
    give_back(pool, conn, &head, &reader);
    AfterSend::Done
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_table() {
        for (input, want) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("user:p@ss", "dXNlcjpwQHNz"),
        ] {
            assert_eq!(base64(input.as_bytes()), want, "{input}");
        }
    }

    #[test]
    fn head_has_host_credentials_and_custom_headers() {
        let url =
            Url::parse("http://us%40er:p%3Ass@h.example:8000/v1/chat/completions?x=1").unwrap();
        let mut headers = HeaderMap::new();
        headers.insert("x-team", "perf".parse().unwrap());
        headers.insert("accept", "text/html".parse().unwrap());
        let head = String::from_utf8(head_start("POST", &url, &headers, None)).unwrap();
        assert_eq!(
            head,
            format!(
                "POST /v1/chat/completions?x=1 HTTP/1.1\r\nhost: h.example:8000\r\n\
                 authorization: Basic {}\r\nx-team: perf\r\n",
                base64(b"us@er:p:ss")
            )
        );
        // through a proxy: the absolute URL without its credentials, the proxy's own ones
        let proxy = Url::parse("http://pu:pp@proxy:3128").unwrap();
        let head = String::from_utf8(head_start("POST", &url, &headers, Some(&proxy))).unwrap();
        assert_eq!(
            head,
            format!(
                "POST http://h.example:8000/v1/chat/completions?x=1 HTTP/1.1\r\n\
                 proxy-authorization: Basic {}\r\nhost: h.example:8000\r\n\
                 authorization: Basic {}\r\nx-team: perf\r\n",
                base64(b"pu:pp"),
                base64(b"us@er:p:ss")
            )
        );
    }
}
