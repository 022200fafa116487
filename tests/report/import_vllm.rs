//! `rightsize import vllm` end to end, on `vllm bench serve --save-result` files written from
//! the keys vLLM's serve.py saves (tests/fixtures/vllm/README.md): each level's counts and the
//! percentiles the file holds must be what the import recorded, in the file's milliseconds.

use crate::support::common;
use crate::support::export_support;

use common::{read_json, tmpdir};
use export_support::{import_ok, import_refused, root, runs_in, show_json};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/vllm")
}

/// The fixture files by concurrency 1, 4, 16.
fn files() -> Vec<PathBuf> {
    [
        "vllm-infqps-concurrency1-Qwen3-8B-20261204-101500.json",
        "vllm-infqps-concurrency4-Qwen3-8B-20261204-102000.json",
        "vllm-20.0qps-concurrency16-Qwen3-8B-20261204-102500.json",
    ]
    .iter()
    .map(|f| fixtures().join(f))
    .collect()
}

/// vLLM's metric names and ours.
const METRICS: [(&str, &str); 4] = [
    ("ttft", "time_to_first_token"),
    ("tpot", "inter_token_latency"),
    ("itl", "inter_chunk_latency"),
    ("e2el", "request_latency"),
];

/// Every summary key of `metric` the result holds must be the import's: mean, median, std
/// and each `pN`.
fn assert_summary(level: &Value, result: &Value, metric: &str, ours: &str) -> usize {
    let mut checked = 0;
    for (key, v) in result.as_object().unwrap() {
        let Some(stat) = key
            .strip_suffix(&format!("_{metric}_ms"))
            .filter(|s| !s.contains('_'))
        else {
            continue;
        };
        let field = match stat {
            "mean" => "avg",
            "median" => "p50",
            other => other,
        };
        assert_eq!(level[ours][field], *v, "{ours}.{field} vs {key}");
        checked += 1;
    }
    checked
}

#[test]
fn each_result_file_is_a_level_with_the_numbers_it_holds() {
    let r = root("vllm-files");
    let paths: Vec<String> = files().iter().map(|p| p.display().to_string()).collect();
    let args: Vec<&str> = ["vllm"]
        .into_iter()
        .chain(paths.iter().map(String::as_str))
        .collect();
    let (notes, run) = import_ok(&r, &args);
    let shown = show_json(&r, &run);
    let levels = shown["levels"].as_array().unwrap();
    let cs: Vec<u64> = levels
        .iter()
        .map(|l| l["concurrency"].as_u64().unwrap())
        .collect();
    assert_eq!(cs, [1, 4, 16]);
    let mut checked = 0;
    for (level, file) in levels.iter().zip(files()) {
        let result = read_json(&file);
        assert_eq!(
            level["request_count"]["avg"],
            result["completed"].as_f64().unwrap()
        );
        assert_eq!(
            level["error_request_count"]["avg"],
            result["failed"].as_f64().unwrap()
        );
        assert_eq!(level["requests_asked"], result["num_prompts"]);
        assert_eq!(
            level["request_throughput"]["avg"],
            result["request_throughput"]
        );
        assert_eq!(
            level["whole_level_output_tps"]["avg"],
            result["output_throughput"]
        );
        assert_eq!(level["benchmark_duration"]["avg"], result["duration"]);
        assert_eq!(
            level["total_osl"]["avg"],
            result["total_output_tokens"].as_f64().unwrap()
        );
        for (m, ours) in METRICS {
            checked += assert_summary(level, &result, m, ours);
        }
        assert!(level.get("goodput").is_none(), "request_goodput is null");
    }
    // c=1 mean, median, std and p99 of ttft, tpot and itl; c=4 and c=16 those with p50, p90,
    // p95 of the four metrics
    assert_eq!(checked, 12 + 2 * 4 * 7);

    // the --save-detailed level: what its summary lacks comes from its per-request values,
    // successful requests only (one failed with HTTP 500), in ms as numpy gives it
    let c1 = &levels[0];
    let result = read_json(&files()[0]);
    let ok: Vec<usize> = (0..16)
        .filter(|i| result["errors"][i].as_str() == Some(""))
        .collect();
    assert_eq!(ok.len(), 15);
    let ms = |key: &str| -> Vec<f64> {
        let mut v: Vec<f64> = ok
            .iter()
            .map(|i| result[key][i].as_f64().unwrap() * 1000.0)
            .collect();
        v.sort_by(f64::total_cmp);
        v
    };
    let e2e = ms("latencies");
    let e2e_level = &c1["request_latency"];
    assert_eq!(e2e_level["count"], 15);
    assert_eq!(e2e_level["min"], e2e[0]);
    assert_eq!(e2e_level["max"], e2e[14]);
    // np.percentile of 15 values: p50 is the 8th, p25 the 4.5th
    assert_eq!(e2e_level["p50"], e2e[7]);
    assert_eq!(e2e_level["p25"], e2e[3] + (e2e[4] - e2e[3]) * 0.5);
    let ttft = ms("ttfts");
    assert_eq!(c1["time_to_first_token"]["min"], ttft[0]);
    assert_eq!(c1["time_to_first_token"]["p99"], result["p99_ttft_ms"]);
    let lens: Vec<u64> = ok
        .iter()
        .map(|i| result["output_lens"][i].as_u64().unwrap())
        .collect();
    assert_eq!(
        c1["output_sequence_length"]["avg"],
        lens.iter().sum::<u64>() as f64 / 15.0
    );
    assert_eq!(c1["errors_by_kind"], serde_json::json!({}));
    assert_eq!(
        c1["error_summary"][0]["error_details"]["type"],
        "Internal Server Error"
    );
    assert_eq!(c1["error_summary"][0]["count"], 1);
    // the levels without per-request lengths have none
    assert!(levels[1].get("output_sequence_length").is_none());

    let echo = &shown["run"];
    assert_eq!(echo["kind"], "import-vllm");
    assert_eq!(echo["endpoint"]["model"], "Qwen/Qwen3-8B");
    assert!(
        notes.contains(
            "vllm-20.0qps-concurrency16-Qwen3-8B-20261204-102500.json: sent at request_rate 20 \
             req/s (burstiness 1.0), at most 16 in flight: placed at concurrency 16"
        ),
        "{notes}"
    );
    assert!(
        notes.contains(
            "request_latency: avg, min, max, std, count, p1, p5, p10, p25, p50, p75, p90, p95, \
             p99 computed from the per-request values (as vLLM computes its own)"
        ),
        "{notes}"
    );
}

