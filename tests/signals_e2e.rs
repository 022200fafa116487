//! SIGTERM and SIGINT stop a run within a second, mid-level or during pre-flight: finished
//! levels kept, the cut level marked partial, `summary.json` written, `run.json` marked
//! interrupted, and the exit code 128 + the signal (143, 130).
#![cfg(unix)]

mod common;
use common::{bin, only_run_dir, read_json, tmpdir, SimProcess};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// Sends `sig` and waits for the exit: (exit code, how long it took).
fn stop(child: &mut Child, sig: i32) -> (Option<i32>, Duration) {
    // SAFETY: kill only sends a signal to the child we started.
    unsafe { libc::kill(child.id() as i32, sig) };
    let sent = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return (status.code(), sent.elapsed());
        }
        if sent.elapsed() > Duration::from_secs(10) {
            let _ = child.kill();
            panic!("still running 10 s after the signal");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn wait_for(what: &str, pred: impl Fn() -> bool) {
    let start = Instant::now();
    while !pred() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_signal_mid_level_keeps_finished_levels_and_marks_the_cut_one() {
    // 2x real time, 64 tokens: a level of 8 requests at concurrency 2 takes a few seconds
    let sim = SimProcess::start(&["--time-scale", "2"]);
    for (sig, code) in [(libc::SIGTERM, 143), (libc::SIGINT, 130)] {
        let out = tmpdir("signal-mid");
        let mut child = bin()
            .args([
                "sweep",
                "-e",
                &sim.url,
                "--input-tokens",
                "32",
                "--output-tokens",
                "64",
            ])
            .args(["-c", "4,2", "-n", "8", "--no-tui", "--out"])
            .arg(&out)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let first = || {
            std::fs::read_dir(&out)
                .ok()
                .and_then(|mut d| d.next())
                .and_then(|e| e.ok())
                .is_some_and(|e| e.path().join("level-001-c0004.json").exists())
        };
        wait_for("the first level", first);
        std::thread::sleep(Duration::from_millis(300));
        let (exit, took) = stop(&mut child, sig);
        assert_eq!(exit, Some(code), "signal {sig}");
        assert!(took < Duration::from_secs(1), "signal {sig}: {took:?}");
        let run = only_run_dir(&out);
        assert_eq!(
            read_json(&run.join("level-001-c0004.json"))["partial"],
            false
        );
        assert_eq!(
            read_json(&run.join("level-002-c0002.json"))["partial"],
            true
        );
        assert_eq!(read_json(&run.join("run.json"))["interrupted"], true);
        assert_eq!(read_json(&run.join("summary.json"))["interrupted"], true);
    }
}

#[test]
fn a_signal_during_pre_flight_ends_the_run_at_once() {
    // a server that accepts connections and never answers: pre-flight would wait its timeout
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let held = std::thread::spawn(move || {
        let mut conns = Vec::new();
        for c in listener.incoming().take(8) {
            conns.push(c);
        }
    });
    for (sig, code) in [(libc::SIGTERM, 143), (libc::SIGINT, 130)] {
        let out = tmpdir("signal-preflight");
        let mut child = bin()
            .args(["sweep", "-e", &url, "--model", "m", "-c", "1", "-n", "2"])
            .args(["--timeout", "60s", "--no-tui", "--out"])
            .arg(&out)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(500));
        let (exit, took) = stop(&mut child, sig);
        assert_eq!(exit, Some(code), "signal {sig}");
        assert!(took < Duration::from_secs(1), "signal {sig}: {took:?}");
        // nothing was measured: no run folder
        assert_eq!(std::fs::read_dir(&out).unwrap().count(), 0);
    }
    drop(held);
}
