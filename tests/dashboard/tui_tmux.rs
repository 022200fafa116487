//! The real binary in tmux, driven as a person would: keystrokes in, the screen read back.
//! Skips (saying so) where tmux is not installed; `.ci/run` installs it so CI always runs it.

use crate::support::common;
use crate::support::tmux_support;
use common::{tmpdir, SimProcess};
use std::time::{Duration, Instant};
use tmux_support::Tmux;

/// The knee test measures a knee, and a sweep at concurrency 64 beside it moves the knee (a
/// debug-build client on two shared cores): it takes the machine alone. The others drive the
/// screen, and share it (a unit each).
static MACHINE: common::lane::Lane = common::lane::Lane::new(8);

/// A config with a quick plan against the simulator, keeping runs in `dir/runs`; with
/// `url`, the default endpoint is that server instead of the in-process simulator.
fn config(
    dir: &std::path::Path,
    levels: &str,
    requests: u32,
    output: u32,
    scale: f64,
    url: Option<&str>,
) -> String {
    let path = dir.join("rightsize.toml");
    let endpoint = match url {
        Some(u) => format!("endpoint = \"slots32\"\n[endpoints.slots32]\nurl = \"{u}\"\n"),
        None => String::new(),
    };
    std::fs::write(
        &path,
        format!(
            "[defaults]\nresults_dir = \"{}\"\nsweep = \"t\"\nprofile = \"tiny\"\n\
             max_error_rate = 0.05\n{endpoint}\
             [endpoints.sim]\nkind = \"simulator\"\ntime_scale = {scale:?}\n\
             [profiles.tiny]\ninput_tokens = 128\noutput_tokens = {output}\nstream = true\n\
             [sweeps.t]\nconcurrency = [{levels}]\nrequest_count = {requests}\n",
            dir.join("runs").display()
        ),
    )
    .unwrap();
    path.display().to_string()
}

