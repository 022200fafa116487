//! What a captured JSON body says, in the formats rightsize speaks (`docs/open-loop.md`, "SageMaker
//! Data Capture"): a request's prompt (OpenAI chat `messages`, completions `prompt`, TGI
//! `inputs`) and the output length it asked for (`max_completion_tokens`, `max_tokens`, TGI
//! `parameters.max_new_tokens`); a response's output length (`usage.completion_tokens`) or,
//! without usage, its text (chat `choices[0].message.content`, completions
//! `choices[0].text`, TGI `generated_text`, alone or as the first of a list) for the run's
//! tokenizer to count.

use serde_json::Value;

use crate::workload::messages::{content_text, ChatMessage};

/// A request body's prompt.
#[derive(Debug, Clone, PartialEq)]
pub enum CapturedPrompt {
    /// A completions `prompt` or a TGI `inputs`.
    Text(String),
    /// Chat messages, roles preserved.
    Messages(Vec<ChatMessage>),
}

/// What a captured request asked for.
#[derive(Debug, Clone, PartialEq)]
pub struct CapturedRequest {
    pub prompt: CapturedPrompt,
    /// `max_completion_tokens`, `max_tokens` or `parameters.max_new_tokens`.
    pub max_tokens: Option<u32>,
}

/// What a captured response says of its length.
#[derive(Debug, Clone, PartialEq)]
pub enum CapturedOutput {
    /// The server's count (`usage.completion_tokens`).
    Tokens(u32),
    /// The generated text, to be counted by the run's tokenizer.
    Text(String),
}

/// A non-negative integer field, or why not (`name` is its path, for the message).
fn count(v: &Value, name: &str) -> Result<Option<u32>, String> {
    match v {
        Value::Null => Ok(None),
        v => v
            .as_u64()
            .and_then(|n| u32::try_from(n).ok())
            .map(Some)
            .ok_or_else(|| format!("`{name}` is {v}, not a token count")),
    }
}

/// The prompt and output length of a request body; `Ok(None)` when the body is JSON of no
/// format rightsize speaks (no `messages`, `prompt` or `inputs`), `Err` naming the field when
/// one of them is malformed.
pub fn read_request(body: &Value) -> Result<Option<CapturedRequest>, String> {
    let prompt = if let Some(list) = body.get("messages") {
        let list = list
            .as_array()
            .ok_or_else(|| format!("`messages` is {list}, not a list"))?;
        let mut out = Vec::with_capacity(list.len());
        for (k, m) in list.iter().enumerate() {
            let role = m
                .get("role")
                .and_then(Value::as_str)
                .filter(|r| !r.trim().is_empty())
                .ok_or_else(|| format!("`messages[{k}].role` is missing"))?;
            let text = content_text(m.get("content").unwrap_or(&Value::Null))
                .ok_or_else(|| format!("`messages[{k}].content` has no text"))?;
            out.push(ChatMessage::new(role, text));
        }
        CapturedPrompt::Messages(out)
    } else if let Some(p) = body.get("prompt") {
        match p {
            Value::String(s) => CapturedPrompt::Text(s.clone()),
            Value::Array(a) if a.len() == 1 && a[0].is_string() => {
                CapturedPrompt::Text(a[0].as_str().unwrap_or_default().to_string())
            }
            _ => return Err(format!("`prompt` is {p}, not a string")),
        }
    } else if let Some(i) = body.get("inputs") {
        match i {
            Value::String(s) => CapturedPrompt::Text(s.clone()),
            _ => return Err(format!("`inputs` is {i}, not a string")),
        }
    } else {
        return Ok(None);
    };
    let null = Value::Null;
    let max_tokens = match count(
        body.get("max_completion_tokens").unwrap_or(&null),
        "max_completion_tokens",
    )? {
        Some(n) => Some(n),
        None => match count(body.get("max_tokens").unwrap_or(&null), "max_tokens")? {
            Some(n) => Some(n),
            None => count(
                body.pointer("/parameters/max_new_tokens").unwrap_or(&null),
                "parameters.max_new_tokens",
            )?,
        },
    };
    Ok(Some(CapturedRequest { prompt, max_tokens }))
}

