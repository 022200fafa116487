//! Helpers shared by the end-to-end tests: run the real binary, make temporary folders.
#![allow(dead_code)]

pub mod lane;
pub mod tls;

use std::path::PathBuf;
use std::process::{Command, Output};

/// A JSON file (a run's `run.json`, `summary.json`, a level file), or a panic naming it.
pub fn read_json(p: &std::path::Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap())
        .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Every record of the run folder `run`'s request log (`requests.jsonl`), warmup and
/// cooldown requests included, in the order written.
pub fn request_log(run: &std::path::Path) -> Vec<serde_json::Value> {
    let p = run.join("requests.jsonl");
    std::fs::read_to_string(&p)
        .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}")))
        .collect()
}

/// A tool a test needs (tmux, Chromium) is not installed: under `CI=true` the test fails,
/// since CI installs it and a test that passes without running proves nothing; elsewhere it
/// is skipped, saying so.
pub fn tool_missing(tool: &str, how: &str) {
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("{tool} is not installed, and CI=true: every test must run ({how})");
    }
    eprintln!("skipped: {tool} is not installed ({how})");
}

/// The `rightsize` binary cargo built for these tests.
pub fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_rightsize"));
    // never read the developer's own config file
    c.env("XDG_CONFIG_HOME", tmpdir("xdg-config"));
    c.env("XDG_DATA_HOME", tmpdir("xdg-data"));
    c
}

/// A fresh, empty temporary folder unique to this test process and name, under the process's
/// own `rightsize-test-PID` folder in the system's temporary folder. That folder goes when the
/// test binary exits (passed or failed: libtest ends through `exit`, which runs the hook), so
/// a suite run leaves nothing behind; set `RIGHTSIZE_KEEP_TEST_DIRS=1` to keep it and look at
/// what a failed test wrote.
pub fn tmpdir(name: &str) -> PathBuf {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    let p = test_root().join(format!("{}-{}", name, N.fetch_add(1, Ordering::Relaxed)));
    let _ = std::fs::remove_dir_all(&p);
    std::fs::create_dir_all(&p).expect("create temp dir");
    p
}

