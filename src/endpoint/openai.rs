//! The OpenAI-compatible wire format: request bodies (chat and completions) and the
//! interpretation of response JSON (stream chunks and whole non-streaming bodies).
//!
//! Chunks are parsed into small borrowed structs (no `serde_json::Value`) because this runs
//! once per streamed chunk for every request in flight.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use super::{Api, EndpointSpec};
use crate::workload::messages::{flatten_for_completions, ChatMessage, RequestInput};

/// One chat message: an assistant message's `tool_calls` and a tool message's
/// `tool_call_id` go as they are; an assistant message with tool calls and no text has a
/// `null` content, as OpenAI sends it.
#[derive(Debug, Serialize)]
struct Message<'a> {
    role: &'a str,
    content: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_calls: Option<&'a serde_json::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_call_id: Option<&'a str>,
}

impl<'a> Message<'a> {
    fn of(m: &'a ChatMessage) -> Message<'a> {
        let calls = m.tool_calls.as_ref();
        Message {
            role: &m.role,
            content: (calls.is_none() || !m.content.is_empty()).then_some(m.content.as_str()),
            tool_calls: calls,
            tool_call_id: m.tool_call_id.as_deref(),
        }
    }
}

#[derive(Debug, Serialize)]
struct StreamOptions {
    include_usage: bool,
}

/// A chat or completions request body.
#[derive(Debug, Serialize)]
struct RequestBody<'a> {
    /// Left out when empty (a SageMaker container serves one model and may not want a name).
    #[serde(skip_serializing_if = "str::is_empty")]
    model: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    messages: Option<Vec<Message<'a>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    prompt: Option<Cow<'a, str>>,
    max_tokens: u32,
    stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    stream_options: Option<StreamOptions>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ignore_eos: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    min_tokens: Option<u32>,
}

/// The JSON request body for `input` with at most `max_tokens` output tokens: a text as one
/// user message (chat) or the `prompt` (completions); a message list as it is (chat) or
/// flattened into one labelled text (completions, see
/// [`crate::workload::messages::flatten_for_completions`]). `tools`, the workload's
/// `"tools":...,"tool_choice":...` serialized once
/// ([`crate::workload::tools::ToolsSpec::body_fields`]), go into chat bodies as they are.
pub fn request_body(
    spec: &EndpointSpec,
    input: RequestInput<'_>,
    max_tokens: u32,
    tools: Option<&[u8]>,
) -> Vec<u8> {
    let (messages, prompt) = match (spec.api, input.prompt()) {
        (Api::Chat, RequestInput::Text(text)) => (
            Some(vec![Message {
                role: "user",
                content: Some(text),
                tool_calls: None,
                tool_call_id: None,
            }]),
            None,
        ),
        (Api::Chat, RequestInput::Messages(list)) => {
            (Some(list.iter().map(Message::of).collect()), None)
        }
        (Api::Completions, RequestInput::Text(text)) => (None, Some(Cow::Borrowed(text))),
        (Api::Completions, RequestInput::Messages(list)) => {
            (None, Some(Cow::Owned(flatten_for_completions(list))))
        }
        (_, RequestInput::Captured { .. }) => unreachable!("prompt() unwraps a capture"),
    };
    let exact = spec.exact_output_length;
    let body = RequestBody {
        model: &spec.model,
        messages,
        prompt,
        max_tokens,
        stream: spec.stream,
        stream_options: spec.stream.then_some(StreamOptions {
            include_usage: true,
        }),
        ignore_eos: exact.then_some(true),
        min_tokens: exact.then_some(max_tokens),
    };
    // Serializing a struct of strings and integers into a Vec cannot fail.
    let mut out = serde_json::to_vec(&body).unwrap_or_default();
    if let (Api::Chat, Some(fields), Some(b'}')) = (spec.api, tools, out.last()) {
        out.pop();
        out.reserve(fields.len() + 2);
        out.push(b',');
        out.extend_from_slice(fields);
        out.push(b'}');
    }
    out
}

