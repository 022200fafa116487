//! Chat messages as a request carries them: a role and a text content. A prompt is either one
//! text (sent as a single user message, or as the completions `prompt`) or a message list
//! (a JSONL `messages` record, a multi-turn session's history), roles preserved on the chat
//! API and flattened into one labelled text on the completions API. See `docs/workloads.md`.

use serde::{Deserialize, Serialize};

use super::tokenizer::Tokenizer;
pub use crate::record::ToolCall;

/// One chat message: a role (`system`, `user`, `assistant`, `tool`, or whatever a dataset
/// gives) and its text; an assistant message may carry the tool calls it made (`tool_calls`,
/// the OpenAI array as sent or as a dataset gave it), a `tool` message the id of the call it
/// answers (`tool_call_id`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChatMessage {
    pub role: String,
    pub content: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
}

impl ChatMessage {
    /// A message of `role` with `content`.
    pub fn new(role: &str, content: impl Into<String>) -> ChatMessage {
        ChatMessage {
            role: role.to_string(),
            content: content.into(),
            tool_calls: None,
            tool_call_id: None,
        }
    }

    /// The assistant's answer `content` with the tool `calls` it made, as OpenAI chat takes
    /// them back: `[{"id", "type": "function", "function": {"name", "arguments"}}, ...]`.
    pub fn assistant_calls(content: impl Into<String>, calls: &[ToolCall]) -> ChatMessage {
        let list = calls
            .iter()
            .map(|c| {
                serde_json::json!({
                    "id": c.id,
                    "type": "function",
                    "function": { "name": c.name, "arguments": c.arguments },
                })
            })
            .collect();
        ChatMessage {
            tool_calls: Some(serde_json::Value::Array(list)),
            ..ChatMessage::new("assistant", content)
        }
    }

    /// A `tool` message: the result `content` of the call `id`.
    pub fn tool_result(id: &str, content: impl Into<String>) -> ChatMessage {
        ChatMessage {
            tool_call_id: Some(id.to_string()),
            ..ChatMessage::new("tool", content)
        }
    }

    /// The texts a model reads of this message: its content, and the function names and
    /// arguments of its tool calls.
    pub fn texts(&self) -> impl Iterator<Item = &str> {
        let calls = self
            .tool_calls
            .as_ref()
            .and_then(serde_json::Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|c| c.get("function"))
            .flat_map(|f| {
                ["name", "arguments"]
                    .into_iter()
                    .filter_map(move |k| f.get(k).and_then(serde_json::Value::as_str))
            });
        std::iter::once(self.content.as_str()).chain(calls)
    }

    /// Whether the message is the user's.
    pub fn is_user(&self) -> bool {
        self.role == "user"
    }

    /// Whether the message is a model's answer.
    pub fn is_assistant(&self) -> bool {
        self.role == "assistant"
    }
}

/// What one request sends: one text or a message list.
#[derive(Debug, Clone, Copy)]
pub enum RequestInput<'a> {
    /// A single user message (chat) or the whole `prompt` (completions).
    Text(&'a str),
    /// Messages in order, roles preserved (chat) or flattened (completions).
    Messages(&'a [ChatMessage]),
    /// A SageMaker Data Capture record: its body, sent as captured to a SageMaker endpoint,
    /// and its prompt (`messages` when not empty, else `text`) for an OpenAI-compatible one.
    Captured {
        body: &'a [u8],
        text: &'a str,
        messages: &'a [ChatMessage],
    },
}

impl<'a> RequestInput<'a> {
    /// The prompt alone: a captured record's messages or text, anything else as it is.
    pub fn prompt(self) -> RequestInput<'a> {
        match self {
            RequestInput::Captured { messages, .. } if !messages.is_empty() => {
                RequestInput::Messages(messages)
            }
            RequestInput::Captured { text, .. } => RequestInput::Text(text),
            other => other,
        }
    }
}

