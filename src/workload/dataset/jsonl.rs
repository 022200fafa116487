//! JSONL single-turn prompts, one JSON object a line, with AIPerf's `single_turn` field names:
//! `text` (or `texts`, a list joined by newlines) or `messages` (OpenAI chat messages, kept as
//! a message list with their roles; text parts of a content joined by newlines; an assistant
//! message's `tool_calls` and a tool message's `tool_call_id` kept as they are, and a `null`
//! content beside tool calls), and optional `output_length` (`output_tokens` is accepted as
//! well). AIPerf's other fields (`timestamp`, `delay`, `role`, `extra`, ...) are allowed and
//! not used. Blank lines are skipped.

use serde::Deserialize;
use serde_json::Value;

use super::{DatasetError, Parsed, RawRecord, RawText};
use crate::workload::messages::{content_text, ChatMessage};

#[derive(Deserialize)]
struct Line {
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    texts: Option<Vec<String>>,
    #[serde(default)]
    messages: Option<Vec<Message>>,
    #[serde(default, alias = "output_tokens")]
    output_length: Option<u32>,
}

#[derive(Deserialize)]
struct Message {
    #[serde(default)]
    role: Option<String>,
    #[serde(default)]
    content: Value,
    #[serde(default)]
    tool_calls: Option<Value>,
    #[serde(default)]
    tool_call_id: Option<String>,
}

pub(super) fn parse(file: &str, text: &str) -> Result<Parsed, DatasetError> {
    let mut out = Vec::new();
    for parsed in super::json_lines::<Line>(file, text) {
        let (n, line) = parsed?;
        let bad = |m: &str| DatasetError::line(file, n, m);
        let given = [
            line.text.is_some(),
            line.texts.is_some(),
            line.messages.is_some(),
        ];
        match given.iter().filter(|g| **g).count() {
            0 => return Err(bad("the record has no `text`, `texts` or `messages`")),
            1 => {}
            _ => {
                return Err(bad(
                    "give one of `text`, `texts` and `messages`, not several",
                ))
            }
        }
        let text = if let Some(t) = line.text {
            RawText::Text(t)
        } else if let Some(ts) = line.texts {
            RawText::Text(ts.join("\n"))
        } else {
            let mut list = Vec::new();
            for (k, m) in line.messages.unwrap_or_default().into_iter().enumerate() {
                let Some(role) = m.role.filter(|r| !r.trim().is_empty()) else {
                    return Err(bad(&format!(
                        "message {} has no `role` (system, user, assistant, ...)",
                        k + 1
                    )));
                };
                let text = match (content_text(&m.content), &m.tool_calls) {
                    (Some(t), _) => Some(t),
                    (None, Some(_)) if m.content.is_null() => Some(String::new()),
                    (None, _) => None,
                };
                match text {
                    Some(t) => list.push(ChatMessage {
                        tool_calls: m.tool_calls,
                        tool_call_id: m.tool_call_id,
                        ..ChatMessage::new(&role, t)
                    }),
                    None => {
                        return Err(bad(&format!(
                            "message {} has no text content (a string or text parts)",
                            k + 1
                        )))
                    }
                }
            }
            RawText::Messages(list)
        };
        let empty = match &text {
            RawText::Text(t) => t.trim().is_empty(),
            RawText::Messages(list) => list.iter().all(|m| m.content.trim().is_empty()),
            RawText::Blocks { .. } => false,
        };
        if empty {
            return Err(bad("the prompt is empty"));
        }
        if line.output_length == Some(0) {
            return Err(bad("`output_length` must be at least 1"));
        }
        out.push(RawRecord {
            line: n,
            text,
            output_tokens: line.output_length,
            answer: None,
            conversation: None,
            body: None,
        });
    }
    Ok((out, Default::default()))
}
