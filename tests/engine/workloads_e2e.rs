//! Workloads end to end, the real binary against the simulator on loopback: calibration
//! against a server with a 37-token chat template, datasets in each format (good files and a
//! bad line each), and a Mooncake-style trace whose prefix reuse shows on the simulator's
//! `/metrics`.
#![cfg(feature = "exact-tokenizers")]

use crate::support::common;
use common::{
    bin, http_get, on_sim, only_run_dir, prometheus_value, read_json, stderr, tmpdir, SimProcess,
};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The one run's `run.json` and its first level's file.
fn run_files(out: &Path) -> (Value, Value) {
    let run = only_run_dir(out);
    (
        read_json(&run.join("run.json")),
        read_json(&run.join("level-001-c0004.json")),
    )
}

/// A sweep at concurrency 4 against `url` with 32 requests of `input` tokens, 4 out.
fn sweep_on(url: &str, out: &Path, input: u32, extra: &[&str]) -> std::process::Output {
    bin()
        .args([
            "sweep",
            "-e",
            url,
            "-c",
            "4",
            "-n",
            "32",
            "--output-tokens",
            "4",
        ])
        .args(["--input-tokens", &input.to_string()])
        .args(["--out", out.to_str().unwrap(), "--json"])
        .args(extra)
        .output()
        .unwrap()
}

/// A simulator that counts with o200k and adds a 37-token chat template.
fn templated_sim() -> SimProcess {
    SimProcess::start(&[
        "--tokenizer",
        "o200k",
        "--template-overhead",
        "37",
        "--time-scale",
        "50",
    ])
}

