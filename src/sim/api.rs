//! The OpenAI request shapes the simulator accepts, their validation, and OpenAI-style JSON
//! errors.

use serde::Deserialize;
use serde_json::Value;

use super::tokens::PromptCounter;
use super::tool_answer::{tool_ask, ToolAsk};

/// Which completion API a request came in on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// `POST /v1/chat/completions`
    Chat,
    /// `POST /v1/completions`
    Completion,
    /// A Hugging Face TGI body (`{"inputs", "parameters"}`), as SageMaker's TGI containers
    /// take it on `/endpoints/{name}/invocations[-response-stream]`.
    Tgi,
}

/// An error answered as `{"error": {"message", "type", "param", "code"}}`.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiError {
    /// HTTP status code.
    pub status: u16,
    /// OpenAI error type, e.g. `NotFoundError`.
    pub kind: &'static str,
    /// Human-readable message.
    pub message: String,
}

impl ApiError {
    /// A 400 `BadRequestError`.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self {
            status: 400,
            kind: "BadRequestError",
            message: message.into(),
        }
    }

    /// The JSON body.
    pub fn body(&self) -> String {
        // written by hand to keep OpenAI's key order (serde_json's map sorts keys)
        format!(
            "{{\"error\":{{\"message\":{},\"type\":{},\"param\":null,\"code\":{}}}}}",
            serde_json::Value::String(self.message.clone()),
            serde_json::Value::String(self.kind.to_string()),
            self.status
        )
    }
}

#[derive(Debug, Deserialize)]
struct StreamOptions {
    #[serde(default)]
    include_usage: bool,
}

#[derive(Debug, Deserialize)]
struct ChatMessage {
    #[serde(default)]
    content: Value,
    /// An assistant message's tool calls: their names and arguments are prompt text.
    #[serde(default)]
    tool_calls: Option<Vec<Value>>,
}

#[derive(Debug, Deserialize)]
struct ChatRequest {
    model: Option<String>,
    messages: Vec<ChatMessage>,
    max_tokens: Option<u64>,
    max_completion_tokens: Option<u64>,
    min_tokens: Option<u64>,
    ignore_eos: Option<bool>,
    stream: Option<bool>,
    stream_options: Option<StreamOptions>,
    #[serde(default)]
    tools: Option<Vec<Value>>,
    #[serde(default)]
    tool_choice: Option<Value>,
}

#[derive(Debug, Deserialize, Default)]
struct TgiParameters {
    max_new_tokens: Option<u64>,
}

#[derive(Debug, Deserialize)]
struct TgiRequest {
    inputs: String,
    #[serde(default)]
    parameters: Option<TgiParameters>,
    stream: Option<bool>,
}

#[derive(Debug, Deserialize)]
struct CompletionRequest {
    model: Option<String>,
    prompt: Value,
    max_tokens: Option<u64>,
    min_tokens: Option<u64>,
    ignore_eos: Option<bool>,
    stream: Option<bool>,
    stream_options: Option<StreamOptions>,
}

/// A validated completion request.
#[derive(Debug, Clone, PartialEq)]
pub struct CompletionParams {
    /// Which API it came in on.
    pub endpoint: Route,
    /// The prompt text (chat: message contents joined by newlines, an assistant message's
    /// tool calls' names and arguments each on a line after its content).
    pub prompt: String,
    /// Prompt length in tokens: the text by the simulator's tokenizer, plus the template
    /// overhead on chat requests.
    pub prompt_tokens: u32,
    /// Template tokens included in `prompt_tokens` (they come first).
    pub template_tokens: u32,
    /// The text's token ids, when the simulator counts with a real tokenizer.
    pub token_ids: Option<Vec<u32>>,
    /// Most tokens to generate.
    pub max_tokens: u32,
    /// Fewest tokens to generate before a natural stop.
    pub min_tokens: u32,
    /// Generate exactly `max_tokens`.
    pub ignore_eos: bool,
    /// Answer as server-sent events.
    pub stream: bool,
    /// Send a usage chunk before `[DONE]` (streaming).
    pub include_usage: bool,
    /// Chat requests with `tools` (and a `tool_choice` other than `none`): the tool an
    /// answer calls.
    pub tool: Option<ToolAsk>,
}

fn content_text(v: &Value, out: &mut String) {
    match v {
        Value::String(s) => out.push_str(s),
        Value::Array(parts) => {
            for p in parts {
                if let Some(t) = p.get("text").and_then(Value::as_str) {
                    out.push_str(t);
                }
            }
        }
        _ => {}
    }
}