fn stty(t: &Tmux, file: &std::path::Path) -> String {
    let _ = std::fs::remove_file(file);
    t.type_line(&format!("stty -a > {}", file.display()));
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(10) {
        if let Ok(s) = std::fs::read_to_string(file) {
            if s.contains("speed") {
                return s;
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("stty did not write {}", file.display());
}

/// Records the terminal settings, starts the dashboard and waits for its setup screen.
fn launch(t: &Tmux, dir: &std::path::Path, cfg: &str) -> String {
    let before = stty(t, &dir.join("stty-before"));
    t.type_line(&format!(
        "{} --config {cfg}; echo EXIT=$?",
        env!("CARGO_BIN_EXE_rightsize")
    ));
    t.wait_for("the setup screen", Duration::from_secs(20), |s| {
        s.contains("endpoint, workload and plan")
    });
    before
}

#[test]
fn sweep_from_the_setup_screen_shows_the_table_and_the_knee() {
    let _turn = MACHINE.alone();
    let dir = tmpdir("tmux-sweep");
    let Some(t) = Tmux::start("sweep", 120, 36) else {
        return;
    };
    // 32 batch slots at 2x: the knee sits at 32, and the event rate stays low enough that
    // debug builds of the client and the simulator are not the bottleneck. At 10x, beside a
    // release build, the two processes could not keep up with 22,000 chunks a second: the
    // levels measured the machine's load (14k tok/s at 64, 19k at 128 with 32 slots), and
    // there was no knee; at 4x, beside a release build and a concurrency-256 soak, the client
    // lagged at 32 (5.9k tok/s there, 8.0k at 64: no knee). 64 tokens out: with 16, a request lasted about as long as a busy
    // client took to send the next one, slots stood idle between them, and the queue past 32
    // filled those gaps (+25 % throughput from 32 to 64): no knee
    // From 8: a request lasts about 350 ms, and at 4 the 128 requests were 32 rounds, 11 s
    // of the 34 s this test had the machine alone; 8 and 16 show the rise to the knee.
    let sim = SimProcess::start(&["--max-num-seqs", "32", "--time-scale", "2"]);
    let cfg = config(&dir, "8, 16, 32, 64, 128", 128, 64, 2.0, Some(&sim.url));
    let before = launch(&t, &dir, &cfg);
    // the e2e SLA field: nine rows down, edit, type, keep
    for _ in 0..9 {
        t.keys(&["Down"]);
    }
    // the mean: a p99 of 128 requests cannot be decided (368 needed), and with the config's
    // 5 % error limit the mean is decided by a level's first 73 requests
    t.keys(&["Enter"]);
    t.keys(&["-l", "avg:500ms"]);
    t.keys(&["Enter"]);
    t.wait_for("the SLA value", Duration::from_secs(5), |s| {
        s.contains("avg:500ms")
    });
    t.keys(&["C-s"]);
    let s = t.wait_for("the finished run", Duration::from_secs(120), |s| {
        s.contains("FINISHED")
    });
    for c in ["8 ", "16 ", "32 ", "64 ", "128 "] {
        assert!(
            s.contains(&format!("│{:<4}{c}", "")) || s.contains(c),
            "{c}: {s}"
        );
    }
    assert!(s.contains("levels (ms)"), "{s}");
    assert!(s.contains("knee at concurrency"), "{s}");
    assert!(s.contains('◆'), "{s}");
    assert!(s.contains("pass") && s.contains("fail"), "{s}");
    // export from the results view: charts, the HTML report and data land in the run's
    // export/ folder
    t.keys(&["e"]);
    t.wait_for("the export", Duration::from_secs(30), |s| {
        s.contains("exported")
    });
    let runs: Vec<_> = std::fs::read_dir(dir.join("runs")).unwrap().collect();
    let export = runs[0].as_ref().unwrap().path().join("export");
    let mut kinds: Vec<String> = std::fs::read_dir(&export)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            e.path()
                .extension()
                .map(|x| x.to_string_lossy().into_owned())
        })
        .collect();
    kinds.sort();
    assert_eq!(
        kinds,
        ["csv", "html", "json", "png", "svg"],
        "{}",
        export.display()
    );
    t.keys(&["q"]);
    t.wait_for("the shell", Duration::from_secs(20), |s| {
        s.contains("EXIT=0")
    });
    let after = stty(&t, &dir.join("stty-after"));
    assert_eq!(before, after, "terminal settings changed");
}

/// The dashboard in tmux on a two-level sweep at 2x real time (level 1 takes about 6 s,
/// level 2 about 2 s), once it is in its second level: the session, the test's folder, and
/// the terminal settings from before it started.
fn in_the_second_level(name: &str) -> Option<(Tmux, std::path::PathBuf, String, String)> {
    let dir = tmpdir(&format!("tmux-{name}"));
    let t = Tmux::start(name, 100, 30)?;
    let cfg = config(&dir, "16, 64", 64, 256, 2.0, None);
    let before = launch(&t, &dir, &cfg);
    t.keys(&["s"]);
    t.wait_for("the second level", Duration::from_secs(60), |s| {
        s.contains("level 2 · concurrency 64")
    });
    Some((t, dir, cfg, before))
}

/// The run folder of a run stopped in its second level: level 1 whole, level 2 cut, and
/// `run.json` and `summary.json` saying it was interrupted.
fn kept_level_1_cut_level_2(run: &std::path::Path, how: &str) {
    let l1 = common::read_json(&run.join("level-001-c0016.json"));
    assert_eq!(l1["partial"], false, "{how}: the finished level");
    let l2 = common::read_json(&run.join("level-002-c0064.json"));
    assert_eq!(l2["partial"], true, "{how}: the cut level");
    for file in ["run.json", "summary.json"] {
        let v = common::read_json(&run.join(file));
        assert_eq!(v["interrupted"], true, "{how}: {file}");
    }
}

/// After the dashboard was stopped in its second level (`how`): the shell printed
/// `EXIT={code}`, the terminal is as it was (cooked, echoing), and the one run kept level 1
/// whole, level 2 cut, and says it was interrupted in run.json and summary.json.
fn stopped_in_the_second_level(t: &Tmux, dir: &std::path::Path, before: &str, code: u8, how: &str) {
    // a line of its own: the typed command itself holds `EXIT=$?`
    let s = t.wait_for("the shell", Duration::from_secs(30), |s| {
        s.lines().any(|l| l.starts_with("EXIT="))
    });
    assert!(s.contains(&format!("EXIT={code}")), "{how}: {s}");
    let after = stty(t, &dir.join("stty-after"));
    assert_eq!(before, after, "{how}: terminal settings changed");
    assert!(
        after.contains(" icanon") && after.contains(" echo"),
        "{after}"
    );
    let runs: Vec<_> = std::fs::read_dir(dir.join("runs")).unwrap().collect();
    assert_eq!(runs.len(), 1);
    let run = runs[0].as_ref().unwrap().path();
    kept_level_1_cut_level_2(&run, how);
}

#[test]
fn quitting_mid_run_restores_the_terminal_and_keeps_finished_levels() {
    let _turn = MACHINE.take(1);
    let Some((t, dir, _, before)) = in_the_second_level("quit") else {
        return;
    };
    t.keys(&["q"]);
    t.wait_for("the quit question", Duration::from_secs(5), |s| {
        s.contains("quit?")
    });
    t.keys(&["y"]);
    stopped_in_the_second_level(&t, &dir, &before, 130, "q, y");
}

#[test]
fn the_dashboard_runs_what_the_command_line_asked_every_time() {
    let _turn = MACHINE.take(1);
    let dir = tmpdir("tmux-flags");
    let Some(t) = Tmux::start("flags", 120, 36) else {
        return;
    };
    let sim = SimProcess::start(&["--time-scale", "10"]);
    // the config's own defaults point elsewhere: the flags must win, the second time too
    let cfg = config(&dir, "16", 64, 16, 10.0, None);
    let out = dir.join("flag-runs");
    t.type_line(&format!(
        "{} sweep --config {cfg} --endpoint {} --concurrency 2,4 -n 8 --input-tokens 32 \
         --output-tokens 8 --out {}; echo EXIT=$?",
        env!("CARGO_BIN_EXE_rightsize"),
        sim.url,
        out.display()
    ));
    t.wait_for("the first run", Duration::from_secs(60), |s| {
        s.contains("FINISHED")
    });
    t.keys(&["1"]);
    // the form is drawn over the run view: wait for what it must show, not for its title
    // alone (a capture can land between the two)
    t.wait_for(
        "the setup form with the flags",
        Duration::from_secs(5),
        |s| s.contains("endpoint, workload and plan") && s.contains(&sim.url) && s.contains("2,4"),
    );
    t.keys(&["s"]);
    let runs_made = || std::fs::read_dir(&out).map(|d| d.count()).unwrap_or(0);
    t.wait_for("the second run", Duration::from_secs(60), |s| {
        runs_made() == 2 && s.contains("FINISHED")
    });
    t.keys(&["q"]);
    t.wait_for("the shell", Duration::from_secs(20), |s| {
        s.lines().any(|l| l.starts_with("EXIT="))
    });
    let mut runs: Vec<std::path::PathBuf> = std::fs::read_dir(&out)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    runs.sort();
    assert_eq!(runs.len(), 2, "{runs:?}");
    for run in &runs {
        let echo: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(run.join("run.json")).unwrap()).unwrap();
        assert_eq!(
            echo["plan"]["concurrency"],
            serde_json::json!([2, 4]),
            "{run:?}"
        );
        assert_eq!(echo["endpoint"]["base_url"], sim.url.as_str(), "{run:?}");
        assert_eq!(echo["workload"]["input_tokens"], 32, "{run:?}");
    }
}

