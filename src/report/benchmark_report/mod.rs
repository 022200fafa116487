//! llm-d-benchmark's Benchmark Report v0.2 (`docs/formats.md`): one JSON document per level
//! (a report describes one load point), written by `rightsize export RUN --benchmark-report
//! DIR` ([`export`]) and read back by `rightsize import benchmark-report PATH` ([`import`]).
//!
//! The names below are shared by both directions, so what is written is what is read.

pub mod export;
pub mod import;

/// The `version` every document carries.
pub const VERSION: &str = "0.2";

/// How llm-d-benchmark names its reports (`benchmark_report_v0.2,_<source>.yaml`); ours are
/// `benchmark_report_v0.2,_level-001-c0016.json`.
pub const FILE_PREFIX: &str = "benchmark_report_v0.2,_";

/// A unit the report may state for a quantity, and the factor to rightsize's unit.
pub type UnitFactor = (&'static str, f64);

/// Times: rightsize records milliseconds.
pub const TIME_UNITS: [UnitFactor; 2] = [("ms", 1.0), ("s", 1000.0)];
/// Times per token: rightsize records milliseconds.
pub const GEN_LATENCY_UNITS: [UnitFactor; 2] = [("ms/token", 1.0), ("s/token", 1000.0)];
/// Lengths: rightsize records tokens (`count` in the report).
pub const QUANTITY_UNITS: [UnitFactor; 1] = [("count", 1.0)];
/// Token rates.
pub const TOKEN_RATE_UNITS: [UnitFactor; 1] = [("tokens/s", 1.0)];
/// Request rates.
pub const REQUEST_RATE_UNITS: [UnitFactor; 1] = [("queries/s", 1.0)];

/// Where each distribution of a level goes: (rightsize's name, the group under
/// `results.request_performance.aggregate`, the report's name, the units it may take; the
/// first is the one written). rightsize's `inter_token_latency` is per request, (e2e - TTFT)
/// / (tokens - 1): the report's `time_per_output_token`; its `inter_chunk_latency`, the gaps
/// between chunks, is the report's `inter_token_latency` (vLLM's TPOT and ITL).
pub const DISTRIBUTIONS: [(&str, &str, &str, &[UnitFactor]); 6] = [
    (
        "time_to_first_token",
        "latency",
        "time_to_first_token",
        &TIME_UNITS,
    ),
    (
        "inter_token_latency",
        "latency",
        "time_per_output_token",
        &GEN_LATENCY_UNITS,
    ),
    (
        "inter_chunk_latency",
        "latency",
        "inter_token_latency",
        &GEN_LATENCY_UNITS,
    ),
    ("request_latency", "latency", "request_latency", &TIME_UNITS),
    (
        "input_sequence_length",
        "requests",
        "input_length",
        &QUANTITY_UNITS,
    ),
    (
        "output_sequence_length",
        "requests",
        "output_length",
        &QUANTITY_UNITS,
    ),
];

/// The fields of a report's `Statistics` rightsize fills, with the name of the [`Stats`]
/// field each holds (`mean` is `avg`, `stddev` is `std`).
///
/// [`Stats`]: crate::metrics::Stats
pub const STAT_FIELDS: [(&str, &str); 13] = [
    ("mean", "avg"),
    ("stddev", "std"),
    ("min", "min"),
    ("p1", "p1"),
    ("p5", "p5"),
    ("p10", "p10"),
    ("p25", "p25"),
    ("p50", "p50"),
    ("p75", "p75"),
    ("p90", "p90"),
    ("p95", "p95"),
    ("p99", "p99"),
    ("max", "max"),
];
