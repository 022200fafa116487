//! A results write that fails ends the run: exit 1 within 5 s, one line naming the file and
//! the OS error, and every file left in the run folder valid (whole JSON files, whole lines
//! in `requests.jsonl`, no `.tmp` leftovers). Two ways to fail: a disk that fills (a 96 KiB
//! tmpfs, which needs root to mount: skipped where it cannot be), and a run folder made
//! read-only mid-run (the run as user `nobody` through `setpriv`, which needs root too).
//!
//! The 5 s is a bound on a hang (a run used to sit at 0 % CPU forever after the failed
//! write), measured from the last change of any file in the run folder (the failing write)
//! to the process's exit for the full disk, and from the `chmod` for the read-only folder.

use crate::support::common;
use common::*;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const HANG: Duration = Duration::from_secs(5);

/// Root can mount and switch users here; elsewhere the test says why it skips.
fn root_or_skip(what: &str) -> bool {
    let o = Command::new("id").arg("-u").output().unwrap();
    let root = stdout(&o).trim() == "0";
    if !root {
        eprintln!("skipped: {what} needs root");
    }
    root
}

/// A sweep that would run for minutes: 40 levels of 400 requests on the simulator.
fn long_sweep(out: &Path) -> Vec<String> {
    let levels: Vec<String> = (4..44).map(|c: u32| c.to_string()).collect();
    vec![
        "sweep".into(),
        "-e".into(),
        "sim".into(),
        "--sim-time-scale".into(),
        "50".into(),
        "--input-tokens".into(),
        "16".into(),
        "--output-tokens".into(),
        "4".into(),
        "-c".into(),
        levels.join(","),
        "-n".into(),
        "400".into(),
        "--no-tui".into(),
        "--out".into(),
        out.display().to_string(),
    ]
}

