//! What a finished run means: the iteration table, the search result, the knee and the
//! planning numbers, computed from the level summaries alone (so the printer, `summary.json`
//! and the tests all agree).
//!
//! Every analysis applies the run's SLAs plus an error-rate limit ([`Analysis::limits`]).
//! Only *qualified* levels may be named as the knee, the ideal balance or an answer: complete,
//! held, with at least one success and an error rate not above the limit. The others are
//! listed in [`RunAnalysis::skipped`] with the reason.

use super::capacity::{peak_coverage_warning, right_size, CapacityInputs, IdealPoint, RightSize};
use super::gate::Answer;
use super::knee::{
    curve, knee_finding, CurvePoint, Knee, KneeFinding, UndecidedKnee, DEFAULT_MIN_GAIN,
};
use super::range::{boundary_range, BoundaryRange};
use super::search::{self, Step, Why};
use super::search_config::SearchConfig;
use super::search_outcome::{outcome_now, Outcome};
use super::search_points::{bracket, standing, Point};
use crate::metrics::LevelSummary;
use crate::plan::judge::{
    level_verdict, min_samples, sample_count, undecided_screen, SlaSet, DEFAULT_MAX_ERROR_RATE,
};
use crate::record::sla::{SlaCheck, SlaMetric, SlaThreshold, Verdict};
use serde::Serialize;

/// How to read a run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Analysis {
    /// The SLAs the user gave.
    pub slas: SlaSet,
    /// The error-rate limit applied when `slas` has no error-rate SLA.
    pub max_error_rate: f64,
    /// Set for an SLA search.
    pub search: Option<SearchConfig>,
    pub capacity: CapacityInputs,
}

impl Default for Analysis {
    fn default() -> Self {
        Analysis {
            slas: SlaSet::default(),
            max_error_rate: DEFAULT_MAX_ERROR_RATE,
            search: None,
            capacity: CapacityInputs::default(),
        }
    }
}

impl Analysis {
    /// The thresholds every level is judged on: the SLAs plus the error-rate limit.
    pub fn limits(&self) -> SlaSet {
        self.slas.with_error_limit(self.max_error_rate)
    }
}

/// One row of the iteration table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IterationRow {
    /// 1-based.
    pub iteration: u32,
    pub concurrency: u32,
    /// Requests the level ran (its base count, raised to 2 x concurrency, plus batches), over
    /// every measurement of it.
    pub requests: u64,
    /// Batches it ran, over every measurement (when it could grow by batches).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub batches: Option<u32>,
    /// Times the search measured it: more than one when it came back to it, the requests of
    /// each joined into this one level.
    pub measurements: u32,
    /// A screen only (one batch to steer the search) that left the verdict uncertain: it leans
    /// by its observed values, and no answer rests on it.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub screen: bool,
    /// The level's throughput, "output tok/s" on every surface:
    /// [`LevelSummary::sustained_tps`].
    pub output_tps: f64,
    /// Requests/s that met every latency SLA (a failed request is a miss).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub goodput: Option<f64>,
    /// Achieved concurrency over the steady window reached 95 % of the target.
    pub held: bool,
    /// Each limit's observed value, interval and verdict.
    pub slas: Vec<SlaCheck>,
    /// Every limit together.
    pub verdict: Verdict,
    /// Why the planner chose the level (searches).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<Why>,
    pub partial: bool,
}

impl IterationRow {
    /// Held, complete, and every limit passed with its whole interval.
    pub fn passes(&self) -> bool {
        self.held && !self.partial && self.verdict.is_pass()
    }
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

/// A level no answer, knee or ideal balance may name, and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Skipped {
    pub concurrency: u32,
    pub reason: String,
}

/// The planning numbers.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Planning {
    /// The concurrency with the highest throughput at acceptable latency.
    pub ideal: Option<IdealPoint>,
    /// `sla` (best throughput among passing levels), `knee`, or `max_throughput` (no SLA,
    /// no knee).
    pub ideal_basis: &'static str,
    /// The breaking point (with SLAs only): the lowest held level whose verdict is a decided
    /// fail. An uncertain level is never one; `None` when no level failed.
    pub breaking_point: Option<u32>,
    pub right_size: Option<RightSize>,
    pub warnings: Vec<String>,
}

