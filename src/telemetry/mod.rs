//! Server telemetry: the endpoint's own Prometheus `/metrics` and, with `--gpu-metrics`, its
//! GPUs' exporter, scraped during a run.

#[cfg(feature = "sagemaker")]
pub mod cloudwatch;
pub mod gpu;
pub mod level;
pub mod prometheus;
pub mod scrape;
pub mod server;

pub use server::ServerSample;
