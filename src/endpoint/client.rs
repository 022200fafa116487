//! The shared HTTP client and one request/response exchange with exact timing.
//!
//! One [`Endpoint`] (one `reqwest::Client`, one connection pool) is shared by every worker.
//! Times are read with [`now_ns`] in the task that reads the bytes, once per network read, the
//! moment the read completes; every event parsed from that read gets that time.

use std::error::Error as StdError;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue, ACCEPT, CONTENT_TYPE};
use reqwest::Url;

use super::openai::{self, ChunkError, Usage};
use super::sse::{Event, Framing, StreamParser};
use super::EndpointSpec;
use crate::clock::now_ns;
use crate::engine::record::{ErrorKind, ExchangeOutcome, RequestError, TokenSource};
use crate::workload::tokenizer::approx_token_count;

/// Largest response body read (non-streaming answers and error bodies), in bytes.
const MAX_BODY_BYTES: usize = 64 * 1024 * 1024;
/// Largest error body read for a message, in bytes.
const MAX_ERROR_BODY_BYTES: usize = 64 * 1024;
/// How long to wait for the end of the body after `[DONE]` before dropping the connection.
const AFTER_DONE_GRACE: Duration = Duration::from_secs(1);
/// Body bytes kept for the pre-flight diagnosis.
const PROBE_HEAD_BYTES: usize = 2048;

/// Why an [`Endpoint`] could not be built.
#[derive(Debug, thiserror::Error)]
pub enum EndpointError {
    /// The base URL does not parse or is not http(s).
    #[error("invalid base URL '{url}': {reason}")]
    InvalidUrl { url: String, reason: String },
    /// `api_key_env` names a variable that is not set.
    #[error("the API key variable {var} (api_key_env) is not set in the environment")]
    MissingApiKey { var: String },
    /// `api_key_env` names a variable that is empty.
    #[error("the API key variable {var} (api_key_env) is empty")]
    EmptyApiKey { var: String },
    /// The key holds characters an HTTP header cannot carry.
    #[error("the API key in {var} (api_key_env) has characters an HTTP header cannot carry")]
    InvalidApiKey { var: String },
    /// A custom header name or value is not valid HTTP.
    #[error("invalid header '{name}': {reason}")]
    InvalidHeader { name: String, reason: String },
    /// The TLS / HTTP client could not be built.
    #[error("cannot build the HTTP client: {0}")]
    Client(String),
}

/// How a transport failure looked, for the pre-flight diagnosis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Transport {
    Refused,
    Dns,
    Tls,
    Timeout,
    Other,
}

/// What the pre-flight check needs beyond an [`ExchangeOutcome`].
#[derive(Debug, Default)]
pub(crate) struct Probe {
    pub status: Option<u16>,
    pub content_type: Option<String>,
    pub server_header: Option<String>,
    /// The first bytes of the body.
    pub head: Vec<u8>,
    /// Data events (SSE events or JSON lines) received.
    pub data_events: u64,
    /// Chunks with `choices` or `usage`.
    pub openai_chunks: u64,
    pub transport: Option<Transport>,
    /// Error text of the transport failure (no URL, no headers).
    pub transport_detail: Option<String>,
    pub location: Option<String>,
    /// How the streamed body was framed.
    pub framing: Option<Framing>,
}

struct Inner {
    spec: EndpointSpec,
    client: reqwest::Client,
    generate_url: Url,
    models_url: Url,
    request_timeout: Duration,
}

/// An endpoint ready to send requests: one shared HTTP client (cheap to clone).
#[derive(Clone)]
pub struct Endpoint {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Headers (and so the bearer token) are deliberately left out.
        f.debug_struct("Endpoint")
            .field("spec", &self.inner.spec)
            .field("generate_url", &display_url(&self.inner.generate_url))
            .field("request_timeout", &self.inner.request_timeout)
            .finish_non_exhaustive()
    }
}

