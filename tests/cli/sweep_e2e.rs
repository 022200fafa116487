//! `rightsize sweep` end to end: the real binary against its in-process simulator.

use crate::support::common;
use common::{bin, on_sim, only_run_dir, read_json, stderr, stdout, tmpdir};
use serde_json::Value;

fn quick_sweep(out: &std::path::Path, extra: &[&str]) -> std::process::Output {
    on_sim("sweep", 64, 16)
        .args(["--out", out.to_str().unwrap()])
        .args(extra)
        .output()
        .unwrap()
}

#[test]
fn sweep_counts_every_request_and_writes_the_results_folder() {
    let out = tmpdir("sweep");
    let o = quick_sweep(&out, &["-c", "2,8", "-n", "24", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).expect("stdout is JSON");
    let levels = v["levels"].as_array().unwrap();
    assert_eq!(levels.len(), 2);
    for (l, c) in levels.iter().zip([2, 8]) {
        assert_eq!(l["concurrency"], c);
        assert_eq!(l["request_count"]["avg"].as_f64(), Some(24.0), "{l}");
        assert_eq!(l["error_request_count"]["avg"].as_f64(), Some(0.0), "{l}");
        assert_eq!(l["output_sequence_length"]["avg"].as_f64(), Some(16.0));
        assert_eq!(l["input_sequence_length"]["avg"].as_f64(), Some(64.0));
        assert!(l["time_to_first_token"]["p50"].as_f64().unwrap() > 0.0);
    }
    let run = only_run_dir(&out);
    let echo = read_json(&run.join("run.json"));
    assert_eq!(echo["tool"], "rightsize");
    assert_eq!(echo["workload"]["input_tokens"], 64);
    assert!(echo["ended_at"].is_string());
    assert!(echo["server"]["models"]
        .as_array()
        .is_some_and(|m| !m.is_empty()));
    let l1 = read_json(&run.join("level-001-c0002.json"));
    assert_eq!(l1["request_count"]["avg"].as_f64(), Some(24.0));
    assert_eq!(l1["partial"], false);
    read_json(&run.join("level-002-c0008.json"));
    read_json(&run.join("summary.json"));
    let lines = std::fs::read_to_string(run.join("requests.jsonl")).unwrap();
    let recs: Vec<Value> = lines
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // the measured requests; cooldown ones (that only kept slots busy while a level's last
    // measured requests finished, see docs/search.md) are marked and not counted
    let measured: Vec<&Value> = recs
        .iter()
        .filter(|r| r.get("warmup").is_none() && r.get("cooldown").is_none())
        .collect();
    assert_eq!(measured.len(), 48);
    assert!(measured
        .iter()
        .all(|r| r["output_tokens"] == 16 && r.get("error").is_none()));
    assert!(recs
        .iter()
        .filter(|r| r.get("cooldown").is_some())
        .all(|r| r["cooldown"] == true && r["index"].as_u64().unwrap() >= 24));
    // no temporary files left behind by the atomic writes
    for e in std::fs::read_dir(&run).unwrap() {
        let name = e.unwrap().file_name().into_string().unwrap();
        assert!(!name.ends_with(".tmp"), "{name}");
    }
}

/// `--tools` against the simulator, whose answers are then only tool calls: each level has
/// TTFT, inter-token latency and the output tokens asked for, and its tool-call figures.
#[test]
fn a_sweep_with_tools_reads_answers_that_are_only_tool_calls() {
    let out = tmpdir("tools");
    let tools = out.join("tools.json");
    std::fs::write(
        &tools,
        r#"{"tools":[{"type":"function","function":{"name":"lookup","parameters":{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}}}],"tool_choice":"required"}"#,
    )
    .unwrap();
    let o = on_sim("sweep", 64, 8)
        .args(["--out", out.to_str().unwrap()])
        .args([
            "-c",
            "2",
            "-n",
            "8",
            "--json",
            "--tools",
            tools.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).expect("stdout is JSON");
    let l = &v["levels"][0];
    assert_eq!(l["request_count"]["avg"].as_f64(), Some(8.0), "{l}");
    assert_eq!(l["output_sequence_length"]["avg"].as_f64(), Some(8.0));
    assert_eq!(l["time_to_first_token"]["count"], 8);
    assert_eq!(l["inter_token_latency"]["count"], 8);
    assert_eq!(l["tool_call_answers"], 8);
    assert_eq!(l["tool_call_answer_share"].as_f64(), Some(1.0));
    assert_eq!(l["tool_calls"], 8);
    assert_eq!(l["tool_call_errors"], 0);
    let run = only_run_dir(&out);
    let echo = read_json(&run.join("run.json"));
    assert_eq!(echo["workload"]["tools"]["tool_choice"], "required");
    assert_eq!(
        echo["workload"]["tools"]["tools"][0]["function"]["name"],
        "lookup"
    );
}

#[test]
fn table_goes_to_stdout_and_progress_to_stderr() {
    let out = tmpdir("table");
    let o = quick_sweep(&out, &["-c", "1,4", "-n", "8"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let table = stdout(&o);
    let header = table.lines().next().unwrap();
    for col in [
        "concurrency",
        "req/s",
        "output tok/s",
        "ttft p50",
        "itl p95",
        "e2e p99",
        "errors",
    ] {
        assert!(header.contains(col), "{header}");
    }
    assert_eq!(
        table
            .lines()
            .filter(|l| l.trim_start().starts_with('4'))
            .count(),
        1
    );
    let err = stderr(&o);
    // each level starts warm: a round of warmup (its concurrency) flows into it
    assert!(
        err.contains("level 1: concurrency 1, 1 warmup then 8 requests"),
        "{err}"
    );
    assert!(
        err.contains("level 2: concurrency 4, 4 warmup then 8 requests"),
        "{err}"
    );
}

#[test]
fn secrets_never_reach_the_results() {
    let out = tmpdir("secret");
    let o = bin()
        .env("RS_TEST_SECRET_KEY", "sk-very-secret-value-123")
        .args([
            "sweep",
            "-e",
            "sim",
            "--sim-time-scale",
            "50",
            "--api-key-env",
            "RS_TEST_SECRET_KEY",
            "--input-tokens",
            "16",
            "--output-tokens",
            "4",
            "-c",
            "2",
            "-n",
            "4",
            "--json",
            "--out",
            out.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(!stdout(&o).contains("sk-very-secret"));
    assert!(!stderr(&o).contains("sk-very-secret"));
    let run = only_run_dir(&out);
    for e in std::fs::read_dir(&run).unwrap() {
        let text = std::fs::read_to_string(e.unwrap().path()).unwrap();
        assert!(!text.contains("sk-very-secret"));
    }
    assert!(std::fs::read_to_string(run.join("run.json"))
        .unwrap()
        .contains("RS_TEST_SECRET_KEY"));
}
