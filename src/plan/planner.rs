//! The [`LevelPlanner`]s the engine drives: the SLA search and a sweep that may refine its
//! knee. Both decide only from the finished levels, judge each level against the run's SLAs
//! (the error-rate limit included), and report the run's analysis for `summary.json`. The
//! search also asks for more requests while a level's verdict is uncertain (adaptive
//! sampling, `docs/search.md`).

use super::analysis::{analyse, points, Analysis};
use super::knee::{refine_next, DEFAULT_MIN_GAIN, REFINE_MAX_EXTRA, REFINE_RATIO};
use super::search::{decide, Step};
use super::search_config::SearchConfig;
use crate::metrics::summary::load_to_rps;
use crate::metrics::{LevelSummary, RequestLimits};
use crate::plan::judge::{min_samples, SlaSet};
use crate::record::sla::{SlaMetric, Verdict};
use crate::workload::arrivals::LoadShape;
use std::sync::Arc;

/// What a level runs.
#[derive(Debug, Clone, PartialEq)]
pub enum LevelLoad {
    /// A closed loop of this many workers.
    Concurrency(u32),
    /// An open loop: requests arrive as the shape says (see `docs/open-loop.md`).
    Open(LoadShape),
    /// An open loop replaying intended send times (ns since the level's start), described
    /// by a [`LoadShape::Replay`].
    Replay {
        times: Arc<Vec<u64>>,
        shape: LoadShape,
    },
}

impl LevelLoad {
    /// The concurrency, for a closed loop.
    pub fn concurrency(&self) -> Option<u32> {
        match self {
            LevelLoad::Concurrency(c) => Some(*c),
            _ => None,
        }
    }
}

/// Decides a run's levels from the finished ones and judges each level. The engine drives
/// it; every method is a pure function of its input.
pub trait LevelPlanner: Send + Sync {
    /// The next level to run, or `None` when the plan is complete.
    fn next(&mut self, finished: &[LevelSummary]) -> Option<LevelLoad>;
    /// The plan as recorded in `run.json`.
    fn describe(&self) -> serde_json::Value;
    /// The highest concurrency the plan may run (what the open-file limit must hold); 0
    /// for open-loop levels, whose requests in flight are not fixed.
    fn max_concurrency(&self) -> u32;
    /// Whether the plan runs open-loop levels (rates, schedules, a replay).
    fn open_loop(&self) -> bool {
        false
    }
    /// What the finished levels mean under this plan (search result, knee, planning
    /// numbers, iteration table): an object whose keys are added to `summary.json`.
    fn report(&self, _finished: &[LevelSummary]) -> serde_json::Value {
        serde_json::Value::Null
    }
    /// The per-request latency limits goodput counts against.
    fn goodput_limits(&self) -> RequestLimits {
        RequestLimits::default()
    }
    /// Fills `level.slas` and `level.verdict` (before the level file is written).
    fn judge(&self, _level: &mut LevelSummary) {}
    /// The most requests a level whose first batch is `base` may run; `base` when the plan
    /// never extends a level.
    fn request_cap(&self, base: u64) -> u64 {
        base
    }
    /// The fewest requests a level should run for its verdict to be decidable (what an
    /// open-loop level sends at least, when no count is given).
    fn min_requests(&self) -> u64 {
        1
    }
    /// Whether a level (a snapshot of one still running) needs more requests to decide.
    fn needs_more(&self, _level: &LevelSummary) -> bool {
        false
    }
    /// What deciding a level will cost when `asked` requests (`--requests`) cannot decide its
    /// SLAs, said once before the first level; `None` when they can.
    fn deciding_note(&self, _asked: u64) -> Option<String> {
        None
    }
    /// Whether a closed-loop concurrency measured again joins its earlier measurement (one
    /// level, one verdict on all its requests) instead of running as a level of its own.
    fn pools(&self) -> bool {
        false
    }
    /// Whether the level [`LevelPlanner::next`] just returned is a screen: its first batch
    /// only, whatever its verdict (the search decides only the levels its answer rests on).
    fn screening(&self) -> bool {
        false
    }
    /// How many levels may still run after the finished ones and the one
    /// [`LevelPlanner::next`] just returned: the fewest and the most (what the dashboard's
    /// time remaining is made of).
    fn levels_left(&self, _finished: &[LevelSummary]) -> [u32; 2] {
        [0, 0]
    }
}

