//! The live view of a running level: [`LevelProgress`] is the snapshot a consumer (dashboard
//! or headless printer) shows; [`LiveLevel`] folds engine events into it.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::live_figures::{LiveFigures, LiveTally};
use super::window::RollingRate;
use crate::record::{ErrorKind, RequestRecord};

/// A snapshot of one running level.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
    /// Percentiles, requests/s, the latest error and a latency histogram of the level's
    /// finished requests so far ([`LiveFigures`]; boxed, so engine events stay small).
    pub live: Box<LiveFigures>,
}

/// The live figures of an open-loop level, over the last few seconds.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
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
///
/// The latency figures ([`LiveFigures`]) count each finished request at its end; a caller
/// whose records run on another clock than its snapshots says how far apart the two are
/// ([`LiveLevel::set_record_offset`]).
#[derive(Debug, Clone)]
pub struct LiveLevel {
    progress: LevelProgress,
    tokens: RollingRate,
    /// Content chunks seen so far through [`LiveLevel::on_chunks`].
    chunks_seen: u64,
    figures: LiveTally,
    /// Added to a record's `end_ns` to put it on the snapshots' clock.
    record_offset_ns: i64,
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
                live: Box::default(),
            },
            tokens: RollingRate::new(bucket, buckets),
            chunks_seen: 0,
            figures: LiveTally::new(RollingRate::new(bucket, buckets)),
            record_offset_ns: 0,
        }
    }

    /// Records' times are `offset_ns` behind the snapshots' clock (a distributed level's:
    /// its records are on the level's timeline, its snapshots count from when the
    /// controller began it). 0 unless set.
    pub fn set_record_offset(&mut self, offset_ns: i64) {
        self.record_offset_ns = offset_ns;
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
        let end_ns = rec.end_ns.saturating_add_signed(self.record_offset_ns);
        self.figures.add(rec, end_ns);
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
            self.tokens.add(end_ns, correction);
        }
    }

    /// The snapshot at `now_ns` (ns since level start).
    pub fn snapshot(&self, now_ns: u64) -> LevelProgress {
        let mut p = self.progress.clone();
        p.output_tokens_per_sec = self.tokens.rate_per_sec(now_ns);
        p.output_tps_series = self.tokens.series(now_ns);
        p.elapsed_s = now_ns as f64 / 1e9;
        p.live = Box::new(self.figures.figures(now_ns));
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::live_figures::{LatencyBucket, Percentiles, LIVE_BUCKETS};
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

    const MS: u64 = 1_000_000;

    /// A success started at `start_ms` with TTFT `ttft_ms`, e2e `e2e_ms` and 11 tokens.
    fn ok_at(start_ms: u64, ttft_ms: u64, e2e_ms: u64) -> RequestRecord {
        let mut r = rec(0, 0, 11, None);
        r.start_ns = start_ms * MS;
        r.slot_free_ns = r.start_ns;
        r.first_token_ns = Some((start_ms + ttft_ms) * MS);
        r.last_token_ns = Some((start_ms + e2e_ms) * MS);
        r.end_ns = (start_ms + e2e_ms) * MS;
        r
    }

    /// A failure of `kind` that ended at `end_ms`, after a latency no success comes near.
    fn failed_at(end_ms: u64, kind: ErrorKind, status: Option<u16>, msg: &str) -> RequestRecord {
        let mut r = rec(0, 0, 0, Some(kind));
        r.start_ns = 0;
        r.first_token_ns = Some(MS);
        r.last_token_ns = Some(end_ms * MS);
        r.end_ns = end_ms * MS;
        let e = r.error.as_mut().unwrap();
        e.status = status;
        e.message = msg.into();
        r
    }

    /// Ten successes (request `i` starts at `(i - 1) * 500` ms, TTFT `i` ms, e2e `10 i` ms,
    /// 11 tokens, so ITL `0.9 i` ms), three failures fed out of order and a cancelled one,
    /// a warmup and a cooldown request that the figures leave out.
    fn level_records() -> Vec<RequestRecord> {
        let mut out = Vec::new();
        let mut warm = failed_at(9_900, ErrorKind::Connect, None, "warmup");
        warm.warmup = true;
        out.push(warm);
        for i in 1..=10u64 {
            out.push(ok_at((i - 1) * 500, i, 10 * i));
            if i == 4 {
                // the latest failure by end time comes before an earlier one
                out.push(failed_at(
                    5_200,
                    ErrorKind::HttpStatus,
                    Some(503),
                    &format!("overloaded\n{}", "x".repeat(300)),
                ));
                out.push(failed_at(5_100, ErrorKind::Timeout, None, "timed out"));
            }
        }
        out.push(failed_at(2_000, ErrorKind::BrokenStream, None, "reset"));
        out.push(failed_at(5_400, ErrorKind::Cancelled, None, "stopped"));
        let mut cool = ok_at(4_000, 900, 5_000);
        cool.cooldown = true;
        out.push(cool);
        out
    }

    fn p(p50: f64, p95: f64, p99: f64) -> Option<Percentiles> {
        Some(Percentiles { p50, p95, p99 })
    }

    #[test]
    fn live_figures_of_a_known_level() {
        // Percentiles are read as the level reads them: nearest rank ceil(q n) (n = 10: p50
        // is the 5th value, p95 and p99 the 10th), at the upper edge of its HDR bucket (1 µs
        // ticks, 3 significant figures: 4 µs wide from 4.096 ms, 8 from 8.192, 32 from
        // 32.768) clamped to the exact min and max.
        let mut live = LiveLevel::new(0, 4, 10, Duration::from_secs(1), 2);
        for r in level_records() {
            live.on_record(&r);
        }
        let f = live.snapshot(5_500 * MS).live;
        assert_eq!(f.ttft_ms, p(5.003, 10.0, 10.0));
        assert_eq!(f.itl_ms, p(4.503, 9.0, 9.0));
        assert_eq!(f.e2e_ms, p(50.015, 100.0, 100.0));
        // successes ending in the window's buckets 3..=5 s (3.07, 3.58, 4.09, 4.6 s) over
        // the 2.5 s from 3 s to now; failures do not count
        assert_eq!(f.requests_per_sec, 1.6);
        let e = f.last_error.expect("a failure");
        assert_eq!(
            (e.kind, e.status, e.at_s),
            (ErrorKind::HttpStatus, Some(503), 5.2)
        );
        let want = format!("overloaded {}...", "x".repeat(189));
        assert_eq!((e.message.chars().count(), e.message), (203, want));
        // bars from 10 to 100 ms, edges 10 * 10^(i / 16); each value read as its
        // percentile would be (20 ms reads 20.015, in the 5th bar, whose edge is 20.54)
        let edges: Vec<f64> = f.e2e_histogram.iter().map(|b| b.upper_ms).collect();
        assert_eq!(edges.len(), LIVE_BUCKETS);
        for (i, edge) in edges.iter().enumerate() {
            let want = 10.0 * 10f64.powf((i + 1) as f64 / 16.0);
            assert!((edge - want).abs() < 1e-9, "edge {i}: {edge}");
        }
        assert_eq!(edges[15], 100.0);
        let counts: Vec<u64> = f.e2e_histogram.iter().map(|b| b.count).collect();
        assert_eq!(
            counts,
            [1, 0, 0, 0, 1, 0, 0, 1, 0, 1, 0, 1, 1, 1, 1, 2],
            "{edges:?}"
        );
        assert_eq!(counts.iter().sum::<u64>(), live.snapshot(5_500 * MS).ok);
    }

    #[test]
    fn live_percentiles_are_the_levels_final_ones() {
        let records = level_records();
        let mut live = LiveLevel::new(0, 4, 10, Duration::from_secs(1), 2);
        let mut acc = crate::metrics::LevelAccumulator::new(4, 10);
        for r in &records {
            live.on_record(r);
            acc.add(r);
        }
        let f = live.snapshot(6_000 * MS).live;
        let level = acc.finish(crate::metrics::LevelMeta::default());
        let three = |s: Option<crate::metrics::Stats>| s.map(|s| (s.p50, s.p95, s.p99));
        let live3 = |p: Option<Percentiles>| p.map(|p| (p.p50, p.p95, p.p99));
        assert_eq!(live3(f.ttft_ms), three(level.time_to_first_token));
        assert_eq!(live3(f.itl_ms), three(level.inter_token_latency));
        assert_eq!(live3(f.e2e_ms), three(level.request_latency));
        // the message is the one the level file keeps, cut
        assert!(level
            .error_summary
            .iter()
            .any(|e| e.error_details.message.starts_with("overloaded\nxxx")));
    }

    #[test]
    fn live_figures_before_and_at_the_edges() {
        let mut live = LiveLevel::new(0, 1, 10, Duration::from_secs(1), 2);
        assert_eq!(*live.snapshot(MS).live, LiveFigures::default());
        // failures only: no latency, no rate, the error shown
        live.on_record(&failed_at(
            300,
            ErrorKind::Connect,
            None,
            "connection refused",
        ));
        let f = live.snapshot(500 * MS).live;
        assert_eq!((f.ttft_ms, f.e2e_ms, f.requests_per_sec), (None, None, 0.0));
        assert!(f.e2e_histogram.is_empty());
        assert_eq!(f.last_error.unwrap().message, "connection refused");
        // one token: no ITL; every request alike: one bar
        for _ in 0..3 {
            let mut r = ok_at(0, 2, 40);
            r.output_tokens = Some(1);
            live.on_record(&r);
        }
        let f = live.snapshot(500 * MS).live;
        assert_eq!(f.itl_ms, None);
        assert_eq!(f.e2e_ms, p(40.0, 40.0, 40.0));
        assert_eq!(
            f.e2e_histogram,
            vec![LatencyBucket {
                upper_ms: 40.0,
                count: 3
            }]
        );
    }

    #[test]
    fn records_on_another_clock_count_where_the_snapshots_are() {
        // a distributed level's records run 60 s ahead of its snapshots' clock (a level
        // measured again): placed back, they count in the window
        let mut live = LiveLevel::new(0, 1, 10, Duration::from_secs(1), 2);
        live.set_record_offset(-60_000 * (MS as i64));
        for i in 0..4u64 {
            live.on_record(&ok_at(60_000 + i * 250, 5, 100));
        }
        assert_eq!(live.snapshot(2_000 * MS).live.requests_per_sec, 2.0);
    }
}
