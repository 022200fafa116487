//! Multi-turn sessions: a worker runs a conversation whose every turn sends the whole history
//! so far (the earlier user messages and the answers the server actually streamed) plus a new
//! user message. Turns come from the flags (`--turns`, `--turn-input-tokens`) or from a
//! dataset's conversations. A session's messages are a pure function of (seed, level, session
//! index, turn) and the server's answers. See `docs/workloads.md`.
//!
//! An agent loop (`--agent`) is a session whose later turns carry tool results instead of a
//! user message: an answer with tool calls joins the history as the assistant message with
//! its `tool_calls`, followed by one `tool` message per call (a result of
//! `--tool-result-tokens` tokens, made like a prompt of exact length); an answer without a
//! tool call ends the session.

use super::bounds::MAX_INPUT_TOKENS;
use super::exact::TextBuilder;
use super::messages::{count_messages, ChatMessage, ConversationTurn, ToolCall};
use super::prompt::{Prompt, WorkloadSpec};
use super::session_spec::AgentSpec;
use crate::rng::{mix64, SplitMix64};

/// The most turns a session may have.
pub const MAX_TURNS: u32 = 1_000;

/// Seeds the text and lengths of synthetic later turns (their own index space).
const TURN_SALT: u64 = 0x7E55_1011_0000_0001;
/// Seeds the text of tool results (their own index space).
const TOOL_RESULT_SALT: u64 = 0x7001_5E55_0000_0002;
/// Synthetic first turns draw like requests of this index range (never a single-turn
/// request's index).
const FIRST_TURN_INDEX_BASE: u64 = 1 << 48;

/// What a session's turns are made of.
#[derive(Debug, Clone)]
enum Plan {
    /// Generated: the first message `input_tokens` long, later ones `turn_input_tokens`.
    Synthetic { turns: u32, later_tokens: u32 },
    /// A dataset record's user turns (at most `--turns` of them).
    Dataset(Vec<ConversationTurn>),
}

/// One session in progress: its plan and its history so far.
#[derive(Debug, Clone)]
pub struct Session {
    /// The session's index in its level (its own index space, not the requests').
    pub index: u64,
    level: u32,
    plan: Plan,
    history: Vec<ChatMessage>,
    /// The client's count of `history`'s contents.
    history_tokens: u32,
    /// Turns sent so far.
    sent: u32,
    /// The record's own output length, for dataset turns without a reference answer.
    record_output: Option<u32>,
    /// An agent loop: how its tools answer.
    agent: Option<AgentSpec>,
}

/// One turn ready to send: its 1-based number and the request.
#[derive(Debug, Clone)]
pub struct Turn {
    pub number: u32,
    pub prompt: Prompt,
}

impl WorkloadSpec {
    /// Session `index` of level `level`, with at least one turn; `None` when the workload is
    /// single-turn.
    pub fn session(&self, level: u32, index: u64) -> Option<Session> {
        let spec = self.sessions.as_ref()?;
        let most = spec.turns.max(1);
        let rt = self.loaded();
        let (plan, record_output) = match &rt.dataset {
            None => (
                Plan::Synthetic {
                    turns: most,
                    later_tokens: spec.turn_input_tokens.unwrap_or(self.input_tokens),
                },
                None,
            ),
            Some(ds) => {
                let sampling = self
                    .dataset
                    .as_ref()
                    .map(|d| d.sampling)
                    .unwrap_or_default();
                let r = ds.pick(sampling, self.seed, level, index);
                let mut turns = r.turns(&*rt.tokenizer.tokenizer).unwrap_or_default();
                if turns.is_empty() {
                    // no user message: the record's messages go as one turn, as they would
                    // single-turn
                    let p = self.record_prompt(level, index, r);
                    let messages = if p.messages.is_empty() {
                        vec![ChatMessage::new("user", p.text)]
                    } else {
                        p.messages
                    };
                    turns.push(ConversationTurn {
                        messages,
                        reference_answer_tokens: r.output_tokens,
                    });
                }
                turns.truncate(most as usize);
                (Plan::Dataset(turns), r.output_tokens)
            }
        };
        Some(Session {
            index,
            level,
            plan,
            history: Vec::new(),
            history_tokens: 0,
            sent: 0,
            record_output,
            agent: spec.agent,
        })
    }
}

impl Session {
    /// Turns this session sends in all.
    pub fn turns(&self) -> u32 {
        match &self.plan {
            Plan::Synthetic { turns, .. } => *turns,
            Plan::Dataset(t) => t.len() as u32,
        }
    }

    /// Whether every turn has been sent.
    pub fn finished(&self) -> bool {
        self.sent >= self.turns()
    }

