//! Coverage of the per-level 95 % intervals (issue 25): how often a short level's interval
//! contains what a level forty times as long measures, on a simulator whose speed moves
//! within a level (the noise's slow factor is drawn again every `--noise-period-ms` of model
//! time), so consecutive requests share the server's state as a real closed loop's do.
//!
//! `cargo bench --bench coverage` (release build). The real binary runs
//! `sweep -c C -n 1024` against one `rightsize sim --noise 0.3` process RUNS times
//! (`RIGHTSIZE_COVERAGE_RUNS`, default 40), then once with 40 x 1,024 requests; for e2e p99,
//! TTFT p95 and mean ITL it prints how many of the short levels' intervals contain the long
//! level's value, and their median width (an interval open on one side counts as containing
//! what lies on that side, and as infinitely wide). A method that allows for correlated
//! requests should reach about 95 %; one that takes them as independent falls short.
//! Levels start warm, as the tool's default (a round of warm-up the level takes over from
//! stream by stream); `RIGHTSIZE_COVERAGE_WARMUP=N` gives every level `--warmup N` (0: the
//! cold start, every stream arriving at once, is measured).
//! `RIGHTSIZE_COVERAGE_SIM=plain` runs the simulator without noise (as the demo and the
//! dashboard run it), `RIGHTSIZE_COVERAGE_CONCURRENCY=C` sets the level's concurrency (128)
//! and `RIGHTSIZE_COVERAGE_WORKLOAD=default` sends the tool's default workload (1,024 in,
//! 256 out) instead of 64 in and 32 out (`default-varied`: answers of 256 +- 64 tokens).
//! After the coverage table it prints the plain rule's wrong calls at limits around the long
//! level's value (`support/plain_rule.rs`).
//! `RIGHTSIZE_COVERAGE_NOISE_PERIOD=MS` sets how long the simulator's slow factor lasts
//! (model ms, default 2000). A short level lasts about 8 s of model time (2 s of real time at
//! 4x) in eight rounds, so at 2000 it sees about four of the server's speeds, each about as
//! long as one of its blocks (three for a mean, four for a percentile: the hard case for
//! batch means); at 250 the speed moves about thirty times within every level, and a block
//! spans several speeds, the case batch means are built for.

#[path = "support/plain_rule.rs"]
mod plain_rule;
#[path = "support/sim_process.rs"]
mod sim_process;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Concurrency of every level (`RIGHTSIZE_COVERAGE_CONCURRENCY`): by default near the
/// default simulator's knee (between 64 and 256).
fn concurrency() -> u64 {
    env_or("RIGHTSIZE_COVERAGE_CONCURRENCY", 128)
}

/// `RIGHTSIZE_COVERAGE_SIM=plain`: the built-in simulator as the demo runs it, without noise
/// (its speed moves only with its batch); otherwise noise 0.3.
fn plain_sim() -> bool {
    std::env::var("RIGHTSIZE_COVERAGE_SIM").is_ok_and(|v| v == "plain")
}

/// `RIGHTSIZE_COVERAGE_WORKLOAD=default`: the tool's default workload (1,024 in, 256 out);
/// `default-varied`: the same with answers of 256 +- 64 tokens; otherwise 64 in and 32 +- 8
/// out, which keeps a level near 8 s of model time.
fn default_workload() -> bool {
    std::env::var("RIGHTSIZE_COVERAGE_WORKLOAD").is_ok_and(|v| v.starts_with("default"))
}

/// `RIGHTSIZE_COVERAGE_WORKLOAD=default-varied`: see [`default_workload`].
fn varied_answers() -> bool {
    std::env::var("RIGHTSIZE_COVERAGE_WORKLOAD").is_ok_and(|v| v == "default-varied")
}
const SHORT: u64 = 1024;
/// How many short levels' worth the long level runs (`RIGHTSIZE_COVERAGE_LONG`, 40).
fn long_factor() -> u64 {
    env_or("RIGHTSIZE_COVERAGE_LONG", 40)
}

/// The statistics measured: (name, level-file key, ci95 key).
const STATS: [(&str, &str, &str); 3] = [
    ("e2e p99", "request_latency", "p99"),
    ("TTFT p95", "time_to_first_token", "p95"),
    ("mean ITL", "inter_token_latency", "avg"),
];

