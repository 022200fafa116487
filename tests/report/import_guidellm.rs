//! `rightsize import guidellm` end to end, on benchmarks files GuideLLM 0.8.1 wrote against
//! the simulator (tests/fixtures/guidellm/README.md): every level's request counts, TTFT,
//! ITL and e2e statistics must be the numbers the file holds (e2e from seconds to ms), and
//! the imported run must show, compare and export like a recorded one.

use crate::support::common;
use crate::support::export_support;

use common::{read_json, stderr, stdout, tmpdir};
use export_support::{id, import_ok, import_refused, root, rs, runs_in, show_json};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/guidellm")
        .join(name)
}

/// Where the import must place a benchmark: a concurrent one at its streams, a synchronous
/// one at 1, the others at GuideLLM's measured mean concurrency, rounded.
fn expected_concurrency(bench: &Value) -> u64 {
    let strategy = &bench["config"]["strategy"];
    match strategy["type_"].as_str().unwrap() {
        "concurrent" => strategy["streams"].as_u64().unwrap(),
        "synchronous" => 1,
        _ => (bench["metrics"]["request_concurrency"]["total"]["mean"]
            .as_f64()
            .unwrap()
            .round() as u64)
            .max(1),
    }
}

/// The file's benchmarks in the order the import numbers its levels.
fn benchmarks_in_level_order(file: &Value) -> Vec<Value> {
    let mut b = file["benchmarks"].as_array().unwrap().clone();
    b.sort_by(|x, y| {
        (expected_concurrency(x), x["start_time"].as_f64().unwrap())
            .partial_cmp(&(expected_concurrency(y), y["start_time"].as_f64().unwrap()))
            .unwrap()
    });
    b
}

/// Our statistic names and where GuideLLM keeps each in a status summary.
const STATS: [(&str, &str); 14] = [
    ("avg", "/mean"),
    ("min", "/min"),
    ("max", "/max"),
    ("std", "/std_dev"),
    ("p1", "/percentiles/p01"),
    ("p5", "/percentiles/p05"),
    ("p10", "/percentiles/p10"),
    ("p25", "/percentiles/p25"),
    ("p50", "/percentiles/p50"),
    ("p75", "/percentiles/p75"),
    ("p90", "/percentiles/p90"),
    ("p95", "/percentiles/p95"),
    ("p99", "/percentiles/p99"),
    ("count", "/count"),
];

/// Checks one of our metric objects against GuideLLM's successful-requests summary.
fn assert_stats(level: &Value, ours: &str, bench: &Value, theirs: &str, factor: f64) {
    let got = &level[ours];
    let want = &bench["metrics"][theirs]["successful"];
    for (o, t) in STATS {
        let w = want.pointer(t).unwrap().as_f64().unwrap();
        let g = got[o].as_f64().unwrap();
        if o == "count" {
            continue;
        }
        assert_eq!(g, w * factor, "{ours}.{o} vs {theirs}{t}");
    }
    assert_eq!(
        got["unit"],
        if ours == "output_sequence_length" {
            "tokens"
        } else {
            "ms"
        }
    );
}

fn check_file(name: &str, levels_expected: usize) {
    let r = root(&format!("guidellm-{name}"));
    let path = fixture(name);
    let (notes, run) = import_ok(&r, &["guidellm", path.to_str().unwrap()]);
    let file = read_json(&path);
    let shown = show_json(&r, &run);
    let levels = shown["levels"].as_array().unwrap();
    assert_eq!(levels.len(), levels_expected);
    for (i, (level, bench)) in levels
        .iter()
        .zip(benchmarks_in_level_order(&file))
        .enumerate()
    {
        let totals = &bench["metrics"]["request_totals"];
        assert_eq!(level["index"], i as u64);
        assert_eq!(level["concurrency"], expected_concurrency(&bench));
        assert_eq!(
            level["request_count"]["avg"],
            totals["successful"].as_f64().unwrap()
        );
        assert_eq!(
            level["error_request_count"]["avg"],
            totals["errored"].as_f64().unwrap()
        );
        assert_eq!(level["cancelled_count"], totals["incomplete"]);
        assert_eq!(level["planned_requests"], totals["total"]);
        assert_stats(
            level,
            "time_to_first_token",
            &bench,
            "time_to_first_token_ms",
            1.0,
        );
        assert_stats(
            level,
            "inter_token_latency",
            &bench,
            "inter_token_latency_ms",
            1.0,
        );
        assert_stats(level, "request_latency", &bench, "request_latency", 1000.0);
        assert_stats(
            level,
            "output_sequence_length",
            &bench,
            "output_token_count",
            1.0,
        );
        let successful = |m: &str| bench["metrics"][m]["successful"].clone();
        // the counts: requests, not GuideLLM's tokens for the inter-token latency
        assert_eq!(
            level["time_to_first_token"]["count"],
            successful("time_to_first_token_ms")["count"]
        );
        assert_eq!(level["request_latency"]["count"], totals["successful"]);
        assert_eq!(
            level["inter_token_latency"]["count"],
            successful("time_to_first_token_ms")["count"]
        );
        assert_eq!(
            level["whole_level_output_tps"]["avg"],
            successful("output_tokens_per_second")["mean"]
        );
        assert_eq!(
            level["request_throughput"]["avg"],
            successful("requests_per_second")["mean"]
        );
        assert_eq!(
            level["mean_in_flight"],
            bench["metrics"]["request_concurrency"]["total"]["mean"]
        );
        assert_eq!(level["benchmark_duration"]["avg"], bench["duration"]);
        // what GuideLLM lacks stays absent
        for absent in [
            "inter_chunk_latency",
            "output_token_throughput_per_user",
            "achieved_concurrency",
            "steady_window",
            "server",
        ] {
            assert!(level.get(absent).is_none(), "{absent} in {level}");
        }
        // the errors GuideLLM kept are the simulator's HTTP 500s
        let errored = totals["errored"].as_u64().unwrap();
        assert_eq!(level["errors_by_kind"]["http_status"], errored);
        assert_eq!(level["error_summary"][0]["error_details"]["code"], 500);
    }
    // what was dropped is said once, on stderr and in run.json
    let echo = &shown["run"];
    assert_eq!(echo["kind"], "import-guidellm");
    let said = echo["source"]["notes"].as_array().unwrap();
    let tpot: Vec<_> = said
        .iter()
        .filter(|n| n.as_str().unwrap().starts_with("time_per_output_token_ms"))
        .collect();
    assert_eq!(tpot.len(), 1, "{said:?}");
    assert!(notes.contains("note: time_per_output_token_ms"), "{notes}");
    assert_eq!(echo["source"]["guidellm_version"], "0.8.1");
    assert_eq!(echo["endpoint"]["model"], "sim-moe-30b-a3b");
    assert_eq!(echo["workload"]["name"], "guidellm 128/64");
}

