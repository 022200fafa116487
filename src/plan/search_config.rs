//! The limits of one SLA search ([`SearchConfig`]): its concurrency range, its level budget,
//! the tolerance it stops within, confirmation, and the request cap of an uncertain level.

use serde::Serialize;

/// Limits of one search.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SearchConfig {
    /// Lowest concurrency to try (the first level).
    pub min: u32,
    /// Highest concurrency to try.
    pub max: u32,
    /// Most levels to run. A level measured again (pooled) counts once, and each level is
    /// measured at most twice; where re-measurements do not pool (by rate, older files) each
    /// counts.
    pub max_iterations: u32,
    /// Stop when the bracket's high end is within this fraction of its low end (0.05 = 5 %).
    pub tolerance: f64,
    /// Once the bracket is within the tolerance, measure each end once more (budget
    /// permitting): noise that flips a verdict then shows up as a contradiction instead of
    /// a confident answer. Inside one search a new level always lies inside the bracket, so
    /// without a second look noise could never contradict anything.
    pub confirm: bool,
    /// The most requests one level may run while its verdict is uncertain (adaptive
    /// sampling); `None`: 8 x the level's first batch, and never fewer than 4 x what the
    /// SLAs need to be decided (see `plan::planner::min_decisive_samples`).
    pub max_requests_per_level: Option<u32>,
}

impl Default for SearchConfig {
    fn default() -> Self {
        SearchConfig {
            min: 16,
            max: 4096,
            max_iterations: 10,
            tolerance: 0.05,
            confirm: true,
            max_requests_per_level: None,
        }
    }
}