#[test]
fn the_dashboard_never_shows_a_secret() {
    let _turn = MACHINE.take(1);
    let dir = tmpdir("tmux-secrets");
    let Some(t) = Tmux::start("secrets", 120, 36) else {
        return;
    };
    let sim = SimProcess::start(&["--time-scale", "20"]);
    let cfg = config(&dir, "2", 8, 8, 20.0, None);
    let url = sim.url.replacen("http://", "http://alice:PW-hunter2@", 1);
    t.type_line(&format!(
        "{} sweep --config {cfg} --endpoint {url} -c 2 -n 8 --output-tokens 8 \
         --header 'Authorization: Bearer TOPSECRET-bearer' --header 'X-Api-Key: APIKEYSECRET'; \
         echo EXIT=$?",
        env!("CARGO_BIN_EXE_rightsize"),
    ));
    let secrets = ["PW-hunter2", "TOPSECRET-bearer", "APIKEYSECRET"];
    // the typed command line itself holds them: read only the dashboard's screens
    let run = t.wait_for("the run", Duration::from_secs(60), |s| {
        s.contains("FINISHED")
    });
    let mut screens = vec![run];
    // each view is waited for by what it must show (a capture can land mid-redraw)
    for (key, what, shows) in [
        ("1", "endpoint, workload and plan", "alice:***@"),
        ("3", "runs", "runs"),
    ] {
        t.keys(&[key]);
        screens.push(t.wait_for(what, Duration::from_secs(10), |s| {
            s.contains(what) && s.contains(shows)
        }));
    }
    for s in &screens {
        for secret in secrets {
            assert!(!s.contains(secret), "{secret} on screen:\n{s}");
        }
    }
    t.keys(&["q"]);
    t.wait_for("the shell", Duration::from_secs(20), |s| {
        s.lines().any(|l| l.starts_with("EXIT="))
    });
    // the dashboard's log (beside the runs folder) holds none either
    let log = std::fs::read_to_string(dir.join("rightsize.log")).unwrap_or_default();
    for secret in secrets {
        assert!(!log.contains(secret), "{secret} in rightsize.log:\n{log}");
    }
}

