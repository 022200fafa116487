//! Server telemetry: the endpoint's own Prometheus `/metrics`, scraped during a run.

pub mod level;
pub mod prometheus;
pub mod scrape;
pub mod server;

pub use server::ServerSample;
