//! The tmux harness of the dashboard tests: a detached session running a shell (or one
//! command), keystrokes in, the screen read back. Each session has a tmux server of its own
//! (`-L`): with one shared server, a test's `new-session` could reach the server just as the
//! previous test's kill left it with no session and it was exiting, and fail. `start` returns
//! `None`, saying so, where tmux is not installed, and fails under `CI=true` (`.ci/run`
//! installs tmux and sets it, so CI always runs these tests).

#![allow(dead_code)]

use std::process::Command;
use std::time::{Duration, Instant};

pub struct Tmux {
    name: String,
}

/// Whether tmux runs here (a skip message when not).
fn available() -> bool {
    let ok = Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        super::common::tool_missing("tmux", ".ci/run installs it");
    }
    ok
}

impl Tmux {
    /// A `w` x `h` session named after `name` and this process, running `command` (a plain
    /// bash with a `$ ` prompt when `None`).
    fn open(name: &str, w: u16, h: u16, command: Option<&str>) -> Option<Tmux> {
        if !available() {
            return None;
        }
        let t = Tmux {
            name: format!("rs-test-{}-{name}", std::process::id()),
        };
        let mut cmd = t.tmux();
        cmd.args(["new-session", "-d", "-s", &t.name]).args([
            "-x",
            &w.to_string(),
            "-y",
            &h.to_string(),
        ]);
        match command {
            Some(c) => cmd.arg(c),
            None => cmd.args(["bash", "--norc", "--noprofile"]).env("PS1", "$ "),
        };
        let o = cmd.output().expect("tmux runs");
        assert!(
            o.status.success(),
            "tmux new-session: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        Some(t)
    }

    /// A tmux command on this session's own server.
    fn tmux(&self) -> Command {
        let mut c = Command::new("tmux");
        c.args(["-L", &self.name]);
        c
    }

    /// A session running a shell, to type commands into.
    pub fn start(name: &str, w: u16, h: u16) -> Option<Tmux> {
        Self::open(name, w, h, None)
    }

    /// `rightsize watch URL` typed into a fresh 120x40 shell session named after `name`, the
    /// shell saying `EXIT=CODE` once the watcher leaves (see [`Tmux::quit_watcher`]).
    pub fn watch(name: &str, url: &str) -> Option<Tmux> {
        let t = Self::start(name, 120, 40)?;
        t.type_line(&format!(
            "{} watch {url}; echo EXIT=$?",
            env!("CARGO_BIN_EXE_rightsize")
        ));
        Some(t)
    }

    /// Presses q in a session [`Tmux::watch`] started and waits for the shell's `EXIT=` line
    /// (not the typed command's `EXIT=$?`); asserts the watcher exited 0 and returns the
    /// screen, which holds what it printed on leaving.
    pub fn quit_watcher(&self) -> String {
        self.keys(&["q"]);
        let s = self.wait_for("the shell", Duration::from_secs(20), |s| {
            s.lines()
                .any(|l| l.starts_with("EXIT=") && !l.starts_with("EXIT=$"))
        });
        assert!(s.contains("EXIT=0"), "{s}");
        s
    }

    /// A session running `command` itself.
    pub fn run(name: &str, w: u16, h: u16, command: &str) -> Option<Tmux> {
        Self::open(name, w, h, Some(command))
    }

    pub fn keys(&self, keys: &[&str]) {
        let status = self
            .tmux()
            .args(["send-keys", "-t", &self.name])
            .args(keys)
            .status()
            .expect("send-keys");
        assert!(status.success());
    }

    /// Types `text` literally, then Enter.
    pub fn type_line(&self, text: &str) {
        self.keys(&["-l", text]);
        self.keys(&["Enter"]);
    }

    pub fn screen(&self) -> String {
        let o = self
            .tmux()
            .args(["capture-pane", "-p", "-t", &self.name])
            .output()
            .expect("capture-pane");
        String::from_utf8_lossy(&o.stdout).into_owned()
    }

    /// Waits until `pred` holds for the screen, or panics with the last screen.
    pub fn wait_for(&self, what: &str, timeout: Duration, pred: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let s = self.screen();
            if pred(&s) {
                return s;
            }
            if start.elapsed() > timeout {
                panic!("timed out waiting for {what}; screen:\n{s}");
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// As `wait_for`, and the screen has stopped changing: the same capture twice, 200 ms
    /// apart. For snapshots: tmux can be read while the program is half-way through writing
    /// a frame, and a predicate on the frame's top half then passes on a screen whose bottom
    /// half is still the frame before.
    pub fn wait_settled(
        &self,
        what: &str,
        timeout: Duration,
        pred: impl Fn(&str) -> bool,
    ) -> String {
        let start = Instant::now();
        let mut last = self.wait_for(what, timeout, &pred);
        loop {
            std::thread::sleep(Duration::from_millis(200));
            let s = self.screen();
            if s == last && pred(&s) {
                return s;
            }
            if start.elapsed() > timeout {
                panic!("timed out waiting for {what} to settle; screen:\n{s}");
            }
            last = s;
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.tmux().arg("kill-server").status();
    }
}
