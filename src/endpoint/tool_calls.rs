//! An answer's tool calls, put together from their fragments (`delta.tool_calls`, by
//! `index`) as the stream reader meets them, and checked at the end of the answer: a call
//! whose arguments do not parse as JSON is a broken tool call.

use super::openai::ToolFragment;
use crate::record::{ExchangeOutcome, ToolCall};

/// One call being put together: its index, id, name and arguments so far.
#[derive(Debug, Default)]
struct Call {
    index: u32,
    id: String,
    name: String,
    arguments: String,
}

/// The tool calls of one answer (usually none or one: a linear search by index).
#[derive(Debug, Default)]
pub(crate) struct ToolCalls {
    calls: Vec<Call>,
}

impl ToolCalls {
    /// Adds a chunk's fragments to their calls.
    pub fn add(&mut self, fragments: &[ToolFragment<'_>]) {
        for f in fragments {
            let call = match self.calls.iter().position(|c| c.index == f.index) {
                Some(i) => &mut self.calls[i],
                None => {
                    self.calls.push(Call {
                        index: f.index,
                        ..Call::default()
                    });
                    self.calls.last_mut().expect("just pushed")
                }
            };
            call.id.push_str(&f.id);
            call.name.push_str(&f.name);
            call.arguments.push_str(&f.arguments);
        }
    }

    /// The calls into `out`: how many, how many are broken (arguments that are not JSON),
    /// their names and arguments as texts for the client's token count, and the calls
    /// themselves (a call the server gave no id gets `call-N`, N its index).
    pub fn finish(&mut self, out: &mut ExchangeOutcome) {
        out.tool_calls = self.calls.len() as u32;
        out.tool_call_errors = self
            .calls
            .iter()
            .filter(|c| !arguments_are_json(&c.arguments))
            .count() as u32;
        out.tool_call_text = self
            .calls
            .iter()
            .flat_map(|c| [c.name.clone(), c.arguments.clone()])
            .filter(|t| !t.is_empty())
            .collect();
        out.tool_call_list = self
            .calls
            .drain(..)
            .map(|c| ToolCall {
                id: if c.id.is_empty() {
                    format!("call-{}", c.index)
                } else {
                    c.id
                },
                name: c.name,
                arguments: c.arguments,
            })
            .collect();
    }
}

/// True when `arguments` is one JSON value (an empty text is not).
pub(crate) fn arguments_are_json(arguments: &str) -> bool {
    serde_json::from_str::<serde::de::IgnoredAny>(arguments).is_ok()
}