/// Judges a level against `limits`.
fn judge_with(limits: &SlaSet, level: &mut LevelSummary) {
    level.slas = limits.check(level);
    level.verdict = Some(crate::plan::judge::level_verdict(&level.slas, level));
}

/// Per-request limits from the latency thresholds: a request meets a threshold when its own
/// value is within the limit, whatever statistic the threshold compares.
fn goodput_of(limits: &SlaSet) -> RequestLimits {
    let mut out = RequestLimits::default();
    for t in limits.latency() {
        let slot = match t.metric {
            SlaMetric::Ttft => &mut out.ttft_ms,
            SlaMetric::Tpot => &mut out.itl_ms,
            _ => &mut out.e2e_ms,
        };
        *slot = Some(slot.map_or(t.limit, |l: f64| l.min(t.limit)));
    }
    out
}

/// The fewest requests with which every threshold of `limits` can pass (see
/// [`crate::plan::judge::min_samples`]).
pub fn min_decisive_samples(limits: &SlaSet) -> u64 {
    limits.0.iter().map(min_samples).max().unwrap_or(1)
}

/// How many batches a level may run by default.
pub const DEFAULT_BATCHES: u64 = 8;

/// `rightsize search`: the next level is whatever [`decide`] says. By rate (`--by rate`), the
/// search's bounds and levels are rates in hundredths of a request per second.
#[derive(Debug, Clone)]
pub struct SearchPlanner {
    pub config: SearchConfig,
    pub analysis: Analysis,
    pub by_rate: bool,
    /// The level `next` returned is to be decided (not a screen).
    deciding: bool,
}

impl SearchPlanner {
    pub fn new(config: SearchConfig, mut analysis: Analysis) -> Self {
        analysis.search = Some(config);
        SearchPlanner {
            config,
            analysis,
            by_rate: false,
            deciding: true,
        }
    }

    /// The same search over request rates (bounds in hundredths of a request/s).
    pub fn by_rate(config: SearchConfig, analysis: Analysis) -> Self {
        SearchPlanner {
            by_rate: true,
            ..SearchPlanner::new(config, analysis)
        }
    }
}