#[test]
fn a_steps_schedule_shows_the_time_view_while_it_runs_and_after() {
    let _turn = MACHINE.take(1);
    let dir = tmpdir("tmux-timeview");
    let Some(t) = Tmux::start("timeview", 100, 30) else {
        return;
    };
    let cfg = config(&dir, "2", 8, 16, 20.0, None);
    // the in-process simulator at 20x: a 4 s schedule, far below its capacity
    t.type_line(&format!(
        "{} sweep --config {cfg} --schedule steps:2,6@2s --sim-time-scale 20 \
         --output-tokens 16 --out {}; echo EXIT=$?",
        env!("CARGO_BIN_EXE_rightsize"),
        dir.join("runs").display()
    ));
    // the title's offered rate reads `-` until the level's first snapshot
    let offered = |s: &str| -> Option<f64> {
        s.split("req/s: offered ")
            .nth(1)?
            .split_whitespace()
            .next()?
            .parse()
            .ok()
    };
    let s = t.wait_for("the time view", Duration::from_secs(30), |s| {
        s.contains("RUNNING") && offered(s).is_some()
    });
    assert!(s.contains("level 1 · steps 2,6 req/s, 2s each"), "{s}");
    for title in ["requests pending", "e2e (ms)", "TTFT (ms)", "t curves"] {
        assert!(s.contains(title), "{title}:\n{s}");
    }
    // the schedule's step (or 0 once every request is due)
    let o = offered(&s);
    assert!([2.0, 6.0, 0.0].iter().any(|r| o == Some(*r)), "{o:?}:\n{s}");
    // a schedule has no place on a load axis: when it ends its time view stays
    let s = t.wait_for("the finished run", Duration::from_secs(60), |s| {
        s.contains("FINISHED")
    });
    assert!(s.contains("req/s: offered"), "{s}");
    assert!(s.contains("finished:"), "{s}");
    t.keys(&["t"]);
    t.wait_for("the curves", Duration::from_secs(5), |s| {
        s.contains("output tok/s vs concurrency")
    });
    t.keys(&["q"]);
    let s = t.wait_for("the shell", Duration::from_secs(20), |s| {
        s.lines().any(|l| l.starts_with("EXIT="))
    });
    assert!(s.contains("EXIT=0"), "{s}");
}

