//! GPU telemetry end to end: `--gpu-metrics` pointed at the simulator's dcgm-exporter
//! (`/dcgm/metrics`) records the GPU's utilisation, memory and power in each level file, and
//! its energy per output token agrees with the simulator's own energy integral.
//!
//! The simulator draws no power at rest here (`--gpu-idle-watts 0`), so its energy counter
//! over the whole run is the energy of the steps that made the run's tokens: its increase
//! over the generated-token counter's increase, read before and after the run, is the truth
//! the level's figure is held to (the level is all but a pre-flight request of the run).

use crate::support::common;
use common::{bin, http_get, read_json, stderr, tmpdir, SimProcess};

/// The counter `name` in a Prometheus text (a single series), as a number.
fn counter(text: &str, name: &str) -> f64 {
    let line = text
        .lines()
        .find(|l| l.starts_with(name) && !l.starts_with('#'))
        .unwrap_or_else(|| panic!("{name} in {text}"));
    line.rsplit(' ').next().unwrap().parse().unwrap()
}

/// (energy in joules, generated tokens) as the simulator counts them now.
fn energy_and_tokens(sim: &SimProcess) -> (f64, f64) {
    let gpu = http_get(&sim.url, "/dcgm/metrics");
    let server = http_get(&sim.url, "/metrics");
    (
        counter(&gpu, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION") / 1e3,
        counter(&server, "vllm:generation_tokens_total"),
    )
}

#[test]
fn gpu_metrics_give_power_and_joules_per_token() {
    let sim = SimProcess::start(&["--time-scale", "20", "--gpu-idle-watts", "0"]);
    let gpu_url = format!("{}/dcgm/metrics", sim.url.trim_end_matches("/v1"));
    let before = energy_and_tokens(&sim);
    let out = tmpdir("gpu-telemetry");
    let o = bin()
        .args(["sweep", "-e", &sim.url, "--input-tokens", "128"])
        .args(["--output-tokens", "64", "-c", "32", "-n", "600", "--no-tui"])
        .args(["--telemetry-interval", "100ms", "--gpu-metrics", &gpu_url])
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let after = energy_and_tokens(&sim);
    let truth = (after.0 - before.0) / (after.1 - before.1);

    let run = common::only_run_dir(&out);
    let gpu = read_json(&run.join("level-001-c0032.json"))["server"]["gpu"].clone();
    assert_eq!(gpu["gpus"], 1, "{gpu}");
    assert_eq!(gpu["memory_used_mib"]["max"], 73403.0, "{gpu}");
    let util = gpu["utilization_pct"]["max"].as_f64().unwrap();
    assert!(util > 0.0 && util <= 100.0, "{gpu}");
    // a step draws 259 W for a lone sequence, 700 W at most, and the GPU at rest draws
    // nothing here: a sample reads one or the other (one that falls between a request's end
    // and the client's next, as the debug client's turnarounds on a busy machine do, reads
    // 0 W and pulls the level's mean under 259), and the mean lies between them
    let power = gpu["power_w"]["mean"].as_f64().unwrap();
    assert!(power > 0.0 && power <= 700.0, "{gpu}");
    let text = std::fs::read_to_string(run.join("telemetry.jsonl")).unwrap();
    let samples: Vec<f64> = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .map(|v| {
            v["gpu"]["gpus"][0]["power_w"]
                .as_f64()
                .expect("a power reading")
        })
        .collect();
    assert!(
        samples
            .iter()
            .all(|w| *w == 0.0 || (259.0..=700.0).contains(w)),
        "{samples:?}"
    );
    assert!(samples.iter().any(|w| *w >= 259.0), "{samples:?}");
    let per_token = gpu["joules_per_output_token"].as_f64().unwrap();
    assert!(
        (per_token / truth - 1.0).abs() < 0.05,
        "recorded {per_token} J/token, the simulator's integral {truth}: {gpu}"
    );
    let kwh = gpu["kwh_per_million_output_tokens"].as_f64().unwrap();
    assert!((kwh - per_token / 3.6).abs() < 1e-12, "{gpu}");
    // every sample carries the GPU's reading; the run names the exporter it read
    assert!(
        text.lines().all(|l| l.contains("\"exporter\":\"dcgm\"")),
        "{text}"
    );
    assert_eq!(
        read_json(&run.join("run.json"))["gpu_metrics"],
        gpu_url.as_str()
    );
}

/// An exporter URL that answers nothing rightsize knows is a note, not an error: the run
/// goes on with the server's figures alone.
#[test]
fn a_gpu_url_without_gpu_metrics_is_a_note() {
    let sim = SimProcess::start(&["--time-scale", "20"]);
    let wrong = format!("{}/metrics", sim.url.trim_end_matches("/v1"));
    let out = tmpdir("gpu-telemetry-wrong");
    let o = bin()
        .args(["sweep", "-e", &sim.url, "--input-tokens", "64"])
        .args(["--output-tokens", "32", "-c", "4", "-n", "64", "--no-tui"])
        .args(["--gpu-metrics", &wrong])
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!(
            "GPU telemetry: {wrong} has no NVIDIA DCGM or AMD device metrics; GPU figures are \
             not shown"
        )),
        "{}",
        stderr(&o)
    );
    let run = common::only_run_dir(&out);
    let server = read_json(&run.join("level-001-c0004.json"))["server"].clone();
    assert_eq!(server["scheme"], "vllm", "{server}");
    assert_eq!(server["gpu"], serde_json::Value::Null, "{server}");
}

/// `--gpu-metrics` takes only an http(s) URL, and says so.
#[test]
fn a_bad_gpu_metrics_flag_is_named() {
    let o = bin()
        .args(["sweep", "-e", "sim", "--gpu-metrics", "gpu-node:9400"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--gpu-metrics"), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("http://gpu-node:9400/metrics"),
        "{}",
        stderr(&o)
    );
}