/// Token usage as the server reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
pub struct Usage {
    /// Prompt tokens.
    #[serde(default)]
    pub prompt_tokens: Option<u32>,
    /// Output tokens (reasoning included).
    #[serde(default)]
    pub completion_tokens: Option<u32>,
    /// `completion_tokens_details` (OpenAI's reasoning-token count), when sent.
    #[serde(default)]
    pub completion_tokens_details: Option<CompletionDetails>,
    /// `prompt_tokens_details` (the prompt tokens found in the prefix cache), when sent.
    #[serde(default)]
    pub prompt_tokens_details: Option<PromptDetails>,
}

/// `usage.prompt_tokens_details` (OpenAI, vLLM with `--enable-prompt-tokens-details`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
pub struct PromptDetails {
    /// Prompt tokens served from the prefix cache.
    #[serde(default)]
    pub cached_tokens: Option<u32>,
}

/// `usage.completion_tokens_details`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
pub struct CompletionDetails {
    /// Reasoning tokens among `completion_tokens`.
    #[serde(default)]
    pub reasoning_tokens: Option<u32>,
}

/// Deserializes an optional string, borrowing it from the input when it has no escapes
/// (serde copies an `Option<Cow<str>>` otherwise).
fn opt_cow<'de: 'a, 'a, D>(d: D) -> Result<Option<Cow<'a, str>>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    #[derive(Deserialize)]
    struct Borrowed<'a>(#[serde(borrow)] Cow<'a, str>);
    Ok(Option::<Borrowed<'a>>::deserialize(d)?.map(|b| b.0))
}

/// `delta` (streaming chat) or `message` (non-streaming chat).
#[derive(Debug, Deserialize)]
struct Delta<'a> {
    #[serde(borrow, default, deserialize_with = "opt_cow")]
    content: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "opt_cow")]
    reasoning: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "opt_cow")]
    reasoning_content: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    tool_calls: Option<Vec<RawToolCall<'a>>>,
}

/// One entry of `delta.tool_calls` (a fragment) or `message.tool_calls` (a whole call).
#[derive(Debug, Deserialize)]
struct RawToolCall<'a> {
    #[serde(default)]
    index: Option<u32>,
    #[serde(borrow, default, deserialize_with = "opt_cow")]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    function: Option<RawFunction<'a>>,
}

#[derive(Debug, Deserialize)]
struct RawFunction<'a> {
    #[serde(borrow, default, deserialize_with = "opt_cow")]
    name: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "opt_cow")]
    arguments: Option<Cow<'a, str>>,
}

/// A fragment of a tool call: the call's `index` (its position in the list when the server
/// gave none), its `id` (in the call's first fragment), and the name and the piece of its
/// arguments this chunk carries (empty when none).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolFragment<'a> {
    pub index: u32,
    pub id: Cow<'a, str>,
    pub name: Cow<'a, str>,
    pub arguments: Cow<'a, str>,
}

#[derive(Debug, Deserialize)]
struct Choice<'a> {
    #[serde(borrow, default)]
    delta: Option<Delta<'a>>,
    #[serde(borrow, default)]
    message: Option<Delta<'a>>,
    #[serde(borrow, default, deserialize_with = "opt_cow")]
    text: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "opt_cow")]
    finish_reason: Option<Cow<'a, str>>,
}

/// `error` is an object with a `message` (OpenAI, vLLM) or a plain string (TGI).
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum ErrorField<'a> {
    Text(#[serde(borrow)] Cow<'a, str>),
    Object {
        #[serde(borrow, default)]
        message: Option<Cow<'a, str>>,
    },
}

#[derive(Debug, Deserialize)]
struct RawChunk<'a> {
    #[serde(borrow, default)]
    choices: Option<Vec<Choice<'a>>>,
    #[serde(default)]
    usage: Option<Usage>,
    #[serde(borrow, default)]
    error: Option<ErrorField<'a>>,
    #[serde(default)]
    sim_sent_ns: Option<u64>,
}

