//! A level's tool-call figures: the answers that carried tool calls and their share, the
//! calls, and the broken ones (arguments that are not JSON). Counted over the level's
//! answers: its successful requests and the ones failed only for a broken tool call. Absent
//! from the level file when no answer carried a tool call. See `docs/workloads.md`.

use serde::{Deserialize, Serialize};

use crate::record::{ErrorKind, RequestRecord};

/// The tool-call figures of a level (flattened into its workload block).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ToolCallMetrics {
    /// Answers with at least one tool call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_answers: Option<u64>,
    /// `tool_call_answers` / answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_answer_share: Option<f64>,
    /// Tool calls in all answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<u64>,
    /// Tool calls whose arguments did not parse as JSON (broken tool calls).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_errors: Option<u64>,
}

/// Folds a level's requests into [`ToolCallMetrics`].
#[derive(Debug, Clone, Default)]
pub struct ToolTally {
    answers: u64,
    with_calls: u64,
    calls: u64,
    errors: u64,
}

impl ToolTally {
    /// Folds one counted request: an answer when it succeeded or failed only for a broken
    /// tool call.
    pub fn add(&mut self, rec: &RequestRecord) {
        let answered = match &rec.error {
            None => true,
            Some(e) => e.kind == ErrorKind::BadToolCall,
        };
        if !answered {
            return;
        }
        let d = &rec.detail;
        self.answers += 1;
        self.with_calls += u64::from(d.tool_calls > 0);
        self.calls += u64::from(d.tool_calls);
        self.errors += u64::from(d.tool_call_errors);
    }

    /// The level's figures (all absent when no answer carried a tool call).
    pub fn finish(&self) -> ToolCallMetrics {
        if self.calls == 0 {
            return ToolCallMetrics::default();
        }
        ToolCallMetrics {
            tool_call_answers: Some(self.with_calls),
            tool_call_answer_share: Some(self.with_calls as f64 / self.answers as f64),
            tool_calls: Some(self.calls),
            tool_call_errors: Some(self.errors),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::RequestError;

    #[test]
    fn answers_with_calls_and_broken_calls() {
        let rec = |calls: u32, broken: u32, kind: Option<ErrorKind>| {
            let mut r = crate::metrics::fixtures::record(0, 0, 1_000_000);
            r.detail.tool_calls = calls;
            r.detail.tool_call_errors = broken;
            r.error = kind.map(|kind| RequestError {
                kind,
                status: None,
                message: String::new(),
            });
            r
        };
        let mut t = ToolTally::default();
        t.add(&rec(0, 0, None));
        assert_eq!(t.finish(), ToolCallMetrics::default());
        t.add(&rec(2, 1, None));
        t.add(&rec(1, 1, Some(ErrorKind::BadToolCall)));
        // a request that failed otherwise is no answer
        t.add(&rec(0, 0, Some(ErrorKind::Timeout)));
        assert_eq!(
            t.finish(),
            ToolCallMetrics {
                tool_call_answers: Some(2),
                tool_call_answer_share: Some(2.0 / 3.0),
                tool_calls: Some(3),
                tool_call_errors: Some(2),
            }
        );
        let json = serde_json::to_string(&ToolCallMetrics::default()).unwrap();
        assert_eq!(json, "{}");
    }
}
