//! Measurement: histograms with units, the per-level reducer and summary (AIPerf names), and
//! rolling windows for live rates.

pub mod histogram;
pub mod lengths;
pub mod level;
pub mod progress;
pub mod summary;
pub mod window;

pub use histogram::{
    Histogram, Stats, UNIT_MS, UNIT_TOKENS, UNIT_TOKENS_PER_SEC, UNIT_TOKENS_PER_SEC_PER_USER,
};
pub use lengths::{TokenCounts, WorkloadMetrics};
pub use level::LevelAccumulator;
pub use progress::{LevelProgress, LiveLevel};
pub use summary::{
    ClientLag, ErrorDetails, ErrorSummaryEntry, LevelMeta, LevelSummary, Scalar, SteadyWindow,
    TokenSourceCounts, DISTRIBUTIONS,
};
pub use window::RollingRate;
