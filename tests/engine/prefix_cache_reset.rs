//! `--prefix-cache keep|reset` against the simulator, end to end. Every level sends the same
//! prompts (a dataset read in order, each prompt new from its first token, so no request
//! shares a block with another of its level, cooldown requests included: the file holds
//! more prompts than a level sends). So a prompt's blocks are cached only by an earlier
//! level: with `keep` the second level reads the first level's prompts warm; with `reset`
//! the server's cache is emptied before each level and no request of any level hits it. The
//! check is exact: the simulator's own hit counter, and each level's hit rate from its
//! `/metrics` (the level's telemetry window opens after the reset). A simulator that refuses
//! the reset (as vLLM does outside its development mode) is named once and the run goes on.
//! A distributed run's controller resets once per level (at `--prefix-cache-reset-url`,
//! counted by a loopback server), its workers never.

use crate::support::common;
use common::{bin, http_get, prometheus_value, read_json, stderr, tmpdir, SimProcess};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// 64 prompts of 64 approximate tokens, each beginning with its own word.
fn prompts() -> PathBuf {
    let text: String = (0..64)
        .map(|i| {
            let words: Vec<String> = (0..63).map(|w| format!("w{}", (i * 7 + w) % 97)).collect();
            format!("{{\"text\": \"p{i} {}\"}}\n", words.join(" "))
        })
        .collect();
    let p = tmpdir("prefix-cache").join("prompts.jsonl");
    std::fs::write(&p, text).unwrap();
    p
}

/// A sweep of `levels`, six requests a level without warm-up, over the
/// prompts, against `sim` with `extra` flags; its output and run folder.
fn sweep(sim: &SimProcess, levels: &str, extra: &[&str]) -> (std::process::Output, PathBuf) {
    let out = tmpdir("prefix-cache-run");
    let o = bin()
        .args([
            "sweep",
            "-e",
            &sim.url,
            "--output-tokens",
            "8",
            "-c",
            levels,
        ])
        .args(["-n", "6", "--warmup", "0", "--no-calibrate", "--no-tui"])
        .arg("--dataset")
        .arg(prompts())
        .args(extra)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let run = if o.status.success() {
        common::only_run_dir(&out)
    } else {
        out
    };
    (o, run)
}

/// Each level file's `prefix_cache` and its server's prefix-cache hit rate, in order.
fn levels(run: &Path) -> Vec<(Value, Value)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(run)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            name.starts_with("level-") && name.ends_with(".json")
        })
        .collect();
    files.sort();
    files
        .iter()
        .map(|f| {
            let level = read_json(f);
            (
                level["prefix_cache"].clone(),
                level["server"]["prefix_cache_hit_rate"].clone(),
            )
        })
        .collect()
}

/// The simulator's prefix-cache hits since it started, in tokens.
fn hits(sim: &SimProcess) -> f64 {
    prometheus_value(
        &http_get(&sim.url, "/metrics"),
        "vllm:prefix_cache_hits_total",
    )
}

#[test]
fn a_reset_empties_the_cache_before_each_level_where_keep_reads_it_warm() {
    let kept = SimProcess::start(&["--time-scale", "20"]);
    let (o, run) = sweep(&kept, "1,2", &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let keep = levels(&run);
    assert_eq!(keep.len(), 2, "{keep:?}");
    // the default, said in every level file; the first level met a cold server, the second
    // its prompts cached by the first
    assert_eq!(keep[0], (Value::from("keep"), Value::from(0.0)));
    assert_eq!(keep[1].0, "keep");
    assert!(keep[1].1.as_f64().unwrap() > 0.0, "{keep:?}");
    assert!(hits(&kept) > 0.0);
    // the default is not said by `show` (its level files say it)
    assert!(!show(&run).contains("  cache "), "{}", show(&run));

    let emptied = SimProcess::start(&["--time-scale", "20"]);
    let (o, run) = sweep(&emptied, "1,2", &["--prefix-cache", "reset"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(!stderr(&o).contains("prefix cache"), "{}", stderr(&o));
    let reset = levels(&run);
    // every request of every level, its first round included, met an empty cache
    assert_eq!(
        reset,
        [
            (Value::from("reset"), Value::from(0.0)),
            (Value::from("reset"), Value::from(0.0))
        ]
    );
    assert_eq!(hits(&emptied), 0.0);
    assert!(
        show(&run).contains(
            "  cache     prefix cache emptied before each level and its warm-up \
             (--prefix-cache reset)\n"
        ),
        "{}",
        show(&run)
    );
}

/// What `rightsize show` prints of a run.
fn show(run: &Path) -> String {
    let o = bin().arg("show").arg(run).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    common::stdout(&o)
}

#[test]
fn a_refused_reset_is_said_once_and_the_run_goes_on_keeping_the_cache() {
    let sim = SimProcess::start(&["--time-scale", "20", "--refuse-prefix-cache-reset"]);
    let (o, run) = sweep(&sim, "1,2,3", &["--prefix-cache", "reset"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let err = stderr(&o);
    let said = "--prefix-cache reset: the server's prefix cache reset was refused before level 1";
    assert_eq!(err.matches(said).count(), 1, "{err}");
    assert_eq!(err.matches("--prefix-cache reset:").count(), 1, "{err}");
    assert!(err.contains("answered 404 Not Found"), "{err}");
    assert!(err.contains("VLLM_SERVER_DEV_MODE=1"), "{err}");
    let states: Vec<Value> = levels(&run).into_iter().map(|(s, _)| s).collect();
    assert_eq!(states, ["reset_refused", "reset_refused", "reset_refused"]);
    assert!(
        show(&run).contains(
            "  cache     prefix cache kept: a reset was asked, the server refused it \
             (reset_refused)\n"
        ),
        "{}",
        show(&run)
    );
    // the cache was kept: the later levels read the earlier ones' prompts
    assert!(hits(&sim) > 0.0);
}

/// A loopback server that answers every request `200` with an empty body and keeps each
/// request's line (`POST /flush HTTP/1.1`), for `--prefix-cache-reset-url`.
fn reset_counter() -> (String, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    use std::io::{BufRead, BufReader, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/flush", listener.local_addr().unwrap());
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let kept = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            if reader.read_line(&mut line).is_err() {
                continue;
            }
            kept.lock().unwrap().push(line.trim_end().to_string());
            // the head's other lines (a reset has no body)
            let mut header = String::new();
            while reader.read_line(&mut header).is_ok_and(|n| n > 2) {
                header.clear();
            }
            let _ = stream
                .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
        }
    });
    (url, seen)
}

#[test]
fn a_distributed_run_s_controller_resets_once_per_level_at_the_url_given() {
    let (url, seen) = reset_counter();
    let sim = SimProcess::start(&["--time-scale", "20"]);
    // the URL alone asks for a reset; two local workers share each level
    let (o, run) = sweep(
        &sim,
        "2,4",
        &[
            "--prefix-cache-reset-url",
            &url,
            "--workers",
            "2",
            "--worker-backend",
            "local",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let states: Vec<Value> = levels(&run).into_iter().map(|(s, _)| s).collect();
    assert_eq!(states, ["reset", "reset"]);
    assert_eq!(
        *seen.lock().unwrap(),
        ["POST /flush HTTP/1.1", "POST /flush HTTP/1.1"]
    );
}