/// Everything `summary.json` says about a run beyond its levels.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunAnalysis {
    /// `concurrency`, or `rate` when the run's levels are request rates: then every
    /// "concurrency" below (answer, knee, ideal, bracket, iterations) is a rate in hundredths
    /// of a request per second (see `docs/open-loop.md`).
    pub axis: Axis,
    /// What the CI gate compares: the search's answer, or for a sweep the highest passing
    /// level (with SLAs) or the ideal balance (without).
    pub answer: Option<Answer>,
    /// The SLAs the user gave.
    pub slas: SlaSet,
    /// The error-rate limit applied when there is no error-rate SLA.
    pub max_error_rate: f64,
    pub iterations: Vec<IterationRow>,
    pub search: Option<SearchResult>,
    /// The bracket (with SLAs or a search): the answer (highest level that passed) and the
    /// lowest level above it that did not pass (failed, stayed uncertain, or was not held).
    pub bracket: [Option<u32>; 2],
    /// The estimated crossing (with SLAs): where the observed curve reaches the limit, with
    /// the range the 95 % intervals allow (docs/search.md, "Words").
    pub boundary: Option<BoundaryRange>,
    pub knee: Option<Knee>,
    /// Where the knee may lie when the throughputs' intervals cannot name it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub knee_undecided: Option<UndecidedKnee>,
    /// What bounds the server past the knee (or at the highest level), from its recorded
    /// telemetry; absent for levels by rate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bound: Option<super::bound::Bound>,
    pub planning: Planning,
    /// Levels the answer, the knee and the ideal balance could not name.
    pub skipped: Vec<Skipped>,
}

/// Why a complete level may not be named, if it may not.
fn skip_reason(limits: &SlaSet, l: &LevelSummary) -> Option<String> {
    if !l.held {
        if let Some(r) = &l.open_loop.rate {
            return Some(format!(
                "not held: sent {:.2} of the {:.2} requests/s offered",
                r.achieved_rps, r.offered_rps
            ));
        }
        return Some(match l.achieved_concurrency {
            Some(a) => format!(
                "not held: achieved concurrency {a:.0} of {} ({:.0} %)",
                l.concurrency,
                a / l.concurrency.max(1) as f64 * 100.0
            ),
            None => format!(
                "not held: its {} requests never filled the {} slots",
                l.planned_requests, l.concurrency
            ),
        });
    }
    if l.ok_count() == 0 {
        return Some(format!(
            "no request succeeded ({} failed)",
            l.error_count() + l.cancelled_count
        ));
    }
    // over the limit as measured: a level that sheds load is not named, decided or not
    let errors = limits
        .0
        .iter()
        .find(|t| t.metric == SlaMetric::ErrorRate && l.error_rate > t.limit)?;
    Some(format!(
        "error rate {:.1} % is above the {:.1} % limit",
        l.error_rate * 100.0,
        errors.limit * 100.0
    ))
}

/// The levels a run may name: complete, held, some success, error rate within the limit.
fn qualified<'a>(limits: &SlaSet, levels: &'a [LevelSummary]) -> Vec<&'a LevelSummary> {
    levels
        .iter()
        .filter(|l| !l.partial && skip_reason(limits, l).is_none())
        .collect()
}

/// The knee curve over the levels a run may name.
pub fn qualified_curve(a: &Analysis, levels: &[LevelSummary]) -> Vec<CurvePoint> {
    let limits = a.limits();
    let named: Vec<LevelSummary> = qualified(&limits, levels).into_iter().cloned().collect();
    curve(&named)
}

/// The planner's view of finished levels (partial levels are left out: they measured less):
/// one point per measurement, in the order they ran. A level measured again (pooled) gives a
/// point for each of its measurements with the verdict it had then, as recorded; its last
/// point is the level judged now, on all its requests.
pub fn points(limits: &SlaSet, levels: &[LevelSummary]) -> Vec<Point> {
    ordered_points(limits, levels)
        .into_iter()
        .map(|(_, p)| p)
        .collect()
}

/// A level's first measurement's position among the run's (its index in older files).
fn first_order(l: &LevelSummary) -> u32 {
    l.measurements.first().map_or(l.index, |m| m.order)
}

