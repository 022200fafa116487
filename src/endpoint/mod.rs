//! Endpoint adapters: OpenAI-compatible chat and completions over one shared HTTP client (our
//! own HTTP/1.1 client for `http://`, reqwest for `https://`), the SSE / JSON-lines stream
//! parser, and the pre-flight check.

use serde::{Deserialize, Serialize};

pub mod calibrate;
mod chunked;
pub mod client;
mod h1;
mod h1_client;
mod h1_pool;
mod lane;
pub mod openai;
pub mod preflight;
mod response;
pub mod sse;
mod transport;

pub use client::{api_base, Endpoint, EndpointError};
pub use preflight::{preflight, PreflightError, ServerIdentity};

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

/// Everything needed to talk to one endpoint. Serializes without secrets (for `run.json`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EndpointSpec {
    /// Config name (e.g. `sim`, `local-vllm`) or the URL when given directly.
    pub name: String,
    /// Base URL including the API prefix, e.g. `http://127.0.0.1:8000/v1`.
    pub base_url: String,
    /// Model name sent in every request.
    pub model: String,
    pub api: Api,
    /// Stream responses (SSE) or not.
    pub stream: bool,
    /// Send `ignore_eos` and `min_tokens` so the output length is exactly `max_tokens`.
    pub exact_output_length: bool,
    /// Extra headers (names and values are not secret; put secrets in `api_key_env`).
    #[serde(default)]
    pub headers: Vec<(String, String)>,
    /// Name of the environment variable holding a bearer token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key_env: Option<String>,
    /// Ask the simulator to stamp each chunk with its monotonic send time (ground truth).
    #[serde(default)]
    pub sim_timing: bool,
}
