//! The shared HTTP client and one request/response exchange with exact timing.
//!
//! One [`Endpoint`] (one connection pool) is shared by every worker. Generation requests, on
//! `http://` and `https://` alike, go through `super::http` (hyper's HTTP/1.1
//! connections, rustls for TLS; its header walks through one request): the worker writes the
//! request (an open loop's dispatcher writes it on its own thread when a connection is ready),
//! the first-token lane reads the answer up to its first token, the worker reads
//! the rest, each driving the connection itself. `GET /models` goes through the control-plane
//! client (`super::control`), with the same headers and credentials.
//! Times are read with [`now_ns`] in the task that reads the bytes, once per network read, the
//! moment the read completes; every event parsed from that read gets that time.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::header::{HeaderMap, HeaderName, HeaderValue, AUTHORIZATION, SERVER};
use url::Url;

use super::control::ControlClient;
use super::failure::no_answer_within;
use super::http::direct::{BuiltRequest, DirectWriter, Written};
use super::http::exchange::HttpClient;
use super::http::pool::Target;
use super::http::request_head::{basic_credentials, origin};
use super::openai;
use super::probe::{Probe, Transport};
use super::EndpointSpec;
use crate::clock::now_ns;
use crate::record::{ErrorKind, ExchangeOutcome, RequestError, TokenSource};
use crate::workload::messages::RequestInput;
use crate::workload::tokenizer::{ApproxTokenizer, Tokenizer};
use crate::workload::tools::ToolsSpec;

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
    /// A proxy variable in the environment is not usable.
    #[error("{0}")]
    Proxy(String),
    /// The TLS / HTTP client could not be built.
    #[error("cannot build the HTTP client: {0}")]
    Client(String),
    /// A SageMaker endpoint, in a build without the `sagemaker` feature.
    #[error(
        "endpoint {name} is a SageMaker endpoint, and this rightsize was built without the \
         `sagemaker` feature: build it with default features (cargo build --release)"
    )]
    NoSageMaker { name: String },
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

/// Largest `GET /models` body read.
const MAX_MODELS_BODY_BYTES: usize = 4 * 1024 * 1024;

struct Inner {
    spec: EndpointSpec,
    /// For `GET /models` (and the server telemetry's scrapes).
    control: ControlClient,
    generate_url: Url,
    models_url: Url,
    request_timeout: Duration,
    /// The generation requests' client (`None` for SageMaker endpoints).
    http: Option<Arc<HttpClient>>,
    /// The AWS SDK's client, for SageMaker endpoints.
    #[cfg(feature = "sagemaker")]
    sagemaker: Option<super::sagemaker::SageMakerClient>,
}