/// [`points`] with each measurement's position among the run's.
fn ordered_points(limits: &SlaSet, levels: &[LevelSummary]) -> Vec<(u32, Point)> {
    let mut out: Vec<(u32, Point)> = Vec::new();
    for l in levels.iter().filter(|l| !l.partial) {
        let checks = limits.check(l);
        let verdict = level_verdict(&checks, l);
        let now = Point {
            concurrency: l.load(),
            pass: l.held && verdict.is_pass(),
            verdict,
            held: l.held,
            ratios: checks.iter().map(SlaCheck::ratio).collect(),
            requests: l.planned_requests,
            pooled: l.measurements.len() > 1,
            screen: l.screened_only(),
        };
        let Some((last, before)) = l.measurements.split_last() else {
            out.push((l.index, now));
            continue;
        };
        let mut requests = 0;
        for (i, m) in before.iter().enumerate() {
            requests += m.requests;
            let ratios = m.ratios.iter().map(|r| r.unwrap_or(f64::INFINITY));
            out.push((
                m.order,
                Point {
                    concurrency: l.load(),
                    pass: m.held && m.verdict.is_pass(),
                    verdict: m.verdict,
                    held: m.held,
                    ratios: ratios.collect(),
                    requests,
                    pooled: i > 0,
                    screen: before[..=i].iter().all(|m| m.screen),
                },
            ));
        }
        out.push((last.order, now));
    }
    out.sort_by_key(|(order, _)| *order);
    out
}

/// One iteration row for a level.
pub fn row(limits: &SlaSet, level: &LevelSummary, why: Option<Why>) -> IterationRow {
    let checks = limits.check(level);
    IterationRow {
        iteration: level.index + 1,
        concurrency: level.load(),
        requests: level.planned_requests,
        batches: level.sampling.map(|s| s.batches),
        measurements: level.measurements.len().max(1) as u32,
        screen: undecided_screen(limits, level),
        output_tps: level.sustained_tps(),
        goodput: level.goodput.as_ref().map(|g| g.avg),
        held: level.held,
        verdict: level_verdict(&checks, level),
        slas: checks,
        why,
        partial: level.partial,
    }
}

fn mean(v: impl Iterator<Item = f64>) -> Option<f64> {
    let (s, n) = v.fold((0.0, 0u32), |(s, n), x| (s + x, n + 1));
    (n > 0).then(|| s / n as f64)
}

/// The operating point at concurrency `c`: means over its named measurements.
fn ideal_at(named: &[&LevelSummary], c: u32) -> Option<IdealPoint> {
    let at: Vec<&&LevelSummary> = named.iter().filter(|l| l.load() == c).collect();
    Some(IdealPoint {
        concurrency: c,
        output_tps: mean(at.iter().map(|l| l.sustained_tps()))?,
        rps: mean(at.iter().map(|l| l.requests_per_sec()))?,
        e2e_avg_ms: mean(
            at.iter()
                .filter_map(|l| l.request_latency.as_ref().map(|s| s.avg)),
        )
        .unwrap_or(0.0),
        range: None,
        energy: energy_at(&at),
    })
}

/// The GPUs' figures at an operating point: means over its measurements that have them.
fn energy_at(at: &[&&LevelSummary]) -> Option<super::capacity::PointEnergy> {
    let gpus: Vec<&crate::record::GpuSummary> = at
        .iter()
        .filter_map(|l| l.server.as_ref()?.gpu.as_ref())
        .collect();
    let e = super::capacity::PointEnergy {
        power_w: mean(gpus.iter().filter_map(|g| g.power_w.map(|p| p.mean))),
        joules_per_output_token: mean(gpus.iter().filter_map(|g| g.joules_per_output_token)),
        kwh_per_million_output_tokens: mean(
            gpus.iter().filter_map(|g| g.kwh_per_million_output_tokens),
        ),
    };
    (e.power_w.is_some() || e.joules_per_output_token.is_some()).then_some(e)
}

/// What a run's levels vary: requests in flight, or request rate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Axis {
    #[default]
    Concurrency,
    Rate,
}

impl Axis {
    /// A place on the axis for people: `64`, or `2.5 req/s` (from hundredths of a
    /// request/s); infinite as `beyond the highest level`.
    pub fn fmt(self, v: f64) -> String {
        if !v.is_finite() {
            return "beyond the highest level".into();
        }
        match self {
            Axis::Concurrency => format!("{v:.0}"),
            Axis::Rate => format!(
                "{} req/s",
                crate::values::fmt_rps(v / crate::metrics::summary::LOAD_PER_RPS)
            ),
        }
    }

    /// The same for a level's load.
    pub fn load(self, v: u32) -> String {
        self.fmt(f64::from(v))
    }
}

/// A fixed-rate open-loop level (its load is a rate).
pub fn is_rate_level(l: &LevelSummary) -> bool {
    matches!(
        l.open_loop.rate.as_ref().map(|r| &r.shape),
        Some(crate::workload::arrivals::LoadShape::Rate { .. })
    )
}