impl LevelPlanner for SearchPlanner {
    fn next(&mut self, finished: &[LevelSummary]) -> Option<LevelLoad> {
        let step = decide(&self.config, &points(&self.analysis.limits(), finished));
        if let Step::Measure { why, .. } = &step {
            self.deciding = why.decides();
        }
        match step {
            Step::Measure { concurrency, .. } if self.by_rate => {
                Some(LevelLoad::Open(LoadShape::Rate {
                    rps: load_to_rps(concurrency),
                }))
            }
            Step::Measure { concurrency, .. } => Some(LevelLoad::Concurrency(concurrency)),
            Step::Done(_) => None,
        }
    }
    fn open_loop(&self) -> bool {
        self.by_rate
    }
    fn max_concurrency(&self) -> u32 {
        if self.by_rate {
            0
        } else {
            self.config.max
        }
    }
    fn describe(&self) -> serde_json::Value {
        serde_json::json!({
            "kind": "search",
            "by": if self.by_rate { "rate" } else { "concurrency" },
            "concurrency_min": self.config.min,
            "concurrency_max": self.config.max,
            "search_max_iterations": self.config.max_iterations,
            "tolerance": self.config.tolerance,
            "confirm": self.config.confirm,
            "max_requests_per_level": self.config.max_requests_per_level,
            "max_error_rate": self.analysis.max_error_rate,
            "slas": self.analysis.slas,
        })
    }
    fn report(&self, finished: &[LevelSummary]) -> serde_json::Value {
        serde_json::to_value(analyse(&self.analysis, finished)).unwrap_or_default()
    }
    fn goodput_limits(&self) -> RequestLimits {
        goodput_of(&self.analysis.slas)
    }
    fn judge(&self, level: &mut LevelSummary) {
        judge_with(&self.analysis.limits(), level)
    }
    fn request_cap(&self, base: u64) -> u64 {
        if self.screening() {
            return base;
        }
        self.decided_cap(base)
    }
    fn needs_more(&self, level: &LevelSummary) -> bool {
        self.analysis.limits().verdict(level) == Verdict::Uncertain
    }
    fn min_requests(&self) -> u64 {
        min_decisive_samples(&self.analysis.limits())
    }
    fn pools(&self) -> bool {
        !self.by_rate
    }
    fn screening(&self) -> bool {
        // a rate level cannot be resumed: every one is measured until decided
        !self.by_rate && !self.deciding
    }
    fn levels_left(&self, finished: &[LevelSummary]) -> [u32; 2] {
        // the search may end after any level; its budget counts each load once (the running
        // one may be new), and each load may be measured once more
        let loads: std::collections::BTreeSet<u32> = finished.iter().map(|l| l.load()).collect();
        let budget = self
            .config
            .max_iterations
            .saturating_sub(loads.len() as u32 + 1);
        [0, budget]
    }
    fn deciding_note(&self, asked: u64) -> Option<String> {
        // a rate level sends what its SLAs need by itself
        if self.by_rate {
            return None;
        }
        let limits = self.analysis.limits();
        let need = min_decisive_samples(&limits);
        if need <= asked || asked == 0 {
            return None;
        }
        // every SLA the asked requests cannot decide, with what it needs
        let short: Vec<String> = limits
            .0
            .iter()
            .map(|t| (t, min_samples(t)))
            .filter(|(_, n)| *n > asked)
            .map(|(t, n)| format!("{} on {n}", t.describe()))
            .collect();
        let batches = need.div_ceil(asked);
        Some(format!(
            "a verdict can be decided only on enough requests ({}), and --requests is {asked}: \
             the levels that steer the search run one batch of {asked} each (a screen: it leans \
             by what it observed, undecided), and the levels the answer rests on (the \
             bracket's ends) run batches of {asked} until their verdict is decided: a pass \
             needs at least {batches} batches, {} requests, up to {} requests \
             (--max-requests-per-level)",
            short.join(", "),
            batches * asked,
            self.decided_cap(asked)
        ))
    }
}

impl SearchPlanner {
    /// The request cap of a level measured until decided whose first batch is `base`.
    fn decided_cap(&self, base: u64) -> u64 {
        match self.config.max_requests_per_level {
            Some(cap) => u64::from(cap).max(base),
            None => (DEFAULT_BATCHES * base).max(4 * min_decisive_samples(&self.analysis.limits())),
        }
    }
}

/// `rightsize sweep`: the given levels in order, then (with `refine_knee`) up to
/// [`REFINE_MAX_EXTRA`] levels between the two that bracket the knee, until they are within
/// [`REFINE_RATIO`] of each other. Each level runs its request count, no more.
///
/// Open-loop sweeps run `open` after `levels`: rates, a schedule or a replay. With
/// `auto_rates` (`--rates auto`), `levels` are the synchronous and saturated probes and the
/// rates are spread between their request rates once both have run ([`spread_rates`]).
#[derive(Debug, Clone)]
pub struct SweepPlanner {
    pub levels: Vec<u32>,
    pub refine_knee: bool,
    pub analysis: Analysis,
    /// Open-loop levels run after `levels`.
    pub open: Vec<LevelLoad>,
    /// How many rates to spread between the two probes (`--rates auto`).
    pub auto_rates: Option<u32>,
}

