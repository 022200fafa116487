//! Server telemetry recorded per level, end to end: a sweep against a simulator with 4 batch
//! slots writes every scrape of its `/metrics` to `telemetry.jsonl` and a `server` summary
//! into each level file, `run.json` keeps the serving configuration the server states, and
//! the summary says what the server did: at concurrency 2 it ran
//! two requests and queued nothing but a request being admitted; at 8 its four slots were
//! full and the rest waited.

use crate::support::common;
use common::{bin, read_json, stderr, tmpdir, SimProcess};
use serde_json::Value;

/// A sweep of `levels`, `n` requests each, with `extra` flags, against a llama.cpp-like
/// simulator (4 slots, 20x real time: a level of 64 requests lasts about 3 s, three scrapes
/// or so); its run folder.
fn sweep(levels: &str, n: &str, extra: &[&str]) -> std::path::PathBuf {
    sweep_on(SimProcess::llama_like("20"), levels, n, extra)
}

fn sweep_on(sim: SimProcess, levels: &str, n: &str, extra: &[&str]) -> std::path::PathBuf {
    let out = tmpdir("telemetry");
    let o = bin()
        .args(["sweep", "-e", &sim.url, "--input-tokens", "64"])
        .args(["--output-tokens", "64", "-c", levels, "-n", n, "--no-tui"])
        .args(extra)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    common::only_run_dir(&out)
}

#[test]
fn a_sweep_records_the_server_s_state_per_level() {
    let run = sweep("2,8", "64", &[]);

    let text = std::fs::read_to_string(run.join("telemetry.jsonl")).expect("telemetry.jsonl");
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect();
    let times: Vec<u64> = lines.iter().map(|l| l["t_ns"].as_u64().unwrap()).collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "{times:?}");
    for level in [0, 1] {
        assert!(
            lines
                .iter()
                .any(|l| l["level"] == level && l["server"] == "vllm"),
            "no sample of level {level} in\n{text}"
        );
    }

    let server = |file: &str| -> Value {
        let level = read_json(&run.join(file));
        level["server"].clone()
    };
    let two = server("level-001-c0002.json");
    let eight = server("level-002-c0008.json");
    for s in [&two, &eight] {
        assert_eq!(s["scheme"], "vllm", "{s}");
        assert!(s["samples"].as_u64().unwrap() >= 1, "{s}");
        assert!(s["kv_cache_usage"]["max"].as_f64().unwrap() > 0.0, "{s}");
        assert_eq!(s["preemptions"], 0.0, "{s}");
    }
    // two streams fit the four slots: running at most 2, and nothing queues but a request
    // between its arrival and the next step (1.6 ms here, about 3 % of the time: a sample
    // may catch one)
    assert!(two["running"]["max"].as_f64().unwrap() <= 2.0, "{two}");
    assert!(two["waiting"]["max"].as_f64().unwrap() <= 1.0, "{two}");
    // eight streams: the four slots are full, the other requests wait
    assert_eq!(eight["running"]["max"], 4.0, "{eight}");
    assert!(eight["waiting"]["max"].as_f64().unwrap() >= 1.0, "{eight}");
    // the summary's levels carry the same
    let summary = read_json(&run.join("summary.json"));
    assert_eq!(summary["levels"][1]["server"], eight);
    // and the run says what it was measured on, as the server states it
    let config = &read_json(&run.join("run.json"))["serving_config"];
    assert_eq!(config["max_num_seqs"], "4", "{config}");
    assert_eq!(config["block_size"], "16", "{config}");
    assert_eq!(config["enable_prefix_caching"], "True", "{config}");
    assert_eq!(config["num_gpu_blocks"], "25000", "{config}");
    assert_eq!(
        read_json(&run.join("run.json"))["telemetry_interval_s"],
        1.0
    );
}

#[test]
fn telemetry_can_be_turned_off() {
    let run = sweep("2", "32", &["--telemetry-interval", "0"]);
    assert!(!run.join("telemetry.jsonl").exists());
    assert_eq!(
        read_json(&run.join("level-001-c0002.json"))["server"],
        Value::Null
    );
    let echo = read_json(&run.join("run.json"));
    assert_eq!(echo["telemetry_interval_s"], Value::Null, "{echo}");
    assert_eq!(echo["serving_config"], Value::Null, "{echo}");
}

/// The same simulator speaking llama-server's names (`llamacpp:requests_processing`, ...,
/// and its `/props`): the figures are read under those names, the slots and context come from
/// `/props`, and the bound names llama.cpp's own setting.
#[test]
fn llama_cpp_names_are_recorded() {
    let sim = SimProcess::start(&[
        "--metric-names",
        "llamacpp",
        "--max-num-seqs",
        "4",
        "--max-model-len",
        "4096",
        "--decode-base-ms",
        "8",
        "--decode-per-seq-ms",
        "12",
        "--time-scale",
        "20",
    ]);
    let metrics = common::http_get(&sim.url, "/metrics");
    assert!(
        metrics.contains("llamacpp:requests_processing "),
        "{metrics}"
    );
    assert!(!metrics.contains("vllm:"), "{metrics}");
    let run = sweep_on(sim, "2,8", "64", &["--telemetry-interval", "250ms"]);
    let eight = read_json(&run.join("level-002-c0008.json"))["server"].clone();
    assert_eq!(eight["scheme"], "llamacpp", "{eight}");
    assert_eq!(eight["running"]["max"], 4.0, "{eight}");
    assert!(eight["waiting"]["max"].as_f64().unwrap() >= 1.0, "{eight}");
    assert!(
        eight["kv_cache_usage"]["max"].as_f64().unwrap() > 0.0,
        "{eight}"
    );
    // llama.cpp keeps no prefix-cache or preemption counters: not claimed
    assert_eq!(eight["prefix_cache_hit_rate"], Value::Null, "{eight}");
    assert_eq!(eight["preemptions"], Value::Null, "{eight}");
    let text = std::fs::read_to_string(run.join("telemetry.jsonl")).unwrap();
    assert!(
        text.lines().all(|l| l.contains("\"server\":\"llamacpp\"")),
        "{text}"
    );
    let config = &read_json(&run.join("run.json"))["serving_config"];
    assert_eq!(config["total_slots"], "4", "{config}");
    assert_eq!(config["n_ctx"], "4096", "{config}");
    let bound = &read_json(&run.join("summary.json"))["bound"];
    assert_eq!(bound["kind"], "batch_slots", "{bound}");
    assert!(
        bound["hint"]
            .as_str()
            .unwrap()
            .contains("llama.cpp's --parallel"),
        "{bound}"
    );
}
