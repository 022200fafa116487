//! The SLA search planner (SPEC "Search planner"), as a pure function of the levels measured
//! so far: [`decide`] returns the next concurrency (and why) or "done" with the outcome.
//!
//! Exponential phase: double from `min` until a level fails or `max` passes. Refinement: the
//! bracket is [highest pass below the lowest fail, lowest fail]; the next level is where the
//! breaching metric, interpolated against log concurrency between the bracket ends, predicts
//! the crossing (aimed a little below it, clamped away from the ends), with bisection as the
//! fallback when the model has nothing to go on or its last step barely cut the bracket.
//! Contradictions (a pass above a fail) are re-measured once per level; a level measured twice
//! passes only if most of its measurements passed (a tie fails: the cautious side).

use serde::Serialize;
use std::collections::BTreeMap;

/// Limits of one search.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SearchConfig {
    /// Lowest concurrency to try (the first level).
    pub min: u32,
    /// Highest concurrency to try.
    pub max: u32,
    /// Most levels to run, re-measurements included.
    pub max_iterations: u32,
    /// Stop when the bracket's high end is within this fraction of its low end (0.05 = 5 %).
    pub tolerance: f64,
    /// Once the bracket is within the tolerance, measure each end once more (budget
    /// permitting): noise that flips a verdict then shows up as a contradiction instead of
    /// a confident answer. Inside one search a new level always lies inside the bracket, so
    /// without a second look noise could never contradict anything.
    pub confirm: bool,
}

impl Default for SearchConfig {
    fn default() -> Self {
        SearchConfig {
            min: 16,
            max: 4096,
            max_iterations: 10,
            tolerance: 0.05,
            confirm: true,
        }
    }
}

/// What the planner knows of one finished level.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    pub concurrency: u32,
    /// The level met every SLA.
    pub pass: bool,
    /// observed / limit for each SLA, in the order they were given (above 1 breaches;
    /// infinite when the level could not measure it). Empty when unknown.
    pub ratios: Vec<f64>,
}

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
    /// A second measurement of a level involved in a contradiction.
    Remeasure,
    /// A second measurement of a bracket end once the bracket is narrow.
    Confirm,
}

/// Why the search stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The bracket is within the tolerance (or one apart).
    Converged,
    /// `max` passed: the limit is at least that.
    MaxPasses,
    /// `min` failed: nothing in range meets the SLA.
    MinFails,
    /// `max_iterations` levels were run.
    Budget,
    /// The run was cut short before the planner was done.
    Interrupted,
}

/// A pass measured above a fail.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Contradiction {
    pub passed: u32,
    pub failed: u32,
}

/// Where the search ended.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Outcome {
    pub reason: StopReason,
    /// The answer: the highest concurrency that passed below every fail.
    pub max_passing: Option<u32>,
    /// The lowest concurrency that failed.
    pub first_failing: Option<u32>,
    pub levels_used: u32,
    pub contradictions: Vec<Contradiction>,
    /// Each level's measurements in order (`true` = pass), for levels measured more than once.
    pub remeasured: BTreeMap<u32, Vec<bool>>,
    /// A sentence saying how sure the answer is.
    pub confidence: String,
}

/// The planner's decision after the levels so far.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    Measure { concurrency: u32, why: Why },
    Done(Outcome),
}

/// Per concurrency: its measurements' verdicts, in order, and mean ratios.
fn aggregate(points: &[Point]) -> BTreeMap<u32, (Vec<bool>, Vec<f64>)> {
    let mut m: BTreeMap<u32, (Vec<bool>, Vec<Vec<f64>>)> = BTreeMap::new();
    for p in points {
        let e = m.entry(p.concurrency).or_default();
        e.0.push(p.pass);
        e.1.push(p.ratios.clone());
    }
    m.into_iter()
        .map(|(c, (v, rs))| {
            let n = rs.iter().map(Vec::len).min().unwrap_or(0);
            let mean = (0..n)
                .map(|j| rs.iter().map(|r| r[j]).sum::<f64>() / rs.len() as f64)
                .collect();
            (c, (v, mean))
        })
        .collect()
}

/// A level passes when most of its measurements passed (a tie fails).
fn passes(verdicts: &[bool]) -> bool {
    let p = verdicts.iter().filter(|v| **v).count();
    p * 2 > verdicts.len()
}