/// The API base: `base_url` without a trailing slash, with `/v1` appended when its path has
/// no version segment (`v1`, `v2`, `v1beta`, ...).
pub fn api_base(base_url: &str) -> Result<Url, EndpointError> {
    let invalid = |reason: String| EndpointError::InvalidUrl {
        url: base_url.to_string(),
        reason,
    };
    let mut url = Url::parse(base_url.trim()).map_err(|e| invalid(e.to_string()))?;
    if url.scheme() != "http" && url.scheme() != "https" {
        return Err(invalid(format!(
            "scheme '{}' is not http or https",
            url.scheme()
        )));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(invalid("no host".to_string()));
    }
    let path = url.path().trim_end_matches('/').to_string();
    let versioned = path.split('/').any(|seg| {
        let mut c = seg.chars();
        c.next() == Some('v') && c.next().is_some_and(|d| d.is_ascii_digit())
    });
    let path = if versioned {
        path
    } else {
        format!("{path}/v1")
    };
    url.set_path(&path);
    Ok(url)
}

/// `base` with `/suffix` appended to its path (query kept).
fn join(base: &Url, suffix: &str) -> Url {
    let mut u = base.clone();
    let path = format!("{}/{}", base.path().trim_end_matches('/'), suffix);
    u.set_path(&path);
    u
}

/// A URL for messages: no user name, password or query string (they may hold secrets).
pub fn display_url(url: &Url) -> String {
    let mut u = url.clone();
    let _ = u.set_username("");
    let _ = u.set_password(None);
    u.set_query(None);
    u.set_fragment(None);
    u.to_string()
}

