//! Scripted levels for table and snapshot tests: every request of a level takes the same
//! time, so each statistic (and its interval) is exact.

use super::{LevelAccumulator, LevelMeta, LevelSummary, RequestLimits};
use crate::record::{ErrorKind, RequestError, RequestRecord, TokenSource};

const MS: u64 = 1_000_000;

/// A level of `n` requests at `concurrency` in waves, each taking `e2e_ms` with `ttft_ms` to
/// its first of `tokens` tokens; with `fail = Some((kind, every))` every `every`-th request
/// fails with `kind`.
pub fn level(
    index: u32,
    concurrency: u32,
    n: u64,
    ttft_ms: u64,
    e2e_ms: u64,
    tokens: u32,
    fail: Option<(ErrorKind, u64)>,
) -> LevelSummary {
    let mut acc = LevelAccumulator::new(concurrency, n);
    for i in 0..n {
        let wave = i / concurrency as u64;
        let start = wave * e2e_ms * MS;
        let error = fail
            .filter(|(_, every)| i % every == every - 1)
            .map(|(kind, _)| RequestError {
                kind,
                status: (kind == ErrorKind::HttpStatus).then_some(500),
                message: "scripted".into(),
            });
        let ok = error.is_none();
        acc.add(&RequestRecord {
            index: i,
            worker: (i % concurrency as u64) as u32,
            slot_free_ns: start,
            start_ns: start,
            first_token_ns: ok.then_some(start + ttft_ms * MS),
            last_token_ns: ok.then_some(start + e2e_ms * MS),
            end_ns: start + e2e_ms * MS,
            input_tokens: 1024,
            output_tokens: ok.then_some(tokens),
            output_tokens_source: TokenSource::Server,
            content_chunks: if ok { tokens } else { 0 },
            chunk_gaps_ns: vec![],
            error,
            reconnected: false,
            server_first_sent_ns: None,
            server_last_sent_ns: None,
            warmup: false,
            cooldown: false,
            detail: Default::default(),
        });
    }
    acc.finish(LevelMeta {
        index,
        started_at: "2026-11-29T09:00:00.000Z".into(),
        ended_at: "2026-11-29T09:01:00.000Z".into(),
        ..LevelMeta::default()
    })
}

/// One successful streamed request from `start_ns` to `end_ns` (ns since level start), its
/// first token at the start, 4 tokens.
pub fn record(index: u64, start_ns: u64, end_ns: u64) -> RequestRecord {
    RequestRecord {
        index,
        worker: index as u32,
        slot_free_ns: start_ns,
        start_ns,
        first_token_ns: Some(start_ns),
        last_token_ns: Some(end_ns),
        end_ns,
        input_tokens: 16,
        output_tokens: Some(4),
        output_tokens_source: TokenSource::Server,
        content_chunks: 4,
        chunk_gaps_ns: vec![],
        error: None,
        reconnected: false,
        server_first_sent_ns: None,
        server_last_sent_ns: None,
        warmup: false,
        cooldown: false,
        detail: Default::default(),
    }
}

/// A level at `concurrency` whose requests, in start order, took `(ttft_ms, e2e_ms)` each
/// (16 tokens), counted against `limits` as a run with those SLAs counts them. Rounds start
/// 10 s apart, so start order is the order given.
pub fn timed_level(concurrency: u32, limits: RequestLimits, times: &[(f64, f64)]) -> LevelSummary {
    let mut acc = LevelAccumulator::new(concurrency, times.len() as u64).with_goodput(limits);
    for (i, (ttft, e2e)) in times.iter().enumerate() {
        let i = i as u64;
        let start = i / concurrency as u64 * 10_000 * MS + i % concurrency as u64;
        let at = |ms: f64| start + (ms * 1e6) as u64;
        acc.add(&RequestRecord {
            worker: (i % concurrency as u64) as u32,
            slot_free_ns: start,
            first_token_ns: Some(at(*ttft)),
            last_token_ns: Some(at(*e2e)),
            input_tokens: 1024,
            output_tokens: Some(16),
            content_chunks: 16,
            ..record(i, start, at(*e2e))
        });
    }
    acc.finish(LevelMeta {
        index: 1,
        started_at: "2026-12-06T02:18:52.000Z".into(),
        ended_at: "2026-12-06T02:19:52.000Z".into(),
        ..LevelMeta::default()
    })
}
