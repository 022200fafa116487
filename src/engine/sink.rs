//! Where a run's results go. The engine hands each piece to the sink it is given the moment
//! the piece exists: the run's echo once the pre-flight has passed (and again at the end),
//! every request record as it is folded, each level as it ends, the summary last. The results
//! folder (`report::folder::FolderSink`) is one sink; a test's vectors are another. The
//! engine decides nothing about files.

use crate::endpoint::preflight::ServerIdentity;
use crate::endpoint::EndpointSpec;
use crate::metrics::LevelSummary;
use crate::record::RequestRecord;
use crate::telemetry::level::TelemetryLine;
use crate::workload::arrivals::OpenSettings;
use crate::workload::WorkloadSpec;
use serde::Serialize;
use std::io;
use std::path::PathBuf;
use tokio_util::sync::CancellationToken;

/// A run's results, as the engine makes them. Errors are I/O errors that name the file: any
/// failed write stops the run at once (what was written before stays valid) and ends it with
/// that error.
pub trait RunSink: Send {
    /// The run passed its pre-flight and would be named `run_id`: makes its place and says
    /// the id it got (`run_id`, or another when that one is taken, e.g. by a run started in
    /// the same second) and where it is (the folder the consumers show; any path for a sink
    /// without one). The engine names the run by the id returned, everywhere.
    fn open(&mut self, run_id: &str) -> io::Result<(String, PathBuf)>;
    /// The run's echo (`run.json`): written when the run begins and again when it ends.
    fn write_run(&mut self, echo: &RunEcho) -> io::Result<()>;
    /// One request of level `level` (0-based), measured, warmup or cooldown.
    fn append_request(&mut self, level: u32, record: &RequestRecord) -> io::Result<()>;
    /// The end of a level's requests: whatever is buffered is made durable.
    fn flush_requests(&mut self) -> io::Result<()>;
    /// Samples of the server's `/metrics` (`telemetry.jsonl`), handed over at each level's
    /// end and at the run's.
    fn append_telemetry(&mut self, lines: &[TelemetryLine]) -> io::Result<()>;
    /// A finished (or cut) level.
    fn write_level(&mut self, level: &LevelSummary) -> io::Result<()>;
    /// The run's summary: its levels and what the planner reports of them.
    fn write_summary(&mut self, summary: &serde_json::Value) -> io::Result<()>;
}

/// The echo of a run, written to `run.json` (no secrets: the endpoint names only the
/// variable that holds a key).
#[derive(Debug, Clone, Serialize)]
pub struct RunEcho {
    pub tool: &'static str,
    pub version: &'static str,
    pub run_id: String,
    pub kind: String,
    pub endpoint: EndpointSpec,
    pub server: ServerIdentity,
    pub workload: WorkloadSpec,
    pub plan: serde_json::Value,
    /// Arrivals, cap and window of open-loop levels (absent for a closed loop).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub open_loop: Option<OpenSettings>,
    pub request_count: u32,
    /// Warmup per closed-loop level: the count given, or `"round"` (the default: the
    /// level's concurrency).
    pub warmup: super::Warmup,
    pub timeout_s: f64,
    /// Seconds between two samples of the server's `/metrics` (absent: not sampled).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub telemetry_interval_s: Option<f64>,
    /// The GPUs' exporter sampled with the server (`--gpu-metrics`, credentials masked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_metrics: Option<String>,
    pub config_sources: Vec<String>,
    pub open_file_limit: Option<u64>,
    pub started_at: String,
    pub ended_at: Option<String>,
    pub interrupted: bool,
    /// Why the run ended in an error, when it did after its folder was made (a lost
    /// worker): `rightsize runs` and the dashboard call such a run failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
    /// The serving configuration the server's `/metrics` stated (vLLM's cache config
    /// labels), written with the run's end; absent when it states none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub serving_config: Option<std::collections::BTreeMap<String, String>>,
    /// A replay's traffic as recorded: rates, peaks, lengths, suggested flags
    /// (`workload::traffic`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub traffic: Option<crate::workload::traffic::Traffic>,
}

/// The engine's hold on the sink it is given: every write goes through, and the first that
/// fails stops the run's levels at once (`stop` is cancelled) and is kept for the run to end
/// with. The levels need not look at errors themselves.
pub(super) struct StopOnFailure<'a> {
    inner: &'a mut dyn RunSink,
    stop: CancellationToken,
    failed: Option<io::Error>,
}

impl<'a> StopOnFailure<'a> {
    pub(super) fn new(inner: &'a mut dyn RunSink, stop: CancellationToken) -> Self {
        StopOnFailure {
            inner,
            stop,
            failed: None,
        }
    }

    /// The first failed write, once.
    pub(super) fn failure(&mut self) -> Option<io::Error> {
        self.failed.take()
    }

    fn check<T>(&mut self, r: io::Result<T>) -> io::Result<T> {
        if let Err(e) = &r {
            if self.failed.is_none() {
                self.failed = Some(io::Error::new(e.kind(), e.to_string()));
            }
            self.stop.cancel();
        }
        r
    }
}

impl RunSink for StopOnFailure<'_> {
    fn open(&mut self, run_id: &str) -> io::Result<(String, PathBuf)> {
        let r = self.inner.open(run_id);
        self.check(r)
    }
    fn write_run(&mut self, echo: &RunEcho) -> io::Result<()> {
        let r = self.inner.write_run(echo);
        self.check(r)
    }
    fn append_request(&mut self, level: u32, record: &RequestRecord) -> io::Result<()> {
        let r = self.inner.append_request(level, record);
        self.check(r)
    }
    fn flush_requests(&mut self) -> io::Result<()> {
        let r = self.inner.flush_requests();
        self.check(r)
    }
    fn append_telemetry(&mut self, lines: &[TelemetryLine]) -> io::Result<()> {
        let r = self.inner.append_telemetry(lines);
        self.check(r)
    }
    fn write_level(&mut self, level: &LevelSummary) -> io::Result<()> {
        let r = self.inner.write_level(level);
        self.check(r)
    }
    fn write_summary(&mut self, summary: &serde_json::Value) -> io::Result<()> {
        let r = self.inner.write_summary(summary);
        self.check(r)
    }
}
