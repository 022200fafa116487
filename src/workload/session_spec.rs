//! How a workload's multi-turn sessions run ([`SessionSpec`], `--turns`,
//! `--turn-input-tokens`, `--think-time`): recorded in `run.json` as `workload.sessions`.

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
}