/// The levels on the run's load axis: its fixed-rate levels when it has any (an automatic
/// rate sweep's two closed-loop probes are left out), else its closed-loop levels. Schedules
/// and replays have no place on either axis.
pub fn on_axis(levels: &[LevelSummary]) -> (bool, Vec<LevelSummary>) {
    let by_rate = levels.iter().any(is_rate_level);
    let kept = levels
        .iter()
        .filter(|l| {
            if by_rate {
                is_rate_level(l)
            } else {
                l.open_loop.rate.is_none()
            }
        })
        .cloned()
        .collect();
    (by_rate, kept)
}

/// Reads a run.
pub fn analyse(a: &Analysis, all: &[LevelSummary]) -> RunAnalysis {
    let (by_rate, levels) = on_axis(all);
    let r = Reading::new(a, by_rate, &levels);
    let iterations = r.iteration_rows(all);
    let (knee, knee_undecided) = match knee_finding(&curve_of(&r.named), DEFAULT_MIN_GAIN) {
        KneeFinding::Named(k) => (Some(k), None),
        KneeFinding::Undecided(u) => (None, Some(u)),
        KneeFinding::NotFound => (None, None),
    };
    let search = a.search.map(|cfg| r.search(cfg));
    let has_slas = r.has_slas();
    let boundary = has_slas
        .then(|| boundary_range(&r.limits, r.levels))
        .flatten();
    let planning = r.planning(knee.as_ref(), boundary);
    let answer = r.answer(search.as_ref(), planning.ideal.as_ref());
    let bound = (r.axis == Axis::Concurrency)
        .then(|| super::bound::diagnose(r.levels, knee.as_ref().map(|k| k.concurrency)));
    RunAnalysis {
        axis: r.axis,
        answer,
        bound,
        slas: a.slas.clone(),
        max_error_rate: a.max_error_rate,
        iterations,
        search,
        bracket: if has_slas || a.search.is_some() {
            [r.lo, r.hi]
        } else {
            [None, None]
        },
        boundary,
        knee,
        knee_undecided,
        planning,
        skipped: r.skipped(),
    }
}

/// The curve of the named levels (what the knee is read from).
fn curve_of(named: &[&LevelSummary]) -> Vec<CurvePoint> {
    let named_levels: Vec<LevelSummary> = named.iter().map(|l| (*l).clone()).collect();
    curve(&named_levels)
}

/// What [`analyse`]'s steps read: the run's limits, its levels on the axis, those that may be
/// named, and the points the search judges.
struct Reading<'a> {
    a: &'a Analysis,
    limits: SlaSet,
    axis: Axis,
    /// The levels on the run's axis.
    levels: &'a [LevelSummary],
    /// The qualified levels: the only ones the answer, the knee and the ideal may name.
    named: Vec<&'a LevelSummary>,
    /// Each point's position among the run's measurements.
    orders: Vec<u32>,
    pts: Vec<Point>,
    /// The bracket: the highest passing level, and the lowest above it that did not pass.
    lo: Option<u32>,
    hi: Option<u32>,
}

