//! A level's workload block: input lengths as aimed at (target), as the client counted them
//! and as the server reported them, output lengths asked for (`max_tokens`) against produced,
//! a warning when they differ by more than 2 %, and the reasoning metrics (time to first
//! output token, reasoning tokens) of models that stream their reasoning. See
//! `docs/workloads.md`.

use serde::{Deserialize, Serialize};

use super::histogram::{Histogram, Stats};
use crate::record::{RequestRecord, TokenSource};

/// Relative difference past which lengths are reported as not matching.
pub const LENGTH_TOLERANCE: f64 = 0.02;

/// Input and output lengths side by side, over a level's successful requests.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct TokenCounts {
    /// Mean input length aimed at (the server's count when calibrated; `None` for text
    /// datasets, whose prompts are what the file holds), tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_target_mean: Option<f64>,
    /// Mean input length by the client's tokenizer, tokens.
    pub input_client_mean: f64,
    /// Mean `usage.prompt_tokens` over the requests whose server reported it, tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_server_mean: Option<f64>,
    /// Requests whose server reported `usage.prompt_tokens`.
    pub input_server_reported: u64,
    /// Mean `max_tokens` asked for, tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_requested_mean: Option<f64>,
    /// Mean `usage.completion_tokens` over the requests whose server reported it, tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_server_mean: Option<f64>,
    /// Requests whose server reported `usage.completion_tokens`.
    pub output_server_reported: u64,
    /// Of those, answers shorter than their `max_tokens`.
    pub output_short_count: u64,
    /// What did not match, one line each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// The workload block of a level summary.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct WorkloadMetrics {
    /// First answer (not reasoning) token minus request start, ms (AIPerf's name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_to_first_output_token: Option<Stats>,
    /// Reasoning tokens per request, for requests that reasoned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_token_count: Option<Stats>,
    /// Answer tokens (output minus reasoning) per request, for requests that reasoned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_token_count: Option<Stats>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_counts: Option<TokenCounts>,
    /// Multi-turn sessions: the metrics of each turn index (`turns.rs`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub turns: Vec<super::turns::TurnMetrics>,
    /// Answers with tool calls and broken tool calls (`tool_tally.rs`).
    #[serde(flatten)]
    pub tools: super::tool_tally::ToolCallMetrics,
}

/// Folds successful requests into the workload block.
#[derive(Debug, Clone)]
pub struct LengthTally {
    ok: u64,
    client_input: u64,
    server_input: (u64, u64),
    requested: (u64, u64),
    server_output: (u64, u64),
    short: u64,
    ttfo: Histogram,
    reasoning: Histogram,
    answer: Histogram,
}

impl Default for LengthTally {
    fn default() -> Self {
        LengthTally {
            ok: 0,
            client_input: 0,
            server_input: (0, 0),
            requested: (0, 0),
            server_output: (0, 0),
            short: 0,
            ttfo: Histogram::latency(),
            reasoning: Histogram::tokens(),
            answer: Histogram::tokens(),
        }
    }
}

fn mean((n, sum): (u64, u64)) -> Option<f64> {
    (n > 0).then(|| sum as f64 / n as f64)
}

impl LengthTally {
    /// Folds one successful request.
    pub fn add(&mut self, rec: &RequestRecord) {
        let d = &rec.detail;
        self.ok += 1;
        self.client_input += u64::from(rec.input_tokens);
        if let Some(n) = d.server_input_tokens {
            self.server_input = (self.server_input.0 + 1, self.server_input.1 + u64::from(n));
        }
        if let Some(m) = d.max_tokens {
            self.requested = (self.requested.0 + 1, self.requested.1 + u64::from(m));
        }
        if let (Some(n), TokenSource::Server) = (rec.output_tokens, rec.output_tokens_source) {
            self.server_output = (
                self.server_output.0 + 1,
                self.server_output.1 + u64::from(n),
            );
            if d.max_tokens.is_some_and(|m| n < m) {
                self.short += 1;
            }
        }
        if let Some(t) = rec.ttfo_ns() {
            self.ttfo.record_ns(t);
        }
        if let (Some(r), Some(n)) = (d.reasoning_tokens, rec.output_tokens) {
            self.reasoning.record_value(f64::from(r));
            self.answer.record_value(f64::from(n.saturating_sub(r)));
        }
    }

    /// The block (token counts without a target or warnings: see [`TokenCounts::check`]).
    pub fn finish(&self) -> WorkloadMetrics {
        WorkloadMetrics {
            time_to_first_output_token: self.ttfo.stats(),
            reasoning_token_count: self.reasoning.stats(),
            output_token_count: self.answer.stats(),
            token_counts: (self.ok > 0).then(|| TokenCounts {
                input_target_mean: None,
                input_client_mean: self.client_input as f64 / self.ok as f64,
                input_server_mean: mean(self.server_input),
                input_server_reported: self.server_input.0,
                output_requested_mean: mean(self.requested),
                output_server_mean: mean(self.server_output),
                output_server_reported: self.server_output.0,
                output_short_count: self.short,
                warnings: Vec::new(),
            }),
            turns: Vec::new(),
            tools: Default::default(),
        }
    }
}

/// `(got - want) / want` when both are known and `want` is positive.
fn rel(got: Option<f64>, want: Option<f64>) -> Option<f64> {
    match (got, want) {
        (Some(g), Some(w)) if w > 0.0 => Some((g - w) / w),
        _ => None,
    }
}

