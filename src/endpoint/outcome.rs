//! What one HTTP exchange observed, and how a request failed: the endpoint's vocabulary, which
//! the engine turns into request records (the engine's `record` module re-exports it). It lives
//! here so the endpoint layer depends on nothing above it.

use serde::{Deserialize, Serialize};
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

/// How a request failed. Each class is counted separately and none of them enters latency
/// percentiles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// Could not connect (refused, DNS, TLS) or the connection failed before a response.
    Connect,
    /// The per-request timeout ran out (including a stream that stalled).
    Timeout,
    /// The server answered with a non-2xx status.
    HttpStatus,
    /// A 200 stream carried an `{"error": ...}` object.
    InStreamError,
    /// The stream ended or broke before it was complete (no `[DONE]`, reset mid-body).
    BrokenStream,
    /// The response body or a chunk was not the JSON we expect.
    BadPayload,
    /// The run was stopped while this request was in flight (not an endpoint failure).
    Cancelled,
}

impl ErrorKind {
    /// Every kind, in display order.
    pub const ALL: [ErrorKind; 7] = [
        ErrorKind::Connect,
        ErrorKind::Timeout,
        ErrorKind::HttpStatus,
        ErrorKind::InStreamError,
        ErrorKind::BrokenStream,
        ErrorKind::BadPayload,
        ErrorKind::Cancelled,
    ];

    /// The snake_case name used in JSON and tables.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Connect => "connect",
            ErrorKind::Timeout => "timeout",
            ErrorKind::HttpStatus => "http_status",
            ErrorKind::InStreamError => "in_stream_error",
            ErrorKind::BrokenStream => "broken_stream",
            ErrorKind::BadPayload => "bad_payload",
            ErrorKind::Cancelled => "cancelled",
        }
    }
}

impl std::fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A failed request's class plus what the server or transport said.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RequestError {
    pub kind: ErrorKind,
    /// HTTP status, when there was one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// A short human-readable message (never contains request headers or secrets).
    pub message: String,
}

/// Where an output token count came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum TokenSource {
    /// The server's `usage.completion_tokens`.
    #[default]
    Server,
    /// The client's tokenizer applied to the received text.
    Client,
}

/// What one HTTP exchange observed, in absolute monotonic nanoseconds ([`crate::clock::now_ns`]).
/// Produced by the endpoint adapter in the task that reads the bytes.
#[derive(Debug, Clone, Default)]
pub struct ExchangeOutcome {
    /// The moment the request was handed to the HTTP client.
    pub start_ns: u64,
    /// First chunk carrying non-empty content or reasoning.
    pub first_token_ns: Option<u64>,
    /// Last content chunk (streaming) or the full body (non-streaming).
    pub last_token_ns: Option<u64>,
    /// When the exchange ended (success or failure).
    pub end_ns: u64,
    /// Output tokens (see `output_tokens_source`).
    pub output_tokens: Option<u32>,
    pub output_tokens_source: TokenSource,
    /// Input tokens as the server's usage reported them, when it did.
    pub server_input_tokens: Option<u32>,
    /// Arrival times of the chunks that carried content, for inter-chunk latency.
    pub content_chunk_ns: Vec<u64>,
    /// The failure, if the request failed.
    pub error: Option<RequestError>,
    /// The request was retried once on a fresh connection after a reused one failed before
    /// any byte of the request was sent.
    pub reconnected: bool,
    /// Ground truth from the simulator (opt-in): its monotonic send time of the first content
    /// chunk and of the last one.
    pub server_first_sent_ns: Option<u64>,
    pub server_last_sent_ns: Option<u64>,
    /// A counter the stream reader adds one to per content chunk as it arrives, so a level's
    /// live token rate counts tokens when they come, not when the request ends.
    pub live_chunks: Option<Arc<AtomicU64>>,
    /// `max_tokens` the request asked for.
    pub max_tokens: Option<u32>,
    /// First chunk carrying answer content, not reasoning (time to first output token).
    pub first_output_ns: Option<u64>,
    /// Reasoning tokens among `output_tokens`: the server's
    /// `usage.completion_tokens_details.reasoning_tokens`, else the client's count of the
    /// reasoning text; `None` when the answer carried no reasoning.
    pub reasoning_tokens: Option<u32>,
    /// The answer text and the reasoning text as received.
    pub answer_text: String,
    pub reasoning_text: String,
}
