//! The [`LevelPlanner`]s the engine drives: the SLA search and a sweep that may refine its
//! knee. Both decide only from the finished levels, and report the run's analysis for
//! `summary.json`.

use super::analysis::{analyse, points, Analysis};
use super::knee::{curve, refine_next, DEFAULT_MIN_GAIN, REFINE_MAX_EXTRA, REFINE_RATIO};
use super::search::{decide, SearchConfig, Step};
use crate::engine::LevelPlanner;
use crate::metrics::LevelSummary;

/// `rightsize search`: the next level is whatever [`decide`] says.
#[derive(Debug, Clone)]
pub struct SearchPlanner {
    pub config: SearchConfig,
    pub analysis: Analysis,
}

impl SearchPlanner {
    pub fn new(config: SearchConfig, mut analysis: Analysis) -> Self {
        analysis.search = Some(config);
        SearchPlanner { config, analysis }
    }
}

impl LevelPlanner for SearchPlanner {
    fn next(&mut self, finished: &[LevelSummary]) -> Option<u32> {
        match decide(&self.config, &points(&self.analysis.slas, finished)) {
            Step::Measure { concurrency, .. } => Some(concurrency),
            Step::Done(_) => None,
        }
    }
    fn describe(&self) -> serde_json::Value {
        serde_json::json!({
            "kind": "search",
            "concurrency_min": self.config.min,
            "concurrency_max": self.config.max,
            "search_max_iterations": self.config.max_iterations,
            "tolerance": self.config.tolerance,
            "confirm": self.config.confirm,
            "slas": self.analysis.slas,
        })
    }
    fn report(&self, finished: &[LevelSummary]) -> serde_json::Value {
        serde_json::to_value(analyse(&self.analysis, finished)).unwrap_or_default()
    }
}

/// `rightsize sweep`: the given levels in order, then (with `refine_knee`) up to
/// [`REFINE_MAX_EXTRA`] levels between the two that bracket the knee, until they are within
/// [`REFINE_RATIO`] of each other.
#[derive(Debug, Clone)]
pub struct SweepPlanner {
    pub levels: Vec<u32>,
    pub refine_knee: bool,
    pub analysis: Analysis,
}

impl LevelPlanner for SweepPlanner {
    fn next(&mut self, finished: &[LevelSummary]) -> Option<u32> {
        if let Some(c) = self.levels.get(finished.len()) {
            return Some(*c);
        }
        if !self.refine_knee {
            return None;
        }
        let extra = (finished.len() - self.levels.len()) as u32;
        refine_next(
            &curve(finished),
            DEFAULT_MIN_GAIN,
            REFINE_RATIO,
            extra,
            REFINE_MAX_EXTRA,
        )
    }
    fn describe(&self) -> serde_json::Value {
        serde_json::json!({
            "kind": "sweep",
            "concurrency": self.levels,
            "refine_knee": self.refine_knee,
            "slas": self.analysis.slas,
        })
    }
    fn report(&self, finished: &[LevelSummary]) -> serde_json::Value {
        serde_json::to_value(analyse(&self.analysis, finished)).unwrap_or_default()
    }
}
