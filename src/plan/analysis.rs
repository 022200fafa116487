//! What a finished run means: the iteration table, the search result, the knee and the
//! planning numbers, computed from the level summaries alone (so the printer, `summary.json`
//! and the tests all agree).

use super::capacity::{peak_coverage_warning, right_size, CapacityInputs, IdealPoint, RightSize};
use super::gate::Answer;
use super::knee::{curve, find_knee, Knee, DEFAULT_MIN_GAIN};
use super::search::{self, Outcome, Point, SearchConfig, Step, Why};
use super::sla::{SlaCheck, SlaSet, SlaThreshold};
use crate::metrics::LevelSummary;
use serde::Serialize;

/// How to read a run.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Analysis {
    pub slas: SlaSet,
    /// Set for an SLA search.
    pub search: Option<SearchConfig>,
    pub capacity: CapacityInputs,
}

/// One row of the iteration table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IterationRow {
    /// 1-based.
    pub iteration: u32,
    pub concurrency: u32,
    pub output_tps: f64,
    /// Each SLA's observed value against its limit.
    pub slas: Vec<SlaCheck>,
    /// Whether the level met every SLA (`None` without SLAs).
    pub pass: Option<bool>,
    /// Why the planner chose the level (searches).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<Why>,
    pub partial: bool,
}

/// The SLA that decides the answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BindingSla {
    #[serde(flatten)]
    pub threshold: SlaThreshold,
    /// Observed at the answer.
    pub observed_at_answer: Option<f64>,
    /// Observed at the first failing level.
    pub observed_at_first_failing: Option<f64>,
}

/// The result of an SLA search.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SearchResult {
    #[serde(flatten)]
    pub outcome: Outcome,
    /// Output tokens/sec at the answer (mean over its measurements).
    pub output_tps_at_answer: Option<f64>,
    pub binding_sla: Option<BindingSla>,
    /// The bracket [max passing, first failing].
    pub bracket: [Option<u32>; 2],
}

/// The planning numbers.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Planning {
    /// The concurrency with the highest throughput at acceptable latency.
    pub ideal: Option<IdealPoint>,
    /// `sla` (best throughput among passing levels), `knee`, or `max_throughput` (no SLA,
    /// no knee).
    pub ideal_basis: &'static str,
    /// The lowest concurrency whose level broke the SLA (with SLAs only).
    pub breaking_point: Option<u32>,
    pub right_size: Option<RightSize>,
    pub warnings: Vec<String>,
}

/// Everything `summary.json` says about a run beyond its levels.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunAnalysis {
    /// What the CI gate compares: the search's answer, or for a sweep the highest passing
    /// level (with SLAs) or the ideal balance (without).
    pub answer: Option<Answer>,
    pub slas: SlaSet,
    pub iterations: Vec<IterationRow>,
    pub search: Option<SearchResult>,
    pub knee: Option<Knee>,
    pub planning: Planning,
}

/// The planner's view of finished levels (partial levels are left out: they measured less).
pub fn points(slas: &SlaSet, levels: &[LevelSummary]) -> Vec<Point> {
    levels
        .iter()
        .filter(|l| !l.partial)
        .map(|l| {
            let checks = slas.check(l);
            Point {
                concurrency: l.concurrency,
                pass: checks.iter().all(|c| c.pass),
                ratios: checks.iter().map(SlaCheck::ratio).collect(),
            }
        })
        .collect()
}

/// One iteration row for a level.
pub fn row(slas: &SlaSet, level: &LevelSummary, why: Option<Why>) -> IterationRow {
    let checks = slas.check(level);
    IterationRow {
        iteration: level.index + 1,
        concurrency: level.concurrency,
        output_tps: level.output_tps(),
        pass: (!slas.is_empty()).then(|| checks.iter().all(|c| c.pass)),
        slas: checks,
        why,
        partial: level.partial,
    }
}

fn mean(v: impl Iterator<Item = f64>) -> Option<f64> {
    let (s, n) = v.fold((0.0, 0u32), |(s, n), x| (s + x, n + 1));
    (n > 0).then(|| s / n as f64)
}

fn ideal_at(levels: &[LevelSummary], c: u32) -> Option<IdealPoint> {
    let at: Vec<&LevelSummary> = levels
        .iter()
        .filter(|l| l.concurrency == c && !l.partial)
        .collect();
    Some(IdealPoint {
        concurrency: c,
        output_tps: mean(at.iter().map(|l| l.output_tps()))?,
        rps: mean(at.iter().map(|l| l.requests_per_sec()))?,
        e2e_avg_ms: mean(
            at.iter()
                .filter_map(|l| l.request_latency.as_ref().map(|s| s.avg)),
        )
        .unwrap_or(0.0),
    })
}

