//! Soak benchmark (issue 24): the real binary, headless, against its built-in simulator at
//! concurrency 256 for 10 minutes, sampled every 10 s: resident memory, open descriptors and
//! threads. A tool left running overnight must not grow: after the first minute (the level's
//! prompts made, the connections open) each figure should stay within 5 % of where it was.
//!
//! `cargo bench --bench soak` (release build). `RIGHTSIZE_SOAK_SECS=120` soaks for less.
//! Linux only (it reads `/proc`). The run is one level of a million requests, stopped with
//! SIGINT when the time is up (it keeps what it measured, like any interrupted run).

#[cfg(target_os = "linux")]
fn main() {
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};

    let secs: u64 = std::env::var("RIGHTSIZE_SOAK_SECS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(600);
    let out = std::env::temp_dir().join(format!("rightsize-soak-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let mut child = Command::new(env!("CARGO_BIN_EXE_rightsize"))
        .args(["sweep", "-e", "sim", "--sim-time-scale", "5"])
        .args(["--input-tokens", "64", "--output-tokens", "32"])
        .args(["-c", "256", "-n", "1000000", "--no-tui", "--out"])
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("the rightsize binary runs");
    let pid = child.id();
    let sample = || -> Option<(f64, usize, usize)> {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
        let field = |name: &str| -> Option<f64> {
            status
                .lines()
                .find(|l| l.starts_with(name))?
                .split_whitespace()
                .nth(1)?
                .parse()
                .ok()
        };
        let rss_mb = field("VmRSS:")? / 1024.0;
        let threads = field("Threads:")? as usize;
        let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).ok()?.count();
        Some((rss_mb, fds, threads))
    };
    println!("soak: concurrency 256 on the built-in simulator for {secs} s, pid {pid}");
    println!(
        "{:>6}  {:>9}  {:>5}  {:>7}",
        "t (s)", "RSS (MB)", "fds", "threads"
    );
    let start = Instant::now();
    // (t in s, RSS in MB, open fds, threads)
    type Row = (u64, f64, usize, usize);
    let mut rows: Vec<Row> = Vec::new();
    let mut t = 0;
    while t <= secs {
        let next = start + Duration::from_secs(t);
        if let Some(wait) = next.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
        if let Ok(Some(_)) = child.try_wait() {
            println!("the run ended before the soak did");
            break;
        }
        if let Some((rss, fds, threads)) = sample() {
            println!("{t:>6}  {rss:>9.1}  {fds:>5}  {threads:>7}");
            rows.push((t, rss, fds, threads));
        }
        t += 10;
    }
    // SAFETY: kill sends a signal to the child we started
    unsafe { libc::kill(pid as i32, libc::SIGINT) };
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(&out);
    let settled: Vec<_> = rows.iter().filter(|r| r.0 >= 60).collect();
    if let Some(first) = settled.first() {
        let growth = |f: &dyn Fn(&Row) -> f64| {
            let base = f(first);
            let top = settled.iter().map(|r| f(r)).fold(base, f64::max);
            (top / base - 1.0) * 100.0
        };
        println!(
            "growth after the first minute (most over the value at 60 s): RSS {:+.1} %, fds \
             {:+.1} %, threads {:+.1} %",
            growth(&|r| r.1),
            growth(&|r| r.2 as f64),
            growth(&|r| r.3 as f64)
        );
    }
}

#[cfg(not(target_os = "linux"))]
fn main() {
    println!("the soak benchmark reads /proc: Linux only");
}
