//! The SLA search planner (docs/search.md, "How it searches"), as a pure function of the levels measured
//! so far: [`decide`] returns the next concurrency (and why) or "done" with the outcome.
//!
//! Exponential phase: double from `min` until a level fails or `max` passes. Refinement: the
//! bracket is [highest pass below the lowest fail, lowest fail]; the next level is where the
//! breaching metric, interpolated against log concurrency between the bracket ends, predicts
//! the crossing (aimed a little below it, clamped away from the ends), with bisection as the
//! fallback when the model has nothing to go on, keeps passing just under its own guesses,
//! or overshot (its last level failed and cut less than half the bracket).
//! Contradictions (a pass above a fail) are re-measured once per level. A level measured again
//! pools: its new requests join the earlier ones and the level has one verdict on all of them
//! (each measurement is still a point here, in the order they ran, with the verdict the level
//! had when it ended; the last one is the level's). Points from files written before pooling
//! are separate measurements: such a level passes only if most of its decided measurements
//! passed (a tie fails: the cautious side; an uncertain measurement does not vote).
//!
//! Screening (docs/search.md, "Screening"): a level chosen to steer the search (exponential,
//! model, bisect, edge) runs its first batch only, and when that cannot decide its verdict it
//! steers by its observed values (within every limit: it leans pass; beyond one: fail). Only
//! the levels the answer rests on are measured until decided: once the bracket is within the
//! tolerance (or `max` leans pass, or `min` leans fail), each end known only from a screen is
//! measured again until its verdict is decided (`why: decide`; its new requests join the
//! screen's), and the levels below a decided pass need no verdict of their own.
//!
//! A level passes only when it held its concurrency and every SLA's 95 % interval is within
//! its limit. A level still uncertain at its request cap, or not held, is not a pass: it ends
//! the bracket from above like a failure, without contradicting anything.

use super::model::model_crossing;
pub use super::search_config::SearchConfig;
use super::search_outcome::{outcome, Outcome, StopReason};
use super::search_points::{bracket, contradictions, levels_used, standing, Point};
use crate::record::sla::Verdict;
use serde::Serialize;

/// Why a level is run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Why {
    /// Doubling from the minimum.
    Exponential,
    /// Interpolated crossing of the breaching metric.
    Model,
    /// Geometric midpoint of the bracket.
    Bisect,
    /// One tolerance step below a level that stayed uncertain at its request cap: the
    /// boundary lies at that level within its interval, so a pass here closes the bracket.
    Edge,
    /// A second measurement of a level involved in a contradiction.
    Remeasure,
    /// A second measurement of a bracket end once the bracket is narrow.
    Confirm,
    /// A bracket end known only from a screen, measured again until its verdict is decided.
    Decide,
}

impl Why {
    /// Whether the level is measured until its verdict is decided; otherwise it is a screen
    /// (its first batch only).
    pub fn decides(self) -> bool {
        matches!(self, Why::Remeasure | Why::Confirm | Why::Decide)
    }
}

/// The planner's decision after the levels so far.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    Measure { concurrency: u32, why: Why },
    Done(Outcome),
}

/// The next step after `points` (the levels measured so far, in order).
pub fn decide(cfg: &SearchConfig, points: &[Point]) -> Step {
    step(cfg, points, &history(cfg, points))
}

/// Why each level was run, as the planner would have decided it from the levels before it
/// (`None` for a level it would not have chosen, e.g. one fed in from elsewhere).
pub fn history(cfg: &SearchConfig, points: &[Point]) -> Vec<Option<Why>> {
    let mut whys: Vec<Option<Why>> = Vec::with_capacity(points.len());
    for (i, p) in points.iter().enumerate() {
        let why = match step(cfg, &points[..i], &whys) {
            Step::Measure { concurrency, why } if concurrency == p.concurrency => Some(why),
            _ => None,
        };
        whys.push(why);
    }
    whys
}

