//! What an SLA search knows of the levels measured so far ([`Point`]) and what they add up
//! to: each measurement's vote, the measurements that stand (a pooled one replaces the
//! earlier ones at its concurrency), each level's votes and mean ratios, contradictions (a
//! pass above a fail), the bracket, and the levels used.

use crate::record::sla::Verdict;
use serde::Serialize;
use std::collections::BTreeMap;

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

/// A pass measured above a fail.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Contradiction {
    pub passed: u32,
    pub failed: u32,
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

/// Levels the search has used: measurements that did not join an earlier one at their
/// concurrency (a level measured again counts once).
pub(crate) fn levels_used(points: &[Point]) -> u32 {
    points.iter().filter(|p| !p.pooled).count() as u32
}
