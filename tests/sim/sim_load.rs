//! The simulator under load over loopback: `/metrics` parses as Prometheus text with gauges
//! that move, and its noise makes measurements at different times differ. How its
//! throughput and latency bend at the batch-slot limit is timed, so it is a benchmark
//! (`cargo bench --bench sim_saturation`).

use crate::support::sim_util;

use std::collections::{HashMap, HashSet};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use rightsize::sim::{SimConfig, TIMING_HEADER};
use sim_util::*;

/// The tests here measure time: run them one at a time.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// One sample line: metric name, labels, value.
type Sample = (String, HashMap<String, String>, f64);

/// A small Prometheus text-format parser: checks HELP/TYPE lines and returns the samples.
fn parse_prometheus(text: &str) -> Vec<Sample> {
    let mut typed: HashMap<String, String> = HashMap::new();
    let mut helped = HashSet::new();
    let mut samples = Vec::new();
    for line in text.lines().filter(|l| !l.is_empty()) {
        if let Some(rest) = line.strip_prefix("# HELP ") {
            let (name, help) = rest.split_once(' ').expect("HELP name text");
            assert!(!help.is_empty());
            helped.insert(name.to_string());
            continue;
        }
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').expect("TYPE name kind");
            assert!(["counter", "gauge", "histogram"].contains(&kind), "{line}");
            typed.insert(name.to_string(), kind.to_string());
            continue;
        }
        assert!(!line.starts_with('#'), "{line}");
        let (series, value) = line.rsplit_once(' ').expect("sample value");
        let value: f64 = value.parse().unwrap_or_else(|_| panic!("value in {line}"));
        let (name, labels) = match series.split_once('{') {
            Some((n, l)) => (n, l.strip_suffix('}').expect("closing brace")),
            None => (series, ""),
        };
        let labels: HashMap<String, String> = labels
            .split(',')
            .filter(|p| !p.is_empty())
            .map(|p| {
                let (k, v) = p.split_once('=').expect("label k=v");
                let v = v
                    .strip_prefix('"')
                    .and_then(|v| v.strip_suffix('"'))
                    .expect("quoted");
                (k.to_string(), v.to_string())
            })
            .collect();
        let family = ["_total", "_bucket", "_sum", "_count"]
            .iter()
            .find_map(|s| name.strip_suffix(s).filter(|f| typed.contains_key(*f)))
            .unwrap_or(name);
        assert!(
            typed.contains_key(family) && helped.contains(family),
            "no HELP/TYPE for {name}"
        );
        samples.push((name.to_string(), labels, value));
    }
    samples
}

fn value(samples: &[Sample], name: &str) -> f64 {
    let s = samples
        .iter()
        .find(|(n, _, _)| n == name)
        .unwrap_or_else(|| panic!("{name} missing"));
    assert_eq!(s.1.get("engine").map(String::as_str), Some("0"));
    assert_eq!(
        s.1.get("model_name").map(String::as_str),
        Some("sim-moe-30b-a3b")
    );
    s.2
}

async fn scrape(addr: SocketAddr) -> Vec<Sample> {
    let r = get(addr, "/metrics").await;
    assert_eq!(r.status, 200);
    assert!(r.header("content-type").unwrap().starts_with("text/plain"));
    parse_prometheus(&r.text())
}

