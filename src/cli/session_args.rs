//! Flags of multi-turn sessions: how many turns, how long each later turn's new message is,
//! and the pause between turns. See `docs/workloads.md`.

use crate::config::resolve::WorkloadOverrides;
use crate::config::values::parse_duration;
use crate::workload::session::MAX_TURNS;
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
    #[arg(long, value_name = "N", value_parser = crate::config::values::parse_positive)]
    pub turn_input_tokens: Option<u32>,
    /// Pause between an answer and the session's next turn, e.g. 500ms (default 0)
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub think_time: Option<Duration>,
}

/// clap value parser for `--turns`: 1 to [`MAX_TURNS`].
pub fn parse_turns(s: &str) -> Result<u32, String> {
    let v: i64 = s
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a whole number"))?;
    if v < 1 {
        return Err(format!(
            "a session has at least 1 turn (`{s}`); --turns 1 sends single requests"
        ));
    }
    if v > i64::from(MAX_TURNS) {
        return Err(format!("at most {MAX_TURNS} turns a session (`{s}`)"));
    }
    Ok(v as u32)
}

impl SessionArgs {
    /// Writes these flags into the workload overrides.
    pub fn apply(&self, o: &mut WorkloadOverrides) {
        o.turns = self.turns;
        o.turn_input_tokens = self.turn_input_tokens;
        o.think_time = self.think_time;
    }
}
