//! Table tests for the level reducer: hand-made schedules with exact expected values.

use super::*;
use crate::record::Interval;
use crate::record::RequestError;

const MS: u64 = 1_000_000;

/// A successful streamed request: times in ms since level start.
fn ok(index: u64, worker: u32, start: u64, first: u64, last: u64, tokens: u32) -> RequestRecord {
    RequestRecord {
        index,
        worker,
        slot_free_ns: start * MS,
        start_ns: start * MS,
        first_token_ns: Some(first * MS),
        last_token_ns: Some(last * MS),
        end_ns: last * MS,
        input_tokens: 100,
        output_tokens: Some(tokens),
        output_tokens_source: TokenSource::Server,
        content_chunks: tokens,
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

fn failed(index: u64, worker: u32, start: u64, end: u64, kind: ErrorKind) -> RequestRecord {
    RequestRecord {
        first_token_ns: None,
        last_token_ns: None,
        end_ns: end * MS,
        output_tokens: None,
        error: Some(RequestError {
            kind,
            status: (kind == ErrorKind::HttpStatus).then_some(500),
            message: format!("{kind} happened"),
        }),
        ..ok(index, worker, start, start, start, 0)
    }
}

fn summarize(concurrency: u32, recs: &[RequestRecord]) -> LevelSummary {
    let mut acc = LevelAccumulator::new(concurrency, recs.len() as u64);
    for r in recs {
        acc.add(r);
    }
    acc.finish(LevelMeta {
        index: 3,
        started_at: "2026-11-29T08:30:12Z".into(),
        ended_at: "2026-11-29T08:30:14Z".into(),
        partial: false,
        lag: None,
        ..LevelMeta::default()
    })
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

/// Within hdrhistogram's quantization at 3 significant figures.
fn near(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-3 * b.abs()
}

/// Two workers, fully busy; one HTTP 500. Level lasts 2 s, steady window [0, 1.5 s].
fn two_busy_workers() -> Vec<RequestRecord> {
    vec![
        ok(0, 0, 0, 100, 1000, 11),
        ok(1, 1, 0, 300, 1000, 11),
        ok(2, 0, 1000, 1200, 2000, 11),
        failed(3, 1, 1000, 1500, ErrorKind::HttpStatus),
    ]
}

#[test]
fn latency_stats_cover_successes_only() {
    let s = summarize(2, &two_busy_workers());
    let ttft = s.time_to_first_token.as_ref().unwrap();
    assert_eq!((ttft.unit.as_str(), ttft.count), ("ms", 3));
    assert!(close(ttft.avg, 200.0));
    assert_eq!((ttft.min, ttft.max), (100.0, 300.0));
    // percentiles are the upper edge of a 3-significant-figure bucket
    assert!(near(ttft.p50, 200.0), "{}", ttft.p50);
    let e2e = s.request_latency.as_ref().unwrap();
    assert_eq!(
        (e2e.count, e2e.min, e2e.max, e2e.avg),
        (3, 1000.0, 1000.0, 1000.0)
    );
    // ITL = (e2e - ttft) / 10: 90, 70, 80 ms
    let itl = s.inter_token_latency.as_ref().unwrap();
    assert!(close(itl.avg, 80.0));
    assert_eq!((itl.min, itl.max), (70.0, 90.0));
    let osl = s.output_sequence_length.as_ref().unwrap();
    assert_eq!((osl.unit.as_str(), osl.avg, osl.count), ("tokens", 11.0, 3));
    assert_eq!(s.input_sequence_length.as_ref().unwrap().avg, 100.0);
    // per user, 1 / ITL: 10 / 0.9 s, 10 / 0.7 s, 10 / 0.8 s
    let pu = s.output_token_throughput_per_user.as_ref().unwrap();
    assert_eq!(pu.unit, "tokens/sec/user");
    assert!(close(pu.avg, (10.0 / 0.9 + 10.0 / 0.7 + 10.0 / 0.8) / 3.0));
}

#[test]
fn per_user_throughput_is_one_over_the_inter_token_latency() {
    // TTFT 100 ms, e2e 400 ms: n tokens give (n - 1) / 0.3 s, as AIPerf defines it; one
    // token has no inter-token latency and no per-user rate
    let cases: [(u32, Option<f64>); 3] = [(1, None), (2, Some(1.0 / 0.3)), (4, Some(3.0 / 0.3))];
    for (n, want) in cases {
        let mut r = ok(0, 0, 0, 100, 400, n);
        r.output_tokens = Some(n);
        let s = summarize(1, &[r]);
        let got = s.output_token_throughput_per_user.as_ref().map(|p| p.avg);
        match (got, want) {
            (Some(g), Some(w)) => assert!(close(g, w), "{n} tokens: {g}"),
            (g, w) => assert_eq!(g, w, "{n} tokens"),
        }
        let itl = s.inter_token_latency.as_ref().map(|p| p.avg);
        assert_eq!(itl.is_some(), n >= 2, "{n} tokens");
    }
}

#[test]
fn throughput_counts_and_errors() {
    let s = summarize(2, &two_busy_workers());
    assert_eq!(s.benchmark_duration, Scalar::new("sec", 2.0));
    assert_eq!(s.output_token_throughput, Scalar::new("tokens/sec", 16.5));
    assert_eq!(s.request_throughput, Scalar::new("requests/sec", 1.5));
    assert_eq!(s.request_count.avg, 3.0);
    assert_eq!(s.error_request_count.avg, 1.0);
    assert_eq!(s.error_rate, 0.25);
    assert_eq!(s.errors_by_kind.get(&ErrorKind::HttpStatus), Some(&1));
    assert_eq!(s.error_summary.len(), 1);
    assert_eq!(s.error_summary[0].error_details.code, Some(500));
    assert_eq!(s.error_summary[0].error_details.kind, "http_status");
    assert_eq!(s.output_tokens_source.server, 3);
    assert_eq!(s.total_osl, Scalar::new("tokens", 33.0));
    assert_eq!(s.total_isl, Scalar::new("tokens", 300.0));
    assert_eq!((s.index, s.concurrency, s.planned_requests), (3, 2, 4));
}

#[test]
fn steady_window_of_two_busy_workers() {
    let s = summarize(2, &two_busy_workers());
    let w = s.steady_window.unwrap();
    assert_eq!((w.start_s, w.end_s), (0.0, 1.5));
    // busy time inside [0, 1.5 s]: 1 + 1 + 0.5 + 0.5 = 3 s over 1.5 s
    assert_eq!(s.achieved_concurrency, Some(2.0));
    // tokens: 11 + 11 + 11 * (300 / 800) = 26.125 over 1.5 s
    let steady = s.output_token_throughput_steady.as_ref().unwrap();
    assert!(close(steady.avg, 26.125 / 1.5));
    // whole level: (1 + 1 + 1 + 0.5) s busy over 2 s
    assert_eq!(s.mean_in_flight, Some(1.75));
    assert!(s.held);
}

#[test]
fn held_needs_95_percent_of_the_target_over_the_window() {
    // w1 idles 1 s between its requests: 3 s busy over the 2 s window is 1.5 of 2 slots
    let recs = vec![
        ok(0, 0, 0, 10, 1000, 4),
        ok(1, 1, 0, 10, 500, 4),
        ok(2, 0, 1000, 1010, 2000, 4),
        ok(3, 1, 1500, 1510, 2000, 4),
    ];
    let s = summarize(2, &recs);
    assert_eq!(s.achieved_concurrency, Some(1.5));
    assert!(!s.held);
    // fewer requests than slots: no window, not held
    assert!(!summarize(4, &recs).held);
}

#[test]
fn goodput_counts_requests_within_every_limit() {
    let good = |limits: RequestLimits| {
        let mut acc = LevelAccumulator::new(2, 4).with_goodput(limits);
        for r in two_busy_workers() {
            acc.add(&r);
        }
        acc.finish(LevelMeta::default()).goodput.map(|g| g.avg)
    };
    // e2e 1000 ms each: all three successes within 1 s, the failure a miss; over 2 s
    let e2e = RequestLimits {
        e2e_ms: Some(1000.0),
        ..Default::default()
    };
    assert_eq!(good(e2e), Some(1.5));
    // TTFT 100, 300 and 200 ms: two within 250 ms
    let ttft = RequestLimits {
        ttft_ms: Some(250.0),
        ..e2e
    };
    assert_eq!(good(ttft), Some(1.0));
    // no limit, no goodput
    assert_eq!(good(RequestLimits::default()), None);
}

#[test]
fn staggered_schedule_with_a_send_gap() {
    // w0: [0, 1000], [1000, 3000]; w1: [500, 2000], slot free at 2000 but sent at 2200, ends 2500.
    let mut late = ok(3, 1, 2200, 2300, 2500, 5);
    late.slot_free_ns = 2000 * MS;
    let recs = vec![
        ok(0, 0, 0, 100, 1000, 5),
        ok(1, 1, 500, 600, 2000, 5),
        ok(2, 0, 1000, 1100, 3000, 5),
        late,
    ];
    let s = summarize(2, &recs);
    let w = s.steady_window.unwrap();
    assert_eq!((w.start_s, w.end_s), (0.5, 2.5));
    // overlaps with [0.5, 2.5]: 0.5 + 1.5 + 1.5 + 0.3 = 3.8 s over 2 s
    assert!(close(s.achieved_concurrency.unwrap(), 1.9));
    // (1 + 1.5 + 2 + 0.3) s over 3 s
    assert!(close(s.mean_in_flight.unwrap(), 1.6));
    let sts = s.slot_to_send.as_ref().unwrap();
    assert_eq!((sts.count, sts.max, sts.min), (4, 200.0, 0.0));
    assert!(close(sts.avg, 50.0));
}

#[test]
fn cancelled_is_reported_but_not_an_endpoint_error() {
    let recs = vec![
        ok(0, 0, 0, 10, 100, 4),
        ok(1, 1, 0, 10, 100, 4),
        failed(2, 0, 100, 150, ErrorKind::Timeout),
        failed(3, 1, 100, 120, ErrorKind::Cancelled),
    ];
    let s = summarize(2, &recs);
    assert!(close(s.error_rate, 1.0 / 3.0));
    assert_eq!(s.error_request_count.avg, 1.0);
    assert_eq!(s.cancelled_count, 1);
    assert_eq!(s.errors_by_kind.get(&ErrorKind::Timeout), Some(&1));
    assert_eq!(s.errors_by_kind.get(&ErrorKind::Cancelled), Some(&1));
    assert_eq!(s.request_latency.as_ref().unwrap().count, 2);
    assert_eq!(s.error_summary.len(), 2);
}

#[test]
fn warmup_is_ignored_and_non_streaming_has_no_ttft() {
    let mut warm = ok(0, 0, 0, 5, 50, 3);
    warm.warmup = true;
    let mut body = ok(1, 0, 100, 100, 600, 20);
    body.first_token_ns = None;
    body.output_tokens_source = TokenSource::Client;
    let s = summarize(1, &[warm, body]);
    assert!(s.time_to_first_token.is_none());
    assert!(s.inter_token_latency.is_none());
    assert!(s.output_token_throughput_per_user.is_none());
    assert_eq!(s.request_latency.as_ref().unwrap().avg, 500.0);
    assert_eq!(s.benchmark_duration.avg, 0.5);
    assert_eq!(s.output_token_throughput.avg, 40.0);
    assert_eq!(
        s.output_tokens_source,
        TokenSourceCounts {
            server: 0,
            client: 1
        }
    );
    // one worker, one request: the window is the whole request; tokens spread over [start, last]
    assert_eq!(s.achieved_concurrency, Some(1.0));
    assert_eq!(s.output_token_throughput_steady.unwrap().avg, 40.0);
}

#[test]
fn degenerate_levels() {
    // fewer requests than slots: no steady window
    let s = summarize(4, &[ok(0, 0, 0, 10, 100, 4), ok(1, 1, 0, 10, 100, 4)]);
    assert!(s.steady_window.is_none());
    assert!(s.achieved_concurrency.is_none());
    assert!(s.output_token_throughput_steady.is_none());
    // nothing at all
    let e = summarize(4, &[]);
    assert_eq!(e.benchmark_duration.avg, 0.0);
    assert_eq!(e.output_token_throughput.avg, 0.0);
    assert_eq!(e.error_rate, 0.0);
    assert!(e.request_latency.is_none() && e.mean_in_flight.is_none());
}

#[test]
fn inter_chunk_latency_takes_every_gap() {
    let mut r = ok(0, 0, 0, 10, 40, 4);
    r.chunk_gaps_ns = vec![10 * MS, 5 * MS, 15 * MS];
    let s = summarize(1, &[r]);
    let icl = s.inter_chunk_latency.unwrap();
    assert_eq!((icl.count, icl.avg, icl.min, icl.max), (3, 10.0, 5.0, 15.0));
}

#[test]
fn json_uses_aiperf_metric_objects() {
    let s = summarize(2, &two_busy_workers());
    let v = serde_json::to_value(&s).unwrap();
    assert_eq!(v["time_to_first_token"]["unit"], "ms");
    assert!(near(
        v["time_to_first_token"]["p50"].as_f64().unwrap(),
        200.0
    ));
    assert_eq!(v["output_token_throughput"]["unit"], "tokens/sec");
    assert_eq!(v["request_count"]["unit"], "requests");
    assert_eq!(v["request_count"]["avg"], 3.0);
    assert_eq!(v["benchmark_duration"]["unit"], "sec");
    assert_eq!(v["errors_by_kind"]["http_status"], 1);
    assert_eq!(
        v["error_summary"][0]["error_details"]["type"],
        "http_status"
    );
    assert!(v.get("goodput").is_none());
    let back: LevelSummary = serde_json::from_value(v).unwrap();
    assert_eq!(back, s);
}

#[test]
fn accessors() {
    let s = summarize(2, &two_busy_workers());
    assert!(near(s.ttft_p(50.0).unwrap(), 200.0));
    assert_eq!(s.e2e_p99_ms(), Some(1000.0));
    assert_eq!(s.output_tps(), 16.5);
    assert_eq!((s.ok_count(), s.error_count()), (3, 1));
}

/// Two workers busy for 2.5 s: 90 tokens, 70 of them in the requests after the first round
/// (both at 0 ms), whose latencies add up to 3.0 s.
fn two_workers_for_2_5_s() -> [RequestRecord; 6] {
    [
        ok(0, 0, 0, 100, 1000, 10),
        ok(1, 1, 0, 100, 1000, 10),
        ok(2, 0, 1000, 1100, 1500, 10),
        ok(3, 1, 1000, 1100, 2000, 20),
        ok(4, 0, 1500, 1600, 2500, 30),
        ok(5, 1, 2000, 2100, 2500, 10),
    ]
}

#[test]
fn sustained_throughput_is_littles_law_over_the_requests_after_the_first_round() {
    // the first round (both at 0 ms) is left out
    let recs = two_workers_for_2_5_s();
    let s = summarize(2, &recs);
    assert_eq!(s.achieved_concurrency, Some(2.0));
    // 2 in flight x 70 tokens / 3.0 s of summed latency
    let sustained = s.output_token_throughput_sustained.as_ref().unwrap();
    assert!(close(sustained.avg, 2.0 * 70.0 / 3.0));
    assert!(close(s.sustained_tps(), 2.0 * 70.0 / 3.0));
    // the whole-level figure: 90 tokens over 2.5 s
    assert!(close(s.output_tps(), 36.0));
    // one request after the first round is less than a turnover: no figure, the knee falls
    // back to the whole level
    let s = summarize(2, &recs[..3]);
    assert!(s.output_token_throughput_sustained.is_none());
    assert!(close(s.sustained_tps(), s.output_tps()));
}

/// 400 one-worker requests of `e2e(i)` ms each, back to back, in index order.
fn serial(e2e: impl Fn(u64) -> u64) -> Vec<RequestRecord> {
    let mut at = 0;
    (0..400)
        .map(|i| {
            let d = e2e(i);
            let r = ok(i, 0, at, at + 1, at + d, 2);
            at += d;
            r
        })
        .collect()
}

#[test]
fn latencies_that_move_together_in_time_widen_their_intervals() {
    // the same 400 latencies (150 of 30 ms, 250 of 10 ms) in two orders: evenly mixed (3 slow
    // in every 8), and the slow ones first (the server slowed down for a while). Mixed, every
    // block of 40 (and of 80) holds the same share of slow ones: the independent interval
    // stands, and the median is 10 ms with confidence (ranks 181 and 220 both fall among the
    // 250 fast values). Slow first, the blocks' shares above the median scatter far beyond
    // chance: the interval takes the batch-means width and spans both speeds.
    let mixed = summarize(
        1,
        &serial(|i| if [0, 3, 6].contains(&(i % 8)) { 30 } else { 10 }),
    );
    let slow_first = summarize(1, &serial(|i| if i < 150 { 30 } else { 10 }));
    let (a, b) = (
        mixed.request_latency.unwrap(),
        slow_first.request_latency.unwrap(),
    );
    assert_eq!((a.p50, a.count), (b.p50, b.count));
    assert!(close(a.avg, 17.5) && close(b.avg, 17.5));
    let (ia, ib) = (a.ci95.unwrap(), b.ci95.unwrap());
    let mut h = Histogram::latency();
    for v in std::iter::repeat_n(10.0, 250).chain(std::iter::repeat_n(30.0, 150)) {
        h.record_value(v);
    }
    let independent = h.stats().unwrap().ci95.unwrap();
    assert_eq!(
        [ia.p50, ia.p90, ia.p95, ia.p99],
        [
            independent.p50,
            independent.p90,
            independent.p95,
            independent.p99
        ]
    );
    assert!(close(ia.avg.hi().unwrap(), independent.avg.hi().unwrap()));
    assert!(
        near(ia.p50.lo().unwrap(), 10.0) && near(ia.p50.hi().unwrap(), 10.0),
        "{ia:?}"
    );
    // one request in flight at a time: ten blocks of 40, shares 1, 1, 1, 0.75, 0 x 6: mean
    // 0.375, variance 0.2396 with 9 degrees of freedom, against 0.375 x 0.625 / 400 for the
    // level's share were the values independent
    let effect_of = |shares: &[f64]| {
        let b = shares.len() as f64;
        let var = shares.iter().map(|s| (s - 0.375).powi(2)).sum::<f64>() / (b - 1.0);
        crate::metrics::ci::t_975(shares.len() as u64 - 1).powi(2) * var
            / b
            / (crate::metrics::ci::Z_975.powi(2) * 0.375 * 0.625 / 400.0)
    };
    let ten = effect_of(&[1.0, 1.0, 1.0, 0.75, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
    assert!((ten - 54.47).abs() < 0.01, "{ten}");
    // 400 / 54.5 = 7 values' worth: ranks 1 and 7 of seven, scaled back to 57 and 400, so the
    // median's interval spans both speeds; the level cannot tell which its median belongs
    // to, and says so
    assert_eq!(
        crate::metrics::batch::widened_ranks(400, 0.5, ten),
        (Some(57), Some(400))
    );
    assert!(
        near(ib.p50.lo().unwrap(), 10.0) && near(ib.p50.hi().unwrap(), 30.0),
        "{ib:?}"
    );
    // with an SLA limit on e2e, a percentile's blocks count the values above the limit, what
    // the verdict turns on: at 20 ms those are the same 150 slow ones (the median's interval
    // as above; the p90 to p99, whose estimates of 30 ms have no value above them, now read
    // the burst of values above the limit and lose their upper bound); at
    // 40 ms there are none, nothing comes in bursts above it, and the independent interval
    // stands (400 values all under 40 ms pass a 40 ms median or p99 whatever their order)
    let judged = |limit: f64| {
        let mut acc = LevelAccumulator::new(1, 400).with_goodput(RequestLimits {
            e2e_ms: Some(limit),
            ..RequestLimits::default()
        });
        for r in &serial(|i| if i < 150 { 30 } else { 10 }) {
            acc.add(r);
        }
        let s = acc.finish(LevelMeta::default()).request_latency.unwrap();
        s.ci95.unwrap()
    };
    let at_20 = judged(20.0);
    assert_eq!((at_20.avg, at_20.p50), (ib.avg, ib.p50));
    assert_eq!((ib.p99.lo(), ib.p99.hi()), (Some(30.0), Some(30.0)));
    assert_eq!((at_20.p99.lo(), at_20.p99.hi()), (Some(30.0), None));
    let above_all = judged(40.0);
    assert_eq!(
        [above_all.p50, above_all.p90, above_all.p95, above_all.p99],
        [
            independent.p50,
            independent.p90,
            independent.p95,
            independent.p99
        ]
    );
    // the mean's half-width grows by the square root of its effect
    let half = |i: Interval| (i.hi().unwrap() - i.lo().unwrap()) / 2.0;
    assert!(half(ib.avg) > 4.0 * half(ia.avg), "{ia:?} {ib:?}");
}

/// `recs` moved `by` ms later on the level's timeline (a later measurement's requests).
fn shifted(recs: &[RequestRecord], by: u64) -> Vec<RequestRecord> {
    recs.iter()
        .map(|r| {
            let at = |ns: u64| ns + by * MS;
            RequestRecord {
                slot_free_ns: at(r.slot_free_ns),
                start_ns: at(r.start_ns),
                first_token_ns: r.first_token_ns.map(at),
                last_token_ns: r.last_token_ns.map(at),
                end_ns: at(r.end_ns),
                ..r.clone()
            }
        })
        .collect()
}

/// `recs` measured twice at concurrency 2: the second time shifted to where the first
/// measurement's last request ended, as the engine resumes a level; that point (ms) and
/// the accumulator.
fn measured_twice(recs: &[RequestRecord]) -> (u64, LevelAccumulator) {
    let mut acc = LevelAccumulator::new(2, recs.len() as u64);
    for r in recs {
        acc.add(r);
    }
    let from = acc.resume() / MS;
    acc.plan_more(recs.len() as u64);
    for r in &shifted(recs, from) {
        acc.add(r);
    }
    (from, acc)
}

#[test]
fn a_level_measured_again_adds_its_requests_and_windows() {
    let (from, acc) = measured_twice(&two_busy_workers());
    // the next measurement continues where the last request ended (2 s)
    assert_eq!(from, 2000);
    assert_eq!(acc.completed(), 8);
    let s = acc.finish(LevelMeta::default());
    assert_eq!(s.planned_requests, 8);
    let e2e = s.request_latency.as_ref().unwrap();
    assert_eq!((e2e.count, e2e.avg), (6, 1000.0));
    // each measurement's own window, [0, 1.5 s] and [2, 3.5 s]: busy 3 s over 1.5 s in each,
    // 26.125 tokens in each; the gap between them is not a window
    let w = s.steady_window.unwrap();
    assert_eq!((w.start_s, w.end_s), (0.0, 3.5));
    assert_eq!(s.achieved_concurrency, Some(2.0));
    let steady = s.output_token_throughput_steady.as_ref().unwrap();
    assert!(close(steady.avg, 2.0 * 26.125 / 3.0));
    // the whole level: 4 s back to back, 7 s busy; 66 tokens
    assert_eq!(s.mean_in_flight, Some(1.75));
    assert!(close(s.output_tps(), 66.0 / 4.0));
    assert!(s.held);
}

#[test]
fn a_level_measured_again_pools_its_sustained_throughput() {
    // the sustained schedule twice: Little's law over the requests after each window opened
    let (from, acc) = measured_twice(&two_workers_for_2_5_s());
    assert_eq!(from, 2500);
    let s = acc.finish(LevelMeta::default());
    assert_eq!(s.achieved_concurrency, Some(2.0));
    // 2 in flight x (70 + 70) tokens / (3.0 + 3.0) s of summed latency, as one measurement
    assert!(close(s.sustained_tps(), 2.0 * 70.0 / 3.0));
    assert!(s.held);
}
