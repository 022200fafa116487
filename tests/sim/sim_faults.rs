//! Each fault flag, in its `every:2` form, hits requests 2 and 4 and leaves 1 and 3 clean.

use crate::support::sim_util;

use std::time::Duration;

use rightsize::sim::{FaultConfig, FaultSpec, SimConfig};
use serde_json::{json, Value};
use sim_util::*;

fn with(faults: FaultConfig) -> SimConfig {
    SimConfig {
        faults,
        ..SimConfig::fast(50.0)
    }
}

fn every2() -> FaultSpec {
    FaultSpec::Every(2)
}

/// Four sequential streaming chat requests of 10 tokens; stall reads give up after `wait`.
async fn four(cfg: SimConfig, wait: Duration) -> Vec<RawResponse> {
    let sim = start(cfg).await;
    let mut out = Vec::new();
    for i in 0..4 {
        let body = chat_body(&prompt(20, i), 10, true);
        out.push(post_with(sim.addr, "/v1/chat/completions", &[], &body, wait).await);
    }
    sim.shutdown();
    out
}

fn is_clean(r: &RawResponse) -> bool {
    let data = r.sse_data();
    r.status == 200
        && r.complete
        && data.last().map(String::as_str) == Some("[DONE]")
        && data.len() == 1 + 10 + 1 + 1 // role, content, usage, [DONE]
        && data[..data.len() - 1]
            .iter()
            .all(|d| serde_json::from_str::<Value>(d).is_ok_and(|v| v.get("error").is_none()))
}

fn assert_clean_odd(rs: &[RawResponse]) {
    assert!(is_clean(&rs[0]), "request 1: {}", rs[0].text());
    assert!(is_clean(&rs[2]), "request 3: {}", rs[2].text());
}

/// Four requests with one fault set to `every:2` by `set`: checks that requests 1 and 3 are
/// clean and returns all four (2 and 4 carry the fault).
async fn every_second(set: fn(&mut FaultConfig), wait: Duration) -> Vec<RawResponse> {
    let mut faults = FaultConfig::default();
    set(&mut faults);
    let rs = four(with(faults), wait).await;
    assert_clean_odd(&rs);
    rs
}

#[tokio::test]
async fn http500_every_2() {
    let rs = every_second(|f| f.http500 = every2(), Duration::from_secs(10)).await;
    for r in [&rs[1], &rs[3]] {
        assert_eq!(r.status, 500);
        assert_eq!(r.json()["error"]["type"], "InternalServerError");
    }
}

#[tokio::test]
async fn http429_every_2_with_retry_after() {
    let rs = every_second(|f| f.http429 = every2(), Duration::from_secs(10)).await;
    for r in [&rs[1], &rs[3]] {
        assert_eq!(r.status, 429);
        assert_eq!(r.header("retry-after"), Some("1"));
        assert_eq!(r.json()["error"]["code"], 429);
    }
}

#[tokio::test]
async fn reset_every_2_breaks_the_chunked_body_after_a_few_chunks() {
    let rs = every_second(|f| f.reset = every2(), Duration::from_secs(10)).await;
    for r in [&rs[1], &rs[3]] {
        assert_eq!(r.status, 200);
        assert!(!r.complete && !r.timed_out, "{r:?}");
        let data = r.sse_data();
        assert_eq!(data.len(), 1 + 3, "role + 3 content chunks: {data:?}");
    }
}

#[tokio::test]
async fn stall_every_2_keeps_the_connection_open_without_data() {
    let rs = every_second(|f| f.stall = every2(), Duration::from_millis(700)).await;
    for r in [&rs[1], &rs[3]] {
        assert_eq!(r.status, 200);
        assert!(r.timed_out && !r.complete, "{r:?}");
        assert_eq!(r.sse_data().len(), 1 + 3);
    }
}

#[tokio::test]
async fn malformed_every_2_sends_one_bad_event_then_continues() {
    let rs = every_second(|f| f.malformed = every2(), Duration::from_secs(10)).await;
    for r in [&rs[1], &rs[3]] {
        assert!(r.complete);
        let data = r.sse_data();
        let bad: Vec<&String> = data
            .iter()
            .filter(|d| *d != "[DONE]" && serde_json::from_str::<Value>(d).is_err())
            .collect();
        assert_eq!(bad.len(), 1, "{data:?}");
        assert_eq!(data.len(), 1 + 10 + 1 + 1 + 1);
        assert_eq!(data.last().map(String::as_str), Some("[DONE]"));
    }
}

#[tokio::test]
async fn in_stream_error_every_2_sends_an_error_object_then_done() {
    let rs = every_second(|f| f.in_stream_error = every2(), Duration::from_secs(10)).await;
    for r in [&rs[1], &rs[3]] {
        assert_eq!(r.status, 200);
        assert!(r.complete);
        let data = r.sse_data();
        assert_eq!(data.len(), 1 + 3 + 1 + 1, "{data:?}");
        let err: Value = serde_json::from_str(&data[4]).unwrap();
        assert_eq!(err["error"]["type"], "InternalServerError");
        assert_eq!(err["error"]["code"], 500);
        assert_eq!(data[5], "[DONE]");
    }
}

#[tokio::test]
async fn non_streaming_equivalents() {
    let faults = FaultConfig {
        reset: FaultSpec::Every(2),
        malformed: FaultSpec::Every(3),
        in_stream_error: FaultSpec::Every(5),
        stall: FaultSpec::Every(7),
        ..Default::default()
    };
    let sim = start(with(faults)).await;
    let body = json!({"prompt": "a b c", "max_tokens": 5, "ignore_eos": true});
    let mut rs = Vec::new();
    for _ in 1..=7 {
        rs.push(
            post_with(
                sim.addr,
                "/v1/completions",
                &[],
                &body,
                Duration::from_millis(700),
            )
            .await,
        );
    }
    assert_eq!(rs[0].json()["usage"]["completion_tokens"], 5); // 1: clean
    assert!(!rs[1].complete && !rs[1].timed_out, "2: reset {:?}", rs[1]);
    assert!(
        serde_json::from_slice::<Value>(&rs[2].body).is_err(),
        "3: truncated JSON"
    );
    assert_eq!(rs[4].status, 200);
    assert_eq!(rs[4].json()["error"]["code"], 500); // 5: error object in a 200
    assert!(
        rs[6].timed_out && rs[6].body.is_empty(),
        "7: stall {:?}",
        rs[6]
    );
    sim.shutdown();
}

#[tokio::test]
async fn probabilistic_faults_are_repeatable_with_the_seed() {
    let cfg = || {
        let mut c = with(FaultConfig {
            http500: FaultSpec::Probability(0.5),
            ..Default::default()
        });
        c.seed = 42;
        c
    };
    let statuses = |rs: Vec<RawResponse>| rs.iter().map(|r| r.status).collect::<Vec<_>>();
    let a = statuses(four(cfg(), Duration::from_secs(10)).await);
    let b = statuses(four(cfg(), Duration::from_secs(10)).await);
    assert_eq!(a, b);
}