impl TokenCounts {
    /// Sets the target and says what does not match within [`LENGTH_TOLERANCE`]: the server's
    /// input count against the target (or, without one, the client's count), and the
    /// server's output count against `max_tokens`. `calibrated`: prompts were sized by
    /// calibration; `exact_output`: requests asked for exact lengths (`ignore_eos`,
    /// `min_tokens`).
    pub fn check(&mut self, target: Option<f64>, calibrated: bool, exact_output: bool) {
        self.input_target_mean = target;
        self.warnings.clear();
        let (reference, what) = match target {
            Some(t) => (t, "the target"),
            None => (self.input_client_mean, "the client's count"),
        };
        if let Some(d) = rel(self.input_server_mean, Some(reference)) {
            if d.abs() > LENGTH_TOLERANCE {
                let hint = if calibrated {
                    "even after calibration: the server's count is not linear in ours"
                } else if target.is_some() {
                    "--calibrate sizes prompts for the server's count"
                } else {
                    "chat template and tokenizer: a dataset's text is sent as it is"
                };
                self.warnings.push(format!(
                    "input lengths: the server counted {:.1} tokens per request against {:.1} \
                     by {what} ({:+.1} %); {hint}",
                    self.input_server_mean.unwrap_or_default(),
                    reference,
                    d * 100.0
                ));
            }
        }
        if let Some(d) = rel(self.output_server_mean, self.output_requested_mean) {
            if d.abs() > LENGTH_TOLERANCE {
                let hint = if exact_output && self.output_short_count > 0 {
                    "; the server seems to ignore ignore_eos/min_tokens"
                } else if !exact_output {
                    " (--no-exact-length lets the model stop on its own)"
                } else {
                    ""
                };
                self.warnings.push(format!(
                    "output lengths: the server produced {:.1} tokens per request against \
                     {:.1} asked (max_tokens, {:+.1} %), {} of {} answers ended early{hint}",
                    self.output_server_mean.unwrap_or_default(),
                    self.output_requested_mean.unwrap_or_default(),
                    d * 100.0,
                    self.output_short_count,
                    self.output_server_reported
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(server_in: f64, server_out: f64, short: u64) -> TokenCounts {
        TokenCounts {
            input_client_mean: 128.0,
            input_server_mean: Some(server_in),
            input_server_reported: 10,
            output_requested_mean: Some(256.0),
            output_server_mean: Some(server_out),
            output_server_reported: 10,
            output_short_count: short,
            ..TokenCounts::default()
        }
    }

    fn rec(
        input: u32,
        server: Option<u32>,
        out: u32,
        max: u32,
        reasoning: Option<u32>,
    ) -> RequestRecord {
        use crate::record::{ExchangeOutcome, RequestRecord};
        RequestRecord::from_outcome(
            0,
            0,
            0,
            0,
            input,
            ExchangeOutcome {
                first_token_ns: Some(10_000_000),
                first_output_ns: Some(30_000_000),
                last_token_ns: Some(50_000_000),
                end_ns: 50_000_000,
                output_tokens: Some(out),
                server_input_tokens: server,
                max_tokens: Some(max),
                reasoning_tokens: reasoning,
                ..ExchangeOutcome::default()
            },
        )
    }

    #[test]
    fn the_tally_keeps_client_server_and_reasoning_apart() {
        let mut t = LengthTally::default();
        t.add(&rec(100, Some(137), 16, 16, None));
        t.add(&rec(100, Some(137), 10, 16, Some(4)));
        t.add(&rec(100, None, 16, 16, None));
        let m = t.finish();
        let c = m.token_counts.unwrap();
        assert_eq!(c.input_client_mean, 100.0);
        assert_eq!(
            (c.input_server_mean, c.input_server_reported),
            (Some(137.0), 2)
        );
        assert_eq!(
            (c.output_requested_mean, c.output_short_count),
            (Some(16.0), 1)
        );
        assert_eq!(c.output_server_mean, Some(14.0));
        let ttfo = m.time_to_first_output_token.unwrap();
        assert_eq!((ttfo.count, ttfo.avg), (3, 30.0));
        assert_eq!(m.reasoning_token_count.unwrap().avg, 4.0);
        assert_eq!(m.output_token_count.unwrap().avg, 6.0);
        assert_eq!(rec(100, Some(137), 1, 1, None).input_sequence_length(), 137);
    }

    #[test]
    fn matching_lengths_warn_nothing() {
        let mut c = counts(130.0, 256.0, 0);
        c.check(Some(128.0), false, true);
        assert_eq!(c.warnings, Vec::<String>::new());
        assert_eq!(c.input_target_mean, Some(128.0));
    }

    #[test]
    fn template_overhead_and_ignored_ignore_eos_are_named() {
        let mut c = counts(165.0, 180.0, 7);
        c.check(Some(128.0), false, true);
        assert_eq!(
            c.warnings,
            vec![
                "input lengths: the server counted 165.0 tokens per request against 128.0 by \
                 the target (+28.9 %); --calibrate sizes prompts for the server's count"
                    .to_string(),
                "output lengths: the server produced 180.0 tokens per request against 256.0 \
                 asked (max_tokens, -29.7 %), 7 of 10 answers ended early; the server seems \
                 to ignore ignore_eos/min_tokens"
                    .to_string(),
            ]
        );
        let mut c = counts(165.0, 180.0, 7);
        c.check(None, false, false);
        assert!(c.warnings[0].contains("by the client's count (+28.9 %); chat template"));
        assert!(c.warnings[1].ends_with("(--no-exact-length lets the model stop on its own)"));
    }
}