/// A dashboard run ends with the exit code a headless run of it would (the hostile probe found
/// 0 after `q` where headless said 1 or 3): an answer below `--require-concurrency` fails the
/// gate (3), and a run in which every request failed is a failed run (1).
#[test]
fn the_dashboard_exits_as_the_headless_run_would() {
    let _turn = MACHINE.take(1);
    // a server whose context (64 tokens) is shorter than every prompt (128): each request is
    // answered 400
    let short = SimProcess::start(&["--max-model-len", "64"]);
    for (name, flags, url, code) in [
        ("gate", "--require-concurrency 100000", None, 3),
        ("all-failed", "", Some(short.url.as_str()), 1),
    ] {
        let dir = tmpdir(&format!("tmux-exit-{name}"));
        let Some(t) = Tmux::start(&format!("exit-{name}"), 100, 30) else {
            return;
        };
        let cfg = config(&dir, "2", 8, 8, 50.0, url);
        t.type_line(&format!(
            "{} sweep --config {cfg} {flags} --out {}; echo EXIT=$?",
            env!("CARGO_BIN_EXE_rightsize"),
            dir.join("runs").display()
        ));
        t.wait_for("the ended run", Duration::from_secs(60), |s| {
            s.contains("FINISHED") || s.contains("FAILED")
        });
        t.keys(&["q"]);
        // the exit line itself: the typed command, wrapped, may start a line with `EXIT=$?`
        let s = t.wait_for("the shell", Duration::from_secs(20), |s| {
            s.lines()
                .any(|l| l.starts_with("EXIT=") && !l.starts_with("EXIT=$"))
        });
        assert!(s.contains(&format!("EXIT={code}")), "{name}: {s}");
    }
}

/// The clock of the status line `exporting (1.2 s) to ...`, when the screen shows it.
fn export_clock(screen: &str) -> Option<String> {
    let rest = &screen[screen.find("exporting (")? + "exporting (".len()..];
    Some(rest[..rest.find(" s)")?].to_string())
}