impl Endpoint {
    /// Builds the shared client. `pool_size` is the number of idle connections kept per host
    /// (set it to the highest concurrency so no request waits for a connection);
    /// `request_timeout` bounds each whole exchange, a stalled stream included. Reads the API
    /// key variable (if any) once, here.
    pub fn new(
        spec: &EndpointSpec,
        pool_size: usize,
        request_timeout: Duration,
    ) -> Result<Endpoint, EndpointError> {
        let base = api_base(&spec.base_url)?;
        let generate_url = join(
            &base,
            match spec.api {
                super::Api::Chat => "chat/completions",
                super::Api::Completions => "completions",
            },
        );
        let models_url = join(&base, "models");

        let mut headers = HeaderMap::new();
        for (name, value) in &spec.headers {
            let invalid = |reason: String| EndpointError::InvalidHeader {
                name: name.clone(),
                reason,
            };
            let n = HeaderName::from_bytes(name.as_bytes()).map_err(|e| invalid(e.to_string()))?;
            let v = HeaderValue::from_str(value).map_err(|e| invalid(e.to_string()))?;
            headers.append(n, v);
        }
        if let Some(var) = &spec.api_key_env {
            let key = match std::env::var(var) {
                Ok(k) => super::Secret::new(k),
                Err(_) => return Err(EndpointError::MissingApiKey { var: var.clone() }),
            };
            if key.expose().trim().is_empty() {
                return Err(EndpointError::EmptyApiKey { var: var.clone() });
            }
            let mut v = HeaderValue::from_str(&format!("Bearer {}", key.expose().trim()))
                .map_err(|_| EndpointError::InvalidApiKey { var: var.clone() })?;
            v.set_sensitive(true);
            headers.insert(reqwest::header::AUTHORIZATION, v);
        }
        if spec.sim_timing {
            headers.insert("x-rightsize-sim-timing", HeaderValue::from_static("1"));
        }

        // HTTP/1.1 only: one connection per in-flight request, as a load test needs. Over
        // HTTP/2 the server's stream limit would silently queue requests on one connection.
        // No redirects: a redirected POST turns into a GET; show the status instead.
        let client = reqwest::Client::builder()
            .default_headers(headers)
            .pool_max_idle_per_host(pool_size.max(1))
            .tcp_nodelay(true)
            .http1_only()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| EndpointError::Client(error_chain(&e)))?;
        Ok(Endpoint {
            inner: Arc::new(Inner {
                spec: spec.clone(),
                client,
                generate_url,
                models_url,
                request_timeout,
            }),
        })
    }

    /// The endpoint's description.
    pub fn spec(&self) -> &EndpointSpec {
        &self.inner.spec
    }

    /// The URL requests are posted to (`.../chat/completions` or `.../completions`).
    pub fn generate_url(&self) -> &Url {
        &self.inner.generate_url
    }

    /// The `GET .../models` URL.
    pub fn models_url(&self) -> &Url {
        &self.inner.models_url
    }

    /// The per-request timeout.
    pub fn request_timeout(&self) -> Duration {
        self.inner.request_timeout
    }

    pub(crate) fn client(&self) -> &reqwest::Client {
        &self.inner.client
    }

    /// Sends one request and reads the whole answer. Never panics; failures are in
    /// [`ExchangeOutcome::error`].
    pub async fn send(&self, prompt: &str, max_tokens: u32) -> ExchangeOutcome {
        self.exchange(prompt, max_tokens, None).await
    }

    /// [`Endpoint::send`], also filling `probe` when given (pre-flight).
    pub(crate) async fn exchange(
        &self,
        prompt: &str,
        max_tokens: u32,
        mut probe: Option<&mut Probe>,
    ) -> ExchangeOutcome {
        let inner = &*self.inner;
        let body = Bytes::from(openai::request_body(&inner.spec, prompt, max_tokens));
        let accept = if inner.spec.stream {
            "text/event-stream"
        } else {
            "application/json"
        };
        let mut out = ExchangeOutcome::default();
        let request = match inner
            .client
            .post(inner.generate_url.clone())
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, accept)
            .body(body)
            .build()
        {
            Ok(r) => r,
            Err(e) => {
                out.start_ns = now_ns();
                fail_transport(&mut out, &e, probe.as_deref_mut());
                out.end_ns = out.start_ns;
                return out;
            }
        };
        let retry = request.try_clone();
        let deadline = tokio::time::Instant::now() + inner.request_timeout;
        out.start_ns = now_ns();
        let finished = tokio::time::timeout_at(
            deadline,
            self.run(request, retry, &mut out, probe.as_deref_mut()),
        )
        .await;
        if finished.is_err() {
            out.error = Some(RequestError {
                kind: ErrorKind::Timeout,
                status: None,
                message: format!(
                    "no complete response within {} ms",
                    inner.request_timeout.as_millis()
                ),
            });
            if let Some(p) = probe {
                p.transport = Some(Transport::Timeout);
            }
        }
        out.end_ns = now_ns();
        out
    }

    async fn run(
        &self,
        request: reqwest::Request,
        retry: Option<reqwest::Request>,
        out: &mut ExchangeOutcome,
        mut probe: Option<&mut Probe>,
    ) {
        let client = &self.inner.client;
        let mut resp = match client.execute(request).await {
            Ok(r) => r,
            Err(e) => match retry {
                Some(again) if is_stale_connection(&e) => {
                    out.reconnected = true;
                    match client.execute(again).await {
                        Ok(r) => r,
                        Err(e) => return fail_transport(out, &e, probe),
                    }
                }
                _ => return fail_transport(out, &e, probe),
            },
        };
        let status = resp.status();
        if let Some(p) = probe.as_deref_mut() {
            let header = |name| {
                resp.headers()
                    .get(name)
                    .and_then(|v: &HeaderValue| v.to_str().ok())
                    .map(str::to_string)
            };
            p.status = Some(status.as_u16());
            p.content_type = header(CONTENT_TYPE);
            p.server_header = header(reqwest::header::SERVER);
            p.location = header(reqwest::header::LOCATION);
        }
        if !status.is_success() {
            let body = read_limited(&mut resp, MAX_ERROR_BODY_BYTES).await;
            if let Some(p) = probe {
                p.head = body.iter().take(PROBE_HEAD_BYTES).copied().collect();
            }
            let message = openai::error_message(&body).unwrap_or_else(|| {
                let reason = status.canonical_reason().unwrap_or("error");
                let text = String::from_utf8_lossy(&body);
                let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
                if text.is_empty() {
                    format!("HTTP {} {reason}", status.as_u16())
                } else {
                    format!(
                        "HTTP {} {reason}: {}",
                        status.as_u16(),
                        openai::truncate_chars(&text, 120)
                    )
                }
            });
            out.error = Some(RequestError {
                kind: ErrorKind::HttpStatus,
                status: Some(status.as_u16()),
                message,
            });
            return;
        }
        if self.inner.spec.stream {
            read_stream(resp, out, probe).await;
        } else {
            read_whole(resp, out, probe).await;
        }
    }
}

