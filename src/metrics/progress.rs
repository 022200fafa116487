//! The live view of a running level: [`LevelProgress`] is the snapshot a consumer (dashboard
//! or headless printer) shows; [`LiveLevel`] folds engine events into it.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Serialize;

use super::window::RollingRate;
use crate::record::{ErrorKind, RequestRecord};

/// A snapshot of one running level.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LevelProgress {
    /// 0-based position of the level in the run.
    pub index: u32,
    /// Target concurrency.
    pub concurrency: u32,
    /// Requests finished (any outcome, warmup excluded).
    pub done: u64,
    /// Requests planned.
    pub total: u64,
    /// Requests sent and not yet finished.
    pub in_flight: u64,
    /// Successful requests.
    pub ok: u64,
    /// Failed requests by kind (including cancelled).
    pub errors_by_kind: BTreeMap<ErrorKind, u64>,
    /// Output tokens of successful requests so far.
    pub output_tokens: u64,
    /// Output tokens/s over the rolling window.
    pub output_tokens_per_sec: f64,
    /// Output tokens/s per bucket of the rolling window, oldest first (for a sparkline).
    pub output_tps_series: Vec<f64>,
    /// Time since the level started (s).
    pub elapsed_s: f64,
    /// Content chunks received so far by every request of the level, finished or not (the
    /// live token count a distributed level's workers report; not shown).
    #[serde(skip)]
    pub chunks: u64,
    /// Requests sent so far (an open-loop share's; the count its worker reports; not shown).
    #[serde(skip)]
    pub sent: u64,
    /// An open-loop level's rates, queue and recent latencies (the dashboard's time view).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub open: Option<OpenProgress>,
}

/// The live figures of an open-loop level, over the last few seconds.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct OpenProgress {
    /// The rate the schedule offers now (requests/s).
    pub offered_rps: f64,
    /// Requests sent and finished per second, recently.
    pub sent_rps: f64,
    pub done_rps: f64,
    /// Requests due by the schedule and not finished (in flight or not yet sent).
    pub pending: u64,
    /// p50 and p99 of TTFT and end-to-end latency (ms) of recently finished requests,
    /// from their actual send.
    pub ttft_ms: Option<[f64; 2]>,
    pub e2e_ms: Option<[f64; 2]>,
}

impl LevelProgress {
    /// Failed requests of every kind, cancelled included.
    pub fn errors(&self) -> u64 {
        self.errors_by_kind.values().sum()
    }
}

/// Folds sends, token arrivals and finished records of one level into a [`LevelProgress`].
/// Times are ns since level start.
///
/// The live token rate counts output tokens as they arrive: the engine reads a counter of
/// content chunks received so far ([`LiveLevel::on_chunks`]); when a request ends its count is
/// corrected to what the level's final figure counts (the server's token count for a
/// success, nothing for a failure), so the live rate converges on the level's final rate
/// instead of trailing it by a request's length.
#[derive(Debug, Clone)]
pub struct LiveLevel {
    progress: LevelProgress,
    tokens: RollingRate,
    /// Content chunks seen so far through [`LiveLevel::on_chunks`].
    chunks_seen: u64,
}

impl LiveLevel {
    /// Live state for level `index` of `concurrency` workers and `total` requests; the token
    /// rate is averaged over `buckets` buckets of width `bucket`.
    pub fn new(index: u32, concurrency: u32, total: u64, bucket: Duration, buckets: usize) -> Self {
        LiveLevel {
            progress: LevelProgress {
                open: None,
                index,
                concurrency,
                done: 0,
                total,
                in_flight: 0,
                ok: 0,
                errors_by_kind: BTreeMap::new(),
                output_tokens: 0,
                output_tokens_per_sec: 0.0,
                output_tps_series: Vec::new(),
                elapsed_s: 0.0,
                chunks: 0,
                sent: 0,
            },
            tokens: RollingRate::new(bucket, buckets),
            chunks_seen: 0,
        }
    }

    /// `total` content chunks (all requests of the level) have arrived by `now_ns`: the new
    /// ones count as tokens now.
    pub fn on_chunks(&mut self, now_ns: u64, total: u64) {
        let new = total.saturating_sub(self.chunks_seen);
        if new > 0 {
            self.tokens.add(now_ns, new as f64);
            self.chunks_seen = total;
            self.progress.chunks = total;
        }
    }

    /// The level now plans `total` requests (adaptive sampling added a batch).
    pub fn set_total(&mut self, total: u64) {
        self.progress.total = total;
    }

    /// A (non-warmup) request was sent. Warmup requests should not be reported here, as their
    /// records are ignored by [`LiveLevel::on_record`].
    pub fn on_sent(&mut self) {
        self.progress.in_flight += 1;
    }

