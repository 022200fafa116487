//! Measurement: histograms with units, the per-level reducer and summary (AIPerf names), and
//! rolling windows for live rates.

pub mod accumulator;
pub mod batch;
pub mod ci;
// scripted levels for the crate's tests and the integration tests' run folders
#[doc(hidden)]
pub mod fixtures;
pub mod fleet;
pub mod histogram;
#[cfg(test)]
mod interval_props;
pub mod lengths;
pub mod live_figures;
pub mod progress;
pub mod rate;
pub mod steady;
pub mod summary;
pub mod tool_tally;
pub mod turns;
pub mod window;

pub use accumulator::{LevelAccumulator, RequestLimits};
pub use histogram::{
    Histogram, StatIntervals, Stats, UNIT_MS, UNIT_TOKENS, UNIT_TOKENS_PER_SEC,
    UNIT_TOKENS_PER_SEC_PER_USER,
};
pub use lengths::{TokenCounts, WorkloadMetrics};
pub use live_figures::{LastError, LatencyBucket, LiveFigures, Percentiles};
pub use progress::{LevelProgress, LiveLevel};
pub use summary::{
    AdaptiveSampling, ClientLag, ErrorDetails, ErrorSummaryEntry, LevelMeta, LevelSummary,
    Measurement, SamplingStop, Scalar, SteadyWindow, TokenSourceCounts, DISTRIBUTIONS, HELD_SHARE,
};
pub use window::{RecentDurations, RollingRate};
