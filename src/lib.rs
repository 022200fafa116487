//! rightsize: measure how much traffic a generative-AI inference endpoint carries before
//! latency breaks its SLA, and how many instances the peak needs.
//!
//! One engine, two consumers: the engine runs load and knows nothing of terminals; the
//! headless printer (and, later, the dashboard) fold the same event stream through the same
//! reducer.

#[cfg(feature = "sagemaker")]
pub mod aws;
pub mod campaign;
pub mod cli;
pub mod clock;
pub mod config;
pub mod endpoint;
pub mod engine;
pub mod fdlimit;
pub mod fleet;
pub mod headless;
pub mod k8s;
pub mod launch;
pub mod metrics;
pub mod plan;
pub mod record;
pub mod report;
pub mod rng;
pub mod sched;
pub mod secrets;
pub mod serve;
pub mod sim;
pub mod state;
pub mod telemetry;
pub mod tui;
pub mod values;
pub mod wallclock;
pub mod workload;
