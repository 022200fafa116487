//! ShareGPT conversations: a JSON array of `{"conversations": [{"from", "value"}, ...]}` (or
//! the same records one a line). The first human turn (`human` or `user`) is the prompt; the
//! first answer after it (`gpt`, `chatgpt`, `assistant`, `model`, `bard`, `bing`) is the
//! reference answer, whose token count becomes `max_tokens`. Records without such a pair are
//! skipped and counted; `system` and other turns are ignored. For multi-turn sessions the
//! whole conversation is kept as chat messages (`system`, `user`, `assistant`; other turns
//! left out), each human turn a turn of the session.

use serde::Deserialize;

use super::{DatasetError, Parsed, RawRecord, RawText};
use crate::workload::messages::ChatMessage;

#[derive(Deserialize)]
struct Conversation {
    conversations: Vec<Turn>,
}

#[derive(Deserialize)]
struct Turn {
    from: String,
    value: String,
}

fn is_human(from: &str) -> bool {
    matches!(from, "human" | "user")
}

fn is_answer(from: &str) -> bool {
    matches!(
        from,
        "gpt" | "chatgpt" | "assistant" | "model" | "bard" | "bing"
    )
}

/// The line each top-level array element starts on (1-based), found by scanning for the
/// start of each element outside strings.
fn element_lines(text: &str) -> Vec<usize> {
    let mut lines = Vec::new();
    let (mut depth, mut line) = (0i32, 1usize);
    let (mut in_string, mut escaped) = (false, false);
    for c in text.chars() {
        if c == '\n' {
            line += 1;
        }
        if in_string {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '{' | '[' => {
                if depth == 1 && c == '{' {
                    lines.push(line);
                }
                depth += 1;
            }
            '}' | ']' => depth -= 1,
            _ => {}
        }
    }
    lines
}

/// The conversation as chat messages: human turns as `user`, answers as `assistant`, `system`
/// as it is; other turns (tools, functions) left out.
fn chat_messages(turns: &[Turn]) -> Vec<ChatMessage> {
    turns
        .iter()
        .filter_map(|t| {
            let role = if is_human(&t.from) {
                "user"
            } else if is_answer(&t.from) {
                "assistant"
            } else if t.from == "system" {
                "system"
            } else {
                return None;
            };
            Some(ChatMessage::new(role, t.value.clone()))
        })
        .collect()
}

fn record(
    line: usize,
    c: Conversation,
    keep_conversation: bool,
    skipped: &mut super::BTreeMap<String, u64>,
) -> Option<RawRecord> {
    let turns = &c.conversations;
    let Some(h) = turns.iter().position(|t| is_human(&t.from)) else {
        *skipped.entry("no human turn".into()).or_insert(0) += 1;
        return None;
    };
    let Some(answer) = turns[h + 1..].iter().find(|t| is_answer(&t.from)) else {
        *skipped.entry("no answer".into()).or_insert(0) += 1;
        return None;
    };
    if turns[h].value.trim().is_empty() {
        *skipped.entry("empty prompt".into()).or_insert(0) += 1;
        return None;
    }
    Some(RawRecord {
        line,
        text: RawText::Text(turns[h].value.clone()),
        output_tokens: None,
        answer: Some(answer.value.clone()),
        conversation: keep_conversation.then(|| chat_messages(turns)),
        body: None,
    })
}

/// Reads the conversations of `file`; with `keep_conversations` each record keeps its whole
/// conversation (multi-turn sessions).
pub(super) fn parse(
    file: &str,
    text: &str,
    keep_conversations: bool,
) -> Result<Parsed, DatasetError> {
    let mut out = Vec::new();
    let mut skipped = Default::default();
    if text.trim_start().starts_with('[') {
        let all: Vec<Conversation> =
            serde_json::from_str(text).map_err(|e| DatasetError::json(file, 1, &e))?;
        let lines = element_lines(text);
        for (i, c) in all.into_iter().enumerate() {
            let line = lines.get(i).copied().unwrap_or(1);
            out.extend(record(line, c, keep_conversations, &mut skipped));
        }
    } else {
        for parsed in super::json_lines::<Conversation>(file, text) {
            let (n, c) = parsed?;
            out.extend(record(n, c, keep_conversations, &mut skipped));
        }
    }
    Ok((out, skipped))
}