fn main() {
    let runs = env_or("RIGHTSIZE_COVERAGE_RUNS", 40);
    let period = env_or("RIGHTSIZE_COVERAGE_NOISE_PERIOD", 2000);
    println!(
        "warmup per level: {}, {}, {} workload",
        warmup().unwrap_or_else(|| "the default (one round)".into()),
        if plain_sim() {
            "plain simulator (no noise)".to_string()
        } else {
            format!("noise 0.3, period {period} model ms")
        },
        if varied_answers() {
            "the default with varied answers (1024 in, 256 +- 64 out)"
        } else if default_workload() {
            "the default (1024 in, 256 out)"
        } else {
            "a small (64 in, 32 out)"
        },
    );
    let period = period.to_string();
    let noise = ["--noise", "0.3", "--noise-period-ms", &period];
    let mut sim_args: Vec<&str> = vec!["--time-scale", "4", "--seed", "25"];
    if !plain_sim() {
        sim_args.extend(noise);
    }
    let sim = sim_process::start_sim(&sim_args, None);
    let root = std::env::temp_dir().join(format!("rightsize-coverage-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    println!(
        "coverage: concurrency {}, {runs} levels of {SHORT} requests and one of {}, \
         against {} (4x real time)",
        concurrency(),
        SHORT * long_factor(),
        sim.base_url
    );
    // each short level's file, and its requests in start order for the plain rule
    let (short, requests): (Vec<Value>, Vec<_>) = (0..runs)
        .map(|i| {
            let dir = root.join(format!("short-{i}"));
            let level = run_level(&sim.base_url, &dir, SHORT, i + 1);
            let p99 = point(&level, STATS[0].1, STATS[0].2);
            println!("  short level {}: e2e p99 {p99:.1} ms", i + 1);
            let requests = plain_rule::requests_in_order(&dir);
            let _ = std::fs::remove_dir_all(&dir);
            (level, requests)
        })
        .unzip();
    let long = run_level(&sim.base_url, &root.join("long"), SHORT * long_factor(), 0);
    let _ = std::fs::remove_dir_all(&root);
    // the levels' length in model time (the simulator runs 4x real time)
    let mut lengths: Vec<f64> = short.iter().map(|l| 4.0 * duration_s(l)).collect();
    lengths.sort_by(f64::total_cmp);
    println!(
        "\nmodel time: a short level {:.1} s (median), the long level {:.1} s",
        lengths[lengths.len() / 2],
        4.0 * duration_s(&long)
    );

    println!(
        "\n{:<10} {:>12} {:>13} {:>10} {:>14} {:>6} {:>12}",
        "statistic",
        "long value",
        "short median",
        "coverage",
        "median width",
        "open",
        "missed lo/hi"
    );
    let mut missed_levels = Vec::new();
    for (name, key, q) in STATS {
        let truth = point(&long, key, q);
        let mut covered = 0;
        let mut open = 0;
        let mut widths: Vec<f64> = Vec::new();
        // intervals wholly below the long value, and wholly above it
        let (mut low, mut high) = (0, 0);
        for (i, level) in short.iter().enumerate() {
            let (lo, hi) = interval(level, key, q);
            if lo.is_none_or(|lo| lo <= truth) && hi.is_none_or(|hi| truth <= hi) {
                covered += 1;
            } else {
                if hi.is_some_and(|hi| hi < truth) {
                    low += 1;
                } else {
                    high += 1;
                }
                missed_levels.push(format!(
                    "  {name}: short level {}: {:.2} ms in [{}, {}], long {truth:.2} ms",
                    i + 1,
                    point(level, key, q),
                    lo.map_or("-".into(), |v| format!("{v:.2}")),
                    hi.map_or("-".into(), |v| format!("{v:.2}")),
                ));
            }
            match (lo, hi) {
                (Some(lo), Some(hi)) => widths.push(hi - lo),
                _ => {
                    open += 1;
                    widths.push(f64::INFINITY);
                }
            }
        }
        widths.sort_by(f64::total_cmp);
        let median = widths[widths.len() / 2];
        // where the short levels' own values lie: a coverage short of 95 % with their median
        // far from the long value is a difference between the levels (their start, say), not
        // an interval too narrow for their scatter
        let mut values: Vec<f64> = short.iter().map(|l| point(l, key, q)).collect();
        values.sort_by(f64::total_cmp);
        let short_median = values[values.len() / 2];
        println!(
            "{name:<10} {truth:>9.1} ms {short_median:>10.1} ms {:>9.1}% {:>11.1} ms {open:>6} {:>12}",
            100.0 * covered as f64 / short.len() as f64,
            median,
            format!("{low}/{high}")
        );
    }
    // the misses one by one: all on one side of the long value is a difference between the
    // short levels and the long one (a bias), not scatter an interval missed
    if !missed_levels.is_empty() {
        println!("\nmissed:");
        for m in missed_levels {
            println!("{m}");
        }
    }
    // the plain rule on the percentiles, at limits around the long level's value
    let round = concurrency() as u32;
    for (name, key, q, quantile, ttft) in [
        ("e2e p99", "request_latency", "p99", 0.99, false),
        ("TTFT p95", "time_to_first_token", "p95", 0.95, true),
    ] {
        let truth = point(&long, key, q);
        let mut tally = plain_rule::Tally::new();
        for (level, reqs) in short.iter().zip(&requests) {
            let values: Vec<f64> = reqs
                .iter()
                .filter_map(|(t, e)| if ttft { *t } else { Some(*e) })
                .collect();
            tally.add(&values, quantile, round, interval(level, key, q), truth);
        }
        tally.print(name);
    }
}

/// `--warmup` for every level (`RIGHTSIZE_COVERAGE_WARMUP`); unset: the tool's default (one
/// round).
fn warmup() -> Option<String> {
    std::env::var("RIGHTSIZE_COVERAGE_WARMUP").ok()
}

/// The number in environment variable `name`, else `default`.
fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// A level's length in real seconds.
fn duration_s(level: &Value) -> f64 {
    level["benchmark_duration"]["avg"]
        .as_f64()
        .unwrap_or(f64::NAN)
}

/// Runs one closed-loop level of `n` requests into `out` with prompts of `seed` and returns
/// its level file.
///
/// Every level sends its own prompts: with one seed for all, the simulator's prefix cache
/// served every short level's prompts from the second level on (a 64-token prompt is four
/// cached blocks) and the long level's only for its first 1,024, so the short levels measured
/// a cheaper server (mean ITL 6.1 ms against the long level's 7.0 ms over 100 of them). Output
/// lengths vary (32 +- 8 tokens): with exactly 32 every stream of a round starts and ends in
/// the same step, a lockstep the short levels never left and the long one left after about
/// 5,000 requests (the prefills of arrivals then land between decode steps), again two
/// different servers. Neither is what a confidence interval from one level's values can see.
fn run_level(base_url: &str, out: &Path, n: u64, seed: u64) -> Value {
    let status = Command::new(env!("CARGO_BIN_EXE_rightsize"))
        .args(["sweep", "-e", base_url])
        .args(if varied_answers() {
            &["--output-stddev", "64"][..]
        } else if default_workload() {
            &[][..]
        } else {
            &[
                "--input-tokens",
                "64",
                "--output-tokens",
                "32",
                "--output-stddev",
                "8",
            ][..]
        })
        .args(["--no-calibrate", "--seed"])
        .arg(seed.to_string())
        .args([
            "-c",
            &concurrency().to_string(),
            "-n",
            &n.to_string(),
            "--no-tui",
        ])
        .args(
            warmup()
                .map(|w| ["--warmup".to_string(), w])
                .into_iter()
                .flatten(),
        )
        .arg("--out")
        .arg(out)
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .status()
        .expect("the rightsize binary runs");
    assert!(status.success(), "the sweep failed: {status}");
    let file = level_file(out).expect("the run wrote a level file");
    serde_json::from_str(&std::fs::read_to_string(&file).expect("the level file reads"))
        .expect("the level file is JSON")
}

/// The one `level-*.json` under `dir`.
fn level_file(dir: &Path) -> Option<PathBuf> {
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let path = entry.path();
        if path.is_dir() {
            if let Some(found) = level_file(&path) {
                return Some(found);
            }
        } else if path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("level-") && n.ends_with(".json"))
        {
            return Some(path);
        }
    }
    None
}

fn point(level: &Value, key: &str, q: &str) -> f64 {
    level[key][q].as_f64().unwrap_or(f64::NAN)
}

fn interval(level: &Value, key: &str, q: &str) -> (Option<f64>, Option<f64>) {
    let ci = &level[key]["ci95"][q];
    (ci[0].as_f64(), ci[1].as_f64())
}