/// Every (pass, fail) pair of single measurements with the pass at the higher (or the same)
/// concurrency.
pub fn contradictions(points: &[Point]) -> Vec<Contradiction> {
    let mut out: Vec<Contradiction> = Vec::new();
    for p in points.iter().filter(|p| p.pass) {
        for f in points
            .iter()
            .filter(|f| !f.pass && f.concurrency <= p.concurrency)
        {
            let c = Contradiction {
                passed: p.concurrency,
                failed: f.concurrency,
            };
            if !out.contains(&c) {
                out.push(c);
            }
        }
    }
    out
}

/// The bracket [highest pass below the lowest fail, lowest fail], by aggregated verdicts.
pub fn bracket(points: &[Point]) -> (Option<u32>, Option<u32>) {
    let agg = aggregate(points);
    let hi = agg.iter().find(|(_, (v, _))| !passes(v)).map(|(c, _)| *c);
    let lo = agg
        .iter()
        .filter(|(c, (v, _))| passes(v) && hi.is_none_or(|h| **c < h))
        .map(|(c, _)| *c)
        .next_back();
    (lo, hi)
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
    if converged {
        let count = |c: Option<u32>| points.iter().filter(|p| Some(p.concurrency) == c).count();
        let budget_left = (points.len() as u32) < cfg.max_iterations;
        if cfg.confirm && budget_left {
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
    if points.len() as u32 >= cfg.max_iterations {
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
                return done(StopReason::MaxPasses);
            }
            return Step::Measure {
                concurrency: top.saturating_mul(2).min(cfg.max),
                why: Why::Exponential,
            };
        }
        (None, Some(_)) => return done(StopReason::MinFails),
        (Some(l), Some(h)) => (l, h),
    };
    let (concurrency, why) = refine(cfg, points, whys, lo, hi);
    Step::Measure { concurrency, why }
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
    let (l, h) = (lo as f64, hi as f64);
    let mid = (l * h).sqrt();
    let creeping = whys.len() >= CREEP_LIMIT
        && whys
            .iter()
            .zip(points)
            .rev()
            .take(CREEP_LIMIT)
            .all(|(w, p)| *w == Some(Why::Model) && p.pass);
    let guess = model_crossing(points, lo, hi).filter(|_| !creeping);
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

/// Where the breaching metric reaches its limit, modelled against log concurrency through the
/// measured levels whose values are nearest the limit: a parabola through three when the
/// bracket [lo, hi] holds its root, else a line through two. Over the SLAs that breach at
/// `hi` the lowest crossing wins. `None` when no SLA has two usable (finite, nonzero) values
/// on a rising line.
pub fn model_crossing(points: &[Point], lo: u32, hi: u32) -> Option<f64> {
    let agg = aggregate(points);
    let at_hi = &agg.get(&hi)?.1;
    let (xl, xh) = ((lo as f64).ln(), (hi as f64).ln());
    (0..at_hi.len())
        .filter(|j| at_hi[*j] > 1.0)
        .filter_map(|j| {
            let mut near: Vec<(f64, f64)> = agg
                .iter()
                .filter_map(|(c, (_, r))| r.get(j).map(|r| ((*c as f64).ln(), *r)))
                .filter(|(_, r)| r.is_finite() && *r > 0.0)
                .collect();
            near.sort_by(|a, b| a.1.ln().abs().total_cmp(&b.1.ln().abs()));
            if near.len() >= 3 {
                if let Some(x) = parabola_root(&near[..3], xl, xh) {
                    return Some(x.exp());
                }
            }
            let (x1, y1) = *near.first()?;
            let (x2, y2) = *near.get(1)?;
            let slope = (y2 - y1) / (x2 - x1);
            (slope.is_finite() && slope > 0.0).then(|| (x1 + (1.0 - y1) / slope).exp())
        })
        .min_by(f64::total_cmp)
}

/// The root of y = 1 on the parabola through three points, if exactly one root lies in
/// [xl, xh] where the parabola rises.
fn parabola_root(p: &[(f64, f64)], xl: f64, xh: f64) -> Option<f64> {
    let [(x0, y0), (x1, y1), (x2, y2)] = [p[0], p[1], p[2]];
    let d01 = (y1 - y0) / (x1 - x0);
    let d12 = (y2 - y1) / (x2 - x1);
    let a = (d12 - d01) / (x2 - x0);
    let b = d01 - a * (x0 + x1);
    let c = y0 - a * x0 * x0 - b * x0 - 1.0;
    if !(a.is_finite() && b.is_finite() && c.is_finite()) {
        return None;
    }
    let roots: Vec<f64> = if a.abs() < 1e-12 {
        vec![-c / b]
    } else {
        let disc = b * b - 4.0 * a * c;
        if disc < 0.0 {
            return None;
        }
        let s = disc.sqrt();
        vec![(-b - s) / (2.0 * a), (-b + s) / (2.0 * a)]
    };
    let inside: Vec<f64> = roots
        .into_iter()
        .filter(|x| x.is_finite() && *x >= xl && *x <= xh && 2.0 * a * x + b > 0.0)
        .collect();
    (inside.len() == 1).then(|| inside[0])
}

/// Where a search stands now, for a run cut short.
pub fn outcome_now(cfg: &SearchConfig, points: &[Point]) -> Outcome {
    outcome(cfg, points, StopReason::Interrupted)
}

fn outcome(cfg: &SearchConfig, points: &[Point], reason: StopReason) -> Outcome {
    let (lo, hi) = bracket(points);
    let contradictions = contradictions(points);
    let agg = aggregate(points);
    let remeasured: BTreeMap<u32, Vec<bool>> = agg
        .iter()
        .filter(|(_, (v, _))| v.len() > 1)
        .map(|(c, (v, _))| (*c, v.clone()))
        .collect();
    let confidence = confidence_note(cfg, reason, lo, hi, &contradictions, &remeasured);
    Outcome {
        reason,
        max_passing: lo,
        first_failing: hi,
        levels_used: points.len() as u32,
        contradictions,
        remeasured,
        confidence,
    }
}

fn verdicts_text(v: &[bool]) -> String {
    v.iter()
        .map(|p| if *p { "pass" } else { "fail" })
        .collect::<Vec<_>>()
        .join(", ")
}

fn confidence_note(
    cfg: &SearchConfig,
    reason: StopReason,
    lo: Option<u32>,
    hi: Option<u32>,
    contradictions: &[Contradiction],
    remeasured: &BTreeMap<u32, Vec<bool>>,
) -> String {
    let tol = cfg.tolerance * 100.0;
    let first = match (reason, lo, hi) {
        (StopReason::MaxPasses, _, _) => format!(
            "every level passed up to concurrency_max {}; the limit may be higher",
            cfg.max
        ),
        (_, None, _) => format!("the SLA fails already at concurrency_min {}", cfg.min),
        (StopReason::Converged, Some(l), Some(h)) => {
            let both = remeasured.contains_key(&l) && remeasured.contains_key(&h);
            format!(
                "bracket [{l}, {h}] within {tol:.0} %{}",
                if both {
                    ", both ends measured twice"
                } else {
                    ""
                }
            )
        }
        (StopReason::Interrupted, Some(l), Some(h)) => {
            format!("bracket [{l}, {h}]: interrupted before it was within {tol:.0} %")
        }
        (_, Some(l), Some(h)) => format!(
            "bracket [{l}, {h}] wider than {tol:.0} %: the iteration budget ({}) ran out",
            cfg.max_iterations
        ),
        (_, Some(l), None) => format!("highest pass {l}; no level failed"),
    };
    if contradictions.is_empty() {
        return format!("{first}; no contradictions");
    }
    let pairs: Vec<String> = contradictions
        .iter()
        .map(|c| {
            if c.passed == c.failed {
                format!("{} passed once and failed once", c.passed)
            } else {
                format!("{} passed but {} failed", c.passed, c.failed)
            }
        })
        .collect();
    let re: Vec<String> = remeasured
        .iter()
        .map(|(c, v)| format!("{c} ({})", verdicts_text(v)))
        .collect();
    let re = if re.is_empty() {
        "no budget left to re-measure".to_string()
    } else {
        format!("re-measured {}", re.join(", "))
    };
    let agg_pass = |c: u32| remeasured.get(&c).is_none_or(|v| passes(v));
    let unresolved = contradictions
        .iter()
        .any(|c| agg_pass(c.passed) && hi.is_some_and(|h| c.passed > h));
    let tail = if unresolved {
        "still non-monotonic: the answer is the highest pass below the lowest fail"
    } else {
        "a level passes only if most of its measurements did"
    };
    format!("contradiction: {}; {re}; {tail}; {first}", pairs.join("; "))
}

#[cfg(test)]
#[path = "search_tests.rs"]
mod tests;