#[test]
fn a_folder_and_appended_results_import_the_same_levels() {
    let r = root("vllm-folder");
    let (_, from_folder) = import_ok(&r, &["vllm", fixtures().to_str().unwrap()]);
    // --append-result: one object a line in one file
    let dir = tmpdir("vllm-appended");
    let appended = dir.join("results.json");
    let lines: Vec<String> = files().iter().map(|f| read_json(f).to_string()).collect();
    std::fs::write(&appended, lines.join("\n")).unwrap();
    let (_, from_lines) = import_ok(&r, &["vllm", appended.to_str().unwrap()]);
    let a = show_json(&r, &from_folder)["levels"].clone();
    let b = show_json(&r, &from_lines)["levels"].clone();
    assert_eq!(a, b);
    assert_eq!(a.as_array().unwrap().len(), 3);
}

#[test]
fn bad_input_names_the_file_and_what_is_wrong() {
    let r = root("vllm-bad");
    let fail = |args: &[&str]| import_refused(&r, &[&["vllm"], args].concat());
    let err = fail(&["/nonexistent/result.json"]);
    assert!(
        err.contains("/nonexistent/result.json: no such file or folder"),
        "{err}"
    );

    let dir = tmpdir("vllm-bad-files");
    let err = fail(&[dir.to_str().unwrap()]);
    assert!(err.contains("no .json file found"), "{err}");

    // a rate with no concurrency limit has no place on the axis
    let mut rate_only = read_json(&files()[2]);
    rate_only["max_concurrency"] = Value::Null;
    let file = dir.join("vllm-20.0qps-Qwen3-8B.json");
    std::fs::write(&file, rate_only.to_string()).unwrap();
    let err = fail(&[file.to_str().unwrap()]);
    assert!(
        err.contains(
            "vllm-20.0qps-Qwen3-8B.json: max_concurrency is null: the level was sent at \
             request_rate 20 req/s with no concurrency limit"
        ),
        "{err}"
    );
    assert!(err.contains("--max-concurrency N"), "{err}");

    let guidellm = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/guidellm/sweep.json");
    let err = fail(&[guidellm.to_str().unwrap()]);
    assert!(err.contains("use `rightsize import guidellm`"), "{err}");

    let junk = tmpdir("vllm-junk").join("r.json");
    std::fs::write(&junk, "{\"completed\": 3,").unwrap();
    let err = fail(&[junk.to_str().unwrap()]);
    assert!(err.contains("r.json: not JSON"), "{err}");
    assert!(
        runs_in(&r).is_empty(),
        "a failed import leaves no run behind"
    );
}
