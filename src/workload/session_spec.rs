//! How a workload's multi-turn sessions run ([`SessionSpec`], `--turns`,
//! `--turn-input-tokens`, `--think-time`, and agent loops: `--agent`, `--tool-latency`,
//! `--tool-result-tokens`): recorded in `run.json` as `workload.sessions`.

use serde::{Deserialize, Serialize};

/// How sessions run: recorded in `run.json` as `workload.sessions`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionSpec {
    /// User turns per session (synthetic); with a dataset, at most this many of each
    /// conversation's user turns.
    pub turns: u32,
    /// Tokens of the new user message of turns 2 and later (synthetic; the first turn's is
    /// `input_tokens`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn_input_tokens: Option<u32>,
    /// Pause between an answer and the session's next turn (ms).
    #[serde(default)]
    pub think_time_ms: u64,
    /// Agent loops: an answer with tool calls is followed by the results of its calls, and
    /// an answer without one ends the session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<AgentSpec>,
}

/// How an agent loop runs its tools (`--agent`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentSpec {
    /// The time a tool takes to run: the pause between an answer with tool calls and the
    /// request that carries their results (ms).
    pub tool_latency_ms: u64,
    /// Tokens of each tool result.
    pub tool_result_tokens: u32,
}

/// Tokens of a tool result when `--tool-result-tokens` is not given.
pub const DEFAULT_TOOL_RESULT_TOKENS: u32 = 1_000;
/// Turns of an agent session when `--turns` is not given.
pub const DEFAULT_AGENT_TURNS: u32 = 10;
