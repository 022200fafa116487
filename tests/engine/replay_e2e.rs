//! Acceptance (issue 14): `rightsize replay` of a 300-record trace at `--speedup 10` sends
//! each request close to its scheduled time (read from the requests file) and reports metrics
//! per time window. It runs the real binary against the built-in simulator.
//!
//! The goal is 2 ms at p99. A send waits on one wake-up the kernel grants, the dispatcher
//! thread's: it writes the request itself the moment it wakes (`docs/open-loop.md`, "How sends
//! are timed"). On this machine (two virtual CPUs) a woken thread is now and then late by 1-4
//! ms at p99 whenever anything else runs, and by 5-30 ms beside other builds (a thread
//! sleeping 20 ms alone: 3.8 ms p99 late beside a compile). So the test measures that lateness
//! on the same machine at the same time, with a thread of its own sleeping 20 ms at a time
//! while the replay runs, and holds the client to 2 ms past one of those wake-ups at p99, with
//! half a wake-up more for the noise of comparing two p99s of about 300 samples each: what the
//! client adds, not what the kernel takes. (Beside other builds, load 7 on two CPUs, the send
//! error's p99 was 0.57-1.13 times the probe's in three runs; quiet, the 2 ms dominates. The
//! earlier design, two wake-ups per send, was held to 2 ms past two.) The 2 ms also covers the
//! few requests that find no connection ready and wait for a runtime worker too.

use crate::support::common;
use common::*;

/// 300 Mooncake records over about 60 s: exponential gaps of 200 ms mean from a fixed
/// generator, 64 tokens in, 8 out.
fn trace() -> String {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut t = 0.0f64;
    let mut out = String::new();
    for _ in 0..300 {
        out += &format!(
            "{{\"timestamp\": {:.0}, \"input_length\": 64, \"output_length\": 8, \"hash_ids\": []}}\n",
            t
        );
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let u = (x >> 11) as f64 / (1u64 << 53) as f64;
        t += -200.0 * (1.0 - u).ln();
    }
    out
}

#[test]
fn a_replay_at_10x_sends_on_time_and_reports_windows() {
    let dir = tmpdir("replay");
    let file = dir.join("trace.jsonl");
    std::fs::write(&file, trace()).unwrap();
    let out_root = dir.join("runs");
    // the machine's own wake-up lateness while the replay runs
    let (o, wake_p99) = common::with_wake_probe(
        bin()
            .args(["replay"])
            .arg(&file)
            .args(["--speedup", "10", "--window", "1s", "--json", "--out"])
            .arg(&out_root),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON on stdout");
    let level = &v["levels"][0];
    assert_eq!(level["rate"]["shape"]["shape"], "replay");
    assert_eq!(level["request_count"]["avg"], 300.0, "{}", stderr(&o));

    // the send error of every request, from the requests file
    let run = only_run_dir(&out_root);
    let text = std::fs::read_to_string(run.join("requests.jsonl")).unwrap();
    let mut late: Vec<f64> = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .map(|r| {
            let start = r["start_ns"].as_u64().unwrap() as f64;
            let intended = r["intended_ns"].as_u64().expect("an intended time") as f64;
            (start - intended) / 1e6
        })
        .collect();
    assert_eq!(late.len(), 300);
    late.sort_by(f64::total_cmp);
    let p99 = late[(0.99 * 300.0f64).ceil() as usize - 1];
    let bound = 2.0 + 1.5 * wake_p99;
    println!(
        "send error p50 {:.3} ms, p99 {p99:.3} ms, max {:.3} ms; a sleeping thread woke late by \
         {wake_p99:.3} ms at p99: bound {bound:.3} ms",
        late[149], late[299],
    );
    assert!(late[0] >= 0.0, "never early: {:.3} ms", late[0]);
    assert!(
        p99 <= bound,
        "send error p99 {p99:.3} ms, over 2 ms + 1.5 wake-ups ({wake_p99:.3} ms each)"
    );

    // per-window metrics: 1 s windows over the 6 s the replay lasts
    let windows = level["windows"].as_array().expect("windows");
    let offered: u64 = windows.iter().map(|w| w["offered"].as_u64().unwrap()).sum();
    assert_eq!(offered, 300);
    assert!(
        (6..=7).contains(&windows.len()),
        "{} windows",
        windows.len()
    );
    assert!(windows
        .iter()
        .all(|w| w["request_latency"]["p99"].as_f64().is_some()));
    // and the tables say so
    let o = bin().args(["show"]).arg(&run).output().unwrap();
    let shown = stdout(&o);
    assert!(shown.contains("replay of 300 requests at 10x"), "{shown}");
}