/// Reads up to `limit` body bytes, ignoring read errors (used for error bodies).
async fn read_limited(resp: &mut reqwest::Response, limit: usize) -> Vec<u8> {
    let mut body = Vec::new();
    while let Ok(Some(b)) = resp.chunk().await {
        let room = limit.saturating_sub(body.len());
        body.extend_from_slice(&b[..b.len().min(room)]);
        if body.len() >= limit {
            break;
        }
    }
    body
}

fn keep_head(probe: &mut Option<&mut Probe>, bytes: &[u8]) {
    if let Some(p) = probe.as_deref_mut() {
        let room = PROBE_HEAD_BYTES.saturating_sub(p.head.len());
        p.head.extend_from_slice(&bytes[..bytes.len().min(room)]);
    }
}

/// Per-stream state while events are parsed.
#[derive(Default)]
struct StreamState {
    content: String,
    reasoning: String,
    usage: Option<Usage>,
    finished: bool,
    openai_chunks: u64,
    /// Events now come from the end of the body (an unterminated last line).
    at_end: bool,
}

impl StreamState {
    fn on_event(&mut self, out: &mut ExchangeOutcome, event: Event<'_>, t: u64) {
        if out.error.is_some() {
            return;
        }
        let Event::Data(data) = event else {
            return;
        };
        match openai::parse_chunk(data) {
            Ok(c) => {
                self.openai_chunks += u64::from(c.openai_shaped);
                self.finished |= c.finished;
                if c.usage.is_some() {
                    self.usage = c.usage;
                }
                if c.has_text() {
                    out.first_token_ns.get_or_insert(t);
                    out.last_token_ns = Some(t);
                    out.content_chunk_ns.push(t);
                    if let Some(s) = c.sim_sent_ns {
                        out.server_first_sent_ns.get_or_insert(s);
                        out.server_last_sent_ns = Some(s);
                    }
                    if let Some(text) = &c.content {
                        self.content.push_str(text);
                    }
                    if let Some(text) = &c.reasoning {
                        self.reasoning.push_str(text);
                    }
                }
            }
            Err(ChunkError::InStream(message)) => {
                out.error = Some(RequestError {
                    kind: ErrorKind::InStreamError,
                    status: None,
                    message,
                })
            }
            Err(ChunkError::BadPayload(m)) if self.at_end => {
                out.error = Some(RequestError {
                    kind: ErrorKind::BrokenStream,
                    status: None,
                    message: format!("the stream ended inside a chunk ({m})"),
                })
            }
            Err(ChunkError::BadPayload(m)) => {
                out.error = Some(RequestError {
                    kind: ErrorKind::BadPayload,
                    status: None,
                    message: format!("a chunk is not valid JSON: {m}"),
                })
            }
        }
    }

    /// Output and input token counts into `out`.
    fn count_tokens(&self, out: &mut ExchangeOutcome) {
        out.server_input_tokens = self.usage.and_then(|u| u.prompt_tokens);
        match self.usage.and_then(|u| u.completion_tokens) {
            Some(n) => {
                out.output_tokens = Some(n);
                out.output_tokens_source = TokenSource::Server;
            }
            None => {
                out.output_tokens =
                    Some(approx_token_count(&self.content) + approx_token_count(&self.reasoning));
                out.output_tokens_source = TokenSource::Client;
            }
        }
    }
}

