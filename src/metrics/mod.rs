//! Measurement: histograms with units, the per-level reducer and summary (AIPerf names), and
//! rolling windows for live rates.

pub mod batch;
pub mod ci;
#[cfg(test)]
pub mod fixtures;
pub mod histogram;
pub mod lengths;
pub mod level;
pub mod open_loop;
pub mod progress;
pub mod summary;
pub mod turns;
pub mod window;

pub use histogram::{
    Histogram, StatIntervals, Stats, UNIT_MS, UNIT_TOKENS, UNIT_TOKENS_PER_SEC,
    UNIT_TOKENS_PER_SEC_PER_USER,
};
pub use lengths::{TokenCounts, WorkloadMetrics};
pub use level::{LevelAccumulator, RequestLimits};
pub use progress::{LevelProgress, LiveLevel};
pub use summary::{
    ClientLag, ErrorDetails, ErrorSummaryEntry, LevelMeta, LevelSummary, Sampling, SamplingStop,
    Scalar, SteadyWindow, TokenSourceCounts, DISTRIBUTIONS, HELD_SHARE,
};
pub use window::RollingRate;
