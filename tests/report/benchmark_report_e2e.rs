//! `export --benchmark-report` and `import benchmark-report` end to end: a sweep against the
//! simulator (on a loopback port the OS chose, failing every sixth request, its GPU exporter
//! read) is exported as llm-d Benchmark Report v0.2, every document is validated against the
//! JSON Schema written from llm-d-benchmark's pydantic models
//! (`tests/fixtures/benchmark_report/br_v0_2.schema.json`), and the reports imported back give
//! every level's counts, latency statistics and throughputs exactly.

use crate::support::common;
use crate::support::export_support;

use common::{bin, read_json, stderr, stdout, tmpdir, SimProcess};
use export_support::{id, rs, runs_in};
use rightsize::metrics::{LevelSummary, Stats};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// The password the endpoint's URL carries: no report may hold it.
const SECRET: &str = "PW-hunter2";

/// A sweep at 2 and 4 (24 requests each, 32 in / 16 out, streaming) against a simulator that
/// answers every sixth request with HTTP 500; returns (results root, run folder).
fn faulty_run() -> (PathBuf, PathBuf) {
    let sim = SimProcess::start(&["--time-scale", "20", "--fault-http500", "every:6"]);
    let url = sim
        .url
        .replacen("http://", &format!("http://alice:{SECRET}@"), 1);
    let gpu = format!("{}/dcgm/metrics", sim.url.trim_end_matches("/v1"));
    let root = tmpdir("br-runs");
    let o = bin()
        .args([
            "sweep",
            "-e",
            &url,
            "--input-tokens",
            "32",
            "--output-tokens",
            "16",
        ])
        .args([
            "--stream",
            "-c",
            "2,4",
            "-n",
            "24",
            "--max-error-rate",
            "0.5",
        ])
        .args(["--telemetry-interval", "50ms", "--gpu-metrics", &gpu])
        .args(["--no-tui", "--out"])
        .arg(&root)
        .output()
        .expect("run rightsize sweep");
    drop(sim);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let run = runs_in(&root).pop().expect("a run folder");
    (root, run)
}

/// The schema, compiled.
fn schema() -> (boon::Schemas, boon::SchemaIndex) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/benchmark_report/br_v0_2.schema.json");
    let mut schemas = boon::Schemas::new();
    let mut compiler = boon::Compiler::new();
    let loc = "file:///br_v0_2.schema.json";
    compiler.add_resource(loc, read_json(&path)).unwrap();
    let index = compiler
        .compile(loc, &mut schemas)
        .unwrap_or_else(|e| panic!("{e:#}"));
    (schemas, index)
}

/// A latency statistic as the format can hold it: without the count of values and the 95 %
/// intervals, which it has no place for.
fn held(s: &Option<Stats>) -> Option<Stats> {
    s.clone().map(|s| Stats {
        count: 0,
        ci95: None,
        past_limit: None,
        ..s
    })
}

/// What a Benchmark Report carries of a level, compared exactly.
fn carried(l: &LevelSummary) -> impl PartialEq + std::fmt::Debug {
    (
        (l.index, l.concurrency, l.held, l.partial),
        (
            l.ok_count(),
            l.error_count(),
            l.cancelled_count,
            l.error_rate,
        ),
        [
            held(&l.time_to_first_token),
            held(&l.inter_token_latency),
            held(&l.inter_chunk_latency),
            held(&l.request_latency),
            held(&l.input_sequence_length),
            held(&l.output_sequence_length),
        ],
        (
            l.output_tps(),
            l.requests_per_sec(),
            l.benchmark_duration.avg,
        ),
        (l.start_time.clone(), l.end_time.clone()),
        (l.planned_requests, l.requests_asked),
    )
}

/// `doc` with `f` applied, for a broken copy.
fn broken(doc: &Value, f: impl FnOnce(&mut Value)) -> Value {
    let mut d = doc.clone();
    f(&mut d);
    d
}

