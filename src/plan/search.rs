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

pub use super::model::model_crossing;
use super::search_outcome::outcome;
pub use super::search_outcome::outcome_now;
use crate::record::sla::Verdict;
use serde::Serialize;
use std::collections::BTreeMap;

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

/// What the planner knows of one finished level.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    pub concurrency: u32,
    /// The level held its concurrency and every SLA passed with its whole interval.
    pub pass: bool,
    /// Every SLA together (`uncertain`: some interval straddles its limit).
    pub verdict: Verdict,
    /// The level held its concurrency (a level not held is never named).
    pub held: bool,
    /// observed / limit for each SLA, in the order they were given (above 1 breaches;
    /// infinite when the level could not measure it). Empty when unknown.
    pub ratios: Vec<f64>,
    /// Requests the verdict stands on (every measurement pooled so far); 0 when unknown.
    pub requests: u64,
    /// The verdict covers the earlier measurements at this concurrency too (the level was
    /// measured again and pooled): it replaces theirs.
    pub pooled: bool,
    /// Every measurement behind it was a screen (its first batch only): when that left it
    /// uncertain, it steers by its observed values and is not an answer until decided.
    pub screen: bool,
}

impl Point {
    /// A held level with a decided verdict.
    pub fn decided(concurrency: u32, pass: bool, ratios: Vec<f64>) -> Point {
        Point {
            concurrency,
            pass,
            verdict: if pass { Verdict::Pass } else { Verdict::Fail },
            held: true,
            ratios,
            requests: 0,
            pooled: false,
            screen: false,
        }
    }

    /// A held level screened on one batch that left it uncertain, observed at `ratios`.
    #[cfg(test)]
    pub fn screened(concurrency: u32, ratios: Vec<f64>) -> Point {
        Point {
            concurrency,
            pass: false,
            verdict: Verdict::Uncertain,
            held: true,
            ratios,
            requests: 0,
            pooled: false,
            screen: true,
        }
    }

    /// A screen that left it uncertain: its verdict is to be decided before it is an answer.
    pub fn undecided_screen(&self) -> bool {
        self.screen && self.held && self.verdict == Verdict::Uncertain
    }

    /// The same measurement, pooled with the earlier ones at its concurrency.
    #[cfg(test)]
    pub fn pooled(self) -> Point {
        Point {
            pooled: true,
            ..self
        }
    }

    /// A decided failure: an SLA broke with its whole interval (held or not).
    pub fn failed(&self) -> bool {
        self.verdict == Verdict::Fail
    }
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
    /// The requests `max_passing`'s verdict stands on (all its measurements, pooled).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_passing_requests: Option<u64>,
    /// The requests `first_failing`'s verdict stands on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_failing_requests: Option<u64>,
    /// Levels used (a level measured again counts once).
    pub levels_used: u32,
    /// Measurements run: every level's, the second ones of levels measured again included.
    pub measurements: u32,
    pub contradictions: Vec<Contradiction>,
    /// Each level's measurements in order (`true` = pass), for levels measured more than once.
    pub remeasured: BTreeMap<u32, Vec<bool>>,
    /// Levels whose verdict stayed uncertain (at the request cap): treated as not passing.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub uncertain: Vec<u32>,
    /// Levels that did not hold their concurrency: never named.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub not_held: Vec<u32>,
    /// A sentence saying how sure the answer is.
    pub confidence: String,
}

/// The planner's decision after the levels so far.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    Measure { concurrency: u32, why: Why },
    Done(Outcome),
}

/// One measurement's vote on its level: `Some(true)` passed, `Some(false)` failed, `None`
/// decided nothing (uncertain at its request cap, or not held without a failure).
pub(crate) type Vote = Option<bool>;

impl Point {
    /// Its vote on the bracket: its verdict when decided, else a screen's lean (what it
    /// observed against the limits).
    pub(crate) fn vote(&self) -> Vote {
        match self.decided_vote() {
            None if self.undecided_screen() && !self.ratios.is_empty() => {
                Some(self.ratios.iter().all(|r| *r <= 1.0))
            }
            v => v,
        }
    }

    /// Its verdict as a vote: pass, fail, or nothing when undecided (a screen's lean is not
    /// a verdict).
    pub(crate) fn decided_vote(&self) -> Vote {
        if self.pass {
            Some(true)
        } else if self.failed() {
            Some(false)
        } else {
            None
        }
    }
}

/// The points that stand: every one but those a later pooled measurement at the same
/// concurrency replaced.
pub fn standing(points: &[Point]) -> Vec<&Point> {
    points
        .iter()
        .enumerate()
        .filter(|(i, p)| {
            !points[i + 1..]
                .iter()
                .any(|q| q.pooled && q.concurrency == p.concurrency)
        })
        .map(|(_, p)| p)
        .collect()
}

/// Per concurrency: its standing measurements' votes, in order, and mean ratios (one of
/// each for a pooled level).
pub(crate) fn aggregate(points: &[Point]) -> BTreeMap<u32, (Vec<Vote>, Vec<f64>)> {
    let mut m: BTreeMap<u32, (Vec<Vote>, Vec<Vec<f64>>)> = BTreeMap::new();
    for p in standing(points) {
        let e = m.entry(p.concurrency).or_default();
        e.0.push(p.vote());
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

/// A level passes when most of its decided measurements passed (a tie fails). A measurement
/// that decided nothing does not vote: a level uncertain once and passed when re-measured
/// passes; a level that never decided does not.
pub(crate) fn passes(votes: &[Vote]) -> bool {
    let p = votes.iter().filter(|v| **v == Some(true)).count();
    let f = votes.iter().filter(|v| **v == Some(false)).count();
    p > f
}

/// Every (pass, fail) pair of standing measurements with the pass at the higher (or the same)
/// concurrency. Only decided verdicts contradict: an uncertain or unheld level does not.
pub fn contradictions(points: &[Point]) -> Vec<Contradiction> {
    let standing = standing(points);
    let mut out: Vec<Contradiction> = Vec::new();
    for p in standing.iter().filter(|p| p.pass) {
        for f in standing
            .iter()
            .filter(|f| f.failed() && f.concurrency <= p.concurrency)
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

/// Levels the search has used: measurements that did not join an earlier one at their
/// concurrency (a level measured again counts once).
pub(crate) fn levels_used(points: &[Point]) -> u32 {
    points.iter().filter(|p| !p.pooled).count() as u32
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
    let mut at_hi = points.iter().filter(|p| p.concurrency == hi).peekable();
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
