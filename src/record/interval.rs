//! A 95 % confidence interval with sides that may be unbounded: what every SLA statistic of a
//! level carries. How the intervals are computed is `metrics::ci`.

use serde::{Deserialize, Serialize};

/// A confidence interval `[lo, hi]`; a missing side is unbounded (the sample is too small to
/// bound it). Serialized as a two-element array with `null` for a missing side.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
pub struct Interval(pub Option<f64>, pub Option<f64>);

impl Interval {
    /// A point: both sides equal.
    pub fn exact(v: f64) -> Self {
        Interval(Some(v), Some(v))
    }
    /// The lower bound, if bounded.
    pub fn lo(&self) -> Option<f64> {
        self.0
    }
    /// The upper bound, if bounded.
    pub fn hi(&self) -> Option<f64> {
        self.1
    }
    /// Whether `v` lies within (an open side holds everything beyond it).
    pub fn holds(&self, v: f64) -> bool {
        self.0.is_none_or(|lo| lo <= v) && self.1.is_none_or(|hi| v <= hi)
    }
}
