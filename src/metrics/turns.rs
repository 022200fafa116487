//! Per-turn metrics of multi-turn sessions: for each turn index (1, 2, ...) the requests that
//! succeeded and failed, their TTFT and end-to-end latency, and their mean input length (the
//! history grows turn by turn). TTFT at turn 1 against turn 5 shows the server's prefix cache
//! at work. Each counted request enters exactly one turn. See `docs/workloads.md`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::histogram::{Histogram, Stats};
use crate::record::{ErrorKind, RequestRecord};

/// One turn index's metrics over a level's counted requests.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TurnMetrics {
    /// The turn (1-based).
    pub turn: u32,
    /// Successful requests at this turn.
    pub request_count: u64,
    /// Failed requests at this turn (cancelled ones not counted, as for the level).
    pub error_request_count: u64,
    /// Time to first token, ms, of the successful streamed requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_to_first_token: Option<Stats>,
    /// End-to-end latency, ms, of the successful requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_latency: Option<Stats>,
    /// Mean input length (the server's count where it gave one, else the client's), tokens,
    /// of the successful requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_sequence_length_mean: Option<f64>,
}

#[derive(Debug, Clone)]
struct TurnTallyEntry {
    ok: u64,
    errors: u64,
    ttft: Histogram,
    e2e: Histogram,
    input_sum: u64,
}

impl Default for TurnTallyEntry {
    fn default() -> Self {
        TurnTallyEntry {
            ok: 0,
            errors: 0,
            ttft: Histogram::latency(),
            e2e: Histogram::latency(),
            input_sum: 0,
        }
    }
}

/// Folds counted requests that carry a turn number.
#[derive(Debug, Clone, Default)]
pub struct TurnTally {
    by_turn: BTreeMap<u32, TurnTallyEntry>,
}

impl TurnTally {
    /// Folds one counted request; requests of no session are left out.
    pub fn add(&mut self, rec: &RequestRecord) {
        let Some(turn) = rec.detail.turn else {
            return;
        };
        let e = self.by_turn.entry(turn).or_default();
        match &rec.error {
            Some(err) if err.kind == ErrorKind::Cancelled => {}
            Some(_) => e.errors += 1,
            None => {
                e.ok += 1;
                if let Some(t) = rec.ttft_ns() {
                    e.ttft.record_ns(t);
                }
                e.e2e.record_ns(
                    rec.e2e_ns()
                        .unwrap_or(rec.end_ns.saturating_sub(rec.start_ns)),
                );
                e.input_sum += u64::from(rec.input_sequence_length());
            }
        }
    }

    /// The turns in order; empty when no request carried a turn.
    pub fn finish(&self) -> Vec<TurnMetrics> {
        self.by_turn
            .iter()
            .map(|(turn, e)| TurnMetrics {
                turn: *turn,
                request_count: e.ok,
                error_request_count: e.errors,
                time_to_first_token: e.ttft.stats(),
                request_latency: e.e2e.stats(),
                input_sequence_length_mean: (e.ok > 0).then(|| e.input_sum as f64 / e.ok as f64),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::RequestDetail;
    use crate::record::{RequestError, TokenSource};

    fn rec(turn: Option<u32>, ttft_ms: u64, input: u32, error: Option<ErrorKind>) -> RequestRecord {
        RequestRecord {
            index: 0,
            worker: 0,
            slot_free_ns: 0,
            start_ns: 1_000_000,
            first_token_ns: Some(1_000_000 + ttft_ms * 1_000_000),
            last_token_ns: Some(1_000_000 + (ttft_ms + 10) * 1_000_000),
            end_ns: 1_000_000 + (ttft_ms + 10) * 1_000_000,
            input_tokens: input,
            output_tokens: Some(4),
            output_tokens_source: TokenSource::Server,
            content_chunks: 4,
            chunk_gaps_ns: vec![],
            error: error.map(|kind| RequestError {
                kind,
                status: None,
                message: "x".into(),
            }),
            reconnected: false,
            server_first_sent_ns: None,
            server_last_sent_ns: None,
            warmup: false,
            cooldown: false,
            detail: RequestDetail {
                turn,
                ..RequestDetail::default()
            },
        }
    }

    #[test]
    fn each_request_counts_once_in_its_turn() {
        let mut t = TurnTally::default();
        t.add(&rec(Some(1), 100, 1000, None));
        t.add(&rec(Some(1), 300, 1000, None));
        t.add(&rec(Some(2), 20, 1100, None));
        t.add(&rec(Some(2), 0, 0, Some(ErrorKind::HttpStatus)));
        t.add(&rec(Some(3), 0, 0, Some(ErrorKind::Cancelled)));
        t.add(&rec(None, 999, 5, None));
        let m = t.finish();
        let got: Vec<_> = m
            .iter()
            .map(|m| {
                (
                    m.turn,
                    m.request_count,
                    m.error_request_count,
                    m.time_to_first_token.as_ref().map(|s| s.avg),
                    m.input_sequence_length_mean,
                )
            })
            .collect();
        assert_eq!(
            got,
            vec![
                (1, 2, 0, Some(200.0), Some(1000.0)),
                (2, 1, 1, Some(20.0), Some(1100.0)),
                (3, 0, 0, None, None),
            ]
        );
    }
}