async fn read_stream(
    mut resp: reqwest::Response,
    out: &mut ExchangeOutcome,
    mut probe: Option<&mut Probe>,
) {
    let mut parser = StreamParser::new();
    let mut st = StreamState::default();
    loop {
        let next = if parser.saw_done() {
            // Complete; wait briefly for the body's end so the connection can be reused.
            tokio::time::timeout(AFTER_DONE_GRACE, resp.chunk())
                .await
                .unwrap_or(Ok(None))
        } else {
            resp.chunk().await
        };
        match next {
            Ok(Some(bytes)) => {
                let t = now_ns();
                keep_head(&mut probe, &bytes);
                parser.feed(&bytes, &mut |ev| st.on_event(out, ev, t));
                if out.error.is_some() {
                    break;
                }
            }
            Ok(None) => {
                let t = now_ns();
                st.at_end = true;
                parser.finish(&mut |ev| st.on_event(out, ev, t));
                if out.error.is_none() {
                    let complete = parser.saw_done()
                        || (parser.framing() == Framing::JsonLines && st.finished);
                    if !complete {
                        out.error = Some(RequestError {
                            kind: ErrorKind::BrokenStream,
                            status: None,
                            message: "the stream ended without [DONE]".to_string(),
                        });
                    }
                }
                break;
            }
            Err(e) => {
                out.error = Some(RequestError {
                    kind: ErrorKind::BrokenStream,
                    status: None,
                    message: format!("reading the stream failed: {}", error_chain(&e)),
                });
                break;
            }
        }
    }
    st.count_tokens(out);
    if let Some(p) = probe {
        p.data_events = parser.data_events();
        p.openai_chunks = st.openai_chunks;
        p.framing = Some(parser.framing());
    }
}

async fn read_whole(
    mut resp: reqwest::Response,
    out: &mut ExchangeOutcome,
    mut probe: Option<&mut Probe>,
) {
    let mut body: Vec<u8> = Vec::new();
    let mut t = now_ns();
    loop {
        match resp.chunk().await {
            Ok(Some(bytes)) => {
                t = now_ns();
                keep_head(&mut probe, &bytes);
                if body.len() + bytes.len() > MAX_BODY_BYTES {
                    out.error = Some(RequestError {
                        kind: ErrorKind::BadPayload,
                        status: None,
                        message: format!("the response body exceeds {MAX_BODY_BYTES} bytes"),
                    });
                    return;
                }
                body.extend_from_slice(&bytes);
            }
            Ok(None) => {
                if body.is_empty() {
                    t = now_ns();
                }
                break;
            }
            Err(e) => {
                out.error = Some(RequestError {
                    kind: ErrorKind::BrokenStream,
                    status: None,
                    message: format!("reading the body failed: {}", error_chain(&e)),
                });
                return;
            }
        }
    }
    let mut st = StreamState::default();
    match openai::parse_chunk(&body) {
        Ok(c) if !c.openai_shaped => {
            out.error = Some(RequestError {
                kind: ErrorKind::BadPayload,
                status: None,
                message: "the response has no choices".to_string(),
            });
        }
        Ok(c) => {
            st.openai_chunks = 1;
            st.usage = c.usage;
            out.first_token_ns = Some(t);
            out.last_token_ns = Some(t);
            out.server_first_sent_ns = c.sim_sent_ns;
            out.server_last_sent_ns = c.sim_sent_ns;
            if c.has_text() {
                out.content_chunk_ns.push(t);
            }
            st.content = c.content.map(|s| s.into_owned()).unwrap_or_default();
            st.reasoning = c.reasoning.map(|s| s.into_owned()).unwrap_or_default();
            st.count_tokens(out);
        }
        Err(ChunkError::InStream(message)) => {
            out.error = Some(RequestError {
                kind: ErrorKind::InStreamError,
                status: None,
                message,
            });
        }
        Err(ChunkError::BadPayload(m)) => {
            out.error = Some(RequestError {
                kind: ErrorKind::BadPayload,
                status: None,
                message: format!("the response is not valid JSON: {m}"),
            });
        }
    }
    if let Some(p) = probe {
        p.data_events = u64::from(!body.is_empty());
        p.openai_chunks = st.openai_chunks;
    }
}

/// Records a failure before any response: `Timeout` if the transport says so, else `Connect`.
fn fail_transport(out: &mut ExchangeOutcome, e: &reqwest::Error, probe: Option<&mut Probe>) {
    let transport = classify(e);
    let detail = error_chain(e);
    out.error = Some(RequestError {
        kind: if transport == Transport::Timeout {
            ErrorKind::Timeout
        } else {
            ErrorKind::Connect
        },
        status: None,
        message: detail.clone(),
    });
    if let Some(p) = probe {
        p.transport = Some(transport);
        p.transport_detail = Some(detail);
    }
}

