//! The campaign view in tmux, as a person sees it: candidates change state (waiting, running
//! with its level, done with its answer), the ranking fills in as they finish, and q quits
//! once the campaign ended, printing the ranking. Skips (saying so) where tmux is not
//! installed; `.ci/run` installs it so CI always runs it.

use crate::support::common;
use crate::support::tmux_support;
use common::{flat_sim_candidate, tmpdir};
use std::process::Command;
use std::time::Duration;
use tmux_support::Tmux;

/// How long the campaign view may take to reach a state.
const WAIT: Duration = Duration::from_secs(120);

/// The line of the candidates panel that names `label`.
fn line_of<'a>(screen: &'a str, label: &str) -> &'a str {
    screen
        .lines()
        .find(|l| l.contains(&format!(" {label}  (")))
        .unwrap_or("")
}

#[test]
fn candidates_change_state_and_the_ranking_fills_in() {
    let dir = tmpdir("campaign-view");
    let file = dir.join("view.toml");
    // two simulators at 2x: 170 ms a request while a slot is free, twice that waiting for one:
    // the SLA halfway between (see tests/search/campaign_e2e.rs)
    std::fs::write(
        &file,
        "e2e_sla_ms = \"p90:255ms\"\nmax_error_rate = 0.1\nconcurrency_min = 2\n\
         concurrency_max = 16\nsearch_max_iterations = 4\nrequest_count = 32\n\
         input_tokens = 32\noutput_tokens = 16\n"
            .to_string()
            + &flat_sim_candidate("two slots", 1.0, 2, 20.0, 2.0)
            + &flat_sim_candidate("eight slots", 2.0, 8, 20.0, 2.0),
    )
    .unwrap();
    let command = format!(
        "env XDG_CONFIG_HOME={} {} campaign {} --out {}; echo EXIT=$?; sleep 60",
        dir.join("xdg").display(),
        env!("CARGO_BIN_EXE_rightsize"),
        file.display(),
        dir.join("runs").display()
    );
    let Some(tmux) = Tmux::run("campaign", 160, 50, &command) else {
        return;
    };
    // the first candidate runs while the second waits; nothing is ranked yet
    let s = tmux.wait_for("the first candidate running", WAIT, |s| {
        line_of(s, "two slots").contains("running level")
    });
    assert!(line_of(&s, "eight slots").contains("waiting"), "{s}");
    assert!(s.contains("no candidate has finished yet"), "{s}");
    // the first is done with its answer and ranked while the second runs
    let s = tmux.wait_for("the second candidate running", WAIT, |s| {
        line_of(s, "eight slots").contains("running")
    });
    assert!(line_of(&s, "two slots").contains("done: answer"), "{s}");
    let ranked: Vec<&str> = s
        .lines()
        .filter(|l| l.contains("p90 e2e <= 255 ms"))
        .collect();
    assert_eq!(ranked.len(), 1, "{s}");
    assert!(ranked[0].contains("two slots"), "{s}");
    // both done, both ranked, the cheaper per token first
    let s = tmux.wait_for("the campaign's end", WAIT, |s| {
        s.contains("campaign finished: press q to quit")
    });
    assert!(line_of(&s, "eight slots").contains("done: answer"), "{s}");
    let ranked: Vec<&str> = s
        .lines()
        .filter(|l| l.contains("p90 e2e <= 255 ms"))
        .collect();
    assert_eq!(ranked.len(), 2, "{s}");
    assert!(ranked[0].contains("│1     eight slots"), "{s}");
    assert!(ranked[1].contains("│2     two slots"), "{s}");
    tmux.keys(&["q"]);
    let s = tmux.wait_for("the exit", WAIT, |s| s.contains("EXIT="));
    assert!(s.contains("EXIT=0"), "{s}");
    // the terminal is restored and the ranking printed
    assert!(
        s.contains("ranked by cost per million output tokens"),
        "{s}"
    );
}

/// A closed terminal (its tmux server killed: SIGHUP, and no terminal left to read keys from)
/// while a candidate runs: the campaign stops as on Ctrl-C and the process exits, where it
/// used to wait for a q nobody could press, its key thread spinning on the dead terminal.
#[test]
fn a_closed_terminal_ends_the_campaign_view() {
    let dir = tmpdir("campaign-hangup");
    let file = dir.join("hangup.toml");
    // one slow candidate: 16 levels' worth of requests at real time, far longer than the test
    std::fs::write(
        &file,
        "e2e_sla_ms = \"p90:255ms\"\nconcurrency_min = 2\nconcurrency_max = 16\n\
         request_count = 4096\ninput_tokens = 32\noutput_tokens = 64\n\
         [[candidates]]\nlabel = \"slow\"\nprice_per_hour = 1.0\n\
         sim = { time_scale = 1.0, max_num_seqs = 2 }\n",
    )
    .unwrap();
    let pid_file = dir.join("pid");
    let command = format!(
        "echo $$ > {}; exec env XDG_CONFIG_HOME={} {} campaign {} --out {}",
        pid_file.display(),
        dir.join("xdg").display(),
        env!("CARGO_BIN_EXE_rightsize"),
        file.display(),
        dir.join("runs").display()
    );
    let Some(tmux) = Tmux::run("campaign-hangup", 160, 50, &command) else {
        return;
    };
    tmux.wait_for("the candidate running", WAIT, |s| {
        line_of(s, "slow").contains("running")
    });
    let pid: u32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let proc_dir = std::path::PathBuf::from(format!("/proc/{pid}"));
    assert!(proc_dir.exists(), "the campaign runs as {pid}");
    drop(tmux);
    // a bound on waiting, not a timing: the process must end, however long its stop takes
    let gone = (0..600).any(|_| {
        std::thread::sleep(Duration::from_millis(100));
        !proc_dir.exists()
            || std::fs::read_to_string(proc_dir.join("stat"))
                .is_ok_and(|s| s.split_whitespace().nth(2) == Some("Z"))
    });
    if !gone {
        let _ = Command::new("kill").arg("-9").arg(pid.to_string()).status();
    }
    assert!(
        gone,
        "the campaign (pid {pid}) still runs a minute after its terminal closed"
    );
}