/// `n` rates evenly spread above `sync` up to `max` (requests/s, to 0.01), the last one at
/// `max`; none when either probe sent nothing.
pub fn spread_rates(sync: f64, max: f64, n: u32) -> Vec<f64> {
    if !(sync > 0.0 && max > 0.0) || n == 0 {
        return Vec::new();
    }
    let hi = max.max(sync);
    let mut out: Vec<f64> = (1..=n)
        .map(|k| ((sync + (hi - sync) * f64::from(k) / f64::from(n)) * 100.0).round() / 100.0)
        .filter(|r| *r >= 0.01)
        .collect();
    out.dedup();
    out
}

impl SweepPlanner {
    /// The levels in order, nothing added, no SLA but the default error-rate limit.
    pub fn fixed(levels: Vec<u32>) -> Self {
        SweepPlanner {
            levels,
            refine_knee: false,
            analysis: Analysis::default(),
            open: Vec::new(),
            auto_rates: None,
        }
    }

    /// Open-loop levels in order (`rightsize sweep --rates`, a `--schedule`, a replay).
    pub fn open(open: Vec<LevelLoad>, analysis: Analysis) -> Self {
        SweepPlanner {
            levels: Vec::new(),
            refine_knee: false,
            analysis,
            open,
            auto_rates: None,
        }
    }

    /// Closed-loop levels to run before the open ones.
    pub fn with_probes(self, levels: Vec<u32>) -> Self {
        SweepPlanner { levels, ..self }
    }
}

