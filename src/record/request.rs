//! What one request produced: what the exchange observed, in absolute monotonic time
//! ([`ExchangeOutcome`], filled by the endpoint adapter in the task that reads the bytes), the
//! record the engine keeps of it, in time relative to its level ([`RequestRecord`]), and how
//! it failed ([`ErrorKind`]). Failed requests are data: they keep their class and are counted,
//! never dropped.

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
    /// The answer carried a tool call whose arguments are not JSON, and the run was asked to
    /// fail such requests (`--fail-on-bad-tool-call`).
    BadToolCall,
}

impl ErrorKind {
    /// Every kind, in display order.
    pub const ALL: [ErrorKind; 8] = [
        ErrorKind::Connect,
        ErrorKind::Timeout,
        ErrorKind::HttpStatus,
        ErrorKind::InStreamError,
        ErrorKind::BrokenStream,
        ErrorKind::BadPayload,
        ErrorKind::BadToolCall,
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
            ErrorKind::BadToolCall => "bad_tool_call",
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
    /// Tool calls the answer carried, and how many of them had arguments that are not JSON.
    pub tool_calls: u32,
    pub tool_call_errors: u32,
    /// The tool calls' function names and arguments as received (each a text of its own),
    /// for the client's token count when the server gave none.
    pub tool_call_text: Vec<String>,
    /// The tool calls as assembled from their fragments, in the order the server began them
    /// (an agent loop sends them back).
    pub tool_call_list: Vec<ToolCall>,
    /// Prompt tokens the server found in its prefix cache
    /// (`usage.prompt_tokens_details.cached_tokens`), when it said.
    pub cached_tokens: Option<u32>,
}

/// One tool call of an answer: its id, function name and arguments as the server sent them
/// (an id the server left out is made up from the call's index).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

/// What a record keeps beyond timings and counts that every request has: the server's input
/// count beside the client's, the `max_tokens` asked for, and reasoning. Flattened into the
/// record's JSON.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RequestDetail {
    /// Input tokens as the server's usage reported them (`input_tokens` is the client's count).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_input_tokens: Option<u32>,
    /// `max_tokens` asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// First answer (not reasoning) chunk (ns since level start).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_output_ns: Option<u64>,
    /// Reasoning tokens among `output_tokens`, when the answer carried reasoning.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_tokens: Option<u32>,
    /// Open loop: when the arrival schedule meant the request to be sent (ns since level
    /// start); `start_ns` minus this is the schedule lag.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intended_ns: Option<u64>,
    /// Multi-turn sessions: the session's index in its level and this request's turn
    /// (1-based).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn: Option<u32>,
    /// Multi-turn sessions: the think time the session spent before this turn (ns); its
    /// slot was busy thinking (see `docs/workloads.md`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub think_ns: Option<u64>,
    /// Tool calls in the answer, and how many of them had arguments that do not parse as
    /// JSON (broken tool calls); left out when none.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub tool_calls: u32,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub tool_call_errors: u32,
    /// Prompt tokens the server served from its prefix cache, when its usage said
    /// (`prompt_tokens_details.cached_tokens`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_tokens: Option<u32>,
    /// The request was a turn of an agent loop (`--agent`); left out otherwise.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub agent: bool,
    /// Agent loops: the time the session waited for its tools (`--tool-latency`) before this
    /// turn (ns).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_wait_ns: Option<u64>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// One request as recorded in a level: times in nanoseconds relative to the level's start.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RequestRecord {
    /// 0-based index of the request within its level.
    pub index: u64,
    /// Which closed-loop worker sent it.
    pub worker: u32,
    /// When the worker's concurrency slot became free (ns since level start).
    pub slot_free_ns: u64,
    /// When the request was handed to the HTTP client (ns since level start).
    pub start_ns: u64,
    /// First content token (ns since level start).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_token_ns: Option<u64>,
    /// Last content token or full body (ns since level start).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_token_ns: Option<u64>,
    /// When the exchange ended (ns since level start).
    pub end_ns: u64,
    pub input_tokens: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<u32>,
    pub output_tokens_source: TokenSource,
    /// Number of chunks that carried content.
    pub content_chunks: u32,
    /// Inter-chunk gaps (ns). Folded into histograms; not written to `requests.jsonl`.
    #[serde(skip)]
    pub chunk_gaps_ns: Vec<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<RequestError>,
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub reconnected: bool,
    /// Simulator ground truth (ns since level start), when the endpoint provided it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_first_sent_ns: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_last_sent_ns: Option<u64>,
    /// Request was warmup (not counted in the level's statistics).
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub warmup: bool,
    /// Request only kept a slot busy while the level's last measured requests finished (not
    /// counted; see `engine::workers`).
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub cooldown: bool,
    #[serde(flatten)]
    pub detail: RequestDetail,
}

