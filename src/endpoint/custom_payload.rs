//! The `custom` SageMaker payload format (docs/sagemaker.md): a container whose JSON is none of
//! the known ones is described by a request template and JSON pointers.
//!
//! - The **request template** is JSON with placeholders in its strings: `"{prompt}"`,
//!   `"{max_tokens}"` and `"{stream}"`. A string that is exactly one placeholder becomes that
//!   value (the prompt a JSON string, `max_tokens` a number, `stream` a boolean); a placeholder
//!   inside a longer string is replaced in that string's text. Either way the template is
//!   filled as parsed JSON and written out by serde_json, so the prompt is always escaped.
//! - The **text pointer** (RFC 6901, [`serde_json::Value::pointer`]) names the generated text
//!   in each streamed event (or in the whole answer, `--no-stream`); the optional **token
//!   count pointer** names the server's output token count (the last event that has one
//!   wins). Events are split as on the HTTP path: SSE `data:` lines or JSON lines, with its
//!   line cap; a custom stream is complete when its body ends.
//!
//! Plain data and serde_json only, in every build: a config naming a custom format reads the
//! same with or without the `sagemaker` feature.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::openai::{Chunk, ChunkError, Usage};

/// Where the prompt goes.
pub const PROMPT: &str = "{prompt}";
/// Where the output token limit goes.
pub const MAX_TOKENS: &str = "{max_tokens}";
/// Where `true` (streamed) or `false` goes.
pub const STREAM: &str = "{stream}";

/// A custom payload format: the request template and where the answer's pieces are.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct CustomPayload {
    /// The request body with its placeholders.
    pub request_template: Value,
    /// The generated text in each event (or the whole answer).
    pub text_pointer: String,
    /// The server's output token count, where the container gives one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_count_pointer: Option<String>,
}

/// Reads a request template; the error says what would fix it.
pub fn parse_template(text: &str) -> Result<Value, String> {
    let v: Value = serde_json::from_str(text).map_err(|e| {
        format!(
            "the request template is not JSON ({e}): write the body as JSON with \"{PROMPT}\" \
             where the prompt goes, e.g. {{\"inputs\": \"{PROMPT}\", \"max_new_tokens\": \
             \"{MAX_TOKENS}\"}}"
        )
    })?;
    if !mentions(&v, PROMPT) {
        return Err(format!(
            "the request template has no \"{PROMPT}\" placeholder: put \"{PROMPT}\" where the \
             container reads the prompt, e.g. {{\"inputs\": \"{PROMPT}\"}}"
        ));
    }
    Ok(v)
}

/// Checks a JSON pointer's syntax (RFC 6901); the error says what would fix it.
pub fn check_pointer(p: &str) -> Result<(), String> {
    let bad_escape = p
        .match_indices('~')
        .any(|(i, _)| !matches!(p.as_bytes().get(i + 1), Some(b'0' | b'1')));
    if (!p.is_empty() && !p.starts_with('/')) || bad_escape {
        return Err(format!(
            "`{p}` is not a JSON pointer (RFC 6901): start it with / and name each key or array \
             index, e.g. /token/text or /choices/0/text (~1 for a / in a key, ~0 for a ~)"
        ));
    }
    Ok(())
}

/// True when a string anywhere in `v` contains `placeholder`.
fn mentions(v: &Value, placeholder: &str) -> bool {
    match v {
        Value::String(s) => s.contains(placeholder),
        Value::Array(a) => a.iter().any(|x| mentions(x, placeholder)),
        Value::Object(o) => o.values().any(|x| mentions(x, placeholder)),
        _ => false,
    }
}

/// `s` with each placeholder replaced by its text, in one pass (a prompt that itself says
/// `{max_tokens}` stays as it is).
fn fill_text(s: &str, prompt: &str, max_tokens: u32, stream: bool) -> String {
    let mut out = String::with_capacity(s.len() + prompt.len());
    let mut rest = s;
    while let Some(i) = rest.find('{') {
        out.push_str(&rest[..i]);
        let at = &rest[i..];
        if let Some(tail) = at.strip_prefix(PROMPT) {
            out.push_str(prompt);
            rest = tail;
        } else if let Some(tail) = at.strip_prefix(MAX_TOKENS) {
            out.push_str(&max_tokens.to_string());
            rest = tail;
        } else if let Some(tail) = at.strip_prefix(STREAM) {
            out.push_str(if stream { "true" } else { "false" });
            rest = tail;
        } else {
            out.push('{');
            rest = &at[1..];
        }
    }
    out.push_str(rest);
    out
}

/// The template with its placeholders filled, in place.
fn fill(v: &mut Value, prompt: &str, max_tokens: u32, stream: bool) {
    match v {
        Value::String(s) => {
            *v = match s.as_str() {
                PROMPT => Value::String(prompt.to_string()),
                MAX_TOKENS => Value::from(max_tokens),
                STREAM => Value::Bool(stream),
                _ if s.contains('{') => Value::String(fill_text(s, prompt, max_tokens, stream)),
                _ => return,
            }
        }
        Value::Array(a) => a
            .iter_mut()
            .for_each(|x| fill(x, prompt, max_tokens, stream)),
        Value::Object(o) => o
            .values_mut()
            .for_each(|x| fill(x, prompt, max_tokens, stream)),
        _ => {}
    }
}

/// What a JSON value is, for an error message.
fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

impl CustomPayload {
    /// The request body for `prompt`, at most `max_tokens` new tokens, streamed or not.
    pub fn request_body(&self, prompt: &str, max_tokens: u32, stream: bool) -> Vec<u8> {
        let mut body = self.request_template.clone();
        fill(&mut body, prompt, max_tokens, stream);
        // a Value always serializes
        serde_json::to_vec(&body).unwrap_or_default()
    }

    /// One streamed event, or a whole answer: the text at the text pointer and the count at
    /// the token count pointer (absent or `null`: none in this event). `openai_shaped` says
    /// the event had either: a whole answer with neither is not this format.
    pub fn parse(&self, data: &[u8]) -> Result<Chunk<'static>, ChunkError> {
        let v: Value =
            serde_json::from_slice(data).map_err(|e| ChunkError::BadPayload(e.to_string()))?;
        let text = match v.pointer(&self.text_pointer) {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(other) => {
                return Err(ChunkError::BadPayload(format!(
                    "the text pointer {} points at {}, not a string",
                    self.text_pointer,
                    kind(other)
                )))
            }
        };
        let count = match self
            .token_count_pointer
            .as_deref()
            .map(|p| (p, v.pointer(p)))
        {
            None | Some((_, None | Some(Value::Null))) => None,
            Some((p, Some(n))) => Some(n.as_u64().and_then(|n| u32::try_from(n).ok()).ok_or_else(
                || {
                    ChunkError::BadPayload(format!(
                        "the token count pointer {p} points at {}, not a whole number",
                        kind(n)
                    ))
                },
            )?),
        };
        Ok(Chunk {
            openai_shaped: text.is_some() || count.is_some(),
            content: text.filter(|t| !t.is_empty()).map(Cow::Owned),
            reasoning: None,
            tool_calls: Vec::new(),
            usage: count.map(|n| Usage {
                prompt_tokens: None,
                completion_tokens: Some(n),
                completion_tokens_details: None,
                prompt_tokens_details: None,
            }),
            finished: false,
            sim_sent_ns: v.get("sim_sent_ns").and_then(Value::as_u64),
        })
    }
}

#[cfg(test)]
#[path = "custom_payload_tests.rs"]
mod tests;