impl<'a> Reading<'a> {
    fn new(a: &'a Analysis, by_rate: bool, levels: &'a [LevelSummary]) -> Reading<'a> {
        let limits = a.limits();
        let ordered = ordered_points(&limits, levels);
        let orders: Vec<u32> = ordered.iter().map(|(o, _)| *o).collect();
        let pts: Vec<Point> = ordered.into_iter().map(|(_, p)| p).collect();
        let (lo, hi) = bracket(&pts);
        Reading {
            a,
            axis: if by_rate {
                Axis::Rate
            } else {
                Axis::Concurrency
            },
            named: qualified(&limits, levels),
            limits,
            levels,
            orders,
            pts,
            lo,
            hi,
        }
    }

    fn has_slas(&self) -> bool {
        !self.a.slas.is_empty()
    }

    /// The iteration table: a row per level of the run, with the search's reason for the
    /// levels on the axis.
    fn iteration_rows(&self, all: &[LevelSummary]) -> Vec<IterationRow> {
        let whys = self.a.search.map(|cfg| search::history(&cfg, &self.pts));
        all.iter()
            .map(|l| {
                if l.partial || !self.levels.iter().any(|x| x.index == l.index) {
                    return row(&self.limits, l, None);
                }
                // a level's reason is its first measurement's
                let at = self.orders.iter().position(|o| *o == first_order(l));
                let why = whys
                    .as_ref()
                    .zip(at)
                    .and_then(|(w, at)| w.get(at).copied().flatten());
                row(&self.limits, l, why)
            })
            .collect()
    }

    /// The search's result: its outcome, or where it stood when cut short.
    fn search(&self, cfg: SearchConfig) -> SearchResult {
        let outcome = match search::decide(&cfg, &self.pts) {
            Step::Done(o) => o,
            // cut short (interrupted): report where it stood
            Step::Measure { .. } => outcome_now(&cfg, &self.pts),
        };
        search_result(&self.limits, &self.named, self.levels, outcome)
    }

    /// The planning numbers: the ideal balance, the right size, the breaking point and the
    /// warnings.
    fn planning(&self, knee: Option<&Knee>, boundary: Option<BoundaryRange>) -> Planning {
        let (ideal, basis) = self.ideal(knee, boundary);
        let right = ideal
            .as_ref()
            .and_then(|i| right_size(&self.a.capacity, i, &capacity_curve(&self.named)));
        let warnings = self.warnings(ideal.as_ref(), right.as_ref());
        Planning {
            ideal,
            ideal_basis: basis,
            breaking_point: if self.has_slas() {
                breaking_point(&self.pts)
            } else {
                None
            },
            right_size: right,
            warnings,
        }
    }

    /// The ideal balance and what it rests on (`knee`, `max_throughput` or `sla`), with the
    /// range it may lie in.
    fn ideal(
        &self,
        knee: Option<&Knee>,
        boundary: Option<BoundaryRange>,
    ) -> (Option<IdealPoint>, &'static str) {
        let named = &self.named;
        let (mut ideal, basis) = if !self.has_slas() {
            match knee {
                Some(k) => (ideal_at(named, k.concurrency), "knee"),
                None => (best_throughput(named, |_| true), "max_throughput"),
            }
        } else {
            let (lo, hi) = (self.lo, self.hi);
            let passing = |c: u32| lo.is_some_and(|l| c <= l) && hi.is_none_or(|h| c < h);
            (
                best_throughput(named, |l| passing(l.load()) && self.limits.passes(l)),
                "sla",
            )
        };
        if let Some(i) = ideal.as_mut() {
            i.range = match (basis, knee) {
                ("knee", Some(k)) => k.below.map(|b| [b as f64, k.concurrency as f64]),
                // the ideal is the highest passing level: it moves with the SLA boundary
                ("sla", _) if self.lo == Some(i.concurrency) => boundary.map(|b| [b.low, b.high]),
                _ => None,
            };
        }
        (ideal, basis)
    }

    /// The planning warnings: too few samples to decide, a peak the levels do not cover, no
    /// capacity to size by.
    fn warnings(&self, ideal: Option<&IdealPoint>, right: Option<&RightSize>) -> Vec<String> {
        let a = self.a;
        // with no SLA and no search nothing waits on a verdict: the default error limit's
        // uncertainty on a short sweep is not worth a warning
        let mut warnings = if self.has_slas() || a.search.is_some() {
            too_few_samples(&self.limits, self.levels, self.axis)
        } else {
            Vec::new()
        };
        if let (Some(peak), Some(i)) = (a.capacity.peak, ideal) {
            let highest = self.levels.iter().map(|l| l.load()).max().unwrap_or(0);
            warnings.extend(peak_coverage_warning(
                peak,
                i,
                highest,
                self.axis == Axis::Rate,
                a.capacity.headroom,
                right,
            ));
        }
        if a.capacity.peak.is_some() && ideal.is_none() {
            warnings.push("no level met the SLA: no capacity to size instances by".into());
        }
        warnings
    }

    /// What the CI gate compares: the search's answer, else the highest passing level (with
    /// SLAs) or the ideal balance (without).
    fn answer(&self, search: Option<&SearchResult>, ideal: Option<&IdealPoint>) -> Option<Answer> {
        match (search, self.has_slas()) {
            (Some(s), _) => s.outcome.max_passing.zip(s.output_tps_at_answer),
            (None, true) => self
                .lo
                .and_then(|c| ideal_at(&self.named, c))
                .map(|i| (i.concurrency, i.output_tps)),
            (None, false) => ideal.map(|i| (i.concurrency, i.output_tps)),
        }
        .map(|(concurrency, output_tps)| Answer {
            concurrency,
            output_tps,
        })
    }

    /// The complete levels that may not be named, and why.
    fn skipped(&self) -> Vec<Skipped> {
        self.levels
            .iter()
            .filter(|l| !l.partial)
            .filter_map(|l| {
                skip_reason(&self.limits, l).map(|reason| Skipped {
                    concurrency: l.load(),
                    reason,
                })
            })
            .collect()
    }
}