    /// The next turn: the history so far plus the turn's new messages. `None` once every
    /// turn was sent.
    pub fn next_turn(&mut self, w: &WorkloadSpec) -> Option<Turn> {
        if self.finished() {
            return None;
        }
        let number = self.sent + 1;
        let rt = w.loaded();
        let tok = &*rt.tokenizer.tokenizer;
        // the turn's own index for length draws, apart from single-turn requests' indices
        let key = mix64(mix64(self.index ^ TURN_SALT) ^ u64::from(number));
        let draw_index = FIRST_TURN_INDEX_BASE | (key >> 16);
        let (new, max_tokens) = match &self.plan {
            Plan::Synthetic { .. } if number > 1 && self.agent.is_some() => {
                // an agent's later turn: the tool results already in the history
                (Vec::new(), w.drawn_output(self.level, draw_index))
            }
            Plan::Synthetic { later_tokens, .. } => {
                if number == 1 {
                    // drawn like a single-turn request: input length, shared prefix,
                    // calibration
                    let p = w.prompt(self.level, draw_index);
                    (vec![ChatMessage::new("user", p.text)], p.max_tokens)
                } else {
                    let mut rng = SplitMix64::new(mix64(w.seed ^ key ^ u64::from(self.level)));
                    let n = (*later_tokens).min(MAX_INPUT_TOKENS);
                    let mut b = TextBuilder::new(tok, &rt.words, n);
                    b.push_words(&mut rng, n);
                    let (text, _) = b.finish(n, &mut rng);
                    let output = w.drawn_output(self.level, draw_index);
                    (vec![ChatMessage::new("user", text)], output)
                }
            }
            Plan::Dataset(turns) => {
                let t = &turns[self.sent as usize];
                let drawn = w.drawn_output(self.level, draw_index);
                let max = t
                    .reference_answer_tokens
                    .or(self.record_output)
                    .unwrap_or(drawn);
                (t.messages.clone(), max.max(1))
            }
        };
        let new_tokens = count_messages(tok, &new);
        let mut messages = self.history.clone();
        messages.extend(new.iter().cloned());
        self.history.extend(new);
        self.history_tokens = self.history_tokens.saturating_add(new_tokens);
        self.sent = number;
        Some(Turn {
            number,
            prompt: Prompt {
                text: String::new(),
                messages,
                input_tokens: self.history_tokens,
                max_tokens,
                captured_body: None,
            },
        })
    }

    /// The server's answer to the last turn, as streamed: it joins the history the next turn
    /// sends.
    pub fn answered(&mut self, w: &WorkloadSpec, answer: String) {
        let n = w.loaded().tokenizer.tokenizer.count(&answer);
        self.history_tokens = self.history_tokens.saturating_add(n);
        self.history.push(ChatMessage::new("assistant", answer));
    }

    /// Whether this session is an agent loop, and how its tools answer.
    pub fn agent(&self) -> Option<AgentSpec> {
        self.agent
    }

    /// The server's answer to the last turn, its text and its tool calls: whether the
    /// session goes on. A session that is no agent loop takes the text ([`Session::answered`])
    /// and goes on; an agent loop ends at an answer without tool calls, and otherwise takes
    /// the assistant message with the calls and one tool result per call, each
    /// `tool_result_tokens` long.
    pub fn take_answer(&mut self, w: &WorkloadSpec, text: String, calls: Vec<ToolCall>) -> bool {
        let Some(agent) = self.agent else {
            self.answered(w, text);
            return true;
        };
        if calls.is_empty() {
            return false;
        }
        let rt = w.loaded();
        let tok = &*rt.tokenizer.tokenizer;
        let mut new = vec![ChatMessage::assistant_calls(text, &calls)];
        let n = agent.tool_result_tokens.min(MAX_INPUT_TOKENS);
        for (k, call) in calls.iter().enumerate() {
            let key = mix64(mix64(self.index ^ TOOL_RESULT_SALT) ^ u64::from(self.sent));
            let seed = mix64(w.seed ^ key ^ u64::from(self.level)) ^ (k as u64);
            let mut rng = SplitMix64::new(mix64(seed));
            let mut b = TextBuilder::new(tok, &rt.words, n);
            b.push_words(&mut rng, n);
            let (result, _) = b.finish(n, &mut rng);
            new.push(ChatMessage::tool_result(&call.id, result));
        }
        let added = count_messages(tok, &new);
        self.history_tokens = self.history_tokens.saturating_add(added);
        self.history.extend(new);
        true
    }
}

/// The number of turns a session has (`--turns`, a profile's `turns`): 1 to [`MAX_TURNS`].
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

#[cfg(test)]
#[path = "session_tests.rs"]
mod tests;