    /// A request finished: its chunks already counted live are corrected to the tokens the
    /// level's final figure counts (the server's count on success, none on failure), at its
    /// end.
    pub fn on_record(&mut self, rec: &RequestRecord) {
        if !rec.counted() {
            return;
        }
        self.progress.in_flight = self.progress.in_flight.saturating_sub(1);
        self.progress.done += 1;
        let counted = f64::from(rec.content_chunks);
        let correction = match &rec.error {
            Some(e) => {
                *self.progress.errors_by_kind.entry(e.kind).or_insert(0) += 1;
                -counted
            }
            None => {
                self.progress.ok += 1;
                let n = rec.output_tokens.unwrap_or(0);
                self.progress.output_tokens += u64::from(n);
                f64::from(n) - counted
            }
        };
        if correction != 0.0 {
            self.tokens.add(rec.end_ns, correction);
        }
    }

    /// The snapshot at `now_ns` (ns since level start).
    pub fn snapshot(&self, now_ns: u64) -> LevelProgress {
        let mut p = self.progress.clone();
        p.output_tokens_per_sec = self.tokens.rate_per_sec(now_ns);
        p.output_tps_series = self.tokens.series(now_ns);
        p.elapsed_s = now_ns as f64 / 1e9;
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{RequestError, TokenSource};

    fn rec(start_s: u64, end_s: u64, tokens: u32, error: Option<ErrorKind>) -> RequestRecord {
        RequestRecord {
            index: 0,
            worker: 0,
            slot_free_ns: start_s * 1_000_000_000,
            start_ns: start_s * 1_000_000_000,
            first_token_ns: Some(start_s * 1_000_000_000),
            last_token_ns: Some(end_s * 1_000_000_000),
            end_ns: end_s * 1_000_000_000,
            input_tokens: 10,
            output_tokens: Some(tokens),
            output_tokens_source: TokenSource::Server,
            content_chunks: tokens,
            chunk_gaps_ns: vec![],
            error: error.map(|kind| RequestError {
                kind,
                status: None,
                message: String::new(),
            }),
            reconnected: false,
            server_first_sent_ns: None,
            server_last_sent_ns: None,
            warmup: false,
            cooldown: false,
            detail: Default::default(),
        }
    }

    #[test]
    fn folds_sends_and_records() {
        let mut live = LiveLevel::new(1, 2, 10, Duration::from_secs(1), 2);
        live.on_sent();
        live.on_sent();
        live.on_sent();
        // 40 tokens arrive over the two seconds, 20 per second (the record's end corrects
        // nothing: 40 chunks, 40 tokens); a failed request's 3 chunks are taken back
        live.on_chunks(500_000_000, 20);
        live.on_chunks(1_500_000_000, 43);
        live.on_record(&rec(0, 2, 40, None));
        let mut failed = rec(0, 1, 0, Some(ErrorKind::Timeout));
        failed.content_chunks = 3;
        live.on_record(&failed);
        let p = live.snapshot(2_000_000_000);
        assert_eq!((p.index, p.concurrency, p.done, p.total), (1, 2, 2, 10));
        assert_eq!(
            (p.in_flight, p.ok, p.errors(), p.output_tokens),
            (1, 1, 1, 40)
        );
        assert_eq!(p.output_tokens_per_sec, 20.0);
        assert_eq!(p.output_tps_series, vec![20.0, 20.0]);
        assert_eq!(p.elapsed_s, 2.0);
        assert_eq!(p.errors_by_kind.get(&ErrorKind::Timeout), Some(&1));
    }

    #[test]
    fn live_rate_matches_the_final_rate_with_long_requests() {
        // 64 streams of 30 s requests, one token per stream every 100 ms (640 tok/s), each
        // stream's request ending at a different moment: past the first 10 s the rolling
        // rate (20 buckets of 500 ms) reads 640 tok/s within 10 %, long before any request
        // has ended. Counted at the end of each request, it read about a fifth of that.
        let mut live = LiveLevel::new(0, 64, 1000, Duration::from_millis(500), 20);
        let mut total = 0u64;
        for tick in 1..=250u64 {
            let now = tick * 100_000_000;
            total += 64;
            live.on_chunks(now, total);
            if now >= 10_000_000_000 && now % 1_000_000_000 == 0 {
                let r = live.snapshot(now).output_tokens_per_sec;
                assert!((r - 640.0).abs() <= 64.0, "{r} at {now}");
            }
        }
        // the server's usage says each 250-chunk request had 251 tokens: corrected at its end
        let mut r = rec(0, 25, 251, None);
        r.content_chunks = 250;
        live.on_record(&r);
        assert_eq!(live.snapshot(25_000_000_000).output_tokens, 251);
    }
}