/// This test process's folder of temporary folders, removed at exit (see [`tmpdir`]).
fn test_root() -> &'static PathBuf {
    static ROOT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    extern "C" fn remove_root() {
        if let Some(root) = ROOT.get() {
            let _ = std::fs::remove_dir_all(root);
        }
    }
    ROOT.get_or_init(|| {
        let root = std::env::temp_dir().join(format!("rightsize-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        if std::env::var_os("RIGHTSIZE_KEEP_TEST_DIRS").is_none() {
            // SAFETY: registers a plain function with the C runtime, run once at exit
            unsafe { libc::atexit(remove_root) };
        }
        root
    })
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Waits for `child` to exit. Past `bound` (a guard against a hang, far above what exiting
/// takes) the child is killed and the test fails, naming `what` it was waiting for.
pub fn wait_exit(
    child: &mut std::process::Child,
    bound: std::time::Duration,
    what: &str,
) -> std::process::ExitStatus {
    let began = std::time::Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("wait for the child") {
            return status;
        }
        if began.elapsed() > bound {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what}: still running after {bound:?}");
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// Starts `cmd`'s wall clock (`RIGHTSIZE_NOW`, src/wallclock.rs) one minute after the one
/// the previous call in this test process gave, from 2026-11-29T08:00:00Z: runs made in a row
/// get distinct run ids (to the second) in the order they were made, without sleeping.
pub fn next_clock(cmd: &mut Command) -> &mut Command {
    use std::sync::atomic::{AtomicU32, Ordering};
    static MINUTE: AtomicU32 = AtomicU32::new(0);
    let m = MINUTE.fetch_add(1, Ordering::Relaxed);
    cmd.env(
        "RIGHTSIZE_NOW",
        format!("2026-11-29T{:02}:{:02}:00Z", 8 + m / 60, m % 60),
    )
}

/// The one run folder inside a results root.
pub fn only_run_dir(root: &std::path::Path) -> PathBuf {
    let runs: Vec<_> = std::fs::read_dir(root)
        .expect("results root exists")
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    assert_eq!(
        runs.len(),
        1,
        "expected one run in {}: {runs:?}",
        root.display()
    );
    runs[0].clone()
}

/// `rightsize sim --port 0 ARGS` in its own process, stopped when dropped.
pub struct SimProcess {
    child: std::process::Child,
    /// The base URL it printed, e.g. `http://127.0.0.1:PORT/v1`.
    pub url: String,
}

impl SimProcess {
    pub fn start(args: &[&str]) -> SimProcess {
        use std::io::BufRead;
        let mut child = Command::new(env!("CARGO_BIN_EXE_rightsize"))
            .args(["sim", "--port", "0"])
            .args(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("start the simulator");
        let mut url = String::new();
        std::io::BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut url)
            .expect("the simulator prints its URL");
        SimProcess {
            child,
            url: url.trim().to_string(),
        }
    }

    /// A simulator configured like a llama.cpp server: 4 slots, decode time growing with the
    /// batch (8 ms a step plus 12 ms a running sequence: one request of 64 tokens alone takes
    /// about 1.3 s of model time), `time_scale` times faster than real time.
    pub fn llama_like(time_scale: &str) -> SimProcess {
        SimProcess::start(&[
            "--max-num-seqs",
            "4",
            "--decode-base-ms",
            "8",
            "--decode-per-seq-ms",
            "12",
            "--time-scale",
            time_scale,
        ])
    }
}

impl Drop for SimProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `rightsize SUB -e sim --sim-time-scale 50 --input-tokens IN --output-tokens OUT`: the
/// in-process simulator at 50x real time with small requests, for quick end-to-end runs.
pub fn on_sim(sub: &str, input: u32, output: u32) -> Command {
    on_sim_at(sub, input, output, 50.0)
}

/// [`on_sim`] at another time scale. Runs whose levels must hold their concurrency need
/// requests long beside the client's own time between two requests (a debug build on a busy
/// machine): 10x keeps even an 8-token answer near 10 ms.
pub fn on_sim_at(sub: &str, input: u32, output: u32, scale: f64) -> Command {
    let mut c = bin();
    c.args([sub, "-e", "sim", "--sim-time-scale", &scale.to_string()])
        .args(["--input-tokens", &input.to_string()])
        .args(["--output-tokens", &output.to_string()]);
    c
}

/// `GET {base}{path}` over a fresh loopback connection, `base` being a simulator's URL
/// (`http://127.0.0.1:PORT/v1`, the `/v1` dropped); the body as text.
pub fn http_get(base: &str, path: &str) -> String {
    use std::io::{Read, Write};
    let host = base
        .trim_start_matches("http://")
        .split('/')
        .next()
        .expect("a host:port");
    let mut s = std::net::TcpStream::connect(host).expect("connect to the simulator");
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )
    .expect("send the request");
    let mut text = String::new();
    s.read_to_string(&mut text).expect("read the answer");
    let (head, body) = text.split_once("\r\n\r\n").expect("a head and a body");
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    body.to_string()
}

/// The sum of every series of the Prometheus metric `name` in `text`.
pub fn prometheus_value(text: &str, name: &str) -> f64 {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter(|l| l.split(['{', ' ']).next() == Some(name))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

/// What a run handed to a [`MemorySink`], in the order the engine handed it over.
#[derive(Debug, Default)]
pub struct Recorded {
    /// The run id the sink was opened with.
    pub run_id: Option<String>,
    /// Each `run.json` echo as JSON (written at the start and again at the end).
    pub echoes: Vec<serde_json::Value>,
    /// Every request record with its 0-based level.
    pub records: Vec<(u32, rightsize::record::RequestRecord)>,
    pub levels: Vec<rightsize::metrics::LevelSummary>,
    pub summary: Option<serde_json::Value>,
    /// How many times the records were flushed (once per level).
    pub flushes: u32,
    /// Server samples handed over (`telemetry.jsonl` lines).
    pub telemetry: usize,
}

/// A run's sink in memory (no files): the test reads what the engine handed over through the
/// shared [`Recorded`].
#[derive(Clone, Default)]
pub struct MemorySink(pub std::sync::Arc<std::sync::Mutex<Recorded>>);

impl MemorySink {
    /// What has been handed over so far.
    pub fn recorded(&self) -> std::sync::MutexGuard<'_, Recorded> {
        self.0.lock().expect("the sink's lock")
    }
}

impl rightsize::engine::RunSink for MemorySink {
    fn open(&mut self, run_id: &str) -> std::io::Result<(String, PathBuf)> {
        self.recorded().run_id = Some(run_id.to_string());
        Ok((
            run_id.to_string(),
            PathBuf::from(format!("memory:{run_id}")),
        ))
    }

    fn write_run(&mut self, echo: &rightsize::engine::sink::RunEcho) -> std::io::Result<()> {
        let echo = serde_json::to_value(echo).map_err(std::io::Error::other)?;
        self.recorded().echoes.push(echo);
        Ok(())
    }

    fn append_request(
        &mut self,
        level: u32,
        record: &rightsize::record::RequestRecord,
    ) -> std::io::Result<()> {
        self.recorded().records.push((level, record.clone()));
        Ok(())
    }

    fn flush_requests(&mut self) -> std::io::Result<()> {
        self.recorded().flushes += 1;
        Ok(())
    }

    fn append_telemetry(
        &mut self,
        lines: &[rightsize::telemetry::level::TelemetryLine],
    ) -> std::io::Result<()> {
        self.recorded().telemetry += lines.len();
        Ok(())
    }

    fn write_level(&mut self, level: &rightsize::metrics::LevelSummary) -> std::io::Result<()> {
        self.recorded().levels.push(level.clone());
        Ok(())
    }

    fn write_summary(&mut self, summary: &serde_json::Value) -> std::io::Result<()> {
        self.recorded().summary = Some(summary.clone());
        Ok(())
    }
}

/// The real binary with AWS settings of its own alone: `root` (the simulator) as the SageMaker
/// runtime and CloudWatch endpoints, `credentials` (key id, secret) when given, and no shared
/// config, profile, environment credentials or instance metadata of the machine's.
pub fn aws_bin(root: &str, credentials: Option<(&str, &str)>) -> Command {
    let mut c = bin();
    let none = tmpdir("aws-none");
    for var in [
        "AWS_PROFILE",
        "AWS_DEFAULT_PROFILE",
        "AWS_SESSION_TOKEN",
        "AWS_REGION",
        "AWS_DEFAULT_REGION",
        "AWS_ENDPOINT_URL",
        "AWS_WEB_IDENTITY_TOKEN_FILE",
        "AWS_ROLE_ARN",
        "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
        "AWS_CONTAINER_CREDENTIALS_FULL_URI",
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
    ] {
        c.env_remove(var);
    }
    c.env("AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME", root)
        .env("AWS_ENDPOINT_URL_CLOUDWATCH", root)
        .env("AWS_CONFIG_FILE", none.join("config"))
        .env("AWS_SHARED_CREDENTIALS_FILE", none.join("credentials"))
        .env("AWS_EC2_METADATA_DISABLED", "true");
    if let Some((key_id, secret)) = credentials {
        c.env("AWS_ACCESS_KEY_ID", key_id)
            .env("AWS_SECRET_ACCESS_KEY", secret);
    }
    c
}

/// Starts a served run (`--serve`): `cmd` with its stderr read on a thread; returns the child,
/// the base URL from its banner (`serving this run at http://ADDR`) and the stderr lines
/// that come after.
pub fn start_served(
    cmd: &mut std::process::Command,
) -> (
    std::process::Child,
    String,
    std::sync::mpsc::Receiver<String>,
) {
    use std::io::BufRead;
    let mut child = cmd
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start rightsize");
    let (tx, rx) = std::sync::mpsc::channel();
    let err = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(err).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let mut said = Vec::new();
    let base = loop {
        let line = rx
            .recv_timeout(std::time::Duration::from_secs(60))
            .unwrap_or_else(|_| panic!("no serving line; stderr so far: {said:?}"));
        if let Some(rest) = line.strip_prefix("serving this run at ") {
            break rest.split(':').take(3).collect::<Vec<_>>().join(":");
        }
        said.push(line);
    };
    (child, base, rx)
}

/// A run against the in-process simulator `server` as the engine tests set one up: a chat
/// endpoint (streamed as the workload says, exact output lengths), cold levels (no warm-up),
/// a 1 s telemetry interval, `timeout` for requests and pre-flight, into `sink`. Tests change
/// what they need of it (`kind`, `open`, `endpoint.sim_timing`).
pub fn sim_run_request(
    server: &rightsize::sim::SimServer,
    workload: rightsize::workload::WorkloadSpec,
    request_count: u32,
    timeout: std::time::Duration,
    sink: Box<dyn rightsize::engine::RunSink>,
) -> rightsize::engine::RunRequest {
    let endpoint = rightsize::endpoint::EndpointSpec {
        name: "sim".into(),
        base_url: server.base_url.clone(),
        model: server.model.clone(),
        api: rightsize::endpoint::Api::Chat,
        stream: workload.stream,
        exact_output_length: true,
        headers: vec![],
        api_key_env: None,
        sim_timing: false,
        sagemaker: None,
    };
    rightsize::engine::RunRequest {
        kind: "sweep".into(),
        endpoint,
        workload,
        request_count,
        // cold levels, as set here since before warm levels were the CLI default (one round)
        warmup: rightsize::engine::Warmup::Requests(0),
        telemetry_interval: std::time::Duration::from_secs(1),
        gpu_metrics: None,
        timeout,
        // the pre-flight is not what these tests measure: a short request timeout (the
        // error-rate search's 400 ms) would fail it whenever the machine is busy
        preflight_timeout: timeout.max(std::time::Duration::from_secs(10)),
        sink,
        in_process_sim: true,
        config_sources: vec![],
        open: Default::default(),
        traffic: None,
        prefix_cache: Default::default(),
        prefix_cache_reset_url: None,
        fleet: None,
    }
}

/// A campaign file's `[[candidates]]` entry on a built-in simulator whose every step takes
/// `step_ms` of model time however many of its `slots` batch slots are busy (no per-sequence or
/// prefill cost), so a request's time depends only on its tokens and the queue, at
/// `time_scale`.
pub fn flat_sim_candidate(
    label: &str,
    price_per_hour: f64,
    slots: u32,
    step_ms: f64,
    time_scale: f64,
) -> String {
    format!(
        "[[candidates]]\nlabel = \"{label}\"\nprice_per_hour = {price_per_hour:?}\n\
         sim = {{ time_scale = {time_scale:?}, max_num_seqs = {slots}, \
         decode_base_ms = {step_ms:?}, decode_per_seq_ms = 0.0, prefill_per_token_ms = 0.0 }}\n"
    )
}
