//! How an SLA search ended: the bracket, the contradictions and re-measurements, and the
//! confidence note that says how sure the answer is.

use super::search_config::SearchConfig;
use super::search_points::{
    bracket, contradictions, levels_used, passes, standing, Contradiction, Point, Vote,
};
use crate::record::sla::Verdict;
use serde::Serialize;
use std::collections::BTreeMap;

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

/// Where a search stands now, for a run cut short.
pub fn outcome_now(cfg: &SearchConfig, points: &[Point]) -> Outcome {
    outcome(cfg, points, StopReason::Interrupted)
}

pub(crate) fn outcome(cfg: &SearchConfig, points: &[Point], reason: StopReason) -> Outcome {
    let (lo, hi) = bracket(points);
    let contradictions = contradictions(points);
    // every measurement's vote, for the levels measured more than once
    let mut votes: BTreeMap<u32, Vec<Vote>> = BTreeMap::new();
    for p in points {
        votes
            .entry(p.concurrency)
            .or_default()
            .push(p.decided_vote());
    }
    votes.retain(|_, v| v.len() > 1);
    let standing = standing(points);
    let pooled = points.iter().any(|p| p.pooled);
    let remeasured: BTreeMap<u32, Vec<bool>> = votes
        .iter()
        .map(|(c, v)| (*c, v.iter().map(|x| *x == Some(true)).collect()))
        .collect();
    let mut uncertain: Vec<u32> = standing
        .iter()
        .filter(|p| p.held && p.verdict == Verdict::Uncertain && !p.screen)
        .map(|p| p.concurrency)
        .collect();
    uncertain.sort_unstable();
    uncertain.dedup();
    let mut not_held: Vec<u32> = standing
        .iter()
        .filter(|p| !p.held)
        .map(|p| p.concurrency)
        .collect();
    not_held.sort_unstable();
    not_held.dedup();
    // the requests each end's verdict stands on (a pooled level's are all of its own)
    let requests = |end: Option<u32>| {
        let at: Vec<&&Point> = standing
            .iter()
            .filter(|p| Some(p.concurrency) == end)
            .collect();
        let n: u64 = at.iter().map(|p| p.requests).sum();
        (n > 0).then_some(n)
    };
    let (lo_requests, hi_requests) = (requests(lo), requests(hi));
    let mut confidence = confidence_note(cfg, reason, lo, hi, &contradictions, &votes, pooled);
    let decided_by: Vec<String> = [(lo, lo_requests, "passed"), (hi, hi_requests, "failed")]
        .into_iter()
        .filter_map(|(end, n, how)| {
            let (end, n) = (end?, n?);
            let screened = standing
                .iter()
                .any(|p| p.concurrency == end && p.undecided_screen());
            // an end not decided is never said to have passed or failed
            let how = if uncertain.contains(&end) {
                "stayed uncertain"
            } else if screened {
                "stayed uncertain (screened)"
            } else if not_held.contains(&end) {
                "was not held"
            } else {
                how
            };
            Some(format!("{end} {how} on {n} requests"))
        })
        .collect();
    if !decided_by.is_empty() {
        confidence += &format!("; {}", decided_by.join(", "));
    }
    if let Some(h) = hi.filter(|h| uncertain.contains(h)) {
        confidence += &format!(
            "; {h} stayed uncertain at its request cap: the limit may reach up to {h} (more \
             requests per level would decide it)"
        );
    }
    let screened: Vec<String> = [lo, hi]
        .into_iter()
        .flatten()
        .filter(|end| {
            standing
                .iter()
                .any(|p| p.concurrency == *end && p.undecided_screen())
        })
        .map(|end| end.to_string())
        .collect();
    if !screened.is_empty() {
        confidence += &format!(
            "; {} screened only (one batch, within the limits or not by its observed values), \
             not decided: the iteration budget ran out first",
            screened.join(" and ")
        );
    }
    if !not_held.is_empty() {
        confidence += &format!(
            "; not held, never named: {}",
            not_held
                .iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    Outcome {
        reason,
        max_passing: lo,
        first_failing: hi,
        levels_used: levels_used(points),
        measurements: points.len() as u32,
        contradictions,
        remeasured,
        max_passing_requests: lo_requests,
        first_failing_requests: hi_requests,
        uncertain,
        not_held,
        confidence,
    }
}

fn verdicts_text(v: &[Vote]) -> String {
    v.iter()
        .map(|p| match p {
            Some(true) => "pass",
            Some(false) => "fail",
            None => "undecided",
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn confidence_note(
    cfg: &SearchConfig,
    reason: StopReason,
    lo: Option<u32>,
    hi: Option<u32>,
    contradictions: &[Contradiction],
    remeasured: &BTreeMap<u32, Vec<Vote>>,
    pooled: bool,
) -> String {
    let tol = cfg.tolerance * 100.0;
    let first = match (reason, lo, hi) {
        (StopReason::MaxPasses, _, _) => format!(
            "every level passed up to concurrency_max {}; the limit may be higher",
            cfg.max
        ),
        (_, None, _) => format!("no level passes, from concurrency_min {} up", cfg.min),
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
    } else if pooled {
        "a level measured again is judged on all its requests together"
    } else {
        "a level passes only if most of its measurements did"
    };
    format!("contradiction: {}; {re}; {tail}; {first}", pairs.join("; "))
}