fn step(cfg: &SearchConfig, points: &[Point], whys: &[Option<Why>]) -> Step {
    if points.is_empty() {
        return Step::Measure {
            concurrency: cfg.min,
            why: Why::Exponential,
        };
    }
    let done = |reason| Step::Done(outcome(cfg, points, reason));
    let (lo, hi) = bracket(points);
    let converged = match (lo, hi) {
        (Some(l), Some(h)) => h - l <= 1 || h as f64 <= within(l, cfg.tolerance),
        _ => false,
    };
    // A level measured again pools (one level): it does not spend the budget, and each level
    // is measured at most twice. Runs that do not pool (by rate, files written before) spend
    // a level on every measurement.
    let pools = points.iter().any(|p| p.screen || p.pooled);
    let budget_left = levels_used(points) < cfg.max_iterations;
    let again_allowed = pools || budget_left;
    let decide_end = |ends: &[Option<u32>]| {
        undecided_end(points, ends)
            .filter(|_| again_allowed)
            .map(|end| Step::Measure {
                concurrency: end,
                why: Why::Decide,
            })
    };
    if converged {
        let count = |c: Option<u32>| points.iter().filter(|p| Some(p.concurrency) == c).count();
        if let Some(s) = decide_end(&[lo, hi]) {
            return s;
        }
        if cfg.confirm && again_allowed {
            for end in [lo, hi].into_iter().flatten() {
                if count(Some(end)) == 1 {
                    return Step::Measure {
                        concurrency: end,
                        why: Why::Confirm,
                    };
                }
            }
        }
        return done(StopReason::Converged);
    }
    if !budget_left {
        // out of levels: the ends the answer rests on are still decided
        if let Some(s) = decide_end(&[lo, hi]) {
            return s;
        }
        return done(StopReason::Budget);
    }
    if let Some(c) = remeasure_next(points) {
        return Step::Measure {
            concurrency: c,
            why: Why::Remeasure,
        };
    }
    let (lo, hi) = match (lo, hi) {
        (_, None) => {
            let top = points
                .iter()
                .map(|p| p.concurrency)
                .max()
                .unwrap_or(cfg.min);
            if top >= cfg.max {
                return decide_end(&[Some(top)]).unwrap_or_else(|| done(StopReason::MaxPasses));
            }
            return Step::Measure {
                concurrency: top.saturating_mul(2).min(cfg.max),
                why: Why::Exponential,
            };
        }
        (None, Some(h)) => {
            return decide_end(&[Some(h)]).unwrap_or_else(|| done(StopReason::MinFails));
        }
        (Some(l), Some(h)) => (l, h),
    };
    let (concurrency, why) = refine(cfg, points, whys, lo, hi);
    Step::Measure { concurrency, why }
}

/// The first of `ends` known only from one screen that left it uncertain: the answer must
/// not rest on it undecided. Measured once more at most (a level that cannot be decided at
/// its request cap stays uncertain, as any level does).
fn undecided_end(points: &[Point], ends: &[Option<u32>]) -> Option<u32> {
    let standing = standing(points);
    ends.iter().flatten().copied().find(|end| {
        let at: Vec<&&Point> = standing.iter().filter(|p| p.concurrency == *end).collect();
        let measured = points.iter().filter(|p| p.concurrency == *end).count();
        measured == 1 && at.iter().all(|p| p.undecided_screen())
    })
}

/// A level to measure again: in a contradiction and measured only once; the failing one of
/// each pair first (it sets the bracket), then the passing one.
fn remeasure_next(points: &[Point]) -> Option<u32> {
    let count = |c: u32| points.iter().filter(|p| p.concurrency == c).count();
    let pairs = contradictions(points);
    let mut want: Vec<u32> = pairs.iter().map(|p| p.failed).collect();
    want.sort_unstable();
    let mut passed: Vec<u32> = pairs.iter().map(|p| p.passed).collect();
    passed.sort_unstable();
    want.extend(passed);
    want.into_iter().find(|c| count(*c) == 1)
}

/// The highest concurrency "within the tolerance" of `lo` on the integer grid.
fn within(lo: u32, tolerance: f64) -> f64 {
    (lo as f64 * (1.0 + tolerance)).ceil()
}

