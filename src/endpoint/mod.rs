//! Endpoint adapters: OpenAI-compatible chat and completions over one shared HTTP client
//! (hyper's HTTP/1.1 connections, rustls for `https://`: `http`, whose header walks through
//! one request), Amazon SageMaker AI endpoints through the AWS SDK (feature `sagemaker`,
//! [`sagemaker`]), the SSE / JSON-lines framing ([`sse`]), the stream reader that times the
//! events (`stream`), and the pre-flight check. Every other HTTP call (`GET /models`, the
//! telemetry scrapes, the prefix-cache reset, a worker's calls to its controller) goes through the control-plane
//! client ([`control`]); a transport failure is classified and described once,
//! for both (`failure`).

use serde::{Deserialize, Serialize};

pub mod cache_reset;
pub mod calibrate;
#[cfg(feature = "sagemaker")]
mod captured;
pub mod client;
pub mod control;
pub mod custom_payload;
mod failure;
mod http;
pub mod openai;
pub mod preflight;
mod probe;
/// Not an API: exists for the property tests and the property benchmark
/// (tests/endpoint/parser_props.rs, benches/parser_props.rs), which read body pieces through the
/// private decoder and stream reader without a connection.
#[doc(hidden)]
pub use http::body::replay as body_replay;
#[cfg(feature = "sagemaker")]
pub mod sagemaker;
pub mod sagemaker_spec;
pub mod sse;
mod stream;
mod tgi;
mod tool_calls;

pub use client::{api_base, Endpoint, EndpointError};
pub use http::direct::{BuiltRequest, DirectWriter, Written};
pub use preflight::{preflight, PreflightError, ServerIdentity};
pub use sagemaker_spec::{SageMakerFormat, SageMakerTarget};

/// Which OpenAI-compatible API to call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Api {
    /// `POST {base}/chat/completions`
    #[default]
    Chat,
    /// `POST {base}/completions`
    Completions,
}

/// A secret value (API key). Never printed, serialized or logged.
#[derive(Clone, Default)]
pub struct Secret(String);

impl Secret {
    pub fn new(s: impl Into<String>) -> Self {
        Secret(s.into())
    }
    /// The secret itself: only for building the request header.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(***)")
    }
}

/// Everything needed to talk to one endpoint. Serializes (and prints with `{:?}`) without
/// secrets (for `run.json`).
#[derive(Clone, Serialize, Deserialize)]
pub struct EndpointSpec {
    /// Config name (e.g. `sim`, `local-vllm`) or the URL when given directly (stored with
    /// its secrets masked, `crate::secrets`).
    #[serde(serialize_with = "crate::secrets::ser_url")]
    pub name: String,
    /// Base URL including the API prefix, e.g. `http://127.0.0.1:8000/v1` (stored masked).
    #[serde(serialize_with = "crate::secrets::ser_url")]
    pub base_url: String,
    /// Model name sent in every request.
    pub model: String,
    pub api: Api,
    /// Stream responses (SSE) or not.
    pub stream: bool,
    /// Send `ignore_eos` and `min_tokens` so the output length is exactly `max_tokens`.
    pub exact_output_length: bool,
    /// Extra headers, sent as given; stored with credential values (`Authorization`,
    /// `Cookie`, `X-Api-Key`, any `*token*`/`*secret*`/`*key*`) masked.
    #[serde(default, serialize_with = "crate::secrets::ser_headers")]
    pub headers: Vec<(String, String)>,
    /// Name of the environment variable holding a bearer token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key_env: Option<String>,
    /// Ask the simulator to stamp each chunk with its monotonic send time (ground truth).
    #[serde(default)]
    pub sim_timing: bool,
    /// A SageMaker AI endpoint (kind `sagemaker`): requests go through the AWS SDK, not to
    /// `base_url` (which then reads `sagemaker:NAME`). `None` for HTTP endpoints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sagemaker: Option<SageMakerTarget>,
}

impl std::fmt::Debug for EndpointSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let headers: Vec<(&str, String)> = self
            .headers
            .iter()
            .map(|(n, v)| (n.as_str(), crate::secrets::redact_header(n, v)))
            .collect();
        f.debug_struct("EndpointSpec")
            .field("name", &crate::secrets::redact_url(&self.name))
            .field("base_url", &crate::secrets::redact_url(&self.base_url))
            .field("model", &self.model)
            .field("api", &self.api)
            .field("stream", &self.stream)
            .field("headers", &headers)
            .field("api_key_env", &self.api_key_env)
            .field("sagemaker", &self.sagemaker)
            .finish_non_exhaustive()
    }
}