/// The error's causes joined with `: `, without the URL the top-level message carries.
pub(crate) fn error_chain(e: &reqwest::Error) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut source = e.source();
    while let Some(s) = source {
        let text = s.to_string();
        // hyper and hyper-util repeat their cause in their own message; keep each once.
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        source = s.source();
    }
    // hyper-util's "client error (Connect)" only repeats what the causes below it say.
    if parts.len() > 1 && parts[0].starts_with("client error (") {
        parts.remove(0);
    }
    if parts.is_empty() {
        let top = if e.is_connect() {
            "connection failed"
        } else if e.is_timeout() {
            "timed out"
        } else if e.is_body() {
            "body error"
        } else {
            "request failed"
        };
        return top.to_string();
    }
    parts.join(": ")
}

/// Classifies a transport error by walking its causes.
pub(crate) fn classify(e: &reqwest::Error) -> Transport {
    if e.is_timeout() {
        return Transport::Timeout;
    }
    let mut source: Option<&(dyn StdError + 'static)> = Some(e);
    let mut text = String::new();
    while let Some(s) = source {
        if let Some(io) = s.downcast_ref::<std::io::Error>() {
            match io.kind() {
                std::io::ErrorKind::ConnectionRefused => return Transport::Refused,
                std::io::ErrorKind::TimedOut => return Transport::Timeout,
                _ => {}
            }
        }
        text.push_str(&s.to_string().to_ascii_lowercase());
        text.push('\n');
        source = s.source();
    }
    const DNS: [&str; 5] = [
        "dns error",
        "failed to lookup address",
        "name or service not known",
        "nodename nor servname",
        "no address associated",
    ];
    const TLS: [&str; 6] = [
        "certificate",
        "tls",
        "rustls",
        "handshake",
        "invalidcontenttype",
        "corrupt message",
    ];
    if DNS.iter().any(|m| text.contains(m)) {
        Transport::Dns
    } else if TLS.iter().any(|m| text.contains(m)) {
        Transport::Tls
    } else {
        Transport::Other
    }
}

/// A failure on a kept-alive connection that the server had closed, before any response:
/// the request never reached the server, so one immediate retry on a new connection is safe.
fn is_stale_connection(e: &reqwest::Error) -> bool {
    if e.is_connect() || e.is_timeout() || e.status().is_some() {
        return false;
    }
    let mut source: Option<&(dyn StdError + 'static)> = e.source();
    while let Some(s) = source {
        if let Some(h) = s.downcast_ref::<hyper::Error>() {
            if h.is_incomplete_message() || h.is_canceled() || h.is_closed() {
                return true;
            }
        }
        if let Some(io) = s.downcast_ref::<std::io::Error>() {
            use std::io::ErrorKind as K;
            if matches!(
                io.kind(),
                K::ConnectionReset | K::BrokenPipe | K::ConnectionAborted | K::UnexpectedEof
            ) {
                return true;
            }
        }
        source = s.source();
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_base_table() {
        let cases = [
            ("http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1"),
            ("http://127.0.0.1:8000/v1/", "http://127.0.0.1:8000/v1"),
            ("http://127.0.0.1:8000", "http://127.0.0.1:8000/v1"),
            ("http://127.0.0.1:8000/", "http://127.0.0.1:8000/v1"),
            ("https://h.example/openai", "https://h.example/openai/v1"),
            ("https://h.example/api/v1/", "https://h.example/api/v1"),
            (
                "https://h.example/v1beta/openai/",
                "https://h.example/v1beta/openai",
            ),
            ("http://h:1/v1?x=1", "http://h:1/v1?x=1"),
        ];
        for (input, want) in cases {
            assert_eq!(api_base(input).unwrap().as_str(), want, "{input}");
        }
        for bad in ["ftp://h/v1", "not a url", "http://"] {
            assert!(api_base(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn join_keeps_query() {
        let base = api_base("http://h:1/v1?x=1").unwrap();
        assert_eq!(join(&base, "models").as_str(), "http://h:1/v1/models?x=1");
    }

    #[test]
    fn display_url_hides_credentials_and_query() {
        let u = Url::parse("https://user:pw@h.example/v1/models?api_key=s3cret").unwrap();
        assert_eq!(display_url(&u), "https://h.example/v1/models");
    }
}
