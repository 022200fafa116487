//! Open-loop benchmark (issue 14): how close to their intended times requests go out at a
//! high rate. The simulator runs as a separate process with decode made free (every answer
//! is one token, at once), so the server is never what holds a request back; the client
//! sends at 1,000, and 5,000 requests/s for 4 s each, evenly spaced and Poisson.
//!
//! Per rate: the schedule lag (actual send minus intended send) p50 / p99 / max, split into
//! the dispatcher's wake-up delay (intended to released) and the runtime's (released to
//! sent), the rate achieved, and the client's CPU seconds per 1,000 requests.
//!
//! `cargo bench --bench open_loop` (release build). `RIGHTSIZE_BENCH_PIN=1` pins the client to
//! CPU 0 and the simulator to CPU 1.
//!
//! `cargo bench --bench open_loop -- stall` measures the machine instead, with no client and
//! no server: how late a lone thread reaches 300 instants 7 ms apart when it sleeps until each,
//! and when it sleeps until 1 or 3 ms before and spins the rest. A spinning thread needs no
//! wake-up, so what lateness it still shows is the machine holding it off its CPU: the floor
//! under any send error (docs/open-loop.md, "How sends are timed").

#[path = "support/sim_process.rs"]
mod sim_process;

use rightsize::endpoint::{Api, EndpointSpec};
use rightsize::engine::{run, EngineEvent, RunRequest};
use rightsize::plan::{Analysis, LevelLoad, SweepPlanner};
use rightsize::workload::arrivals::{Arrival, LoadShape, OpenSettings};
use rightsize::workload::WorkloadSpec;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

fn pinned() -> bool {
    std::env::var("RIGHTSIZE_BENCH_PIN").is_ok_and(|v| v == "1")
}