/// Model steps in a row that passed before the planner bisects once (the model keeps
/// undershooting, e.g. a metric that stays near zero until it jumps).
const CREEP_LIMIT: usize = 4;

/// The next level inside (lo, hi): model-guided when it can be, else bisection.
fn refine(
    cfg: &SearchConfig,
    points: &[Point],
    whys: &[Option<Why>],
    lo: u32,
    hi: u32,
) -> (u32, Why) {
    if let Some(t) = edge_below_uncertain(cfg, points, whys, lo, hi) {
        return (t, Why::Edge);
    }
    let (l, h) = (lo as f64, hi as f64);
    let mid = (l * h).sqrt();
    let creeping = whys.len() >= CREEP_LIMIT
        && whys
            .iter()
            .zip(points)
            .rev()
            .take(CREEP_LIMIT)
            .all(|(w, p)| *w == Some(Why::Model) && p.pass);
    // a model step that failed and cut the bracket by less than half (in log concurrency)
    // overshot: the metric jumps past its limit, and another model step would creep down
    // from above by the tolerance each time; bisect once instead
    let overshot = match (whys.last(), points.last()) {
        (Some(Some(Why::Model)), Some(last)) if last.failed() => {
            match bracket(&points[..points.len() - 1]) {
                (Some(l0), Some(h0)) => (h / l).ln() > 0.5 * (f64::from(h0) / f64::from(l0)).ln(),
                _ => false,
            }
        }
        _ => false,
    };
    let guess = model_crossing(points, lo, hi).filter(|_| !creeping && !overshot);
    let span = (h / l).ln();
    let lower = (l * (1.0 + cfg.tolerance)).max(l * (0.1 * span).exp());
    let upper = (h / (1.0 + cfg.tolerance)).min(l * (0.9 * span).exp());
    let target = match guess {
        Some(c) if lower < upper => {
            // aim a little below the predicted crossing, so a pass lands close under it
            let aim = c * (1.0 - cfg.tolerance / 2.0);
            if aim <= lower {
                // probe the tolerance edge: a fail there closes the bracket
                Some(within(lo, cfg.tolerance))
            } else if aim >= upper {
                Some(upper.ceil())
            } else {
                Some(aim.round())
            }
        }
        _ => None,
    };
    match target {
        Some(t) => ((t as u32).clamp(lo + 1, hi - 1), Why::Model),
        None => ((mid.round() as u32).clamp(lo + 1, hi - 1), Why::Bisect),
    }
}

/// When the bracket's top `hi` was measured only as uncertain at its request cap (held, its
/// interval straddling a limit), the boundary lies at `hi` within that interval: the lowest
/// level whose pass would put the bracket within the tolerance. Bisecting instead spends a
/// level halfway down a bracket the measurement already located (an error-rate search
/// answered 40 below a boundary at 43: 43 uncertain, then 37 and 40, out of levels). Not twice
/// in a row: an edge probe that did not pass means a flat stretch near the limit, where
/// stepping down one tolerance at a time would creep; the next level refines as usual.
fn edge_below_uncertain(
    cfg: &SearchConfig,
    points: &[Point],
    whys: &[Option<Why>],
    lo: u32,
    hi: u32,
) -> Option<u32> {
    if whys.last() == Some(&Some(Why::Edge)) {
        return None;
    }
    // what stands at `hi`: a level measured again pools, and its verdict replaces its screen's
    let standing = standing(points);
    let mut at_hi = standing.iter().filter(|p| p.concurrency == hi).peekable();
    at_hi.peek()?;
    // a screen left uncertain says only that one batch could not decide: no edge there
    if !at_hi.all(|p| p.held && p.verdict == Verdict::Uncertain && !p.screen) {
        return None;
    }
    (lo + 1..hi).find(|t| within(*t, cfg.tolerance) >= f64::from(hi))
}

#[cfg(test)]
#[path = "search_tests.rs"]
mod tests;
