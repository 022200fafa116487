//! What the server's own `/metrics` (and its GPUs' exporter) said during a level: the `server`
//! object of a level file. The telemetry layer computes it from its scrapes; it lives here
//! because a level summary (metrics) carries it and metrics and telemetry know nothing of each
//! other.

use serde::{Deserialize, Serialize};

/// The mean and the largest of a gauge's samples during a level.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MeanMax {
    pub mean: f64,
    pub max: f64,
}

/// A level's server-side figures, from the samples taken while it ran. A figure the server
/// does not expose is absent.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerSummary {
    /// The naming scheme the metrics matched (`vllm`, `sglang`, `llamacpp`, `tgi`); empty
    /// when only the GPUs' exporter was read.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub scheme: String,
    /// Samples taken while the level ran.
    pub samples: u32,
    /// Requests the server was running (its batch).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub running: Option<MeanMax>,
    /// Requests waiting in the server's queue.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waiting: Option<MeanMax>,
    /// KV-cache use, 0-1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kv_cache_usage: Option<MeanMax>,
    /// Prefix-cache hits over queries during the level (0-1), or the server's own hit-rate
    /// gauge at its end where it keeps no counters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix_cache_hit_rate: Option<f64>,
    /// Sequences the server preempted during the level (its counter's increase).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preemptions: Option<f64>,
    /// The GPUs' figures from `--gpu-metrics`, when it was given and answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu: Option<GpuSummary>,
    /// A SageMaker endpoint's per-minute CloudWatch metrics over the minutes the level
    /// touched, read after the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cloudwatch: Option<CloudWatchSummary>,
}

/// A SageMaker endpoint's CloudWatch metrics over the whole minutes a level touched: each
/// figure the mean and max of its per-minute values (a minute shared with the level before or
/// after counts whole: these are per-minute figures, not the level's own).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CloudWatchSummary {
    /// Seconds a value covers (60: CloudWatch's standard resolution).
    pub period_s: u32,
    /// The window asked for, whole minutes (RFC 3339, UTC).
    pub from: String,
    pub to: String,
    /// Minutes that had a value (CloudWatch publishes a minute or more late).
    pub minutes: u32,
    /// `GPUUtilization` (%, summed over the instance's GPUs: up to 100 per GPU).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_utilization_pct: Option<MeanMax>,
    /// `GPUMemoryUtilization` (%, summed over the GPUs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_memory_utilization_pct: Option<MeanMax>,
    /// `CPUUtilization` (%, summed over the cores).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_utilization_pct: Option<MeanMax>,
    /// `ModelLatency`, the container's time per invocation (ms; CloudWatch says µs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_latency_ms: Option<MeanMax>,
    /// `Invocations` summed over the minutes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invocations: Option<f64>,
}

/// A level's GPU figures from a DCGM (or AMD device-metrics) exporter: utilisation averaged
/// over the GPUs, memory and power summed over them, each as mean and max over the samples.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GpuSummary {
    /// GPUs the exporter reported.
    pub gpus: u32,
    /// Utilisation, percent (0-100), the mean over the GPUs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub utilization_pct: Option<MeanMax>,
    /// Frame-buffer memory used, MiB, summed over the GPUs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_used_mib: Option<MeanMax>,
    /// Power draw, watts, summed over the GPUs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power_w: Option<MeanMax>,
    /// Energy the GPUs used over the level, joules (see `docs/telemetry.md` for the window).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub energy_j: Option<f64>,
    /// Energy per output token, joules.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub joules_per_output_token: Option<f64>,
    /// The same as kilowatt-hours per million output tokens (joules per token / 3.6).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kwh_per_million_output_tokens: Option<f64>,
}

/// Kilowatt-hours per million output tokens from joules per output token: 10^6 tokens times
/// J, over 3.6 * 10^6 J in a kWh.
pub fn kwh_per_million(joules_per_token: f64) -> f64 {
    joules_per_token / 3.6
}