/// What one JSON chunk (or a whole non-streaming body) says.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Chunk<'a> {
    /// Non-empty answer text (`delta.content`, `message.content` or `text`).
    pub content: Option<Cow<'a, str>>,
    /// Non-empty reasoning text (`reasoning` or `reasoning_content`).
    pub reasoning: Option<Cow<'a, str>>,
    /// Tool-call fragments that carry a name or a piece of arguments (`delta.tool_calls`), or
    /// the whole calls of a non-streaming `message.tool_calls`.
    pub tool_calls: Vec<ToolFragment<'a>>,
    /// `usage`, when present (usually only in the last chunk).
    pub usage: Option<Usage>,
    /// The chunk had a `choices` array or `usage`: it is OpenAI-shaped.
    pub openai_shaped: bool,
    /// A choice carried a non-null `finish_reason`.
    pub finished: bool,
    /// Simulator ground truth: its monotonic send time of this chunk (ns).
    pub sim_sent_ns: Option<u64>,
}

impl Chunk<'_> {
    /// True when the chunk carries tokens (content, reasoning or a tool-call fragment): it
    /// counts for TTFT and is a token event.
    pub fn has_text(&self) -> bool {
        self.content.is_some() || self.reasoning.is_some() || !self.tool_calls.is_empty()
    }
}

/// Why a chunk is not a usable chunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChunkError {
    /// The server reported an error (`{"error": ...}`); its message.
    InStream(String),
    /// Not valid JSON, or not the JSON object we expect; the parser's message.
    BadPayload(String),
}

fn non_empty(s: Option<Cow<'_, str>>) -> Option<Cow<'_, str>> {
    s.filter(|s| !s.is_empty())
}

/// Longest error message kept from a server, in characters.
pub const MAX_MESSAGE_CHARS: usize = 300;

/// `s` cut to at most `max` characters (on a character boundary), with `...` when cut.
pub fn truncate_chars(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}...", &s[..i]),
        None => s.to_string(),
    }
}

/// Interprets one stream chunk or a whole non-streaming body.
pub fn parse_chunk(data: &[u8]) -> Result<Chunk<'_>, ChunkError> {
    let raw: RawChunk<'_> =
        serde_json::from_slice(data).map_err(|e| ChunkError::BadPayload(e.to_string()))?;
    if let Some(err) = raw.error {
        let msg = match err {
            ErrorField::Text(t) => t.into_owned(),
            ErrorField::Object { message } => message
                .map(Cow::into_owned)
                .unwrap_or_else(|| "error object without a message".to_string()),
        };
        return Err(ChunkError::InStream(truncate_chars(
            &msg,
            MAX_MESSAGE_CHARS,
        )));
    }
    let mut chunk = Chunk {
        usage: raw.usage,
        sim_sent_ns: raw.sim_sent_ns,
        openai_shaped: raw.choices.is_some() || raw.usage.is_some(),
        ..Chunk::default()
    };
    if let Some(choice) = raw.choices.and_then(|c| c.into_iter().next()) {
        chunk.finished = choice.finish_reason.is_some();
        if let Some(d) = choice.delta.or(choice.message) {
            chunk.content = non_empty(d.content);
            chunk.reasoning = non_empty(d.reasoning).or(non_empty(d.reasoning_content));
            chunk.tool_calls = tool_fragments(d.tool_calls);
        }
        if chunk.content.is_none() {
            chunk.content = non_empty(choice.text);
        }
    }
    Ok(chunk)
}