#[test]
fn calibration_lands_the_servers_input_length_on_the_target() {
    let sim = templated_sim();
    for (input, tokenizer) in [(128, "o200k"), (1024, "o200k"), (1024, "approx")] {
        let out = tmpdir("calibrated");
        let o = sweep_on(&sim.url, &out, input, &["--tokenizer", tokenizer]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let (echo, level) = run_files(&out);
        let c = &echo["workload"]["calibration"];
        assert_eq!(c["applied"], true, "{c}");
        assert_eq!(c["points"].as_array().map(Vec::len), Some(3), "{c}");
        let counts = &level["token_counts"];
        let server = counts["input_server_mean"].as_f64().unwrap();
        assert_eq!(counts["input_target_mean"].as_f64(), Some(input as f64));
        assert!(
            (server - input as f64).abs() <= 0.01 * input as f64,
            "{tokenizer}: server mean {server} for {input}: {counts}"
        );
        assert_eq!(counts.get("warnings"), None, "{counts}");
        if tokenizer == "o200k" {
            // the same tokenizer on both sides: the fit is the template exactly
            assert_eq!(c["fit"]["server_per_client"].as_f64(), Some(1.0), "{c}");
            assert_eq!(c["fit"]["overhead_tokens"].as_f64(), Some(37.0), "{c}");
            assert_eq!(server, input as f64);
            assert_eq!(
                counts["input_client_mean"].as_f64(),
                Some(input as f64 - 37.0)
            );
        }
    }
}

#[test]
fn an_uncalibrated_run_reports_the_difference() {
    let sim = templated_sim();
    let out = tmpdir("uncalibrated");
    let o = sweep_on(
        &sim.url,
        &out,
        128,
        &["--tokenizer", "o200k", "--no-calibrate"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let (echo, level) = run_files(&out);
    assert_eq!(echo["workload"]["calibrate"], false);
    assert_eq!(echo["workload"].get("calibration"), None);
    let counts = &level["token_counts"];
    assert_eq!(counts["input_client_mean"].as_f64(), Some(128.0));
    assert_eq!(counts["input_server_mean"].as_f64(), Some(165.0));
    let warning = "input lengths: the server counted 165.0 tokens per request against 128.0 \
                   by the target (+28.9 %); --calibrate sizes prompts for the server's count";
    assert_eq!(counts["warnings"][0], warning, "{counts}");
    assert!(stderr(&o).contains(warning), "{}", stderr(&o));
    // `show` prints the lengths side by side
    let run = only_run_dir(&out);
    let shown = bin()
        .args(["show", run.to_str().unwrap()])
        .output()
        .unwrap();
    let text = common::stdout(&shown);
    assert!(text.contains("  tokenizer o200k_base\n"), "{text}");
    assert!(text.contains("  calibration off\n"), "{text}");
    assert!(
        text.contains("in target  in client  in server  server vs target"),
        "{text}"
    );
    assert!(
        text.contains("128.0      128.0      165.0            +28.9%"),
        "{text}"
    );
}

/// Writes `text` to `name` in a fresh folder.
fn data_file(name: &str, text: &str) -> PathBuf {
    let p = tmpdir("dataset").join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// A sweep of the in-process simulator (2 workers, `n` requests) over `dataset`.
fn dataset_sweep(dataset: &Path, n: u32, extra: &[&str]) -> (std::process::Output, PathBuf) {
    let out = tmpdir("dataset-run");
    let o = on_sim("sweep", 64, 16)
        .args(["-c", "2", "-n", &n.to_string(), "--json"])
        .args(["--dataset", dataset.to_str().unwrap()])
        .args(["--out", out.to_str().unwrap()])
        .args(extra)
        .output()
        .unwrap();
    (o, out)
}

/// A request's client input tokens and `max_tokens`.
type PromptLengths = (u64, u64);

fn requests(out: &Path) -> Vec<Value> {
    common::request_log(&only_run_dir(out))
}

#[test]
fn each_dataset_format_drives_a_run_and_is_recorded() {
    let jsonl = data_file(
        "prompts.jsonl",
        "{\"text\": \"what is a load test\"}\n{\"text\": \"write a haiku\", \"output_length\": 5}\n",
    );
    let sharegpt = data_file(
        "sharegpt.json",
        r#"[{"conversations": [{"from": "human", "value": "why is the sky blue"},
                               {"from": "gpt", "value": "light scatters off air"}]}]"#,
    );
    let trace = data_file(
        "trace.jsonl",
        "{\"timestamp\": 0, \"input_length\": 700, \"output_length\": 3, \"hash_ids\": [1, 2]}\n",
    );
    // (file, format, per request: client input tokens, max_tokens)
    let cases: [(&Path, &str, [PromptLengths; 2]); 3] = [
        (&jsonl, "jsonl", [(5, 16), (5, 5)]),
        (&sharegpt, "sharegpt", [(5, 6), (5, 6)]),
        (&trace, "mooncake", [(700, 3), (700, 3)]),
    ];
    for (file, format, want) in cases {
        let (o, out) = dataset_sweep(file, 4, &[]);
        assert_eq!(o.status.code(), Some(0), "{format}: {}", stderr(&o));
        let echo = read_json(&only_run_dir(&out).join("run.json"));
        let d = &echo["workload"]["dataset"];
        assert_eq!(d["format"], format);
        assert_eq!(d["path"], file.to_str().unwrap());
        let bytes = std::fs::read(file).unwrap();
        assert_eq!(
            d["sha256"],
            rightsize::workload::tokenizer::sha256_hex(&bytes)
        );
        assert_eq!(d["sampling"], "in_order");
        // the level's requests; the warmup's first round asks for shorter answers in turn
        // (`engine::warmup_lengths`), so its records do not carry the dataset's lengths
        let mut recs: Vec<Value> = requests(&out)
            .into_iter()
            .filter(|r| r.get("warmup").is_none())
            .collect();
        recs.sort_by_key(|r| r["index"].as_u64());
        for r in &recs {
            // by the request's index, not its place in the file: a cooldown request still in
            // flight when the level settles is dropped, so indices need not be contiguous
            let (input, max) = want[(r["index"].as_u64().unwrap() % 2) as usize];
            assert_eq!(r["input_tokens"].as_u64(), Some(input), "{format}: {r}");
            assert_eq!(r["max_tokens"].as_u64(), Some(max), "{format}: {r}");
            // the simulator counts with the run's tokenizer: both sides agree
            assert_eq!(
                r["server_input_tokens"].as_u64(),
                Some(input),
                "{format}: {r}"
            );
        }
        let shown = bin()
            .args(["show", only_run_dir(&out).to_str().unwrap()])
            .output()
            .unwrap();
        let line = format!("  dataset   {} ({format}, ", file.display());
        assert!(
            common::stdout(&shown).contains(&line),
            "{}",
            common::stdout(&shown)
        );
    }
}

#[test]
fn a_bad_line_in_each_format_is_bad_input_naming_file_and_line() {
    let cases = [
        (
            "bad.jsonl",
            "{\"text\": \"fine\"}\n{\"prompt\": \"no text field\"}\n",
            ":2: the record has no `text`, `texts` or `messages`",
        ),
        (
            "bad.json",
            "[\n {\"conversations\": [{\"from\": \"human\", \"value\": \"q\"}]},\n \
             {\"conversations\": [{\"from\": \"human\", \"value\": 7}]}\n]\n",
            ":3:48: invalid type: integer `7`, expected a string",
        ),
        (
            "bad-trace.jsonl",
            "{\"input_length\": 512, \"output_length\": 1, \"hash_ids\": [1]}\n\
             {\"input_length\": 1500, \"output_length\": 1, \"hash_ids\": [1, 2]}\n",
            ":2: input_length 1500 does not fit 2 hash ids of 512 tokens (it must be more \
             than 512 and at most 1024); set --block-tokens to the trace's block size",
        ),
    ];
    for (name, text, want) in cases {
        let file = data_file(name, text);
        let (o, _) = dataset_sweep(&file, 4, &[]);
        assert_eq!(o.status.code(), Some(2), "{name}: {}", stderr(&o));
        assert_eq!(stderr(&o), format!("error: {}{want}\n", file.display()));
    }
    let o = on_sim("sweep", 8, 8)
        .args(["--tokenizer", "/nonexistent/tokenizer.json"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o),
        "error: tokenizer `/nonexistent/tokenizer.json`: no such file; use approx, o200k, \
         cl100k or the path of a Hugging Face tokenizer.json\n"
    );
}

/// The prefix-cache hit rate a trace implies with a cache that never evicts: the tokens of
/// each record's leading blocks whose id chain appeared before, over all input tokens.
fn implied_hit_rate(records: &[(Vec<u64>, u64)], block: u64) -> f64 {
    let mut seen = std::collections::HashSet::new();
    let (mut hits, mut total) = (0u64, 0u64);
    for (ids, input) in records {
        let mut leading = 0;
        for k in 1..=ids.len() {
            if !seen.contains(&ids[..k]) {
                break;
            }
            leading = k as u64;
        }
        hits += (leading * block).min(input - 1);
        total += input;
        for k in 1..=ids.len() {
            seen.insert(ids[..k].to_vec());
        }
    }
    hits as f64 / total as f64
}

#[test]
fn a_mooncake_trace_shows_its_prefix_reuse_on_the_simulators_metrics() {
    // 200 records of five 512-token blocks (the last one cut to 300 tokens): the first four
    // ids come from one of 50 shared chains, the fifth is the record's own, so 600 of the
    // 1000 hash ids repeat an earlier one
    let mut lines = String::new();
    let mut records = Vec::new();
    for i in 0..200u64 {
        let root = i % 50;
        let ids = vec![
            root * 10 + 1,
            root * 10 + 2,
            root * 10 + 3,
            root * 10 + 4,
            100_000 + i,
        ];
        let input = 4 * 512 + 300;
        lines += &serde_json::json!({"timestamp": i * 100, "input_length": input,
            "output_length": 2, "hash_ids": ids})
        .to_string();
        lines.push('\n');
        records.push((ids, input));
    }
    let repeated: usize = {
        let mut seen = std::collections::HashSet::new();
        records
            .iter()
            .flat_map(|(ids, _)| ids)
            .filter(|id| !seen.insert(**id))
            .count()
    };
    assert_eq!(repeated, 600);
    let trace = data_file("trace.jsonl", &lines);
    let sim = SimProcess::start(&["--tokenizer", "o200k", "--time-scale", "50"]);
    let before = http_get(&sim.url, "/metrics");
    let out = tmpdir("trace-run");
    let o = bin()
        .args(["sweep", "-e", &sim.url, "-c", "4", "-n", "200", "--json"])
        .args(["--tokenizer", "o200k", "--no-calibrate"])
        .args(["--dataset", trace.to_str().unwrap()])
        .args(["--out", out.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let after = http_get(&sim.url, "/metrics");
    let delta = |name: &str| prometheus_value(&after, name) - prometheus_value(&before, name);
    let hits = delta("vllm:prefix_cache_hits_total");
    let queries = delta("vllm:prefix_cache_queries_total");
    let measured = hits / queries;
    let implied = implied_hit_rate(&records, 512);
    println!("prefix-cache hit rate: simulator {measured:.4}, trace {implied:.4}");
    assert!((implied - 0.654).abs() < 0.001, "{implied}");
    assert!(
        (measured - implied).abs() <= 0.05,
        "the simulator's hit rate {measured:.3} ({hits} of {queries} tokens), the trace's \
         {implied:.3}"
    );
    let (_, level) = run_files(&out);
    assert_eq!(
        level["token_counts"]["input_server_mean"].as_f64(),
        Some(2348.0)
    );
}