/// What a request is checked against.
pub struct Limits<'a> {
    /// The served model name.
    pub model: &'a str,
    /// Longest prompt + output, in tokens.
    pub max_model_len: u32,
    /// KV-cache capacity, in tokens.
    pub kv_cache_tokens: u64,
    /// Counts prompt tokens.
    pub counter: &'a PromptCounter,
    /// Tokens a chat template adds to chat prompts.
    pub template_overhead: u32,
}

/// A chat's messages as one prompt: each message's text (and the names and arguments of the
/// tool calls it carries) on lines of their own.
fn chat_prompt(messages: &[ChatMessage]) -> String {
    let mut prompt = String::new();
    for (i, m) in messages.iter().enumerate() {
        if i > 0 {
            prompt.push('\n');
        }
        content_text(&m.content, &mut prompt);
        for call in m.tool_calls.iter().flatten() {
            for key in ["name", "arguments"] {
                if let Some(t) = call
                    .pointer(&format!("/function/{key}"))
                    .and_then(Value::as_str)
                {
                    prompt.push('\n');
                    prompt.push_str(t);
                }
            }
        }
    }
    prompt
}

/// Parses and validates a request body for `endpoint`, with prompt plus output limited to the
/// model's context and to the KV cache.
pub fn parse_request(
    endpoint: Route,
    body: &[u8],
    limits: &Limits<'_>,
) -> Result<CompletionParams, ApiError> {
    let (model, max_model_len, kv_cache_tokens) =
        (limits.model, limits.max_model_len, limits.kv_cache_tokens);
    let invalid =
        |e: serde_json::Error| ApiError::bad_request(format!("Invalid request body: {e}"));
    let mut tool = None;
    let (req_model, prompt, max_tokens, min_tokens, ignore_eos, stream, opts) = match endpoint {
        Route::Chat => {
            let r: ChatRequest = serde_json::from_slice(body).map_err(invalid)?;
            tool = tool_ask(r.tools.as_deref(), r.tool_choice.as_ref())
                .map_err(ApiError::bad_request)?;
            let prompt = chat_prompt(&r.messages);
            let max = r.max_completion_tokens.or(r.max_tokens);
            let o = (r.ignore_eos, r.stream, r.stream_options);
            (r.model, prompt, max, r.min_tokens, o.0, o.1, o.2)
        }
        Route::Completion => {
            let r: CompletionRequest = serde_json::from_slice(body).map_err(invalid)?;
            let prompt = match &r.prompt {
                Value::String(s) => s.clone(),
                Value::Array(a) if a.len() == 1 && a[0].is_string() => {
                    a[0].as_str().unwrap_or_default().to_string()
                }
                _ => {
                    return Err(ApiError::bad_request(
                        "`prompt` must be a string (or an array of exactly one string)",
                    ))
                }
            };
            let o = (r.ignore_eos, r.stream, r.stream_options);
            (r.model, prompt, r.max_tokens, r.min_tokens, o.0, o.1, o.2)
        }
        Route::Tgi => {
            let r: TgiRequest = serde_json::from_slice(body).map_err(invalid)?;
            let max = r.parameters.unwrap_or_default().max_new_tokens;
            (None, r.inputs, max, None, None, r.stream, None)
        }
    };
    if let Some(m) = req_model {
        if m != model {
            return Err(ApiError {
                status: 404,
                kind: "NotFoundError",
                message: format!("The model `{m}` does not exist."),
            });
        }
    }
    let counted = limits.counter.count(&prompt);
    if counted.tokens == 0 {
        return Err(ApiError::bad_request("The prompt is empty."));
    }
    let template_tokens = match endpoint {
        Route::Chat => limits.template_overhead,
        Route::Completion | Route::Tgi => 0,
    };
    let prompt_tokens = counted.tokens.saturating_add(template_tokens);
    if prompt_tokens >= max_model_len {
        return Err(ApiError::bad_request(format!(
            "The prompt is {prompt_tokens} tokens, more than this model's maximum context \
             length of {max_model_len} tokens."
        )));
    }
    let room = max_model_len - prompt_tokens;
    let max_tokens = match max_tokens {
        None => room,
        Some(0) => return Err(ApiError::bad_request("`max_tokens` must be at least 1.")),
        Some(n) if n > room as u64 => {
            return Err(ApiError::bad_request(format!(
                "`max_tokens` is {n}, but the prompt ({prompt_tokens} tokens) leaves room for \
                 at most {room} in the context of {max_model_len} tokens."
            )))
        }
        Some(n) => n as u32,
    };
    let min_tokens = min_tokens.unwrap_or(0);
    if min_tokens > max_tokens as u64 {
        return Err(ApiError::bad_request(format!(
            "`min_tokens` ({min_tokens}) must be at most `max_tokens` ({max_tokens})."
        )));
    }
    if prompt_tokens as u64 + max_tokens as u64 > kv_cache_tokens {
        return Err(ApiError::bad_request(format!(
            "prompt ({prompt_tokens}) + max_tokens ({max_tokens}) exceeds the KV cache of \
             {kv_cache_tokens} tokens."
        )));
    }
    Ok(CompletionParams {
        endpoint,
        prompt,
        prompt_tokens,
        template_tokens,
        token_ids: counted.ids,
        max_tokens,
        min_tokens: min_tokens as u32,
        ignore_eos: ignore_eos.unwrap_or(false),
        stream: stream.unwrap_or(false),
        include_usage: opts.is_some_and(|o| o.include_usage),
        tool,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_request(
        endpoint: Route,
        body: &[u8],
        model: &str,
        max_model_len: u32,
        kv_cache_tokens: u64,
    ) -> Result<CompletionParams, ApiError> {
        let limits = Limits {
            model,
            max_model_len,
            kv_cache_tokens,
            counter: &PromptCounter::Approx,
            template_overhead: 0,
        };
        super::parse_request(endpoint, body, &limits)
    }

    #[test]
    fn tool_calls_and_tool_results_are_prompt_text() {
        let body = br#"{"messages":[{"role":"user","content":"fix it"},
            {"role":"assistant","content":null,"tool_calls":[{"id":"a","type":"function",
            "function":{"name":"read","arguments":"{\"path\": \"x\"}"}}]},
            {"role":"tool","tool_call_id":"a","content":"fn main"}]}"#;
        let p = parse_request(Route::Chat, body, "m", 100, 1000).unwrap();
        assert_eq!(p.prompt, "fix it\n\nread\n{\"path\": \"x\"}\nfn main");
        // fix it (2), read (1), {"path": (2), "x"} (1), fn main (2)
        assert_eq!(p.prompt_tokens, 8);
    }

    #[test]
    fn chat_request_parses_with_limits() {
        let body = br#"{"model":"m","messages":[{"role":"user","content":"a b c"},
            {"role":"user","content":[{"type":"text","text":"dddd"}]}],
            "max_completion_tokens":5,"stream":true,"stream_options":{"include_usage":true}}"#;
        let p = parse_request(Route::Chat, body, "m", 100, 1000).unwrap();
        assert_eq!((p.prompt_tokens, p.max_tokens, p.stream), (4, 5, true));
        assert!(p.include_usage && !p.ignore_eos);
    }

    #[test]
    fn errors_name_the_problem() {
        let e = parse_request(Route::Chat, b"{oops", "m", 100, 1000).unwrap_err();
        assert_eq!(e.status, 400);
        assert!(e.message.contains("key must be a string"), "{}", e.message);
        let e = parse_request(
            Route::Completion,
            br#"{"model":"x","prompt":"a"}"#,
            "m",
            9,
            99,
        )
        .unwrap_err();
        assert_eq!((e.status, e.kind), (404, "NotFoundError"));
        let e = parse_request(
            Route::Completion,
            br#"{"prompt":"a","max_tokens":99}"#,
            "m",
            9,
            99,
        )
        .unwrap_err();
        assert!(e.message.contains("max_tokens"));
        let body: Value = serde_json::from_str(&e.body()).unwrap();
        assert_eq!(body["error"]["code"], 400);
    }

    #[test]
    #[cfg(feature = "exact-tokenizers")]
    fn a_real_tokenizer_and_the_template_count_on_chat_only() {
        let counter = PromptCounter::load("o200k").unwrap();
        let limits = Limits {
            model: "m",
            max_model_len: 1000,
            kv_cache_tokens: 10_000,
            counter: &counter,
            template_overhead: 37,
        };
        let chat = br#"{"messages":[{"role":"user","content":"hello world"}]}"#;
        let p = super::parse_request(Route::Chat, chat, &limits).unwrap();
        assert_eq!((p.prompt_tokens, p.template_tokens), (39, 37));
        assert_eq!(p.token_ids.as_ref().map(Vec::len), Some(2));
        let completion = br#"{"prompt":"hello world"}"#;
        let p = super::parse_request(Route::Completion, completion, &limits).unwrap();
        assert_eq!((p.prompt_tokens, p.template_tokens), (2, 0));
    }
}
