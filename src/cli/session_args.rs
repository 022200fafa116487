//! Flags of multi-turn sessions: how many turns, how long each later turn's new message is,
//! the pause between turns, and agent loops (`--agent`, `--tool-latency`,
//! `--tool-result-tokens`). See `docs/workloads.md`.

use crate::config::overrides::WorkloadOverrides;
use crate::values::parse_duration;
use crate::workload::session::parse_turns;
use clap::Args;
use std::time::Duration;

/// Session flags (part of the workload flags).
#[derive(Debug, Clone, Default, Args)]
pub struct SessionArgs {
    /// Multi-turn sessions of N user turns: each turn sends the history so far (earlier
    /// prompts and the server's answers) plus a new message; with --dataset, at most N turns
    /// of each conversation (default 1: single requests)
    #[arg(long, value_name = "N", value_parser = parse_turns)]
    pub turns: Option<u32>,
    /// Tokens of the new user message of turns 2 and later (default: --input-tokens)
    #[arg(long, value_name = "N", value_parser = crate::values::parse_positive)]
    pub turn_input_tokens: Option<u32>,
    /// Pause between an answer and the session's next turn, e.g. 500ms (default 0)
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub think_time: Option<Duration>,
    /// Agent loops (needs --tools): an answer with tool calls is followed, after
    /// --tool-latency, by a request carrying the assistant's tool calls and one tool result
    /// per call; a session ends after --turns requests (default 10 with --agent) or at an
    /// answer without a tool call
    #[arg(long)]
    pub agent: bool,
    /// With --agent: the time each round of tools takes to run, e.g. 200ms (default 0: the
    /// results go back at once)
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub tool_latency: Option<Duration>,
    /// With --agent: tokens of each tool result (default 1000)
    #[arg(long, value_name = "N", value_parser = crate::values::parse_positive)]
    pub tool_result_tokens: Option<u32>,
}

impl SessionArgs {
    /// Writes these flags into the workload overrides.
    pub fn apply(&self, o: &mut WorkloadOverrides) {
        o.turns = self.turns;
        o.turn_input_tokens = self.turn_input_tokens;
        o.think_time = self.think_time;
        o.agent = self.agent.then_some(true);
        o.tool_latency = self.tool_latency;
        o.tool_result_tokens = self.tool_result_tokens;
    }
}