/// The fragments of `calls` that carry a name or arguments, each with its index (its
/// position when the server gave none).
fn tool_fragments(calls: Option<Vec<RawToolCall<'_>>>) -> Vec<ToolFragment<'_>> {
    let Some(calls) = calls else {
        return Vec::new();
    };
    calls
        .into_iter()
        .enumerate()
        .filter_map(|(i, c)| {
            let f = c.function?;
            let name = non_empty(f.name).unwrap_or_default();
            let arguments = non_empty(f.arguments).unwrap_or_default();
            (!name.is_empty() || !arguments.is_empty()).then(|| ToolFragment {
                index: c.index.unwrap_or(i as u32),
                id: non_empty(c.id).unwrap_or_default(),
                name,
                arguments,
            })
        })
        .collect()
}

/// The `error.message` (or `error` string, or top-level `message` / `detail` string) of an
/// error response body, if it is JSON of that shape.
pub fn error_message(body: &[u8]) -> Option<String> {
    #[derive(Deserialize)]
    struct ErrorBody<'a> {
        #[serde(borrow, default)]
        error: Option<ErrorField<'a>>,
        #[serde(borrow, default)]
        message: Option<Cow<'a, str>>,
        #[serde(borrow, default)]
        detail: Option<Cow<'a, str>>,
    }
    let b: ErrorBody<'_> = serde_json::from_slice(body).ok()?;
    let msg = match b.error {
        Some(ErrorField::Text(t)) => Some(t),
        Some(ErrorField::Object { message }) => message,
        None => None,
    }
    .or(b.message)
    .or(b.detail)?;
    Some(truncate_chars(&msg, MAX_MESSAGE_CHARS))
}

/// One entry of `GET /models`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct ModelEntry {
    /// The model name to send.
    pub id: String,
    /// Who serves it (`vllm`, `sglang`, `llamacpp`, ...), when the server says.
    #[serde(default)]
    pub owned_by: Option<String>,
}

