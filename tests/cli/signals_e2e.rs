//! SIGTERM and SIGINT stop a run at once, mid-level or during pre-flight: finished levels
//! kept, the cut level marked partial, `summary.json` written, `run.json` marked interrupted,
//! and the exit code 128 + the signal (143, 130). "At once" is decided by what the run left,
//! not by a stopwatch: the cut level has fewer requests than it was to run, and a pre-flight
//! that would wait 60 s for its answer ends within the bound of [`stop`].
#![cfg(unix)]

use crate::support::common;
use common::{bin, only_run_dir, read_json, tmpdir, SimProcess};
use std::process::{Child, Stdio};
use std::time::Duration;

/// Sends `sig` and waits for the exit code, failing past a bound far below what the run would
/// take on its own (a level of many seconds, a pre-flight's 60 s timeout).
fn stop(child: &mut Child, sig: i32) -> Option<i32> {
    // SAFETY: kill only sends a signal to the child we started.
    unsafe { libc::kill(child.id() as i32, sig) };
    common::wait_exit(child, Duration::from_secs(20), "the run after the signal").code()
}

/// Reads `child`'s stderr until a line contains `what`; the rest of stderr is drained in the
/// background so the child never blocks on it.
fn wait_for_line(child: &mut Child, what: &str) {
    use std::io::BufRead;
    let err = child.stderr.take().expect("stderr is piped");
    let mut lines = std::io::BufReader::new(err).lines();
    for line in lines.by_ref() {
        if line.expect("stderr reads").contains(what) {
            std::thread::spawn(move || lines.for_each(drop));
            return;
        }
    }
    panic!("stderr ended without a line containing {what:?}");
}

#[test]
fn a_signal_mid_level_keeps_finished_levels_and_marks_the_cut_one() {
    // 2x real time, 64 tokens: the second level, 16 requests at concurrency 2, takes seconds
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
            .args(["-c", "4,2", "-n", "16", "--no-tui", "--out"])
            .arg(&out)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // the printer says when the second level starts (the first one's file is written)
        wait_for_line(&mut child, "level 2: concurrency 2");
        assert_eq!(stop(&mut child, sig), Some(code), "signal {sig}");
        let run = only_run_dir(&out);
        let first = read_json(&run.join("level-001-c0004.json"));
        assert_eq!(first["partial"], false);
        let cut = read_json(&run.join("level-002-c0002.json"));
        assert_eq!(cut["partial"], true, "signal {sig}");
        let done = cut["request_count"]["avg"].as_f64().unwrap_or(0.0)
            + cut["error_request_count"]["avg"].as_f64().unwrap_or(0.0);
        assert!(
            done < 16.0,
            "signal {sig}: the cut level ran to its end: {done}"
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
    let (accepted_tx, accepted) = std::sync::mpsc::channel();
    let held = std::thread::spawn(move || {
        let mut conns = Vec::new();
        for c in listener.incoming().take(8) {
            conns.push(c);
            let _ = accepted_tx.send(());
        }
    });
    for (sig, code) in [(libc::SIGTERM, 143), (libc::SIGINT, 130)] {
        let out = tmpdir("signal-preflight");
        // what the previous run's connections left
        while accepted.try_recv().is_ok() {}
        let mut child = bin()
            .args(["sweep", "-e", &url, "--model", "m", "-c", "1", "-n", "2"])
            .args(["--timeout", "60s", "--no-tui", "--out"])
            .arg(&out)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // the pre-flight has connected and waits for an answer that never comes
        accepted
            .recv_timeout(Duration::from_secs(60))
            .expect("the pre-flight connects");
        assert_eq!(stop(&mut child, sig), Some(code), "signal {sig}");
        // nothing was measured: no run folder
        assert_eq!(std::fs::read_dir(&out).unwrap().count(), 0);
    }
    drop(held);
}