/// An endpoint ready to send requests: one shared HTTP client (cheap to clone).
#[derive(Clone)]
pub struct Endpoint {
    inner: Arc<Inner>,
    /// Counts answers whose server sent no usage (the run's tokenizer; built-in by default).
    counter: Arc<dyn Tokenizer>,
    /// The workload's tools as chat bodies carry them, serialized once; `None`: no tools.
    tools: Option<Arc<[u8]>>,
    /// A tool call with arguments that are not JSON fails its request (`bad_tool_call`).
    fail_on_bad_tool_call: bool,
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
        url: crate::secrets::redact_url(base_url),
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
        if let Some(target) = &spec.sagemaker {
            return Self::new_sagemaker(spec, target, request_timeout);
        }
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
            headers.insert(AUTHORIZATION, v);
        }
        if spec.sim_timing {
            headers.insert("x-rightsize-sim-timing", HeaderValue::from_static("1"));
        }

        let origin = origin(&generate_url).map_err(|reason| EndpointError::InvalidUrl {
            url: crate::secrets::redact_url(&spec.base_url),
            reason,
        })?;
        let target = Target {
            proxy: super::http::pool::proxy_for(&origin, |k| std::env::var(k).ok())
                .map_err(EndpointError::Proxy)?,
            origin,
        };
        let http = HttpClient::new(&generate_url, target, &headers, spec.stream, pool_size)
            .map_err(EndpointError::Client)?;
        // URL credentials as Basic authorization for the control client too (it does not read
        // them from a URL given per call)
        if !headers.contains_key(AUTHORIZATION) {
            if let Some(creds) = basic_credentials(&generate_url) {
                headers.insert(AUTHORIZATION, creds);
            }
        }
        let control = ControlClient::for_endpoint(headers, pool_size.max(1))
            .map_err(|e| EndpointError::Client(e.to_string()))?;
        Ok(Endpoint {
            inner: Arc::new(Inner {
                spec: spec.clone(),
                control,
                generate_url,
                models_url,
                request_timeout,
                http: Some(Arc::new(http)),
                #[cfg(feature = "sagemaker")]
                sagemaker: None,
            }),
            counter: Arc::new(ApproxTokenizer),
            tools: None,
            fail_on_bad_tool_call: false,
        })
    }

    /// A SageMaker endpoint: requests go through the AWS SDK; `generate_url` and `models_url`
    /// only name it (`sagemaker:NAME`).
    #[cfg(feature = "sagemaker")]
    fn new_sagemaker(
        spec: &EndpointSpec,
        target: &super::SageMakerTarget,
        request_timeout: Duration,
    ) -> Result<Endpoint, EndpointError> {
        let name = super::sagemaker_spec::display_name(&target.endpoint_name);
        let url = Url::parse(&name).map_err(|e| EndpointError::InvalidUrl {
            url: name.clone(),
            reason: e.to_string(),
        })?;
        let control =
            ControlClient::plain(None).map_err(|e| EndpointError::Client(e.to_string()))?;
        Ok(Endpoint {
            inner: Arc::new(Inner {
                spec: spec.clone(),
                control,
                generate_url: url.clone(),
                models_url: url,
                request_timeout,
                http: None,
                sagemaker: Some(super::sagemaker::SageMakerClient::new(
                    target,
                    request_timeout,
                )),
            }),
            counter: Arc::new(ApproxTokenizer),
            tools: None,
            fail_on_bad_tool_call: false,
        })
    }

    #[cfg(not(feature = "sagemaker"))]
    fn new_sagemaker(
        _spec: &EndpointSpec,
        target: &super::SageMakerTarget,
        _request_timeout: Duration,
    ) -> Result<Endpoint, EndpointError> {
        Err(EndpointError::NoSageMaker {
            name: super::sagemaker_spec::display_name(&target.endpoint_name),
        })
    }

    /// True for a SageMaker endpoint.
    pub fn is_sagemaker(&self) -> bool {
        self.inner.spec.sagemaker.is_some()
    }

    /// This endpoint, counting answers without usage (and reasoning without a server count)
    /// with `tokenizer`.
    pub fn with_tokenizer(self, tokenizer: Arc<dyn Tokenizer>) -> Endpoint {
        Endpoint {
            counter: tokenizer,
            ..self
        }
    }

    /// This endpoint, sending `tools` with every chat request (and failing a request whose
    /// tool call is broken when they say so).
    pub fn with_tools(self, tools: Option<&ToolsSpec>) -> Endpoint {
        Endpoint {
            tools: tools.map(|t| Arc::from(t.body_fields())),
            fail_on_bad_tool_call: tools.is_some_and(|t| t.fail_on_bad_tool_call),
            ..self
        }
    }

    /// The request body of `input`.
    fn body(&self, input: RequestInput<'_>, max_tokens: u32) -> Vec<u8> {
        openai::request_body(&self.inner.spec, input, max_tokens, self.tools.as_deref())
    }

    /// Counts with the run's tokenizer what the server did not count: the output (answer,
    /// reasoning, and the tool calls' names and arguments) when usage gave no
    /// `completion_tokens`, and the reasoning when usage gave no `reasoning_tokens`.
    fn count_client_side(&self, out: &mut ExchangeOutcome) {
        let reasoning =
            (!out.reasoning_text.is_empty()).then(|| self.counter.count(&out.reasoning_text));
        if out.output_tokens.is_none() && out.output_tokens_source == TokenSource::Client {
            let tools: u32 = out
                .tool_call_text
                .iter()
                .map(|t| self.counter.count(t))
                .sum();
            out.output_tokens =
                Some(self.counter.count(&out.answer_text) + reasoning.unwrap_or(0) + tools);
        }
        if out.reasoning_tokens.is_none() {
            out.reasoning_tokens = reasoning;
        }
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

    /// The control-plane client, with the endpoint's headers and credentials (its
    /// `GET /models`; the server telemetry's `/metrics`).
    pub fn control_client(&self) -> ControlClient {
        self.inner.control.clone()
    }

    /// The per-request timeout.
    pub fn request_timeout(&self) -> Duration {
        self.inner.request_timeout
    }

    /// `GET .../models`, read whole (up to 4 MiB), without a timeout (the caller sets one).
    pub(crate) async fn get_models(&self) -> Result<Fetched, FetchError> {
        let answer = self
            .inner
            .control
            .get(
                self.inner.models_url.as_str(),
                Some("application/json"),
                None,
            )
            .await
            .map_err(|e| FetchError::Transport(e.transport(), e.to_string()))?;
        let status = answer.status().as_u16();
        let server = answer.header(SERVER).map(str::to_string);
        let body = answer
            .body_up_to(MAX_MODELS_BODY_BYTES)
            .await
            .map_err(|_| FetchError::Body)?;
        Ok(Fetched {
            status,
            server,
            body,
        })
    }

    /// Sends one request and reads the whole answer. Never panics; failures are in
    /// [`ExchangeOutcome::error`].
    pub async fn send(&self, prompt: &str, max_tokens: u32) -> ExchangeOutcome {
        self.exchange(RequestInput::Text(prompt), max_tokens, None, None)
            .await
    }

    /// Sends `input` (a text or a message list), adding one to `live` per content chunk as
    /// it arrives.
    pub async fn send_counting(
        &self,
        input: RequestInput<'_>,
        max_tokens: u32,
        live: Arc<std::sync::atomic::AtomicU64>,
    ) -> ExchangeOutcome {
        self.exchange(input, max_tokens, None, Some(live)).await
    }

    /// [`Endpoint::send`], also filling `probe` when given (pre-flight).
    pub(crate) async fn exchange(
        &self,
        input: RequestInput<'_>,
        max_tokens: u32,
        mut probe: Option<&mut Probe>,
        live_chunks: Option<Arc<std::sync::atomic::AtomicU64>>,
    ) -> ExchangeOutcome {
        let inner = &*self.inner;
        #[cfg(feature = "sagemaker")]
        let body = match &inner.sagemaker {
            Some(sm) => sm.request_body(&inner.spec, input, max_tokens),
            None => self.body(input, max_tokens),
        };
        #[cfg(not(feature = "sagemaker"))]
        let body = self.body(input, max_tokens);
        let mut out = self.new_outcome(max_tokens, live_chunks);
        let deadline = tokio::time::Instant::now() + inner.request_timeout;
        out.start_ns = now_ns();
        #[cfg(feature = "sagemaker")]
        if let Some(sm) = &inner.sagemaker {
            let (stream, timing) = (inner.spec.stream, inner.spec.sim_timing);
            let run = sm.exchange(body, stream, timing, &mut out, probe.as_deref_mut());
            if tokio::time::timeout_at(deadline, run).await.is_err() {
                self.timed_out(&mut out, probe);
            }
            return self.finish(out, max_tokens);
        }
        let Some(http) = &inner.http else {
            unreachable!("an endpoint without SageMaker has an HTTP client")
        };
        let run = http.exchange(
            Bytes::from(body),
            inner.spec.stream,
            &mut out,
            probe.as_deref_mut(),
        );
        if tokio::time::timeout_at(deadline, run).await.is_err() {
            self.timed_out(&mut out, probe);
        }
        self.finish(out, max_tokens)
    }

    /// A writer for the open-loop dispatcher's thread, which writes each request itself at
    /// its intended time (`super::http::direct`); `None` for a SageMaker endpoint.
    pub fn direct_writer(&self) -> Option<DirectWriter> {
        self.inner.http.clone().map(DirectWriter::new)
    }

    /// `input`'s request, built for `writer` to write later.
    pub fn prepare(
        &self,
        writer: &DirectWriter,
        input: RequestInput<'_>,
        max_tokens: u32,
    ) -> BuiltRequest {
        writer.prepare_body(self.body(input, max_tokens), max_tokens)
    }

    /// Reads the answer to a request the dispatcher wrote ([`DirectWriter::write`]), adding
    /// one to `live` per content chunk as it arrives; timed from its write.
    pub async fn send_written(
        &self,
        written: Written,
        live: Arc<std::sync::atomic::AtomicU64>,
    ) -> ExchangeOutcome {
        let inner = &*self.inner;
        let Written {
            client,
            body,
            max_tokens,
            early,
            start_ns,
            started,
        } = written;
        let mut out = self.new_outcome(max_tokens, Some(live));
        out.start_ns = start_ns;
        let deadline = tokio::time::Instant::from_std(started) + inner.request_timeout;
        let run = client.exchange_early(body, early, inner.spec.stream, &mut out);
        if tokio::time::timeout_at(deadline, run).await.is_err() {
            self.timed_out(&mut out, None);
        }
        self.finish(out, max_tokens)
    }

    /// An outcome to fill for a request of at most `max_tokens`.
    fn new_outcome(
        &self,
        max_tokens: u32,
        live_chunks: Option<Arc<std::sync::atomic::AtomicU64>>,
    ) -> ExchangeOutcome {
        let mut out = ExchangeOutcome {
            live_chunks,
            ..ExchangeOutcome::default()
        };
        if self.inner.spec.stream {
            // One time per content chunk: no reallocation while the stream is read.
            out.content_chunk_ns
                .reserve(usize::try_from(max_tokens).unwrap_or(0).min(4096) + 1);
        }
        out
    }

    /// The request timeout ran out.
    fn timed_out(&self, out: &mut ExchangeOutcome, probe: Option<&mut Probe>) {
        out.error = Some(RequestError {
            kind: ErrorKind::Timeout,
            status: None,
            message: no_answer_within(self.inner.request_timeout),
        });
        if let Some(p) = probe {
            p.transport = Some(Transport::Timeout);
        }
    }

    /// The end of an exchange: its end time and the client-side token counts.
    fn finish(&self, mut out: ExchangeOutcome, max_tokens: u32) -> ExchangeOutcome {
        out.end_ns = now_ns();
        out.max_tokens = Some(max_tokens);
        self.count_client_side(&mut out);
        if self.fail_on_bad_tool_call && out.tool_call_errors > 0 && out.error.is_none() {
            out.error = Some(RequestError {
                kind: ErrorKind::BadToolCall,
                status: None,
                message: format!(
                    "{} of the answer's {} tool calls had arguments that are not valid JSON",
                    out.tool_call_errors, out.tool_calls
                ),
            });
        }
        out
    }
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