/// The output length a response body gives: the server's count first, else its text;
/// `None` when it holds neither (an error body, a format rightsize does not speak).
pub fn read_response(body: &Value) -> Option<CapturedOutput> {
    if let Some(n) = body
        .pointer("/usage/completion_tokens")
        .and_then(Value::as_u64)
        .and_then(|n| u32::try_from(n).ok())
    {
        return Some(CapturedOutput::Tokens(n));
    }
    let first = match body {
        Value::Array(list) => list.first()?,
        v => v,
    };
    [
        "/choices/0/message/content",
        "/choices/0/text",
        "/generated_text",
    ]
    .iter()
    .find_map(|p| first.pointer(p).and_then(Value::as_str))
    .map(|t| CapturedOutput::Text(t.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn requests_in_each_format() {
        let text = |s: &str| CapturedPrompt::Text(s.into());
        let table: Vec<(Value, Option<CapturedRequest>)> = vec![
            (
                json!({"messages": [{"role": "system", "content": "be brief"},
                    {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}],
                    "max_tokens": 40}),
                Some(CapturedRequest {
                    prompt: CapturedPrompt::Messages(vec![
                        ChatMessage::new("system", "be brief"),
                        ChatMessage::new("user", "a\nb"),
                    ]),
                    max_tokens: Some(40),
                }),
            ),
            (
                json!({"messages": [{"role": "user", "content": "hi"}], "max_tokens": 9,
                    "max_completion_tokens": 12}),
                Some(CapturedRequest {
                    prompt: CapturedPrompt::Messages(vec![ChatMessage::new("user", "hi")]),
                    max_tokens: Some(12),
                }),
            ),
            (
                json!({"prompt": "once upon", "max_tokens": 7}),
                Some(CapturedRequest {
                    prompt: text("once upon"),
                    max_tokens: Some(7),
                }),
            ),
            (
                json!({"prompt": ["only one"]}),
                Some(CapturedRequest {
                    prompt: text("only one"),
                    max_tokens: None,
                }),
            ),
            (
                json!({"inputs": "tgi text", "parameters": {"max_new_tokens": 64}}),
                Some(CapturedRequest {
                    prompt: text("tgi text"),
                    max_tokens: Some(64),
                }),
            ),
            (json!({"instances": [[1, 2, 3]]}), None),
        ];
        for (body, want) in table {
            assert_eq!(read_request(&body).unwrap(), want, "{body}");
        }
    }

    #[test]
    fn malformed_requests_name_the_field() {
        let table = [
            (
                json!({"messages": "hi"}),
                "`messages` is \"hi\", not a list",
            ),
            (
                json!({"messages": [{"content": "x"}]}),
                "`messages[0].role` is missing",
            ),
            (
                json!({"messages": [{"role": "user", "content": 3}]}),
                "`messages[0].content` has no text",
            ),
            (
                json!({"prompt": ["a", "b"]}),
                "`prompt` is [\"a\",\"b\"], not a string",
            ),
            (json!({"inputs": 5}), "`inputs` is 5, not a string"),
            (
                json!({"prompt": "x", "max_tokens": -1}),
                "`max_tokens` is -1, not a token count",
            ),
            (
                json!({"inputs": "x", "parameters": {"max_new_tokens": "many"}}),
                "`parameters.max_new_tokens` is \"many\", not a token count",
            ),
        ];
        for (body, want) in table {
            assert_eq!(read_request(&body).unwrap_err(), want, "{body}");
        }
    }

    #[test]
    fn responses_give_a_count_or_a_text() {
        let text = |s: &str| Some(CapturedOutput::Text(s.into()));
        let table = [
            (
                json!({"choices": [{"message": {"content": "long answer"}}],
                    "usage": {"prompt_tokens": 5, "completion_tokens": 17}}),
                Some(CapturedOutput::Tokens(17)),
            ),
            (
                json!({"choices": [{"message": {"role": "assistant", "content": "chat"}}]}),
                text("chat"),
            ),
            (
                json!({"choices": [{"text": "completion"}]}),
                text("completion"),
            ),
            (json!({"generated_text": "tgi"}), text("tgi")),
            (json!([{"generated_text": "tgi list"}]), text("tgi list")),
            (json!({"error": "overloaded"}), None),
            (json!([]), None),
        ];
        for (body, want) in table {
            assert_eq!(read_response(&body), want, "{body}");
        }
    }
}
