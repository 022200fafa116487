//! Acceptance (issue 50): `rightsize watch URL` in tmux on runs served elsewhere (`--serve`,
//! a headless process of its own). On a sweep, started late, after the run's second level: it
//! shows the levels that finished before it connected, follows the run to its end, says how it
//! ended, and leaves (q, exit 0) with the level table `show` prints of the run's files. On a
//! distributed search over three local workers, from its start: the same, with the workers.
//! (A watched campaign is in `campaign_watch_tmux.rs`.)

use crate::support::common::{bin, only_run_dir, start_served, stdout, tmpdir, SimProcess};
use crate::support::tmux_support::Tmux;
use std::time::Duration;

#[test]
fn a_late_watcher_sees_the_run_from_its_start_and_ends_with_shows_table() {
    let dir = tmpdir("tmux-watch");
    let runs = dir.join("runs");
    // 4 slots at 10x, 64 tokens out: levels 1 and 2 take about 2 s each; level 3 (at least
    // twice its 128 streams in requests, 64 rounds of the 4 slots) about 4 s, time enough for
    // the watcher to start and connect before the run ends
    let sim = SimProcess::start(&["--max-num-seqs", "4", "--time-scale", "10"]);
    let (mut run, url, said) = start_served(
        bin()
            .args(["sweep", "-e", &sim.url, "-c", "4,16,128", "-n", "128"])
            .args(["--input-tokens", "256", "--output-tokens", "64"])
            .args(["--e2e-sla", "p99:20s", "--serve", "127.0.0.1:0", "--out"])
            .arg(&runs),
    );
    // the headless run says each level as it starts
    loop {
        let line = said
            .recv_timeout(Duration::from_secs(120))
            .expect("the run reaches level 3");
        if line.starts_with("level 3:") {
            break;
        }
    }
    let Some(t) = Tmux::watch("watch", &url) else {
        let _ = run.kill();
        return;
    };
    // levels 1 and 2 ended before the watcher came: it has them from the stream's start
    t.wait_for("levels 1 and 2", Duration::from_secs(30), |s| {
        s.contains("│1   4 ") && s.contains("│2   16 ")
    });
    let s = t.wait_for("the finished run", Duration::from_secs(120), |s| {
        s.contains("FINISHED")
    });
    assert!(s.contains("│3   128 "), "{s}");
    assert_eq!(run.wait().unwrap().code(), Some(0));
    let s = t.quit_watcher();
    same_rows_as_show(&s, &runs, &["4", "16", "128"]);
}

/// The table the watcher printed on leaving (in `screen`) is `show`'s of the run in `runs`
/// (which adds each level's verdict), row by row for each concurrency of `levels`.
fn same_rows_as_show(screen: &str, runs: &std::path::Path, levels: &[&str]) {
    let s = screen;
    let shown = stdout(&bin().arg("show").arg(only_run_dir(runs)).output().unwrap());
    for c in levels {
        let row = |text: &str| {
            text.lines()
                .find(|l| l.split_whitespace().next() == Some(*c) && l.contains('.'))
                .map(|l| l.trim_end().to_string())
        };
        let watched = row(s).unwrap_or_else(|| panic!("no row {c} on the screen:\n{s}"));
        let show_row = row(&shown).unwrap_or_else(|| panic!("no row {c} in show:\n{shown}"));
        assert!(
            show_row.starts_with(&watched),
            "c={c}\nwatch: {watched}\nshow:  {show_row}"
        );
    }
}

#[test]
fn a_watched_distributed_search_shows_its_workers_and_ends_with_shows_table() {
    let dir = tmpdir("tmux-watch-fleet");
    let runs = dir.join("runs");
    let (mut run, url, _said) = start_served(
        bin()
            .args(["search", "-e", "sim", "--sim-time-scale", "10"])
            .args(["--input-tokens", "32", "--output-tokens", "64"])
            .args([
                "--e2e-sla",
                "p99:2s",
                "--min",
                "8",
                "--max",
                "32",
                "-n",
                "64",
            ])
            .args(["--workers", "3", "--worker-backend", "local"])
            .args(["--serve", "127.0.0.1:0", "--out"])
            .arg(&runs),
    );
    let Some(t) = Tmux::watch("watch-fleet", &url) else {
        let _ = run.kill();
        return;
    };
    let s = t.wait_for("the finished search", Duration::from_secs(120), |s| {
        s.contains("FINISHED")
    });
    assert_eq!(run.wait().unwrap().code(), Some(0));
    // the workers' panel, as the run's own dashboard shows a distributed level
    assert!(s.contains(" 3 workers · started "), "{s}");
    let s = t.quit_watcher();
    let measured: Vec<String> = std::fs::read_dir(only_run_dir(&runs))
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            let c = name.strip_prefix("level-")?.split("-c").nth(1)?;
            Some(
                c.trim_end_matches(".json")
                    .trim_start_matches('0')
                    .to_string(),
            )
        })
        .collect();
    assert!(!measured.is_empty());
    let levels: Vec<&str> = measured.iter().map(String::as_str).collect();
    same_rows_as_show(&s, &runs, &levels);
}