/// Parses a `GET /models` body: `{"data": [{"id": ..., "owned_by": ...}, ...]}`.
pub fn parse_models(body: &[u8]) -> Option<Vec<ModelEntry>> {
    #[derive(Deserialize)]
    struct Models {
        data: Vec<ModelEntry>,
    }
    serde_json::from_slice::<Models>(body).ok().map(|m| m.data)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(api: Api, stream: bool, exact: bool) -> EndpointSpec {
        EndpointSpec {
            name: "t".into(),
            base_url: "http://h/v1".into(),
            model: "m".into(),
            api,
            stream,
            exact_output_length: exact,
            headers: vec![],
            api_key_env: None,
            sim_timing: false,
            sagemaker: None,
        }
    }

    #[test]
    fn request_bodies() {
        let cases = [
            (
                spec(Api::Chat, true, false),
                r#"{"model":"m","messages":[{"role":"user","content":"hi \"x\""}],"max_tokens":7,"stream":true,"stream_options":{"include_usage":true}}"#,
            ),
            (
                spec(Api::Chat, false, true),
                r#"{"model":"m","messages":[{"role":"user","content":"hi \"x\""}],"max_tokens":7,"stream":false,"ignore_eos":true,"min_tokens":7}"#,
            ),
            (
                spec(Api::Completions, true, true),
                r#"{"model":"m","prompt":"hi \"x\"","max_tokens":7,"stream":true,"stream_options":{"include_usage":true},"ignore_eos":true,"min_tokens":7}"#,
            ),
            (
                spec(Api::Completions, false, false),
                r#"{"model":"m","prompt":"hi \"x\"","max_tokens":7,"stream":false}"#,
            ),
        ];
        for (s, want) in cases {
            let got = request_body(&s, RequestInput::Text("hi \"x\""), 7, None);
            assert_eq!(String::from_utf8(got).unwrap(), want);
        }
    }

    #[test]
    fn tools_go_into_chat_bodies_only() {
        let fields =
            br#""tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":"auto""#;
        let chat = request_body(
            &spec(Api::Chat, true, false),
            RequestInput::Text("hi"),
            7,
            Some(fields),
        );
        assert_eq!(
            String::from_utf8(chat).unwrap(),
            r#"{"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":7,"stream":true,"stream_options":{"include_usage":true},"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":"auto"}"#
        );
        let completions = request_body(
            &spec(Api::Completions, false, false),
            RequestInput::Text("hi"),
            7,
            Some(fields),
        );
        assert_eq!(
            String::from_utf8(completions).unwrap(),
            r#"{"model":"m","prompt":"hi","max_tokens":7,"stream":false}"#
        );
    }

    #[test]
    fn message_lists_keep_their_roles_on_chat_and_are_flattened_on_completions() {
        use crate::workload::messages::ChatMessage;
        let list = [
            ChatMessage::new("system", "Be brief."),
            ChatMessage::new("user", "Why?"),
            ChatMessage::new("assistant", " key slow"),
            ChatMessage::new("user", "Go on."),
        ];
        let chat = request_body(
            &spec(Api::Chat, false, false),
            RequestInput::Messages(&list),
            3,
            None,
        );
        assert_eq!(
            String::from_utf8(chat).unwrap(),
            r#"{"model":"m","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Why?"},{"role":"assistant","content":" key slow"},{"role":"user","content":"Go on."}],"max_tokens":3,"stream":false}"#
        );
        let completions = request_body(
            &spec(Api::Completions, false, false),
            RequestInput::Messages(&list),
            3,
            None,
        );
        assert_eq!(
            String::from_utf8(completions).unwrap(),
            r#"{"model":"m","prompt":"System: Be brief.\n\nUser: Why?\n\nAssistant:  key slow\n\nUser: Go on.\n\nAssistant:","max_tokens":3,"stream":false}"#
        );
    }

    #[test]
    fn tool_calls_and_tool_results_go_as_openai_chat_takes_them() {
        use crate::record::ToolCall;
        let call = |id: &str, name: &str, arguments: &str| ToolCall {
            id: id.into(),
            name: name.into(),
            arguments: arguments.into(),
        };
        let list = [
            ChatMessage::new("user", "Fix it."),
            ChatMessage::assistant_calls(
                "",
                &[
                    call("a", "read", r#"{"path": "x"}"#),
                    call("b", "grep", "{\"q\""),
                ],
            ),
            ChatMessage::tool_result("a", "fn x"),
            ChatMessage::tool_result("b", "none"),
            ChatMessage::assistant_calls("Let me look.", &[call("c", "read", "{}")]),
        ];
        let chat = request_body(
            &spec(Api::Chat, false, false),
            RequestInput::Messages(&list),
            3,
            None,
        );
        assert_eq!(
            String::from_utf8(chat).unwrap(),
            concat!(
                r#"{"model":"m","messages":[{"role":"user","content":"Fix it."},"#,
                r#"{"role":"assistant","content":null,"tool_calls":["#,
                r#"{"function":{"arguments":"{\"path\": \"x\"}","name":"read"},"id":"a","type":"function"},"#,
                r#"{"function":{"arguments":"{\"q\"","name":"grep"},"id":"b","type":"function"}]},"#,
                r#"{"role":"tool","content":"fn x","tool_call_id":"a"},"#,
                r#"{"role":"tool","content":"none","tool_call_id":"b"},"#,
                r#"{"role":"assistant","content":"Let me look.","tool_calls":["#,
                r#"{"function":{"arguments":"{}","name":"read"},"id":"c","type":"function"}]}],"#,
                r#""max_tokens":3,"stream":false}"#
            )
        );
    }

    fn chunk(
        content: Option<&'static str>,
        reasoning: Option<&'static str>,
        usage: Option<(Option<u32>, Option<u32>)>,
        finished: bool,
        sim: Option<u64>,
    ) -> Chunk<'static> {
        Chunk {
            content: content.map(Cow::Borrowed),
            reasoning: reasoning.map(Cow::Borrowed),
            usage: usage.map(|(p, c)| Usage {
                prompt_tokens: p,
                completion_tokens: c,
                completion_tokens_details: None,
                prompt_tokens_details: None,
            }),
            openai_shaped: true,
            finished,
            sim_sent_ns: sim,
            tool_calls: Vec::new(),
        }
    }

    fn frag(index: u32, name: &'static str, arguments: &'static str) -> ToolFragment<'static> {
        frag_id(index, "", name, arguments)
    }

    fn frag_id(
        index: u32,
        id: &'static str,
        name: &'static str,
        arguments: &'static str,
    ) -> ToolFragment<'static> {
        ToolFragment {
            index,
            id: Cow::Borrowed(id),
            name: Cow::Borrowed(name),
            arguments: Cow::Borrowed(arguments),
        }
    }

    #[test]
    fn tool_call_fragments() {
        let with = |tool_calls: Vec<ToolFragment<'static>>, finished: bool| Chunk {
            tool_calls,
            finished,
            ..chunk(None, None, None, false, None)
        };
        let cases: Vec<(&str, &str, Chunk<'static>)> = vec![
            (
                "vLLM's first fragment: id and name, empty arguments",
                r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"id":"chatcmpl-tool-1","type":"function","index":0,"function":{"name":"get_weather","arguments":""}}]}}]}"#,
                with(
                    vec![frag_id(0, "chatcmpl-tool-1", "get_weather", "")],
                    false,
                ),
            ),
            (
                "a piece of arguments",
                r#"{"choices":[{"delta":{"tool_calls":[{"index":1,"function":{"arguments":"{\"city\": "}}]}}]}"#,
                with(vec![frag(1, "", r#"{"city": "#)], false),
            ),
            (
                "an index-only entry carries nothing",
                r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":""}}]},"finish_reason":"tool_calls"}]}"#,
                with(vec![], true),
            ),
            (
                "a whole message's calls without index",
                r#"{"choices":[{"message":{"role":"assistant","content":null,"tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"{}"}},{"id":"b","type":"function","function":{"name":"g","arguments":"{\"x\":1}"}}]},"finish_reason":"tool_calls"}]}"#,
                with(
                    vec![
                        frag_id(0, "a", "f", "{}"),
                        frag_id(1, "b", "g", r#"{"x":1}"#),
                    ],
                    true,
                ),
            ),
        ];
        for (name, input, want) in cases {
            let got = parse_chunk(input.as_bytes()).unwrap();
            assert_eq!(got, want, "{name}");
        }
        let c = parse_chunk(
            br#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"name":"f"}}]}}]}"#,
        )
        .unwrap();
        assert!(c.has_text());
        assert!(matches!(c.tool_calls[0].name, Cow::Borrowed("f")));
    }

    #[test]
    fn chunk_table() {
        let ok = |c: Chunk<'static>| -> Result<Chunk<'static>, ChunkError> { Ok(c) };
        let cases: Vec<(&str, &str, Result<Chunk<'static>, ChunkError>)> = vec![
            (
                "chat content",
                r#"{"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Hello"},"finish_reason":null}]}"#,
                ok(chunk(Some("Hello"), None, None, false, None)),
            ),
            (
                "role-only chunk",
                r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}"#,
                ok(chunk(None, None, None, false, None)),
            ),
            (
                "null content",
                r#"{"choices":[{"delta":{"content":null},"finish_reason":null}]}"#,
                ok(chunk(None, None, None, false, None)),
            ),
            (
                "reasoning",
                r#"{"choices":[{"delta":{"reasoning":"hmm"}}]}"#,
                ok(chunk(None, Some("hmm"), None, false, None)),
            ),
            (
                "reasoning_content",
                r#"{"choices":[{"delta":{"content":null,"reasoning_content":"think"}}]}"#,
                ok(chunk(None, Some("think"), None, false, None)),
            ),
            (
                "completions text",
                r#"{"object":"text_completion","choices":[{"index":0,"text":" world","finish_reason":null}]}"#,
                ok(chunk(Some(" world"), None, None, false, None)),
            ),
            (
                "escaped text is unescaped",
                r#"{"choices":[{"text":"a\nb\u00e9"}]}"#,
                ok(chunk(Some("a\nb\u{e9}"), None, None, false, None)),
            ),
            (
                "finish chunk",
                r#"{"choices":[{"delta":{},"finish_reason":"length"}]}"#,
                ok(chunk(None, None, None, true, None)),
            ),
            (
                "usage chunk",
                r#"{"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":34,"total_tokens":46}}"#,
                ok(chunk(None, None, Some((Some(12), Some(34))), false, None)),
            ),
            (
                "non-streaming chat body",
                r#"{"choices":[{"message":{"role":"assistant","content":"Hi there"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":2}}"#,
                ok(chunk(
                    Some("Hi there"),
                    None,
                    Some((Some(3), Some(2))),
                    true,
                    None,
                )),
            ),
            (
                "sim timing",
                r#"{"choices":[{"delta":{"content":"x"}}],"sim_sent_ns":123456789}"#,
                ok(chunk(Some("x"), None, None, false, Some(123456789))),
            ),
            (
                "in-stream error object",
                r#"{"error":{"message":"CUDA out of memory","type":"InternalServerError","code":500}}"#,
                Err(ChunkError::InStream("CUDA out of memory".into())),
            ),
            (
                "in-stream error string",
                r#"{"error":"Request failed during generation","error_type":"generation"}"#,
                Err(ChunkError::InStream(
                    "Request failed during generation".into(),
                )),
            ),
            (
                "invalid json",
                r#"{"choices":[{"delta":"#,
                Err(ChunkError::BadPayload(
                    "EOF while parsing a value at line 1 column 21".into(),
                )),
            ),
            (
                "not an object",
                r#"42"#,
                Err(ChunkError::BadPayload(
                    "invalid type: integer `42`, expected struct RawChunk at line 1 column 2"
                        .into(),
                )),
            ),
        ];
        for (name, input, want) in cases {
            assert_eq!(parse_chunk(input.as_bytes()), want, "{name}");
        }
    }

    #[test]
    fn unescaped_text_is_borrowed_not_copied() {
        let c = parse_chunk(br#"{"choices":[{"delta":{"content":"plain words"}}]}"#).unwrap();
        assert!(matches!(c.content, Some(Cow::Borrowed("plain words"))));
    }

    #[test]
    fn unrelated_object_is_not_openai_shaped() {
        let c = parse_chunk(br#"{"token":{"text":"x"}}"#).unwrap();
        assert!(!c.openai_shaped);
        assert!(!c.has_text());
    }

    #[test]
    fn invalid_utf8_is_bad_payload() {
        let got = parse_chunk(b"{\"choices\":[{\"text\":\"\xff\"}]}");
        assert!(matches!(got, Err(ChunkError::BadPayload(_))), "{got:?}");
    }

    #[test]
    fn error_messages() {
        let cases: &[(&str, Option<&str>)] = &[
            (
                r#"{"error":{"message":"bad key","type":"auth"}}"#,
                Some("bad key"),
            ),
            (r#"{"error":"overloaded"}"#, Some("overloaded")),
            (
                r#"{"object":"error","message":"The model `x` does not exist.","code":404}"#,
                Some("The model `x` does not exist."),
            ),
            (r#"{"detail":"Not Found"}"#, Some("Not Found")),
            (r#"<html>nope</html>"#, None),
            (r#"{"other":1}"#, None),
        ];
        for (body, want) in cases {
            assert_eq!(error_message(body.as_bytes()).as_deref(), *want, "{body}");
        }
    }

    #[test]
    fn models_list() {
        let m = parse_models(
            br#"{"object":"list","data":[{"id":"a","object":"model","owned_by":"vllm"},{"id":"b"}]}"#,
        )
        .unwrap();
        assert_eq!(
            m,
            vec![
                ModelEntry {
                    id: "a".into(),
                    owned_by: Some("vllm".into())
                },
                ModelEntry {
                    id: "b".into(),
                    owned_by: None
                }
            ]
        );
        assert_eq!(parse_models(b"<html>"), None);
    }

    #[test]
    fn truncation_on_char_boundary() {
        assert_eq!(truncate_chars("h\u{e9}llo", 2), "h\u{e9}...");
        assert_eq!(truncate_chars("abc", 3), "abc");
    }
}