#[test]
fn a_concurrent_profile_imports_one_level_per_stream_count() {
    check_file("concurrent.json", 3);
}

#[test]
fn a_poisson_profile_sits_at_the_concurrency_guidellm_measured() {
    check_file("poisson.json", 2);
    let r = root("guidellm-poisson-notes");
    let (notes, _) = import_ok(&r, &["guidellm", fixture("poisson.json").to_str().unwrap()]);
    assert!(
        notes.contains(
            "note: poisson@3.00 (c=2): placed at concurrency 2: the mean concurrency GuideLLM \
             measured (2.30, request_concurrency), a poisson benchmark having no concurrency \
             of its own"
        ),
        "{notes}"
    );
}

#[test]
fn a_sweep_imports_its_synchronous_throughput_and_constant_benchmarks() {
    check_file("sweep.json", 3);
}

#[test]
fn an_imported_run_shows_compares_and_exports() {
    let r = root("guidellm-use");
    let (_, a) = import_ok(
        &r,
        &["guidellm", fixture("concurrent.json").to_str().unwrap()],
    );
    let (_, b) = import_ok(&r, &["guidellm", fixture("sweep.json").to_str().unwrap()]);
    let o = rs(&r, &["show", &id(&a)]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("(import-guidellm)"), "{text}");
    assert!(text.contains("endpoint  http://127.0.0.1:18431"), "{text}");
    assert!(
        text.contains("workload  guidellm 128/64: 128 in / 64 out, streaming"),
        "{text}"
    );
    let o = rs(&r, &["compare", &id(&a), &id(&b)]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = tmpdir("guidellm-export");
    let csv = out.join("run.csv");
    let json = out.join("run.json");
    let html = out.join("run.html");
    let o = rs(
        &r,
        &[
            "export",
            &id(&a),
            "--csv",
            csv.to_str().unwrap(),
            "--json",
            json.to_str().unwrap(),
            "--html",
            html.to_str().unwrap(),
            "--compare",
            &id(&b),
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // the exported levels are the imported ones
    let exported = read_json(&json);
    assert_eq!(exported["levels"], show_json(&r, &a)["levels"]);
    assert_eq!(std::fs::read_to_string(&csv).unwrap().lines().count(), 4);
    assert!(std::fs::metadata(&html).unwrap().len() > 1000);
}

#[test]
fn bad_input_names_the_file_and_what_is_wrong() {
    let r = root("guidellm-bad");
    let fail = |args: &[&str]| import_refused(&r, &[&["guidellm"], args].concat());
    let err = fail(&["/nonexistent/benchmarks.json"]);
    assert!(
        err.contains("/nonexistent/benchmarks.json: no such file or folder"),
        "{err}"
    );

    let dir = tmpdir("guidellm-bad-files");
    let err = fail(&[dir.to_str().unwrap()]);
    assert!(
        err.contains("a folder: give the benchmarks JSON file"),
        "{err}"
    );

    let junk = dir.join("junk.json");
    std::fs::write(&junk, "{not json").unwrap();
    let err = fail(&[junk.to_str().unwrap()]);
    assert!(err.contains("junk.json: not JSON"), "{err}");

    let aiperf = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/aiperf/sagemaker/concurrency_16/profile_export_aiperf.json");
    let err = fail(&[aiperf.to_str().unwrap()]);
    assert!(
        err.contains(
            "not a GuideLLM benchmarks file: no `benchmarks` list (GuideLLM 0.8 writes one with \
             --output kind=json,path=FILE): it looks like aiperf's output; use `rightsize import \
             aiperf`"
        ),
        "{err}"
    );

    let empty = dir.join("empty.json");
    std::fs::write(&empty, r#"{"metadata": {}, "benchmarks": []}"#).unwrap();
    let err = fail(&[empty.to_str().unwrap()]);
    assert!(err.contains("empty.json: `benchmarks` is empty"), "{err}");

    let mut file = read_json(&fixture("concurrent.json"));
    file["benchmarks"][1]["metrics"]
        .as_object_mut()
        .unwrap()
        .remove("request_totals");
    let broken = dir.join("broken.json");
    std::fs::write(&broken, file.to_string()).unwrap();
    let err = fail(&[broken.to_str().unwrap()]);
    assert!(
        err.contains("broken.json: benchmarks[1] (concurrent@4) has no metrics.request_totals"),
        "{err}"
    );
    assert!(
        runs_in(&r).is_empty(),
        "a failed import leaves no run behind"
    );
}