/// Waits for `child` to exit, at most `HANG` after `since()` (read again at each look);
/// the exit code and stderr.
fn exit_within(mut child: Child, since: impl Fn() -> Instant) -> (Option<i32>, String) {
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut err = String::new();
            use std::io::Read;
            child
                .stderr
                .take()
                .unwrap()
                .read_to_string(&mut err)
                .unwrap();
            return (status.code(), err);
        }
        if since().elapsed() > HANG {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "still running {HANG:?} after the write failed; stderr:\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Polls `ready` every 20 ms for up to a minute (the run starting), or panics with `what`.
fn wait_for(what: &str, ready: impl Fn() -> bool) -> Instant {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !ready() {
        assert!(Instant::now() < deadline, "never saw {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
    Instant::now()
}

/// Every file in the run folder is whole: JSON files parse, every line of `requests.jsonl`
/// parses, no `.tmp` file is left.
fn all_valid(run: &Path) {
    for entry in std::fs::read_dir(run).unwrap() {
        let p = entry.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        assert!(!name.ends_with(".tmp"), "a leftover {name}");
        if name.ends_with(".json") {
            read_json(&p);
        } else if name == "requests.jsonl" {
            rightsize::report::folder::load_requests(&p)
                .unwrap_or_else(|e| panic!("requests.jsonl is not whole lines: {e}"));
        }
    }
    assert!(run.join("run.json").is_file(), "run.json is kept");
}

/// The one line of stderr that names `file` and `os_error`.
fn names(err: &str, file: &str, os_error: &str) {
    let lines: Vec<&str> = err
        .lines()
        .filter(|l| l.contains(file) && l.contains(os_error))
        .collect();
    assert_eq!(
        lines.len(),
        1,
        "one line naming {file} and `{os_error}`; stderr:\n{err}"
    );
}

/// When anything under `dir` last changed (a write, a truncation, a file made or removed),
/// as an `Instant`.
fn last_change(dir: &Path) -> Instant {
    fn newest(dir: &Path) -> std::time::SystemTime {
        let mut t = std::fs::metadata(dir)
            .and_then(|m| m.modified())
            .unwrap_or(std::time::UNIX_EPOCH);
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let p = e.path();
            let m = if p.is_dir() {
                newest(&p)
            } else {
                e.metadata()
                    .and_then(|m| m.modified())
                    .unwrap_or(std::time::UNIX_EPOCH)
            };
            t = t.max(m);
        }
        t
    }
    let age = newest(dir).elapsed().unwrap_or_default();
    Instant::now().checked_sub(age).unwrap_or_else(Instant::now)
}

struct Mount(PathBuf);

/// A tmpfs of `size` mounted on a fresh folder named after `name` (unmounted when the guard
/// goes); `None`, saying why, where it cannot be (not root, or no mount allowed).
fn small_disk(name: &str, size: &str) -> Option<(PathBuf, Mount)> {
    if !root_or_skip("mounting a small tmpfs") {
        return None;
    }
    let out = tmpdir(name);
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
        .arg(&out)
        .status()
        .unwrap();
    if !mounted.success() {
        eprintln!("skipped: cannot mount a tmpfs here");
        return None;
    }
    Some((out.clone(), Mount(out)))
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

#[test]
fn a_full_disk_ends_the_run_with_exit_1_naming_the_file() {
    let Some((out, _mount)) = small_disk("disk-full", "96k") else {
        return;
    };
    // a summary kept elsewhere goes to the temporary folder: this test's own
    let elsewhere = tmpdir("disk-full-kept");
    let child = bin()
        .args(long_sweep(&out))
        .env("TMPDIR", &elsewhere)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // the run writes as it goes until the disk is full; then it must end
    wait_for("the run folder", || {
        std::fs::read_dir(&out).is_ok_and(|mut d| d.next().is_some())
    });
    let (code, err) = exit_within(child, || last_change(&out));
    assert_eq!(code, Some(1), "stderr:\n{err}");
    names(&err, &out.display().to_string(), "No space left on device");
    all_valid(&only_run_dir(&out));
    // the finished levels are kept in a summary: in the folder if it took one, else in the
    // temporary folder, and the run says where
    let kept = err
        .lines()
        .find_map(|l| {
            l.strip_prefix("kept: ")
                .map(|r| r.split(" (").next().unwrap().to_string())
                .or_else(|| l.split(") is in ").nth(1).map(str::to_string))
        })
        .unwrap_or_else(|| panic!("no kept summary; stderr:\n{err}"));
    let summary = read_json(Path::new(&kept));
    // the disk fills within the first level here: no level finished
    assert!(summary["levels"].is_array(), "{summary}");
    assert_eq!(summary["interrupted"], true);
    assert!(
        kept.starts_with(&out.display().to_string())
            || kept.starts_with(&elsewhere.display().to_string()),
        "{kept}"
    );
}

#[test]
fn a_run_folder_made_read_only_ends_the_run_with_exit_1_naming_the_file() {
    if !root_or_skip("running as another user") {
        return;
    }
    // a folder `nobody` may write in, reached through folders it may enter
    let out = tmpdir("read-only");
    let mut p = out.clone();
    while let Some(parent) = p.parent() {
        if parent == Path::new("/") {
            break;
        }
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(parent).unwrap().permissions().mode();
        if mode & 0o001 == 0 {
            eprintln!(
                "skipped: user nobody cannot enter {} (mode {:o})",
                parent.display(),
                mode
            );
            return;
        }
        p = parent.to_path_buf();
    }
    let chown = Command::new("chown")
        .args(["nobody:", &out.display().to_string()])
        .status()
        .unwrap();
    assert!(chown.success());
    let child = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .arg(env!("CARGO_BIN_EXE_rightsize"))
        .args(long_sweep(&out))
        .env("HOME", &out)
        .env("XDG_CONFIG_HOME", out.join("config"))
        // the summary it keeps elsewhere once the run folder refuses it: beside the run
        .env("TMPDIR", &out)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // once the first level file is there, the folder goes read-only
    let run = || {
        std::fs::read_dir(&out)
            .ok()?
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .find(|p| p.join("level-001-c0004.json").is_file())
    };
    wait_for("the first level written", || run().is_some());
    let run = run().unwrap();
    let chmod = Command::new("chmod")
        .arg("0555")
        .arg(&run)
        .status()
        .unwrap();
    assert!(chmod.success());
    let made_read_only = Instant::now();
    let (code, err) = exit_within(child, || made_read_only);
    let _ = Command::new("chmod").arg("0755").arg(&run).status();
    assert_eq!(code, Some(1), "stderr:\n{err}");
    names(&err, &run.display().to_string(), "Permission denied");
    all_valid(&run);
}

/// A write that fails does not turn into a wrong story when a signal comes too: the run ends
/// with exit 1 and the line naming the file and the OS error. It used to say `interrupted
/// before any load was sent` (exit 130) after "4/400 done", naming no file: the SIGINT cut
/// the level, the level's records (held in a buffer) could not go down on a full disk, and
/// the signal's message took the failure's place. The disk is left 8 KiB; the SIGINT comes
/// once the level reports progress.
#[test]
fn a_failed_write_is_said_when_a_signal_stopped_the_run() {
    let Some((out, _mount)) = small_disk("disk-full-signal", "2m") else {
        return;
    };
    let o = Command::new("df")
        .args(["--output=avail", "-B1"])
        .arg(&out)
        .output()
        .unwrap();
    let avail: u64 = stdout(&o).lines().nth(1).unwrap().trim().parse().unwrap();
    let filled = Command::new("dd")
        .args(["if=/dev/zero", "bs=1024"])
        .arg(format!("count={}", (avail - 8 * 1024) / 1024))
        .arg(format!("of={}", out.join("fill").display()))
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(filled.success());
    let runs = out.join("runs");
    let mut child = bin()
        .args([
            "sweep",
            "-e",
            "sim",
            "--sim-time-scale",
            "20",
            "-c",
            "4",
            "-n",
            "400",
        ])
        .args(["--output-tokens", "2000", "--no-tui", "--out"])
        .arg(&runs)
        .env("TMPDIR", tmpdir("disk-full-signal-kept"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // its stderr line by line: the SIGINT once the level reports progress
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    let err = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        use std::io::BufRead;
        let mut all = String::new();
        for line in std::io::BufReader::new(err).lines().map_while(Result::ok) {
            let _ = tx.send(line.clone());
            all += &line;
            all.push('\n');
        }
        all
    });
    loop {
        let line = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("the level's progress");
        if line.contains("/400 done") {
            break;
        }
    }
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let code =
        common::wait_exit(&mut child, Duration::from_secs(60), "the run after SIGINT").code();
    let err = reader.join().unwrap();
    assert!(!err.contains("before any load"), "stderr:\n{err}");
    assert_eq!(code, Some(1), "stderr:\n{err}");
    names(&err, &runs.display().to_string(), "No space left on device");
}

/// An export that cannot be written whole leaves nothing behind (the hostile probe found a
/// 0-byte `report.html` after "No space left on device"): a run made elsewhere, exported as
/// HTML and PNG into a 16 KiB disk.
#[test]
fn a_failed_export_leaves_no_file() {
    let Some((full, _mount)) = small_disk("export-full", "16k") else {
        return;
    };
    let runs = tmpdir("export-full-runs");
    let o = common::on_sim("sweep", 16, 4)
        .args(["-c", "2,4", "-n", "16", "--no-tui", "--out"])
        .arg(&runs)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", common::stderr(&o));
    let run = common::only_run_dir(&runs);
    for (flag, name) in [("--html", "report.html"), ("--png", "chart.png")] {
        let target = full.join(name);
        let o = bin()
            .arg("export")
            .arg(&run)
            .arg(flag)
            .arg(&target)
            .output()
            .unwrap();
        let err = common::stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{flag}: {err}");
        names(
            &err,
            &target.display().to_string(),
            "No space left on device",
        );
        assert!(
            !target.exists(),
            "{flag}: {} was left behind",
            target.display()
        );
        let left: Vec<_> = std::fs::read_dir(&full).unwrap().collect();
        assert!(left.is_empty(), "{flag}: {left:?}");
    }
}
