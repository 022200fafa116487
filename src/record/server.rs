//! What the server's own `/metrics` said during a level: the `server` object of a level file.
//! The telemetry layer computes it from its scrapes; it lives here because a level summary
//! (metrics) carries it and metrics and telemetry know nothing of each other.

use serde::{Deserialize, Serialize};

/// The mean and the largest of a gauge's samples during a level.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MeanMax {
    pub mean: f64,
    pub max: f64,
}

/// A level's server-side figures, from the samples taken while it ran. A figure the server
/// does not expose is absent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServerSummary {
    /// The naming scheme the metrics matched (`vllm`, `sglang`, `llamacpp`, `tgi`).
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
}
