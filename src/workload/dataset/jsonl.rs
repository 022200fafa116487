//! JSONL single-turn prompts, one JSON object a line, with AIPerf's `single_turn` field names:
//! `text` (or `texts`, a list joined by newlines) or `messages` (OpenAI chat messages, their
//! contents joined by newlines), and optional `output_length` (`output_tokens` is accepted as
//! well). AIPerf's other fields (`timestamp`, `delay`, `role`, `extra`, ...) are allowed and
//! not used. Blank lines are skipped.

use serde::Deserialize;
use serde_json::Value;

use super::{DatasetError, Parsed, RawRecord, RawText};

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
    content: Value,
}

/// A message's text: a string, or the `text` of each part of an array.
fn content_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Array(parts) => Some(
            parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n"),
        ),
        _ => None,
    }
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
        let prompt = if let Some(t) = line.text {
            t
        } else if let Some(ts) = line.texts {
            ts.join("\n")
        } else {
            let mut parts = Vec::new();
            for (k, m) in line.messages.unwrap_or_default().iter().enumerate() {
                match content_text(&m.content) {
                    Some(t) => parts.push(t),
                    None => {
                        return Err(bad(&format!(
                            "message {} has no text content (a string or text parts)",
                            k + 1
                        )))
                    }
                }
            }
            parts.join("\n")
        };
        if prompt.trim().is_empty() {
            return Err(bad("the prompt is empty"));
        }
        if line.output_length == Some(0) {
            return Err(bad("`output_length` must be at least 1"));
        }
        out.push(RawRecord {
            line: n,
            text: RawText::Text(prompt),
            output_tokens: line.output_length,
            answer: None,
        });
    }
    Ok((out, Default::default()))
}