/// Reads a run.
pub fn analyse(a: &Analysis, levels: &[LevelSummary]) -> RunAnalysis {
    let pts = points(&a.slas, levels);
    let whys = a.search.map(|cfg| search::history(&cfg, &pts));
    let mut complete = 0usize;
    let iterations = levels
        .iter()
        .map(|l| {
            let why = if l.partial {
                None
            } else {
                complete += 1;
                whys.as_ref()
                    .and_then(|w| w.get(complete - 1).copied().flatten())
            };
            row(&a.slas, l, why)
        })
        .collect();
    let knee = find_knee(&curve(levels), DEFAULT_MIN_GAIN);
    let (lo, hi) = search::bracket(&pts);
    let search = a.search.map(|cfg| {
        let outcome = match search::decide(&cfg, &pts) {
            Step::Done(o) => o,
            // cut short (interrupted): report where it stood
            Step::Measure { .. } => search::outcome_now(&cfg, &pts),
        };
        search_result(a, levels, outcome)
    });

    let (ideal, basis) = if a.slas.is_empty() {
        match &knee {
            Some(k) => (ideal_at(levels, k.concurrency), "knee"),
            None => (best_throughput(levels, |_| true), "max_throughput"),
        }
    } else {
        let passing = |c: u32| lo.is_some_and(|l| c <= l) && hi.is_none_or(|h| c < h);
        (
            best_throughput(levels, |l| passing(l.concurrency) && a.slas.passes(l)),
            "sla",
        )
    };
    let mut warnings = Vec::new();
    let right = ideal.as_ref().and_then(|i| right_size(&a.capacity, i));
    if let (Some(peak), Some(i)) = (a.capacity.peak, &ideal) {
        let highest = levels.iter().map(|l| l.concurrency).max().unwrap_or(0);
        warnings.extend(peak_coverage_warning(peak, i, highest));
    }
    if a.capacity.peak.is_some() && ideal.is_none() {
        warnings.push("no level met the SLA: no capacity to size instances by".into());
    }
    let answer = match (&search, a.slas.is_empty()) {
        (Some(s), _) => s.outcome.max_passing.zip(s.output_tps_at_answer),
        (None, false) => lo
            .and_then(|c| ideal_at(levels, c))
            .map(|i| (i.concurrency, i.output_tps)),
        (None, true) => ideal.map(|i| (i.concurrency, i.output_tps)),
    }
    .map(|(concurrency, output_tps)| Answer {
        concurrency,
        output_tps,
    });
    RunAnalysis {
        answer,
        slas: a.slas.clone(),
        iterations,
        search,
        knee,
        planning: Planning {
            ideal,
            ideal_basis: basis,
            breaking_point: if a.slas.is_empty() { None } else { hi },
            right_size: right,
            warnings,
        },
    }
}

/// The level with the highest throughput among those `ok` accepts.
fn best_throughput(
    levels: &[LevelSummary],
    ok: impl Fn(&LevelSummary) -> bool,
) -> Option<IdealPoint> {
    let c = levels
        .iter()
        .filter(|l| !l.partial && ok(l))
        .max_by(|a, b| a.output_tps().total_cmp(&b.output_tps()))?
        .concurrency;
    ideal_at(levels, c)
}

fn search_result(a: &Analysis, levels: &[LevelSummary], outcome: Outcome) -> SearchResult {
    let observed = |c: Option<u32>, j: usize| {
        let c = c?;
        mean(
            levels
                .iter()
                .filter(|l| l.concurrency == c && !l.partial)
                .filter_map(|l| a.slas.0[j].observe(l)),
        )
    };
    let (lo, hi) = (outcome.max_passing, outcome.first_failing);
    // the binding SLA breaks first: the one furthest over its limit at the first fail, else
    // the one closest to it at the answer
    let ratio =
        |c: Option<u32>, j: usize| observed(c, j).map_or(f64::INFINITY, |o| o / a.slas.0[j].limit);
    let j = (0..a.slas.0.len()).max_by(|x, y| {
        let (rx, ry) = if hi.is_some() {
            (ratio(hi, *x), ratio(hi, *y))
        } else {
            (ratio(lo, *x), ratio(lo, *y))
        };
        rx.total_cmp(&ry)
    });
    SearchResult {
        output_tps_at_answer: lo.and_then(|c| {
            mean(
                levels
                    .iter()
                    .filter(|l| l.concurrency == c && !l.partial)
                    .map(|l| l.output_tps()),
            )
        }),
        binding_sla: j.map(|j| BindingSla {
            threshold: a.slas.0[j],
            observed_at_answer: observed(lo, j),
            observed_at_first_failing: observed(hi, j),
        }),
        bracket: [lo, hi],
        outcome,
    }
}