/// The breaking point: the lowest held level that broke a limit with its whole interval (a
/// decided fail, as it stands: a level measured again is judged on all its requests). An
/// uncertain level, or one not held, is never the breaking point.
fn breaking_point(pts: &[Point]) -> Option<u32> {
    standing(pts)
        .into_iter()
        .filter(|p| p.held && p.failed())
        .map(|p| p.concurrency)
        .min()
}

/// A warning per threshold that some levels could not decide for want of samples: their
/// verdict is uncertain and they had fewer values than the threshold needs to pass at all.
/// A search's screens are left out: they were meant to steer, not to decide.
fn too_few_samples(limits: &SlaSet, levels: &[LevelSummary], axis: Axis) -> Vec<String> {
    limits
        .0
        .iter()
        .filter_map(|t| {
            let need = min_samples(t);
            let short: Vec<String> = levels
                .iter()
                .filter(|l| !l.partial && !undecided_screen(limits, l))
                .filter(|l| sample_count(t, l) < need)
                .filter(|l| {
                    limits
                        .check(l)
                        .iter()
                        .any(|c| c.threshold == *t && c.verdict == Verdict::Uncertain)
                })
                .map(|l| {
                    let had = sample_count(t, l);
                    format!("{} ({had}, {} more)", axis.load(l.load()), need - had)
                })
                .collect();
            (!short.is_empty()).then(|| {
                format!(
                    "{} is decided (pass or fail) only on at least {need} {} per level; these \
                     levels had fewer and stay uncertain: {} (raise --requests)",
                    t.describe(),
                    if t.metric == SlaMetric::ErrorRate {
                        "requests"
                    } else {
                        "successful requests"
                    },
                    short.join(", ")
                )
            })
        })
        .collect()
}

/// (concurrency, output tok/s, req/s) of the named levels, sorted: what capacity looks like
/// between measured levels.
fn capacity_curve(named: &[&LevelSummary]) -> Vec<(f64, f64, f64)> {
    let mut cs: Vec<u32> = named.iter().map(|l| l.load()).collect();
    cs.sort_unstable();
    cs.dedup();
    cs.into_iter()
        .filter_map(|c| ideal_at(named, c))
        .map(|i| (i.concurrency as f64, i.output_tps, i.rps))
        .collect()
}

/// The named level with the highest throughput (the level's throughput, output tok/s) among
/// those `ok` accepts.
fn best_throughput(
    named: &[&LevelSummary],
    ok: impl Fn(&LevelSummary) -> bool,
) -> Option<IdealPoint> {
    let c = named
        .iter()
        .filter(|l| ok(l))
        .max_by(|a, b| a.sustained_tps().total_cmp(&b.sustained_tps()))?
        .load();
    ideal_at(named, c)
}

fn search_result(
    limits: &SlaSet,
    named: &[&LevelSummary],
    levels: &[LevelSummary],
    outcome: Outcome,
) -> SearchResult {
    let observed = |c: Option<u32>, j: usize| {
        let c = c?;
        mean(
            levels
                .iter()
                .filter(|l| l.load() == c && !l.partial)
                .filter_map(|l| crate::plan::judge::observe(&limits.0[j], l).0),
        )
    };
    let (lo, hi) = (outcome.max_passing, outcome.first_failing);
    // the binding SLA breaks first: the one furthest over its limit at the first fail, else
    // the one closest to it at the answer
    let ratio =
        |c: Option<u32>, j: usize| observed(c, j).map_or(f64::INFINITY, |o| o / limits.0[j].limit);
    let j = (0..limits.0.len()).max_by(|x, y| {
        let (rx, ry) = if hi.is_some() {
            (ratio(hi, *x), ratio(hi, *y))
        } else {
            (ratio(lo, *x), ratio(lo, *y))
        };
        rx.total_cmp(&ry)
    });
    SearchResult {
        output_tps_at_answer: lo.and_then(|c| ideal_at(named, c)).map(|i| i.output_tps),
        binding_sla: j.map(|j| BindingSla {
            threshold: limits.0[j],
            observed_at_answer: observed(lo, j),
            observed_at_first_failing: observed(hi, j),
        }),
        bracket: [lo, hi],
        outcome,
    }
}

#[cfg(test)]
#[path = "analysis_tests.rs"]
mod tests;