impl LevelPlanner for SweepPlanner {
    fn next(&mut self, finished: &[LevelSummary]) -> Option<LevelLoad> {
        if let Some(c) = self.levels.get(finished.len()) {
            return Some(LevelLoad::Concurrency(*c));
        }
        if let (Some(n), true, [sync, sat, ..]) = (self.auto_rates, self.open.is_empty(), finished)
        {
            let rate = |l: &LevelSummary| if l.partial { 0.0 } else { l.requests_per_sec() };
            self.open = spread_rates(rate(sync), rate(sat), n)
                .into_iter()
                .map(|rps| LevelLoad::Open(LoadShape::Rate { rps }))
                .collect();
        }
        if self.open_loop() {
            return self.open.get(finished.len() - self.levels.len()).cloned();
        }
        if !self.refine_knee {
            return None;
        }
        let extra = (finished.len() - self.levels.len()) as u32;
        refine_next(
            &super::analysis::qualified_curve(&self.analysis, finished),
            DEFAULT_MIN_GAIN,
            REFINE_RATIO,
            extra,
            REFINE_MAX_EXTRA,
        )
        .map(LevelLoad::Concurrency)
    }
    fn open_loop(&self) -> bool {
        !self.open.is_empty() || self.auto_rates.is_some()
    }
    fn max_concurrency(&self) -> u32 {
        self.levels.iter().copied().max().unwrap_or(0)
    }
    fn levels_left(&self, finished: &[LevelSummary]) -> [u32; 2] {
        let after = finished.len() + 1;
        let planned = self.levels.len()
            + match self.auto_rates {
                Some(n) if self.open.is_empty() => n as usize,
                _ => self.open.len(),
            };
        let fixed = planned.saturating_sub(after) as u32;
        // refining the knee adds levels once the planned ones ran, as many as it needs
        let refine = if self.refine_knee && !self.open_loop() {
            let extra = after.saturating_sub(self.levels.len()) as u32;
            REFINE_MAX_EXTRA.saturating_sub(extra)
        } else {
            0
        };
        [fixed, fixed + refine]
    }
    fn describe(&self) -> serde_json::Value {
        let rates: Vec<f64> = self
            .open
            .iter()
            .filter_map(|l| match l {
                LevelLoad::Open(LoadShape::Rate { rps }) => Some(*rps),
                _ => None,
            })
            .collect();
        let shapes: Vec<&LoadShape> = self
            .open
            .iter()
            .filter_map(|l| match l {
                LevelLoad::Open(s @ (LoadShape::Steps { .. } | LoadShape::Ramp { .. })) => Some(s),
                LevelLoad::Replay { shape, .. } => Some(shape),
                _ => None,
            })
            .collect();
        serde_json::json!({
            "kind": "sweep",
            "rates": if self.auto_rates.is_some() { serde_json::json!("auto") } else { serde_json::json!(rates) },
            "auto_rates": self.auto_rates,
            "schedules": shapes,
            "concurrency": self.levels,
            "refine_knee": self.refine_knee,
            "max_error_rate": self.analysis.max_error_rate,
            "slas": self.analysis.slas,
        })
    }
    fn report(&self, finished: &[LevelSummary]) -> serde_json::Value {
        serde_json::to_value(analyse(&self.analysis, finished)).unwrap_or_default()
    }
    fn goodput_limits(&self) -> RequestLimits {
        goodput_of(&self.analysis.slas)
    }
    fn judge(&self, level: &mut LevelSummary) {
        judge_with(&self.analysis.limits(), level)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::sla::SlaThreshold;

    #[test]
    fn fewest_decisive_samples_table() {
        let set = |v: &[(SlaMetric, &str)]| {
            SlaSet(
                v.iter()
                    .map(|(m, s)| SlaThreshold::parse(*m, s).unwrap())
                    .collect(),
            )
        };
        let cases: &[(SlaSet, u64)] = &[
            (set(&[(SlaMetric::E2e, "1s")]), 368),
            (set(&[(SlaMetric::Ttft, "1s")]), 72),
            (set(&[(SlaMetric::E2e, "avg:1s")]), 2),
            (set(&[(SlaMetric::ErrorRate, "0.01")]), 381),
            (set(&[(SlaMetric::ErrorRate, "0.05")]), 73),
            (
                set(&[(SlaMetric::E2e, "p90:1s"), (SlaMetric::Ttft, "p50:1s")]),
                36,
            ),
            (SlaSet::default(), 1),
        ];
        for (s, want) in cases {
            assert_eq!(min_decisive_samples(s), *want, "{s:?}");
        }
    }

    #[test]
    fn search_caps_levels_at_eight_batches_or_what_the_slas_need() {
        let analysis = Analysis {
            slas: SlaSet(vec![SlaThreshold::parse(SlaMetric::E2e, "avg:1s").unwrap()]),
            ..Analysis::default()
        };
        let mut cfg = SearchConfig::default();
        let p = SearchPlanner::new(cfg, analysis.clone());
        // the default 1 % error limit needs 381 requests without an error: 4 x 381
        assert_eq!(p.request_cap(16), 1524);
        assert_eq!(p.request_cap(1024), 8192);
        cfg.max_requests_per_level = Some(100);
        let p = SearchPlanner::new(cfg, analysis);
        assert_eq!(p.request_cap(16), 100);
        assert_eq!(p.request_cap(256), 256);
        // a sweep never extends a level
        assert_eq!(SweepPlanner::fixed(vec![1]).request_cap(16), 16);
    }

    #[test]
    fn auto_rates_spread_between_the_probes() {
        assert_eq!(spread_rates(1.0, 9.0, 4), vec![3.0, 5.0, 7.0, 9.0]);
        assert_eq!(spread_rates(0.37, 2.0, 3), vec![0.91, 1.46, 2.0]);
        // a saturated level no faster than the synchronous one: one rate
        assert_eq!(spread_rates(2.0, 1.5, 3), vec![2.0]);
        assert_eq!(spread_rates(0.0, 5.0, 3), Vec::<f64>::new());
        assert_eq!(spread_rates(1.0, 5.0, 0), Vec::<f64>::new());
    }

    #[test]
    fn goodput_limits_take_each_latency_limit() {
        let slas = SlaSet(vec![
            SlaThreshold::parse(SlaMetric::E2e, "2s").unwrap(),
            SlaThreshold::parse(SlaMetric::Tpot, "p99:50ms").unwrap(),
            SlaThreshold::parse(SlaMetric::ErrorRate, "0.1").unwrap(),
        ]);
        assert_eq!(
            goodput_of(&slas),
            RequestLimits {
                ttft_ms: None,
                itl_ms: Some(50.0),
                e2e_ms: Some(2000.0),
            }
        );
    }
}
