//! Per-turn metrics of multi-turn sessions: for each turn index (1, 2, ...) the requests that
//! succeeded and failed, their TTFT and end-to-end latency, and their mean input length (the
//! history grows turn by turn). TTFT at turn 1 against turn 5 shows the server's prefix cache
//! at work. Each counted request enters exactly one turn. Agent loops (`--agent`) add the
//! p95 of the input length and the prefix-cache hit rate the server reported
//! (`cached_tokens` / prompt tokens); both absent for other sessions. See
//! `docs/workloads.md`.

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
    /// Agent loops: p95 of the input length of the successful requests, tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_sequence_length_p95: Option<f64>,
    /// Agent loops: prompt tokens the server served from its prefix cache over the prompt
    /// tokens it counted, of the successful requests whose usage said
    /// (`prompt_tokens_details.cached_tokens`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix_cache_hit_rate: Option<f64>,
}

#[derive(Debug, Clone)]
struct TurnTallyEntry {
    ok: u64,
    errors: u64,
    ttft: Histogram,
    e2e: Histogram,
    input_sum: u64,
    /// Agent loops: the input lengths, and the cached and prompt tokens of the requests whose
    /// usage gave a cached count.
    agent: bool,
    inputs: Histogram,
    cached: u64,
    cache_queried: u64,
}

impl Default for TurnTallyEntry {
    fn default() -> Self {
        TurnTallyEntry {
            ok: 0,
            errors: 0,
            ttft: Histogram::latency(),
            e2e: Histogram::latency(),
            input_sum: 0,
            agent: false,
            inputs: Histogram::tokens(),
            cached: 0,
            cache_queried: 0,
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
                if rec.detail.agent {
                    e.agent = true;
                    e.inputs
                        .record_value(f64::from(rec.input_sequence_length()));
                    if let Some(c) = rec.detail.cached_tokens {
                        e.cached += u64::from(c);
                        e.cache_queried += u64::from(rec.input_sequence_length());
                    }
                }
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
                input_sequence_length_p95: e
                    .agent
                    .then(|| e.inputs.stats())
                    .flatten()
                    .map(|s| s.p95),
                prefix_cache_hit_rate: (e.agent && e.cache_queried > 0)
                    .then(|| e.cached as f64 / e.cache_queried as f64),
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

    #[test]
    fn agent_turns_give_the_input_p95_and_the_cache_hit_rate() {
        let agent = |turn: u32, input: u32, cached: Option<u32>| {
            let mut r = rec(Some(turn), 10, input, None);
            r.detail.agent = true;
            r.detail.server_input_tokens = Some(input);
            r.detail.cached_tokens = cached;
            r
        };
        let mut t = TurnTally::default();
        t.add(&agent(1, 1000, Some(0)));
        t.add(&agent(2, 1500, Some(960)));
        t.add(&agent(2, 1500, Some(1040)));
        // a server that did not say counts in the length, not in the hit rate
        t.add(&agent(3, 2000, None));
        let got: Vec<_> = t
            .finish()
            .iter()
            .map(|m| {
                (
                    m.turn,
                    m.input_sequence_length_p95.map(|v| v.round()),
                    m.prefix_cache_hit_rate,
                )
            })
            .collect();
        assert_eq!(
            got,
            vec![
                (1, Some(1000.0), Some(0.0)),
                (2, Some(1500.0), Some(2000.0 / 3000.0)),
                (3, Some(2000.0), None),
            ]
        );
        // other sessions have neither
        let mut plain = TurnTally::default();
        plain.add(&rec(Some(1), 10, 1000, None));
        let m = &plain.finish()[0];
        assert_eq!(
            (m.input_sequence_length_p95, m.prefix_cache_hit_rate),
            (None, None)
        );
    }
}
