//! Client benchmark: the engine against the simulator running as a separate process on the
//! same machine, with decode made free so the simulator sends tokens as fast as it can.
//!
//! Modes (`cargo bench --bench client_events -- MODE`):
//! - `events` (default): at concurrency 1, 256 and 1024, the token events/s and requests/s the
//!   client reaches, its CPU time per token event, and the TTFT error (client receive time of
//!   the first token minus the simulator's send time of it).
//!   `free` and `paced` run only the decode-free or only the paced half.
//! - `hold`: achieved concurrency against target at 64, 256, 1024, 4096 and 10,000 streams,
//!   with the default model (slots raised) at a time scale, and how long the level took to
//!   send its first request on every slot.
//! - `idle`: CPU seconds the client uses at concurrency 1 against a slow simulator.
//! - `https`: the concurrency-256 rows of `events`, decode free and paced, first over http and
//!   then over https, the simulator serving a self-signed certificate made in a temporary
//!   folder (`tests/support/common/tls.rs`) that the client trusts through `SSL_CERT_FILE` (set in this
//!   process before the runtime starts, so the simulator's process inherits it too); with the
//!   https/http ratio of token events/s.
//! - `sagemaker` (with the `sagemaker` feature): the same figures at concurrency 1 and 256,
//!   decode free and paced, for the real binary in its own process against the simulator's
//!   SageMaker API (through the AWS SDK, SigV4 checked) and, side by side, its OpenAI API. The
//!   AWS settings (the simulator as `AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME`, test credentials) are
//!   set on that child process only; its CPU time is the whole process's (set-up included).
//!   The simulator cuts payload parts at random sizes up to `RIGHTSIZE_BENCH_SM_PART` bytes
//!   (default 96, its own default: a token's event then spans 3-5 frames).
//!
//! By default both processes share every core, as they would if a user ran `rightsize sim` on
//! the machine under test. With `RIGHTSIZE_BENCH_PIN=1` the client runs one runtime worker
//! pinned to CPU 0 and the simulator is pinned to CPU 1 (`taskset`): like a client and a server
//! on separate machines, the client's reads no longer wait for the simulator's time slices.

use rightsize::endpoint::{Api, EndpointSpec};
use rightsize::engine::{run, EngineEvent, RunOutcome, RunRequest};
use rightsize::metrics::Histogram;
use rightsize::plan::SweepPlanner;
use rightsize::workload::WorkloadSpec;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

#[path = "../tests/support/common/tls.rs"]
mod tls;

struct SimProcess {
    child: Child,
    base_url: String,
}

impl Drop for SimProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `RIGHTSIZE_BENCH_PIN=1` was set.
fn pin_asked() -> bool {
    std::env::var("RIGHTSIZE_BENCH_PIN").is_ok_and(|v| v == "1")
}

/// Client and simulator each on their own CPU (asked with `RIGHTSIZE_BENCH_PIN=1`; Linux only:
/// it uses `sched_setaffinity` and `taskset`).
fn pinned() -> bool {
    cfg!(target_os = "linux") && pin_asked()
}

fn start_sim(args: &[&str]) -> SimProcess {
    start_sim_with_env(args, None)
}

/// [`start_sim`] with one variable set on the simulator's process alone.
fn start_sim_with_env(args: &[&str], env: Option<(&str, &str)>) -> SimProcess {
    let exe = env!("CARGO_BIN_EXE_rightsize");
    let mut cmd = if pinned() {
        let mut c = Command::new("taskset");
        c.args(["-c", "1", exe]);
        c
    } else {
        Command::new(exe)
    };
    if let Some((var, value)) = env {
        cmd.env(var, value);
    }
    let mut child = cmd
        .args(["sim", "--port", "0"])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start rightsize sim");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("sim stdout"))
        .read_line(&mut line)
        .expect("sim prints its URL");
    SimProcess {
        child,
        base_url: line.trim().to_string(),
    }
}