impl RequestRecord {
    /// Builds a record from an exchange, rebasing times on `level_start_ns`; `input_tokens`
    /// is the client's count of the prompt.
    pub fn from_outcome(
        index: u64,
        worker: u32,
        level_start_ns: u64,
        slot_free_abs_ns: u64,
        input_tokens: u32,
        o: ExchangeOutcome,
    ) -> Self {
        let rel = |t: u64| t.saturating_sub(level_start_ns);
        let chunk_gaps_ns = o
            .content_chunk_ns
            .windows(2)
            .map(|w| w[1].saturating_sub(w[0]))
            .collect();
        RequestRecord {
            index,
            worker,
            slot_free_ns: rel(slot_free_abs_ns),
            start_ns: rel(o.start_ns),
            first_token_ns: o.first_token_ns.map(rel),
            last_token_ns: o.last_token_ns.map(rel),
            end_ns: rel(o.end_ns),
            input_tokens,
            output_tokens: o.output_tokens,
            output_tokens_source: o.output_tokens_source,
            content_chunks: o.content_chunk_ns.len() as u32,
            chunk_gaps_ns,
            error: o.error,
            reconnected: o.reconnected,
            server_first_sent_ns: o.server_first_sent_ns.map(rel),
            server_last_sent_ns: o.server_last_sent_ns.map(rel),
            warmup: false,
            cooldown: false,
            detail: RequestDetail {
                server_input_tokens: o.server_input_tokens,
                max_tokens: o.max_tokens,
                first_output_ns: o.first_output_ns.map(rel),
                reasoning_tokens: o.reasoning_tokens,
                intended_ns: None,
                session: None,
                turn: None,
                think_ns: None,
                tool_calls: o.tool_calls,
                tool_call_errors: o.tool_call_errors,
                cached_tokens: o.cached_tokens,
                agent: false,
                tool_wait_ns: None,
            },
        }
    }

    /// Whether the level's statistics count this request (neither warmup nor cooldown).
    pub fn counted(&self) -> bool {
        !self.warmup && !self.cooldown
    }

    /// The input length the level reports (`input_sequence_length`): the server's count when
    /// it gave one, else the client's.
    pub fn input_sequence_length(&self) -> u32 {
        self.detail.server_input_tokens.unwrap_or(self.input_tokens)
    }

    /// Time to the first answer token (ns), for streamed requests whose answer had content.
    pub fn ttfo_ns(&self) -> Option<u64> {
        self.detail
            .first_output_ns
            .map(|t| t.saturating_sub(self.start_ns))
    }

    /// True when the request succeeded.
    pub fn ok(&self) -> bool {
        self.error.is_none()
    }

    /// Time to first token (ns), for successful streamed requests.
    pub fn ttft_ns(&self) -> Option<u64> {
        self.first_token_ns.map(|t| t.saturating_sub(self.start_ns))
    }

    /// End-to-end latency (ns): last token (or body) minus start.
    pub fn e2e_ns(&self) -> Option<u64> {
        self.last_token_ns.map(|t| t.saturating_sub(self.start_ns))
    }

    /// Inter-token latency (ns) = (e2e - TTFT) / (output tokens - 1); needs at least 2 tokens.
    pub fn itl_ns(&self) -> Option<f64> {
        let n = self.output_tokens?;
        if n < 2 {
            return None;
        }
        let e2e = self.e2e_ns()?;
        let ttft = self.ttft_ns()?;
        Some(e2e.saturating_sub(ttft) as f64 / (n - 1) as f64)
    }
}
