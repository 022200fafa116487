//! What bounds the server, end to end: three simulator configurations swept past their bend,
//! each diagnosed from the telemetry the run recorded (`docs/telemetry.md`, "What bounds the
//! server"): 16 slots with ample KV cache are *batch slots*; 256 slots with a small KV budget
//! are *KV-cache memory*, with preemptions; decode time growing steeply with the batch, with
//! ample slots and memory, is *compute*.

use crate::support::common;
use common::{bin, only_run_dir, read_json, stderr, stdout, tmpdir, SimProcess};

/// Sweeps `levels` against a simulator started with `sim_args` and returns the summary's
/// `bound` and the printed text. 64 requests a level (at 128 the kv-cache and compute cases
/// took 21 s each, the cli binary's longest; at 64 they take 11.5 s and read the same bound,
/// also with both cores busy beside them).
fn bound_of(sim_args: &[&str], tokens: (&str, &str), levels: &str) -> (serde_json::Value, String) {
    let sim = SimProcess::start(sim_args);
    let out = tmpdir("bound");
    let o = bin()
        .args([
            "sweep", "-e", &sim.url, "--no-tui", "-n", "64", "-c", levels,
        ])
        .args(["--input-tokens", tokens.0, "--output-tokens", tokens.1])
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let summary = read_json(&only_run_dir(&out).join("summary.json"));
    (summary["bound"].clone(), stdout(&o))
}

#[test]
fn sixteen_slots_bound_by_batch_slots() {
    // 16 slots: at 32 half the streams wait
    let (b, text) = bound_of(
        &[
            "--max-num-seqs",
            "16",
            "--decode-per-seq-ms",
            "1",
            "--time-scale",
            "5",
        ],
        ("64", "64"),
        "8,16,32",
    );
    assert_eq!(b["kind"], "batch_slots", "{b}\n{text}");
    assert_eq!(b["at"], 32, "{b}");
    assert!(
        text.contains("bound: batch slots at 32 (running flat at 16"),
        "{text}"
    );
    assert!(text.contains("vLLM's --max-num-seqs"), "{text}");
}

#[test]
fn a_small_kv_cache_bounds_by_kv_cache_memory() {
    // 256 slots, a KV cache of 8,000 tokens: 512 tokens a sequence fill it at about 15
    let (b, text) = bound_of(
        &[
            "--max-num-seqs",
            "256",
            "--kv-cache-tokens",
            "8000",
            "--time-scale",
            "5",
        ],
        ("256", "256"),
        "8,16,32",
    );
    assert_eq!(b["kind"], "kv_cache", "{b}\n{text}");
    assert!(
        text.contains("bound: KV-cache memory at 32 (the KV cache reached"),
        "{text}"
    );
    assert!(text.contains("--gpu-memory-utilization"), "{text}");
}

#[test]
fn steps_growing_with_the_batch_bound_by_compute() {
    // ample slots and memory, 3 ms more a step for every running sequence
    let (b, text) = bound_of(
        &["--decode-per-seq-ms", "3", "--time-scale", "5"],
        ("64", "64"),
        "8,16,32",
    );
    assert_eq!(b["kind"], "compute", "{b}\n{text}");
    assert!(
        text.contains("bound: compute at 32 (the batch takes the whole load"),
        "{text}"
    );
}
