//! Answers a fleet can be sized on, end to end through the binary: failed requests count
//! against every level (a level cannot pass by shedding load), levels run at least twice
//! their concurrency in requests and a level that did not hold its concurrency is never named,
//! and a body read whole has no TTFT or inter-token latency.

use crate::support::common;
use common::{bin, on_sim_at, only_run_dir, read_json, stderr, stdout, tmpdir, SimProcess};
use serde_json::Value;
use std::path::Path;

/// A search of 64-token answers (about 77 ms each at 10x). A failed request (an HTTP 500
/// answered at once) holds its slot for no time, so a level's achieved concurrency is the
/// share of time the other requests keep their workers busy: with 16-token answers (19 ms)
/// a debug client turning around in a millisecond beside a release build held 15 of 16 (95 %
/// is the line), the level was "not held", and the test read the machine's load.
fn search_on(url: &str, out: &Path, extra: &[&str]) -> std::process::Output {
    bin()
        .args([
            "search",
            "-e",
            url,
            "--input-tokens",
            "64",
            "--output-tokens",
            "64",
        ])
        .args(["--e2e-sla", "60s", "--max", "64", "-n", "256", "--out"])
        .arg(out)
        .args(extra)
        .output()
        .unwrap()
}

#[test]
fn a_level_shedding_a_fifth_of_its_requests_fails_unless_the_limit_allows_it() {
    // one request in five answers HTTP 500; a 60 s p99 latency SLA every level meets
    let sim = SimProcess::start(&["--time-scale", "10", "--fault-http500", "0.2"]);
    let out = tmpdir("shed");
    let o = search_on(&sim.url, &out, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.contains("answer: none (no level met the SLA)"),
        "{text}"
    );
    // the output names the error rate as what broke
    assert!(
        text.contains("binding SLA: avg error rate <= 1.0 %"),
        "{text}"
    );
    assert!(text.contains("% is above the 1.0 % limit"), "{text}");
    let s = read_json(&only_run_dir(&out).join("summary.json"));
    assert_eq!(s["search"]["max_passing"], Value::Null);
    assert_eq!(s["answer"], Value::Null);
    let level = read_json(&only_run_dir(&out).join("level-001-c0016.json"));
    assert_eq!(level["verdict"], "fail");
    let errors = level["slas"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["metric"] == "error_rate")
        .expect("the error-rate limit is judged on every level");
    assert_eq!(errors["verdict"], "fail");
    let rate = errors["observed"].as_f64().unwrap();
    assert!((0.12..0.28).contains(&rate), "{rate}");
    let ci = errors["ci"].as_array().unwrap();
    assert!(ci[0].as_f64().unwrap() > 0.01, "{errors}");
    // failures are counted, never mixed into the latency percentiles
    let ok = level["request_count"]["avg"].as_f64().unwrap();
    assert_eq!(level["request_latency"]["count"].as_f64(), Some(ok));

    // a 30 % limit lets the same levels pass: the search finds an answer. A fresh simulator:
    // its faults fall on fixed request numbers, and on the first one's the pre-flight request
    // would land wherever the first search's cooldown left the count (one time in five on a
    // 500, and the run stops before load)
    drop(sim);
    let sim = SimProcess::start(&["--time-scale", "10", "--fault-http500", "0.2"]);
    let out = tmpdir("shed-allowed");
    let o = search_on(&sim.url, &out, &["--max-error-rate", "0.3"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.contains("answer: 64 concurrent requests at "),
        "{text}"
    );
    let s = read_json(&only_run_dir(&out).join("summary.json"));
    assert_eq!(s["search"]["max_passing"], 64);
    assert_eq!(s["max_error_rate"], 0.3);
    for it in s["iterations"].as_array().unwrap() {
        // 64, the answer, is decided; the levels under it are screens that lean pass
        if it["concurrency"] == 64 {
            assert_eq!(it["verdict"], "pass", "{it}");
        } else {
            assert_eq!(
                (&it["screen"], &it["verdict"]),
                (&Value::Bool(true), &Value::from("uncertain")),
                "{it}"
            );
            assert_eq!(it["slas"][1]["verdict"], "pass", "{it}");
        }
        let rate = it["slas"][1]["observed"].as_f64().unwrap();
        assert!(rate > 0.1, "{it}");
    }
}

#[test]
fn levels_run_twice_their_concurrency_and_unheld_levels_are_never_named() {
    // a loose SLA the simulator meets at every level it can hold; 256 requests asked, so the
    // levels from 256 up run twice their concurrency (up to 1024: each doubling above it
    // doubles the requests, and 2048 and 4096 were three quarters of the test's CPU)
    let out = tmpdir("held");
    let o = on_sim_at("search", 64, 16, 20.0)
        .args(["--min", "16", "--max", "1024", "--requests", "256"])
        .args(["--e2e-sla", "avg:60s", "--max-error-rate", "0.05", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let err = stderr(&o);
    // said once
    assert_eq!(
        err.matches("requests per level cannot hold concurrency")
            .count(),
        1,
        "{err}"
    );
    let dir = only_run_dir(&out);
    let s = read_json(&dir.join("summary.json"));
    let mut held_levels = Vec::new();
    for it in s["iterations"].as_array().unwrap() {
        let c = it["concurrency"].as_u64().unwrap();
        let file = dir.join(format!(
            "level-{:03}-c{c:04}.json",
            it["iteration"].as_u64().unwrap()
        ));
        let level = read_json(&file);
        // both numbers are recorded: what was asked and what the level ran
        assert_eq!(level["requests_asked"], 256);
        let planned = level["planned_requests"].as_u64().unwrap();
        assert!(planned >= (2 * c).max(256), "c={c}: {planned}");
        if level["held"] == true {
            let achieved = level["achieved_concurrency"].as_f64().unwrap();
            assert!(achieved >= 0.95 * c as f64, "c={c}: {achieved}");
            held_levels.push(c);
        } else {
            assert_eq!(it["held"], false);
            let skipped = s["skipped"].as_array().unwrap();
            assert!(
                skipped.iter().any(|k| k["concurrency"] == c),
                "{c} not held but not listed as skipped: {skipped:?}"
            );
        }
    }
    let answer = s["search"]["max_passing"].as_u64().expect("an answer");
    assert!(held_levels.contains(&answer), "{answer} {held_levels:?}");
    assert_eq!(s["answer"]["concurrency"], answer);
}

#[test]
fn a_body_read_whole_has_no_ttft_and_no_inter_token_latency() {
    let out = tmpdir("no-stream");
    let o = on_sim_at("sweep", 64, 16, 20.0)
        .args(["--no-stream", "-c", "2,4", "-n", "16", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let dir = only_run_dir(&out);
    for name in ["level-001-c0002.json", "level-002-c0004.json"] {
        let level = read_json(&dir.join(name));
        let keys = level.as_object().unwrap();
        assert!(!keys.contains_key("time_to_first_token"), "{name}");
        assert!(!keys.contains_key("inter_token_latency"), "{name}");
        assert!(
            !keys.contains_key("output_token_throughput_per_user"),
            "{name}"
        );
        assert!(keys.contains_key("request_latency"), "{name}");
    }
    // the table shows `-` where TTFT and inter-token latency would be
    let text = stdout(&o);
    let rows: Vec<Vec<&str>> = text
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|cols| cols.first().is_some_and(|c| *c == "2" || *c == "4"))
        .collect();
    assert_eq!(rows.len(), 2, "{text}");
    for cols in rows {
        // concurrency, req/s, output tok/s, ttft p50, ttft p95, itl p95, e2e p50, e2e p99, ...
        assert_eq!(&cols[3..6], ["-", "-", "-"], "{cols:?}");
        assert_ne!(cols[6], "-", "{cols:?}");
    }
}