#[test]
fn a_sweep_exports_valid_reports_that_import_back_to_the_same_numbers() {
    let (root, run) = faulty_run();
    let levels = rightsize::report::load_levels(&run).unwrap();
    assert_eq!(levels.len(), 2);
    // every sixth request the simulator receives fails: four of a level's 24, less the turns
    // that went to cooldown requests, which idle streams send while the level's last
    // requests finish (how many follows the machine's pace: a loaded CI machine left 3)
    for l in &levels {
        assert!(l.error_count() >= 1, "every sixth request fails: {l:?}");
    }

    let out = tmpdir("br-out");
    let o = rs(
        &root,
        &[
            "export",
            &id(&run),
            "--benchmark-report",
            out.to_str().unwrap(),
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let files: Vec<PathBuf> = ["level-001-c0002", "level-002-c0004"]
        .iter()
        .map(|s| out.join(format!("benchmark_report_v0.2,_{s}.json")))
        .collect();
    let printed: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    assert_eq!(stdout(&o).lines().collect::<Vec<_>>(), printed);

    let (schemas, index) = schema();
    for (file, l) in files.iter().zip(&levels) {
        let text = std::fs::read_to_string(file).unwrap();
        assert!(!text.contains(SECRET), "{}: {text}", file.display());
        let doc: Value = serde_json::from_str(&text).unwrap();
        if let Err(e) = schemas.validate(&doc, index) {
            panic!("{}: {e:#}", file.display());
        }
        // what each field holds
        assert_eq!(doc["version"], "0.2");
        let load = &doc["scenario"]["load"]["standardized"];
        assert_eq!(load["concurrency"], l.concurrency);
        assert_eq!(load["stage"], l.index);
        assert_eq!(load["tool"], "rightsize");
        assert_eq!(
            load["input_seq_len"],
            json!({"distribution": "fixed", "value": 32})
        );
        assert_eq!(
            load["output_seq_len"],
            json!({"distribution": "fixed", "value": 16})
        );
        let stack = &doc["scenario"]["stack"][0];
        assert_eq!(stack["standardized"]["model"]["name"], "sim-moe-30b-a3b");
        let url = stack["native"]["config"]["base_url"].as_str().unwrap();
        assert!(url.starts_with("http://alice:***@127.0.0.1:"), "{url}");
        let agg = &doc["results"]["request_performance"]["aggregate"];
        assert_eq!(
            agg["requests"]["total"],
            l.ok_count() + l.error_count() + l.cancelled_count
        );
        assert_eq!(agg["requests"]["failures"], l.error_count());
        let e2e = l.request_latency.as_ref().unwrap();
        assert_eq!(
            agg["latency"]["request_latency"],
            json!({"units": "ms", "mean": e2e.avg, "stddev": e2e.std, "min": e2e.min,
                "p1": e2e.p1, "p5": e2e.p5, "p10": e2e.p10, "p25": e2e.p25, "p50": e2e.p50,
                "p75": e2e.p75, "p90": e2e.p90, "p95": e2e.p95, "p99": e2e.p99, "max": e2e.max})
        );
        let tpot = l.inter_token_latency.as_ref().unwrap();
        assert_eq!(agg["latency"]["time_per_output_token"]["p95"], tpot.p95);
        assert_eq!(agg["latency"]["time_per_output_token"]["units"], "ms/token");
        let itl = l.inter_chunk_latency.as_ref().unwrap();
        assert_eq!(agg["latency"]["inter_token_latency"]["p50"], itl.p50);
        assert_eq!(
            agg["throughput"]["output_token_rate"],
            json!({"units": "tokens/s", "mean": l.output_tps()})
        );
        assert_eq!(
            agg["throughput"]["request_rate"],
            json!({"units": "queries/s", "mean": l.requests_per_sec()})
        );
        assert_eq!(doc["run"]["time"]["start"], l.start_time);
        // the server's own figures, where it was sampled
        let obs = &doc["results"]["observability"]["components"][0]["aggregate"];
        match l.server.as_ref().and_then(|s| s.running) {
            Some(running) => assert_eq!(
                obs["running_requests"],
                json!({"units": "count", "mean": running.mean, "max": running.max})
            ),
            None => assert!(obs.is_null(), "{obs}"),
        }

        // the schema refuses what the format refuses
        let agg_path = "/results/request_performance/aggregate";
        for (what, bad) in [
            (
                "no requests.total",
                broken(&doc, |d| {
                    d.pointer_mut(&format!("{agg_path}/requests"))
                        .unwrap()
                        .as_object_mut()
                        .unwrap()
                        .remove("total");
                }),
            ),
            (
                "TTFT in ms/token",
                broken(&doc, |d| {
                    *d.pointer_mut(&format!("{agg_path}/latency/time_to_first_token/units"))
                        .unwrap() = json!("ms/token");
                }),
            ),
            (
                "a unit the format lacks",
                broken(&doc, |d| {
                    *d.pointer_mut(&format!("{agg_path}/throughput/request_rate/units"))
                        .unwrap() = json!("requests/sec");
                }),
            ),
            (
                "a field the format lacks",
                broken(&doc, |d| d["results"]["goodput"] = json!(1.0)),
            ),
            (
                "no run.uid",
                broken(&doc, |d| {
                    d["run"].as_object_mut().unwrap().remove("uid");
                }),
            ),
            (
                "a start that is no time",
                broken(&doc, |d| d["run"]["time"]["start"] = json!("yesterday")),
            ),
            (
                "concurrency 0",
                broken(&doc, |d| {
                    d["scenario"]["load"]["standardized"]["concurrency"] = json!(0)
                }),
            ),
        ] {
            assert!(
                schemas.validate(&bad, index).is_err(),
                "the schema took a report with {what}"
            );
        }
    }

    // imported back: the same numbers, level by level
    let o = rs(
        &root,
        &["import", "benchmark-report", out.to_str().unwrap()],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).starts_with("imported 2 level(s) as run "),
        "{}",
        stdout(&o)
    );
    let imported = runs_in(&root)
        .into_iter()
        .find(|p| *p != run)
        .expect("the imported run");
    let got = rightsize::report::load_levels(&imported).unwrap();
    assert_eq!(got.len(), levels.len());
    for (g, w) in got.iter().zip(&levels) {
        assert_eq!(carried(g), carried(w), "level c={}", w.concurrency);
    }
    let echo = read_json(&imported.join("run.json"));
    assert_eq!(echo["kind"], "import-benchmark-report");
    assert_eq!(echo["endpoint"]["model"], "sim-moe-30b-a3b");
    assert_eq!(echo["plan"]["max_error_rate"], 0.5);
}

#[test]
fn a_bad_report_is_refused_naming_the_file_and_the_field() {
    let root = tmpdir("br-bad");
    let dir = tmpdir("br-bad-files");
    let file = dir.join("benchmark_report_v0.2,_x.json");
    let doc = json!({
        "version": "0.2",
        "run": {"uid": "x"},
        "scenario": {"load": {"standardized": {"concurrency": 4}}},
        "results": {"request_performance": {"aggregate": {
            "requests": {"total": 10},
            "latency": {"request_latency": {"units": "tokens/s", "mean": 3.0}},
        }}},
    });
    std::fs::write(&file, doc.to_string()).unwrap();
    let o = rs(
        &root,
        &["import", "benchmark-report", dir.to_str().unwrap()],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!(
            "import benchmark-report: {}: `results.request_performance.aggregate.latency.\
             request_latency.units` is \"tokens/s\": it must be ms or s",
            file.display()
        )),
        "{}",
        stderr(&o)
    );
    let yaml = dir.join("benchmark_report_v0.2,_y.yaml");
    std::fs::remove_file(&file).unwrap();
    std::fs::write(&yaml, "version: '0.2'\nrun:\n  uid: y\n").unwrap();
    let o = rs(
        &root,
        &["import", "benchmark-report", yaml.to_str().unwrap()],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!(
            "{}: not JSON: rightsize reads Benchmark Reports as JSON only",
            yaml.display()
        )),
        "{}",
        stderr(&o)
    );
    assert!(runs_in(&root).is_empty(), "a refused import leaves no run");
}