#[cfg(unix)]
fn cpu_seconds() -> f64 {
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage fills the struct we own.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

#[cfg(not(unix))]
fn cpu_seconds() -> f64 {
    0.0
}

/// Nearest-rank percentile of sorted values.
fn pct(sorted: &[f64], q: f64) -> f64 {
    sorted[((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len()) - 1]
}

async fn one_rate(base_url: &str, rps: f64, arrival: Arrival) {
    let spec = EndpointSpec {
        name: "sim".into(),
        base_url: base_url.to_string(),
        model: "sim-moe-30b-a3b".into(),
        api: Api::Chat,
        stream: false,
        exact_output_length: true,
        headers: vec![],
        api_key_env: None,
        sim_timing: false,
        sagemaker: None,
    };
    let root = std::env::temp_dir().join(format!("rightsize-bench-open-{}", std::process::id()));
    let requests = (rps * 4.0) as u32;
    let req = RunRequest {
        kind: "bench".into(),
        endpoint: spec,
        workload: WorkloadSpec {
            seed: 7,
            ..WorkloadSpec::fixed(32, 1)
        },
        request_count: requests,
        warmup: rightsize::engine::Warmup::Requests(0),
        telemetry_interval: rightsize::telemetry::scrape::SCRAPE_EVERY,
        gpu_metrics: None,
        timeout: Duration::from_secs(30),
        preflight_timeout: Duration::from_secs(30),
        sink: Box::new(rightsize::report::folder::FolderSink::new(root.clone())),
        in_process_sim: false,
        config_sources: vec![],
        open: OpenSettings {
            arrival,
            requests: Some(requests),
            ..OpenSettings::default()
        },
        traffic: None,
        prefix_cache: Default::default(),
        prefix_cache_reset_url: None,
        fleet: None,
    };
    let planner = SweepPlanner::open(
        vec![LevelLoad::Open(LoadShape::Rate { rps })],
        Analysis::default(),
    );
    let (tx, mut rx) = tokio::sync::mpsc::channel::<EngineEvent>(64);
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
    let out = run(req, Box::new(planner), tx, CancellationToken::new())
        .await
        .expect("bench run");
    let cpu = drain.await.unwrap_or(0.0);
    // the split of the lag, from the requests file
    let text = std::fs::read_to_string(out.dir.join("requests.jsonl")).expect("requests file");
    let (mut lag, mut wake, mut runtime) = (Vec::new(), Vec::new(), Vec::new());
    for line in text.lines() {
        let r: serde_json::Value = serde_json::from_str(line).expect("a record");
        let ns = |k: &str| r[k].as_u64().unwrap_or(0) as f64 / 1e6;
        let (intended, released, start) = (ns("intended_ns"), ns("slot_free_ns"), ns("start_ns"));
        lag.push(start - intended);
        wake.push(released - intended);
        runtime.push(start - released);
    }
    for v in [&mut lag, &mut wake, &mut runtime] {
        v.sort_by(f64::total_cmp);
    }
    let l = &out.levels[0];
    let r = l.open_loop.rate.as_ref().expect("a rate level");
    let name = match arrival {
        Arrival::Constant => "constant",
        Arrival::Poisson => "poisson",
        Arrival::Gamma { .. } => "gamma",
    };
    println!(
        "{rps:>6.0} req/s {name:<8}  sent {:>7.1}/s  ok {:>6}  err {:>4}  lag p50 {:>6.3} p99 {:>7.3} \
         max {:>7.3} ms  (wake p99 {:>6.3}, runtime p99 {:>6.3})  cpu {:.3} s per 1k requests",
        r.achieved_rps,
        l.ok_count(),
        l.error_count(),
        pct(&lag, 0.5),
        pct(&lag, 0.99),
        lag.last().copied().unwrap_or(0.0),
        pct(&wake, 0.99),
        pct(&runtime, 0.99),
        cpu / (lag.len() as f64 / 1000.0)
    );
    let _ = std::fs::remove_dir_all(&root);
}

/// Lateness (ms) of a thread reaching 300 instants 7 ms apart, sleeping until `spin` before
/// each and spinning the rest: p50, p99.
fn stall_round(spin: Duration) -> (f64, f64) {
    let start = std::time::Instant::now();
    let mut late: Vec<f64> = (1..=300u32)
        .map(|i| {
            let due = start + Duration::from_millis(7) * i;
            loop {
                let now = std::time::Instant::now();
                if now >= due {
                    return (now - due).as_secs_f64() * 1e3;
                }
                if due - now > spin {
                    std::thread::sleep(due - now - spin);
                } else {
                    std::hint::spin_loop();
                }
            }
        })
        .collect();
    late.sort_by(f64::total_cmp);
    (late[149], late[296])
}

fn stall() {
    for round in 1..=3 {
        for spin_us in [0, 1000, 3000] {
            let (p50, p99) = stall_round(Duration::from_micros(spin_us));
            println!(
                "round {round}: sleep, spin the last {spin_us} us: late p50 {p50:.3} ms, p99 {p99:.3} ms"
            );
        }
    }
}

fn main() {
    if std::env::args().any(|a| a == "stall") {
        return stall();
    }
    let sim = sim_process::start_sim(
        &[
            "--decode-base-ms",
            "0",
            "--decode-per-seq-ms",
            "0",
            "--prefill-per-token-ms",
            "0",
            "--max-num-seqs",
            "8192",
        ],
        pinned().then_some(1),
    );
    let mut rt = tokio::runtime::Builder::new_multi_thread();
    if pinned() {
        rt.worker_threads(1);
        // SAFETY: sched_setaffinity on the current thread with a set we built.
        #[cfg(target_os = "linux")]
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(0, &mut set);
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
        }
    }
    // as the binary's runtime does (src/main.rs)
    rt.on_thread_start(rightsize::sched::short_slice);
    let rt = rt.enable_all().build().expect("runtime");
    rt.block_on(async {
        for rps in [1000.0, 5000.0] {
            for arrival in [Arrival::Constant, Arrival::Poisson] {
                one_rate(&sim.base_url, rps, arrival).await;
            }
        }
    });
}
