//! Does sampling the server's `/metrics` and its GPUs' exporter move the client? (issue 26:
//! TTFT p50 at concurrency 256 with telemetry at 1 s and with it off should differ by under
//! 2 %.) Telemetry on is the simulator's `/metrics` and its dcgm-exporter (`--gpu-metrics`),
//! each sampled every second and at the level's start and end.
//!
//! `cargo bench --bench telemetry_cost` (release build). The real binary runs
//! `sweep -c 256 -n 4096 --output-tokens 64 --output-stddev 16` against one `rightsize sim --time-scale 20` process PAIRS times
//! (`RIGHTSIZE_TELEMETRY_PAIRS`, default 8), each pair once with `--telemetry-interval 1s` and
//! once with `--telemetry-interval 0`, the order alternating from pair to pair so a drift of
//! the machine falls on both; it prints each run's TTFT p50 and the medians of the two modes.

#[path = "support/sim_process.rs"]
mod sim_process;

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Stdio};

fn main() {
    let pairs: usize = std::env::var("RIGHTSIZE_TELEMETRY_PAIRS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(8);
    let sim = sim_process::start_sim(&["--time-scale", "20"], None);
    let root = std::env::temp_dir().join(format!("rightsize-telemetry-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    println!(
        "telemetry cost: concurrency 256, 4096 requests a run, {pairs} pairs against {}",
        sim.base_url
    );
    let (mut on, mut off) = (Vec::new(), Vec::new());
    for i in 0..pairs {
        let order: [&str; 2] = if i % 2 == 0 { ["1s", "0"] } else { ["0", "1s"] };
        for interval in order {
            let out = root.join(format!("{i}-{}", interval.replace('s', "")));
            let seed = 2 * i + usize::from(interval == "0");
            let p50 = ttft_p50(&sim.base_url, &out, interval, seed);
            println!(
                "  pair {} telemetry {interval:>2}: TTFT p50 {p50:.3} ms",
                i + 1
            );
            if interval == "0" {
                off.push(p50);
            } else {
                on.push(p50);
            }
        }
    }
    let _ = std::fs::remove_dir_all(&root);
    let (m_on, m_off) = (median(&mut on), median(&mut off));
    println!(
        "\nTTFT p50, median of {pairs}: telemetry at 1 s {m_on:.3} ms, off {m_off:.3} ms: \
         {:+.2} %",
        (m_on / m_off - 1.0) * 100.0
    );
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Runs one level with `--telemetry-interval interval` into `out`, with prompts of `seed`
/// (every run its own: the simulator's prefix cache would serve repeated ones) and output
/// lengths that vary (with one length a round's streams start and end together, and the TTFT
/// moves with whether they do); its TTFT p50 in ms.
fn ttft_p50(base_url: &str, out: &Path, interval: &str, seed: usize) -> f64 {
    let status = Command::new(env!("CARGO_BIN_EXE_rightsize"))
        .args(["sweep", "-e", base_url, "--input-tokens", "256"])
        .args(["--output-tokens", "64", "--output-stddev", "16", "--seed"])
        .arg(seed.to_string())
        .args(["--no-calibrate", "-c", "256", "--gpu-metrics"])
        .arg(format!("{}/dcgm/metrics", base_url.trim_end_matches("/v1")))
        .args([
            "-n",
            "4096",
            "--no-tui",
            "--telemetry-interval",
            interval,
            "--out",
        ])
        .arg(out)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("the rightsize binary runs");
    assert!(status.success(), "the sweep failed: {status}");
    let run = std::fs::read_dir(out)
        .expect("the run folder")
        .flatten()
        .next()
        .expect("one run")
        .path();
    let level: Value = serde_json::from_str(
        &std::fs::read_to_string(run.join("level-001-c0256.json")).expect("the level file"),
    )
    .expect("JSON");
    level["time_to_first_token"]["p50"]
        .as_f64()
        .expect("a TTFT p50")
}