#[test]
fn the_dashboard_keeps_drawing_while_it_exports() {
    let _turn = MACHINE.take(1);
    let dir = tmpdir("tmux-export");
    let Some(t) = Tmux::start("export", 120, 36) else {
        return;
    };
    let cfg = config(&dir, "16", 64, 16, 10.0, None);
    let out = dir.join("export-runs");
    // a large run: sixty levels, so its charts and report take a while to render
    let levels: Vec<String> = (1..=60).map(|c| c.to_string()).collect();
    t.type_line(&format!(
        "{} sweep --config {cfg} -e sim --sim-time-scale 100 -c {} -n 4 --input-tokens 16 \
         --output-tokens 4 --no-stream --out {}; echo EXIT=$?",
        env!("CARGO_BIN_EXE_rightsize"),
        levels.join(","),
        out.display()
    ));
    t.wait_for("the run", Duration::from_secs(120), |s| {
        s.contains("FINISHED")
    });
    t.keys(&["e"]);
    let start = Instant::now();
    let mut clocks: Vec<String> = Vec::new();
    let done = loop {
        let s = t.screen();
        if let Some(c) = export_clock(&s) {
            if clocks.last() != Some(&c) {
                clocks.push(c);
            }
        }
        if s.contains("exported ") {
            break s;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "no end of the export; screen:\n{s}"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    // the screen kept drawing while the files were written: its clock moved
    assert!(
        clocks.len() >= 2,
        "the clock read {clocks:?}; then:\n{done}"
    );
    assert!(done.contains("exported 5 files"), "{done}");
    let run = std::fs::read_dir(&out)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .find(|p| p.is_dir())
        .expect("the run folder");
    for ext in ["png", "svg", "html", "csv", "json"] {
        let f = run.join("export").join(format!(
            "{}.{ext}",
            run.file_name().unwrap().to_string_lossy()
        ));
        assert!(f.is_file(), "{} was not written", f.display());
    }
    t.keys(&["q"]);
    t.wait_for("the shell", Duration::from_secs(20), |s| {
        s.lines().any(|l| l.starts_with("EXIT="))
    });
}

/// The dashboard's process: the one whose command line holds `cfg` (a path unique to the
/// test).
fn dashboard_pid(cfg: &str) -> String {
    let o = std::process::Command::new("pgrep")
        .args(["-f", &format!("rightsize --config {cfg}")])
        .output()
        .expect("pgrep runs");
    let pids = String::from_utf8_lossy(&o.stdout);
    let pids: Vec<&str> = pids.split_whitespace().collect();
    assert_eq!(pids.len(), 1, "one dashboard process: {pids:?}");
    pids[0].to_string()
}

/// `kill -SIGNAL` at the dashboard in its second level: it exits with `code`, the terminal
/// restored and what was measured kept. One test a signal, so the three go side by side.
fn a_signal_mid_run(signal: &str, code: u8) {
    let _turn = MACHINE.take(1);
    let Some((t, dir, cfg, before)) = in_the_second_level(&format!("sig{signal}")) else {
        return;
    };
    let killed = std::process::Command::new("kill")
        .args([&format!("-{signal}"), &dashboard_pid(&cfg)])
        .status()
        .unwrap();
    assert!(killed.success());
    stopped_in_the_second_level(&t, &dir, &before, code, &format!("SIG{signal}"));
}

#[test]
fn sigterm_mid_run_restores_the_terminal_and_keeps_what_was_measured() {
    a_signal_mid_run("TERM", 143);
}

#[test]
fn sighup_mid_run_restores_the_terminal_and_keeps_what_was_measured() {
    a_signal_mid_run("HUP", 129);
}

#[test]
fn sigint_mid_run_restores_the_terminal_and_keeps_what_was_measured() {
    a_signal_mid_run("INT", 130);
}

/// A closed terminal (`tmux kill-session`: the pty goes away, the dashboard gets SIGHUP and
/// its tty answers EIO) ends a live run as a hangup ends a headless one: level 1 whole, the cut
/// level 2 partial, `run.json` and `summary.json` interrupted, the process gone. It used to
/// abort on its first write to the dead tty (exit 134) with only `run.json` and the request
/// log on disk. The two ways the loss reaches it (the signal, or a failed draw) race; either
/// ends the run the same way (the Done-when's five runs were made by running this test five
/// times, not by a loop in it).
#[test]
fn closing_the_dashboards_terminal_keeps_what_the_run_measured() {
    let _turn = MACHINE.take(1);
    let dir = tmpdir("tmux-closed");
    let cfg = config(&dir, "16, 64", 64, 256, 2.0, None);
    let command = format!("{} --config {cfg}", env!("CARGO_BIN_EXE_rightsize"));
    let Some(t) = Tmux::run("closed", 100, 30, &command) else {
        return;
    };
    t.wait_for("the setup screen", Duration::from_secs(20), |s| {
        s.contains("endpoint, workload and plan")
    });
    t.keys(&["s"]);
    t.wait_for("the second level", Duration::from_secs(60), |s| {
        s.contains("level 2 · concurrency 64")
    });
    // the session and its terminal go away
    drop(t);
    let deadline = Instant::now() + Duration::from_secs(30);
    let run = loop {
        let run = std::fs::read_dir(dir.join("runs"))
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        if run.join("summary.json").exists() || Instant::now() > deadline {
            break run;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let how = "closed terminal";
    assert!(run.join("summary.json").exists(), "{how}: no summary.json");
    kept_level_1_cut_level_2(&run, how);
    // and the process ended
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::process::Command::new("pgrep")
        .args(["-f", &command])
        .status()
        .is_ok_and(|s| s.success())
    {
        assert!(
            Instant::now() < deadline,
            "{how}: the dashboard is still running"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}