/// User + system CPU seconds of this process (`RUSAGE_SELF`) or of its waited-for children
/// (`RUSAGE_CHILDREN`).
#[cfg(unix)]
fn rusage_seconds(who: libc::c_int) -> f64 {
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage fills the struct we own.
    unsafe { libc::getrusage(who, &mut ru) };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

/// User + system CPU seconds of this process (NaN where `getrusage` is missing: the CPU
/// figures are then not measured).
fn cpu_seconds() -> f64 {
    #[cfg(unix)]
    return rusage_seconds(libc::RUSAGE_SELF);
    #[cfg(not(unix))]
    return f64::NAN;
}

fn workload(input: u32, output: u32) -> WorkloadSpec {
    WorkloadSpec {
        seed: 7,
        ..WorkloadSpec::fixed(input, output)
    }
}

async fn one_level(
    sim: &SimProcess,
    concurrency: u32,
    requests: u32,
    w: WorkloadSpec,
    sim_timing: bool,
) -> (RunOutcome, f64) {
    let spec = EndpointSpec {
        name: "sim".into(),
        base_url: sim.base_url.clone(),
        model: "sim-moe-30b-a3b".into(),
        api: Api::Chat,
        stream: true,
        exact_output_length: true,
        headers: vec![],
        api_key_env: None,
        sim_timing,
        sagemaker: None,
    };
    let root = std::env::temp_dir().join(format!("rightsize-bench-{}", std::process::id()));
    let req = RunRequest {
        kind: "bench".into(),
        endpoint: spec,
        workload: w,
        request_count: requests,
        // cold levels, as set here since before warm levels were the CLI default (one round)
        warmup: rightsize::engine::Warmup::Requests(0),
        telemetry_interval: rightsize::telemetry::scrape::SCRAPE_EVERY,
        gpu_metrics: None,
        timeout: Duration::from_secs(120),
        preflight_timeout: Duration::from_secs(60),
        sink: Box::new(rightsize::report::folder::FolderSink::new(root)),
        in_process_sim: false,
        config_sources: vec![],
        open: Default::default(),
        traffic: None,
        prefix_cache: Default::default(),
        prefix_cache_reset_url: None,
        fleet: None,
    };
    let (tx, mut rx) = tokio::sync::mpsc::channel::<EngineEvent>(64);
    // CPU is counted from the level's start to its end: set-up (TLS roots, pre-flight) and
    // the results files are not the client's per-request cost
    let drain = tokio::spawn(async move {
        let mut cpu = (0.0, 0.0);
        while let Some(ev) = rx.recv().await {
            match ev {
                EngineEvent::Warning(w) => eprintln!("  warning: {w}"),
                EngineEvent::LevelStarted { .. } => cpu.0 = cpu_seconds(),
                EngineEvent::LevelFinished(_) => cpu.1 = cpu_seconds(),
                _ => {}
            }
        }
        cpu.1 - cpu.0
    });
    let out = run(
        req,
        Box::new(SweepPlanner::fixed(vec![concurrency])),
        tx,
        CancellationToken::new(),
    )
    .await
    .expect("bench run");
    let cpu = drain.await.expect("event drain");
    (out, cpu)
}

/// What a finished level measured, for one printed row.
struct Figures {
    requests: usize,
    events_per_sec: f64,
    requests_per_sec: f64,
    cpu_us_per_event: f64,
    /// TTFT error (client receive of the first token minus the simulator's send), ms.
    ttft_err_p50: f64,
    ttft_err_p99: f64,
    ttft_err_max: f64,
    errors: u64,
}

/// Reads a finished level's figures, then removes its results folder.
fn figures(out: &RunOutcome, cpu: f64) -> Figures {
    let l = &out.levels[0];
    let recs = rightsize::report::load_requests(&out.dir.join("requests.jsonl")).expect("records");
    let mut err = Histogram::latency();
    let mut events = 0u64;
    for r in recs.iter().map(|l| &l.record) {
        events += r.content_chunks as u64;
        if let (Some(got), Some(sent)) = (r.first_token_ns, r.server_first_sent_ns) {
            err.record_ns(got.saturating_sub(sent));
        }
    }
    let e = err.stats().expect("ttft errors");
    let _ = std::fs::remove_dir_all(&out.dir);
    Figures {
        requests: recs.len(),
        events_per_sec: events as f64 / l.benchmark_duration.avg,
        requests_per_sec: l.requests_per_sec(),
        cpu_us_per_event: cpu / events as f64 * 1e6,
        ttft_err_p50: e.p50,
        ttft_err_p99: e.p99,
        ttft_err_max: e.max,
        errors: l.error_count(),
    }
}

/// Prints one row: throughput, CPU per event and TTFT error of a finished level.
fn event_row(concurrency: u32, out: &RunOutcome, cpu: f64) {
    let f = figures(out, cpu);
    println!(
        "{:>11} {:>9} {:>13.0} {:>10.0} {:>14.2} {:>15.3} {:>15.3} {:>14.3} {:>7}",
        concurrency,
        f.requests,
        f.events_per_sec,
        f.requests_per_sec,
        f.cpu_us_per_event,
        f.ttft_err_p50,
        f.ttft_err_p99,
        f.ttft_err_max,
        f.errors
    );
}

fn event_header() {
    println!(
        "{:>11} {:>9} {:>13} {:>10} {:>14} {:>15} {:>15} {:>14} {:>7}",
        "concurrency",
        "requests",
        "token ev/s",
        "req/s",
        "cpu us/event",
        "ttft err p50 ms",
        "ttft err p99 ms",
        "ttft err max ms",
        "errors"
    );
}

/// Aggregate token-event rate of the paced runs: half the client's 200,000/s goal.
const PACED_EVENTS_PER_SEC: f64 = 100_000.0;

async fn events() {
    decode_free().await;
    println!();
    paced().await;
}

/// The decode-free levels of `events` (concurrency, requests); `https` runs the middle one.
const FREE_LEVELS: [(u32, u32); 3] = [(1, 400), FREE_256, (1024, 4096)];
const FREE_256: (u32, u32) = (256, 2048);

/// The paced levels of `events` (concurrency, requests); `https` runs the middle one.
const PACED_LEVELS: [(u32, u32); 3] = [(1, 200), PACED_256, (1024, 2048)];
const PACED_256: (u32, u32) = (256, 1024);

async fn decode_free() {
    println!("decode free: the simulator sends as fast as it can; the client is saturated");
    let sim = free_sim(&[]);
    event_header();
    for (concurrency, requests) in FREE_LEVELS {
        let (out, cpu) = free_level(&sim, concurrency, requests).await;
        event_row(concurrency, &out, cpu);
    }
    drop(sim);
}

/// The decode-free simulator, with `extra` flags.
fn free_sim(extra: &[&str]) -> SimProcess {
    let mut args = free_model("0").to_vec();
    args.extend_from_slice(extra);
    start_sim(&args)
}

/// One decode-free level: 64 tokens in, 256 out.
async fn free_level(sim: &SimProcess, concurrency: u32, requests: u32) -> (RunOutcome, f64) {
    one_level(sim, concurrency, requests, workload(64, 256), true).await
}

/// Simulator flags: every step costs `step_ms` whatever the batch, no prefill cost, and room
/// for every stream (slots and KV far above the concurrency asked).
fn free_model(step_ms: &str) -> [&str; 10] {
    [
        "--decode-base-ms",
        step_ms,
        "--decode-per-seq-ms",
        "0",
        "--prefill-per-token-ms",
        "0",
        "--max-num-seqs",
        "4096",
        "--kv-cache-tokens",
        "100000000",
    ]
}

async fn paced() {
    println!(
        "paced: one decode step emits a token on every stream, steps timed for {} token events/s in all",
        PACED_EVENTS_PER_SEC
    );
    event_header();
    for (concurrency, requests) in PACED_LEVELS {
        let sim = paced_sim(concurrency, &[]);
        let (out, cpu) = paced_level(&sim, concurrency, requests).await;
        event_row(concurrency, &out, cpu);
    }
}

/// The simulator stepping for [`PACED_EVENTS_PER_SEC`] at `concurrency`, with `extra` flags.
fn paced_sim(concurrency: u32, extra: &[&str]) -> SimProcess {
    let step_ms = format!("{}", concurrency as f64 / PACED_EVENTS_PER_SEC * 1e3);
    let mut args = free_model(&step_ms).to_vec();
    args.extend_from_slice(extra);
    start_sim(&args)
}

/// One paced level: 64 tokens in, 128 out.
async fn paced_level(sim: &SimProcess, concurrency: u32, requests: u32) -> (RunOutcome, f64) {
    one_level(sim, concurrency, requests, workload(64, 128), true).await
}

/// `https`: the 256-stream rows of `events`, decode free then paced, each over http then over
/// https (`tls_flags`: the simulator's `--tls-cert`/`--tls-key`; `SSL_CERT_FILE` is set).
async fn https(tls_flags: &[&str]) {
    println!(
        "{:>6} {:>6} {:>11} {:>9} {:>13} {:>14} {:>15} {:>15} {:>7} {:>11}",
        "scheme",
        "mode",
        "concurrency",
        "requests",
        "token ev/s",
        "cpu us/event",
        "ttft err p50 ms",
        "ttft err p99 ms",
        "errors",
        "https/http"
    );
    for paced in [false, true] {
        let mut http_rate = f64::NAN;
        for scheme in ["http", "https"] {
            let extra: &[&str] = if scheme == "https" { tls_flags } else { &[] };
            let ((concurrency, requests), sim) = if paced {
                (PACED_256, paced_sim(PACED_256.0, extra))
            } else {
                (FREE_256, free_sim(extra))
            };
            assert!(
                sim.base_url.starts_with(&format!("{scheme}://")),
                "the simulator serves {}",
                sim.base_url
            );
            let (out, cpu) = if paced {
                paced_level(&sim, concurrency, requests).await
            } else {
                free_level(&sim, concurrency, requests).await
            };
            drop(sim);
            let f = figures(&out, cpu);
            let ratio = if scheme == "http" {
                http_rate = f.events_per_sec;
                String::new()
            } else {
                format!("{:.3}", f.events_per_sec / http_rate)
            };
            println!(
                "{:>6} {:>6} {:>11} {:>9} {:>13.0} {:>14.2} {:>15.3} {:>15.3} {:>7} {:>11}",
                scheme,
                if paced { "paced" } else { "free" },
                concurrency,
                f.requests,
                f.events_per_sec,
                f.cpu_us_per_event,
                f.ttft_err_p50,
                f.ttft_err_p99,
                f.errors,
                ratio
            );
        }
    }
}

async fn hold() {
    // the default model at 10x, with slots and KV raised so every stream is admitted
    let sim = start_sim(&[
        "--time-scale",
        "10",
        "--max-num-seqs",
        "8192",
        "--kv-cache-tokens",
        "100000000",
    ]);
    println!(
        "{:>11} {:>9} {:>9} {:>8} {:>7} {:>9}",
        "concurrency", "requests", "achieved", "ratio", "errors", "filled ms"
    );
    for concurrency in [64u32, 256, 1024, 4096, 10_000] {
        let (out, _) =
            one_level(&sim, concurrency, concurrency * 3, workload(128, 64), false).await;
        let l = &out.levels[0];
        let a = l.achieved_concurrency.unwrap_or(0.0);
        // every slot has sent its first request when the steady window opens
        let filled_ms = l.steady_window.map_or(f64::NAN, |w| w.start_s * 1e3);
        println!(
            "{:>11} {:>9} {:>9.1} {:>7.2}% {:>7} {:>9.1}",
            concurrency,
            concurrency * 3,
            a,
            100.0 * a / concurrency as f64,
            l.error_count(),
            filled_ms
        );
        let _ = std::fs::remove_dir_all(&out.dir);
    }
}

async fn idle() {
    // 200 ms per token in real time: the client waits almost all the time
    let sim = start_sim(&["--decode-base-ms", "200", "--decode-per-seq-ms", "0"]);
    let (out, cpu) = one_level(&sim, 1, 5, workload(64, 10), false).await;
    let l = &out.levels[0];
    println!(
        "concurrency 1, 5 requests x 10 tokens over {:.1} s: client CPU {:.3} s ({:.2} % of one core)",
        l.benchmark_duration.avg,
        cpu,
        100.0 * cpu / l.benchmark_duration.avg
    );
    let _ = std::fs::remove_dir_all(&out.dir);
}

/// One level run by the real binary in its own process against `sim`, SageMaker or OpenAI
/// API; prints its row (CPU: the child's user + system time, set-up included).
#[cfg(feature = "sagemaker")]
fn child_level(sim: &SimProcess, sagemaker: bool, concurrency: u32, requests: u32, output: u32) {
    let out = std::env::temp_dir().join(format!(
        "rightsize-bench-sm-{}-{concurrency}-{sagemaker}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&out);
    let mut c = Command::new(env!("CARGO_BIN_EXE_rightsize"));
    if sagemaker {
        let root = sim.base_url.trim_end_matches("/v1").to_string();
        let none = out.join("no-aws-config");
        c.args(["sweep", "-e", "sagemaker:bench", "--region", "us-east-1"])
            .env("AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME", root)
            .env("AWS_ACCESS_KEY_ID", SM_KEY_ID)
            .env("AWS_SECRET_ACCESS_KEY", SM_SECRET)
            .env("AWS_CONFIG_FILE", &none)
            .env("AWS_SHARED_CREDENTIALS_FILE", &none)
            .env("AWS_EC2_METADATA_DISABLED", "true")
            .env_remove("AWS_PROFILE")
            .env_remove("AWS_SESSION_TOKEN");
    } else {
        c.args(["sweep", "-e", &sim.base_url, "--model", "sim-moe-30b-a3b"]);
    }
    let before = children_cpu_seconds();
    let o = c
        .args([
            "--no-tui",
            "--no-calibrate",
            "--sim-timing",
            "--input-tokens",
            "64",
        ])
        .args(["--output-tokens", &output.to_string()])
        .args(["-c", &concurrency.to_string(), "-n", &requests.to_string()])
        .args(["--out", out.to_str().expect("utf-8 temp dir")])
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .expect("run rightsize sweep");
    let cpu = children_cpu_seconds() - before;
    assert!(o.status.success(), "the sweep failed");
    let run = std::fs::read_dir(&out)
        .expect("results")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.is_dir() && p.join("requests.jsonl").exists())
        .expect("a run folder");
    let level: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(run.join(format!("level-001-c{concurrency:04}.json")))
            .expect("level file"),
    )
    .expect("level JSON");
    let recs = rightsize::report::load_requests(&run.join("requests.jsonl")).expect("records");
    let mut err = Histogram::latency();
    let mut events = 0u64;
    for r in recs.iter().map(|l| &l.record) {
        events += r.content_chunks as u64;
        if let (Some(got), Some(sent)) = (r.first_token_ns, r.server_first_sent_ns) {
            err.record_ns(got.saturating_sub(sent));
        }
    }
    let e = err.stats().expect("ttft errors");
    let duration = level["benchmark_duration"]["avg"]
        .as_f64()
        .unwrap_or(f64::NAN);
    println!(
        "{:>10} {:>11} {:>9} {:>13.0} {:>10.0} {:>14.2} {:>15.3} {:>15.3} {:>14.3} {:>7}",
        if sagemaker { "sagemaker" } else { "openai" },
        concurrency,
        recs.len(),
        events as f64 / duration,
        level["request_throughput"]["avg"]
            .as_f64()
            .unwrap_or(f64::NAN),
        cpu / events as f64 * 1e6,
        e.p50,
        e.p99,
        e.max,
        level["error_request_count"]["avg"]
            .as_f64()
            .unwrap_or(f64::NAN)
    );
    let _ = std::fs::remove_dir_all(&out);
}

#[cfg(feature = "sagemaker")]
const SM_KEY_ID: &str = "AKIDRIGHTSIZEBENCH";
#[cfg(feature = "sagemaker")]
const SM_SECRET: &str = "rightsize-bench-secret";

/// User + system CPU seconds of the waited-for child processes.
#[cfg(feature = "sagemaker")]
fn children_cpu_seconds() -> f64 {
    #[cfg(unix)]
    return rusage_seconds(libc::RUSAGE_CHILDREN);
    #[cfg(not(unix))]
    return f64::NAN;
}

/// The SageMaker rows: decode free and paced, at concurrency 1 and 256, each through the
/// simulator's SageMaker API and its OpenAI API.
#[cfg(feature = "sagemaker")]
fn sagemaker_rows() {
    let part = std::env::var("RIGHTSIZE_BENCH_SM_PART").unwrap_or_else(|_| "96".into());
    println!("payload parts cut at random sizes up to {part} bytes");
    let start = |model: &[&str]| {
        let mut args = vec![
            "--sagemaker-access-key-id",
            SM_KEY_ID,
            "--sagemaker-max-part-bytes",
            &part,
        ];
        args.extend_from_slice(model);
        // the simulator's secret: set on its process alone
        start_sim_with_env(
            &args,
            Some(("RIGHTSIZE_SIM_AWS_SECRET_ACCESS_KEY", SM_SECRET)),
        )
    };
    let header = || {
        println!(
            "{:>10} {:>11} {:>9} {:>13} {:>10} {:>14} {:>15} {:>15} {:>14} {:>7}",
            "api",
            "concurrency",
            "requests",
            "token ev/s",
            "req/s",
            "cpu us/event",
            "ttft err p50 ms",
            "ttft err p99 ms",
            "ttft err max ms",
            "errors"
        );
    };
    println!("decode free: the simulator sends as fast as it can");
    header();
    let sim = start(&free_model("0"));
    for (concurrency, requests) in [(1, 400), (256, 2048)] {
        for sagemaker in [false, true] {
            child_level(&sim, sagemaker, concurrency, requests, 256);
        }
    }
    drop(sim);
    println!();
    println!(
        "paced: one decode step emits a token on every stream, steps timed for {} token events/s in all",
        PACED_EVENTS_PER_SEC
    );
    header();
    for (concurrency, requests) in [(1u32, 200u32), (256, 1024)] {
        let step_ms = format!("{}", concurrency as f64 / PACED_EVENTS_PER_SEC * 1e3);
        let sim = start(&free_model(&step_ms));
        for sagemaker in [false, true] {
            child_level(&sim, sagemaker, concurrency, requests, 128);
        }
    }
}

fn main() {
    let mode = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with('-'))
        .unwrap_or_else(|| "events".into());
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    // the workers ask for a short time slice, as the binary's do (src/main.rs)
    builder.on_thread_start(rightsize::sched::short_slice);
    if pin_asked() && !pinned() {
        eprintln!(
            "RIGHTSIZE_BENCH_PIN=1 needs Linux (sched_setaffinity, taskset): running unpinned"
        );
    }
    if pinned() {
        #[cfg(target_os = "linux")]
        // SAFETY: a zeroed cpu_set_t is valid; CPU_SET and sched_setaffinity only touch it.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(0, &mut set);
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
        }
        builder.worker_threads(1);
        println!("pinned: client on CPU 0 (1 runtime worker), simulator on CPU 1");
    }
    // https: a fresh self-signed certificate, trusted through SSL_CERT_FILE, set before the
    // runtime's threads start (and inherited by the simulator's process)
    let tls_dir = std::env::temp_dir().join(format!("rightsize-bench-tls-{}", std::process::id()));
    let mut tls_flags = Vec::new();
    if mode == "https" {
        std::fs::create_dir_all(&tls_dir).expect("a temporary folder for the certificate");
        let (cert, key) = tls::self_signed(&tls_dir);
        std::env::set_var("SSL_CERT_FILE", &cert);
        let path = |p: &std::path::Path| p.to_str().expect("a UTF-8 temp dir").to_string();
        tls_flags = vec![
            "--tls-cert".into(),
            path(&cert),
            "--tls-key".into(),
            path(&key),
        ];
    }
    let rt = builder.enable_all().build().expect("runtime");
    rt.block_on(async {
        match mode.as_str() {
            "https" => https(&tls_flags.iter().map(String::as_str).collect::<Vec<_>>()).await,
            "hold" => hold().await,
            "idle" => idle().await,
            "free" => decode_free().await,
            "paced" => paced().await,
            #[cfg(feature = "sagemaker")]
            "sagemaker" => sagemaker_rows(),
            _ => events().await,
        }
    });
    let _ = std::fs::remove_dir_all(&tls_dir);
}