/// The completions API's `prompt` for a message list: each message as `Role: content`
/// (role capitalised), separated by blank lines, ending with `Assistant:` so the model
/// answers as the assistant. A list of one user message is sent as its bare content, like a
/// text prompt. The labels are the completions API's stand-in for a chat template: the
/// A chat message content's text, as datasets and captured bodies hold it: a string, or the
/// `text` of each part of a list, joined by newlines; `None` for anything else.
pub fn content_text(v: &serde_json::Value) -> Option<String> {
    use serde_json::Value;
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

/// server counts them, the client does not (see `docs/workloads.md`).
pub fn flatten_for_completions(messages: &[ChatMessage]) -> String {
    if let [only] = messages {
        if only.is_user() {
            return only.content.clone();
        }
    }
    let mut out = String::new();
    for m in messages {
        out.push_str(&capitalised(&m.role));
        out.push_str(": ");
        out.push_str(&m.content);
        out.push_str("\n\n");
    }
    out.push_str("Assistant:");
    out
}

fn capitalised(role: &str) -> String {
    let mut chars = role.chars();
    match chars.next() {
        Some(c) => c.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// The client's input count of a message list: the sum of its contents' counts and its tool
/// calls' names and arguments (roles, ids and template tokens are the server's, as for a text
/// prompt's chat template).
pub fn count_messages(tok: &dyn Tokenizer, messages: &[ChatMessage]) -> u32 {
    messages
        .iter()
        .flat_map(ChatMessage::texts)
        .map(|t| tok.count(t))
        .fold(0u32, u32::saturating_add)
}

/// One user turn of a conversation: the messages it adds before the answer (any system or
/// other messages since the previous answer, ending with the user's message), and the token
/// count of the conversation's own answer to it, when it has one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConversationTurn {
    pub messages: Vec<ChatMessage>,
    /// Tokens of the reference answer (the conversation's assistant messages after this
    /// turn's user message, before the next one), by the run's tokenizer.
    pub reference_answer_tokens: Option<u32>,
}

/// A conversation cut into user turns: each turn ends with a user message; the conversation's
/// assistant messages are left out (a session sends the server's own answers instead) and
/// their lengths kept as reference answers. An assistant message with tool calls is no
/// answer to replace: it stays, as the `tool` messages answering it do, and goes with the
/// next turn's messages (after the server's own answer). Messages after the last user
/// message that are not answers are dropped (nothing asks for them).
pub fn split_turns(tok: &dyn Tokenizer, conversation: &[ChatMessage]) -> Vec<ConversationTurn> {
    let mut turns: Vec<ConversationTurn> = Vec::new();
    let mut pending: Vec<ChatMessage> = Vec::new();
    for m in conversation {
        if m.is_assistant() && m.tool_calls.is_none() {
            if pending.is_empty() {
                if let Some(last) = turns.last_mut() {
                    let n = tok.count(&m.content);
                    let sum = last.reference_answer_tokens.unwrap_or(0).saturating_add(n);
                    last.reference_answer_tokens = Some(sum);
                }
            }
            // an answer before any user message (or between non-user messages) has no
            // question of this session: left out
            continue;
        }
        let user = m.is_user();
        pending.push(m.clone());
        if user {
            turns.push(ConversationTurn {
                messages: std::mem::take(&mut pending),
                reference_answer_tokens: None,
            });
        }
    }
    turns
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::tokenizer::ApproxTokenizer;

    fn m(role: &str, content: &str) -> ChatMessage {
        ChatMessage::new(role, content)
    }

    #[test]
    fn completions_flatten_labels_roles_and_ends_with_the_assistant() {
        let msgs = [
            m("system", "Answer briefly."),
            m("user", "Why is the sky blue?"),
            m("assistant", "Scattering."),
            m("user", "And sunsets?"),
        ];
        assert_eq!(
            flatten_for_completions(&msgs),
            "System: Answer briefly.\n\nUser: Why is the sky blue?\n\nAssistant: Scattering.\n\n\
             User: And sunsets?\n\nAssistant:"
        );
        // one user message is a text prompt
        assert_eq!(
            flatten_for_completions(&[m("user", "hi there")]),
            "hi there"
        );
        assert_eq!(
            flatten_for_completions(&[m("system", "be kind")]),
            "System: be kind\n\nAssistant:"
        );
    }

    #[test]
    fn messages_count_their_contents_only() {
        let tok = ApproxTokenizer;
        // approx: a word of n characters is ceil(n/4) tokens
        let msgs = [m("system", "abcd efgh"), m("user", "abcdefghi")];
        assert_eq!(count_messages(&tok, &msgs), 2 + 3);
    }

    #[test]
    fn a_conversation_splits_at_user_messages_and_keeps_reference_answers() {
        let tok = ApproxTokenizer;
        let conv = [
            m("assistant", "a greeting nobody asked for"),
            m("system", "sys"),
            m("user", "q one"),
            m("assistant", "abcd abcd abcd"),
            m("user", "q two"),
            m("system", "note"),
            m("user", "q three"),
            m("assistant", "abcd"),
            m("assistant", "abcd abcd"),
            m("system", "trailing"),
        ];
        let turns = split_turns(&tok, &conv);
        let want = vec![
            ConversationTurn {
                messages: vec![m("system", "sys"), m("user", "q one")],
                reference_answer_tokens: Some(3),
            },
            ConversationTurn {
                messages: vec![m("user", "q two")],
                reference_answer_tokens: None,
            },
            ConversationTurn {
                messages: vec![m("system", "note"), m("user", "q three")],
                reference_answer_tokens: Some(3),
            },
        ];
        assert_eq!(turns, want);
    }

    #[test]
    fn a_conversations_tool_calls_and_results_stay_with_the_next_turn() {
        let tok = ApproxTokenizer;
        let calls = [ToolCall {
            id: "c1".into(),
            name: "read".into(),
            arguments: "{}".into(),
        }];
        let conv = [
            m("user", "q one"),
            ChatMessage::assistant_calls("", &calls),
            ChatMessage::tool_result("c1", "file text"),
            m("assistant", "abcd abcd"),
            m("user", "q two"),
        ];
        let turns = split_turns(&tok, &conv);
        let want = vec![
            ConversationTurn {
                messages: vec![m("user", "q one")],
                reference_answer_tokens: None,
            },
            ConversationTurn {
                messages: vec![
                    ChatMessage::assistant_calls("", &calls),
                    ChatMessage::tool_result("c1", "file text"),
                    m("user", "q two"),
                ],
                reference_answer_tokens: None,
            },
        ];
        assert_eq!(turns, want);
    }
}
