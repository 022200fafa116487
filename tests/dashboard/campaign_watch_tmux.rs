//! Acceptance (issue 50): `rightsize watch URL` in tmux on a campaign served elsewhere
//! (`campaign --serve`, a process of its own): the campaign view, each candidate done with the
//! answer its `campaign.json` ranks it by, and the campaign's end said; and a campaign's
//! watcher whose terminal closes ends, the campaign going on.
//!
//! Apart from `watch_tmux.rs` so that libtest, which starts a binary's tests in name order,
//! starts these first: the watched campaign runs its simulators in real time (about 40 s),
//! the longest test of the dashboard binary, and started last it set the binary's end.

use crate::support::common::{bin, flat_sim_candidate, start_served, tmpdir};
use crate::support::tmux_support::Tmux;
use std::path::Path;
use std::process::Child;
use std::time::{Duration, Instant};

/// `rightsize campaign` of the campaign file `toml` (written into `dir`) with `--serve` on a
/// port the OS picks and its runs under `out`: the process and the URL it serves.
fn serve_campaign(dir: &Path, toml: String, out: &Path) -> (Child, String) {
    let file = dir.join("campaign.toml");
    std::fs::write(&file, toml).unwrap();
    let (run, url, _said) = start_served(
        bin()
            .arg("campaign")
            .arg(&file)
            .args(["--serve", "127.0.0.1:0", "--out"])
            .arg(out),
    );
    (run, url)
}

#[test]
fn a_watched_campaign_shows_each_candidate_done_with_its_recorded_answer() {
    let dir = tmpdir("tmux-watch-campaign");
    // two simulators in real time, small searches (16 requests a level, 3 levels): about ten
    // seconds each. A request lasts 320 ms: at 10x (16 ms) a debug client's turnarounds on a
    // busy machine left the slot idle 6 % of the level at concurrency 1, which was then not
    // held, and neither candidate had an answer
    let runs = dir.join("runs");
    let (mut run, url) = serve_campaign(
        &dir,
        "e2e_sla_ms = \"p90:600ms\"\nmax_error_rate = 0.1\nconcurrency_min = 1\n\
         concurrency_max = 8\nsearch_max_iterations = 3\nrequest_count = 16\n\
         input_tokens = 16\noutput_tokens = 8\n"
            .to_string()
            + &flat_sim_candidate("two slots", 1.0, 2, 40.0, 1.0)
            + &flat_sim_candidate("eight slots", 2.0, 8, 40.0, 1.0),
        &runs,
    );
    let Some(t) = Tmux::watch("watch-campaign", &url) else {
        let _ = run.kill();
        return;
    };
    let s = t.wait_for("the finished campaign", Duration::from_secs(120), |s| {
        s.contains("campaign finished: q leaves")
    });
    assert!(
        s.contains("watching (read-only): q leaves it running"),
        "{s}"
    );
    assert_eq!(run.wait().unwrap().code(), Some(0));
    let campaign = std::fs::read_dir(&runs)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.join("campaign.json").exists())
        .expect("the campaign's folder");
    let rec = crate::support::common::read_json(&campaign.join("campaign.json"));
    let ranking = rec["ranking"].as_array().unwrap();
    assert_eq!(ranking.len(), 2, "{rec}");
    for row in ranking {
        let label = row["label"].as_str().unwrap();
        let answer = row["answer"]["value"].as_f64().expect("an answer");
        let line = s
            .lines()
            .find(|l| l.contains(&format!(" {label}  (")))
            .unwrap_or_else(|| panic!("no line of {label}:\n{s}"));
        assert!(
            line.contains(&format!("done: answer {answer:.0},")),
            "{label}: {answer}\n{s}"
        );
    }
    t.quit_watcher();
}

/// Closing a campaign watcher's terminal ends the watcher, and the campaign goes on. With the
/// terminal gone the watcher's key thread may be in a poll that never settles (crossterm on a
/// closed tty): a watcher that waited for that thread stayed, spinning a core, until SIGKILL.
#[test]
fn a_campaign_watcher_whose_terminal_closes_ends() {
    let dir = tmpdir("tmux-watch-closed");
    // one simulator in real time, 9 steps of 100 ms a request: the campaign runs for longer
    // than the test watches it
    let (mut run, url) = serve_campaign(
        &dir,
        "e2e_sla_ms = \"p90:1350ms\"\nconcurrency_min = 1\nconcurrency_max = 8\n\
         request_count = 64\ninput_tokens = 16\noutput_tokens = 8\n"
            .to_string()
            + &flat_sim_candidate("two slots", 1.0, 2, 100.0, 1.0),
        &dir.join("runs"),
    );
    // the URL's port is the campaign's own: no other test's process matches
    let command = format!("{} watch {url}", env!("CARGO_BIN_EXE_rightsize"));
    let watching = || {
        std::process::Command::new("pgrep")
            .args(["-f", &command])
            .status()
            .is_ok_and(|s| s.success())
    };
    let Some(t) = Tmux::run("watch-closed", 100, 30, &command) else {
        let _ = run.kill();
        return;
    };
    t.wait_for("the campaign view", Duration::from_secs(30), |s| {
        s.contains("watching (read-only): q leaves it running")
    });
    assert!(watching(), "no watcher process matches `{command}`");
    // the session and its terminal go away
    drop(t);
    let deadline = Instant::now() + Duration::from_secs(10);
    let ended = loop {
        if !watching() {
            break true;
        }
        if Instant::now() >= deadline {
            break false;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let campaign_went_on = run.try_wait().unwrap().is_none();
    // nothing of this test outlives it, whatever it found
    let _ = run.kill();
    let _ = run.wait();
    if !ended {
        let _ = std::process::Command::new("pkill")
            .args(["-9", "-f", &command])
            .status();
    }
    assert!(
        ended,
        "the watcher still ran 10 s after its terminal closed"
    );
    assert!(campaign_went_on, "the campaign ended with its watcher");
}