#[tokio::test]
async fn metrics_parse_and_gauges_move_under_load() {
    let _serial = SERIAL.lock().await;
    let sim = start(SimConfig {
        max_num_seqs: 4,
        // half speed: a batch of four lasts about a second, so all twelve requests are in
        // before the first batch ends even on a busy machine
        ..SimConfig::fast(0.5)
    })
    .await;
    let addr = sim.addr;
    let idle = scrape(addr).await;
    assert_eq!(value(&idle, "vllm:num_requests_running"), 0.0);
    let mut load = Vec::new();
    for i in 0..12 {
        load.push(tokio::spawn(async move {
            post(
                addr,
                "/v1/chat/completions",
                &chat_body(&prompt(40, i), 50, true),
            )
            .await
        }));
    }
    // wait until all twelve arrived and the first four were scheduled: four run, eight wait
    // (an arrival joins the running batch at the next step)
    let t = Instant::now();
    let mut busy = scrape(addr).await;
    let settled = |m: &[Sample]| {
        value(m, "vllm:num_requests_waiting") == 8.0 && value(m, "vllm:num_requests_running") == 4.0
    };
    while !settled(&busy) && t.elapsed() < Duration::from_secs(5) {
        tokio::time::sleep(Duration::from_millis(5)).await;
        busy = scrape(addr).await;
    }
    assert_eq!(value(&busy, "vllm:num_requests_running"), 4.0);
    assert_eq!(value(&busy, "vllm:num_requests_waiting"), 8.0);
    let kv = value(&busy, "vllm:kv_cache_usage_perc");
    assert!(kv > 0.0 && kv < 1.0);
    assert_eq!(sim.stats().running, 4);
    for l in load {
        assert_eq!(l.await.unwrap().status, 200);
    }
    // a prompt that starts with an earlier one skips its cached whole blocks
    let first = prompt(64, 0xabc);
    post(
        addr,
        "/v1/completions",
        &serde_json::json!({"prompt": first, "max_tokens": 1}),
    )
    .await;
    let longer = format!("{first} and more");
    post(
        addr,
        "/v1/completions",
        &serde_json::json!({"prompt": longer, "max_tokens": 1}),
    )
    .await;
    let after = scrape(addr).await;
    assert_eq!(value(&after, "vllm:num_requests_running"), 0.0);
    assert_eq!(value(&after, "vllm:num_requests_waiting"), 0.0);
    assert_eq!(value(&after, "vllm:generation_tokens_total"), 602.0);
    assert_eq!(
        value(&after, "vllm:prompt_tokens_total"),
        12.0 * 40.0 + 64.0 + 66.0
    );
    assert_eq!(value(&after, "vllm:prefix_cache_hits_total"), 64.0);
    assert!(value(&after, "vllm:prefix_cache_queries_total") >= 12.0 * 40.0 + 64.0 + 66.0);
    assert_eq!(value(&after, "vllm:num_preemptions_total"), 0.0);
    assert_eq!(
        value(&after, "vllm:time_to_first_token_seconds_count"),
        14.0
    );
    let inf = after
        .iter()
        .find(|(n, l, _)| n.ends_with("_bucket") && l.get("le").map(String::as_str) == Some("+Inf"))
        .expect("+Inf bucket");
    assert_eq!(inf.2, 14.0);
    assert!(value(&after, "vllm:time_to_first_token_seconds_sum") > 0.0);
    sim.shutdown();
}

/// Durations of `n` sequential streamed 100-token requests, from the first chunk to the last
/// as the simulator stamped them when it wrote them (its decode; the client's turnaround and
/// the connection are not in it).
async fn durations(cfg: SimConfig, n: usize) -> Vec<f64> {
    let sim = start(cfg).await;
    let mut out = Vec::new();
    for i in 0..n {
        let body = serde_json::json!({"prompt": prompt(8, i as u64), "max_tokens": 100,
            "ignore_eos": true, "stream": true});
        let r = post_with(
            sim.addr,
            "/v1/completions",
            &[(TIMING_HEADER, "1")],
            &body,
            Duration::from_secs(30),
        )
        .await;
        assert_eq!(r.status, 200);
        let stamps: Vec<u64> = r
            .chunks()
            .iter()
            .filter_map(|c| c["sim_sent_ns"].as_u64())
            .collect();
        assert!(stamps.len() >= 100, "{} stamped chunks", stamps.len());
        out.push((stamps[stamps.len() - 1] - stamps[0]) as f64 / 1e9);
    }
    sim.shutdown();
    out
}

/// The 90th percentile over the 10th (nearest rank): how far apart measurements are, a few
/// late wake-ups of a loaded machine left out.
fn spread(d: &[f64]) -> f64 {
    let mut d = d.to_vec();
    d.sort_by(f64::total_cmp);
    let k = d.len() / 10;
    d[d.len() - 1 - k] / d[k]
}

#[tokio::test]
async fn noise_makes_measurements_at_different_times_differ() {
    let _serial = SERIAL.lock().await;
    // each request is ~1 s of model time (100 ms here); the slow factor changes every 2 s of
    // model time, so forty requests in a row meet several factors: the slowest tenth lasts
    // over twice the fastest tenth (the calm simulator's spread is near 1; how evenly it
    // paces on a busy machine is the sim_pacing benchmark's question)
    let noisy = durations(
        SimConfig {
            noise: 1.0,
            seed: 3,
            ..SimConfig::fast(10.0)
        },
        40,
    )
    .await;
    let noisy = spread(&noisy);
    eprintln!("p90/p10 duration, noise 1: {noisy:.2}");
    assert!(noisy > 2.0, "{noisy}");
}
