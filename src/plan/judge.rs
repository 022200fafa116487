//! Judging a level against SLA thresholds (see `docs/search.md`): what the level measured
//! for each threshold, with its 95 % interval (order-statistic bounds for percentiles, a
//! t-interval for means, Wilson for the error rate), and the verdict. The threshold and
//! verdict types are data in [`crate::record::sla`].

use crate::metrics::ci::{mean_interval, min_samples_for_upper_bound, wilson, Z_975};
use crate::metrics::LevelSummary;
use crate::record::sla::{SlaCheck, SlaMetric, SlaThreshold, Statistic, Verdict};
use crate::record::Interval;
use serde::Serialize;

/// The error-rate limit every analysis applies when the user gives no `--error-rate-sla`
/// (`--max-error-rate`): a level cannot pass by shedding load.
pub const DEFAULT_MAX_ERROR_RATE: f64 = 0.01;

/// What a level measured for `t`, and its 95 % interval when the data gives one. `None`
/// when it cannot say (nothing succeeded; TTFT without streaming; nothing completed).
pub fn observe(t: &SlaThreshold, s: &LevelSummary) -> (Option<f64>, Option<Interval>) {
    if t.metric == SlaMetric::ErrorRate {
        let attempted = s.ok_count() + s.error_count();
        if attempted == 0 {
            return (None, None);
        }
        return (Some(s.error_rate), Some(wilson(s.error_count(), attempted)));
    }
    let stats = match t.metric {
        SlaMetric::Ttft => s.time_to_first_token.as_ref(),
        SlaMetric::Tpot => s.inter_token_latency.as_ref(),
        _ => s.request_latency.as_ref(),
    };
    let Some(stats) = stats else {
        return (None, None);
    };
    match t.stat {
        Statistic::Avg => (
            Some(stats.avg),
            Some(mean_interval(stats.avg, stats.std, stats.count)),
        ),
        // the largest value seen is what it is: no interval to widen it
        Statistic::Max => (Some(stats.max), Some(Interval::exact(stats.max))),
        Statistic::P(q) => (stats.percentile(q as f64), stats.interval(Some(q as f64))),
    }
}

/// The fewest values with which `t` can pass at all: a percentile needs enough samples for
/// an upper bound to exist (368 for p99), an error-rate limit `L` needs `z^2 (1 - L) / L`
/// requests without an error (381 for 1 %), a mean two values.
pub fn min_samples(t: &SlaThreshold) -> u64 {
    match (t.metric, t.stat) {
        (SlaMetric::ErrorRate, _) if t.limit <= 0.0 => u64::MAX,
        (SlaMetric::ErrorRate, _) if t.limit >= 1.0 => 1,
        (SlaMetric::ErrorRate, _) => (Z_975 * Z_975 * (1.0 - t.limit) / t.limit).ceil() as u64,
        (_, Statistic::P(q)) => min_samples_for_upper_bound(f64::from(q) / 100.0),
        (_, Statistic::Avg) => 2,
        (_, Statistic::Max) => 1,
    }
}

/// How many values a level had for `t`: successful requests with that metric, or every
/// finished request for the error rate.
pub fn sample_count(t: &SlaThreshold, s: &LevelSummary) -> u64 {
    let stats = match t.metric {
        SlaMetric::ErrorRate => return s.ok_count() + s.error_count(),
        SlaMetric::Ttft => s.time_to_first_token.as_ref(),
        SlaMetric::Tpot => s.inter_token_latency.as_ref(),
        SlaMetric::E2e => s.request_latency.as_ref(),
    };
    stats.map_or(0, |st| st.count)
}

/// A level's verdict from its checks: the worst of them, and a fail for a rate level stopped
/// because the server could not keep up (its finished requests may look fine: the ones that
/// would not have were cut).
pub fn level_verdict(checks: &[SlaCheck], s: &LevelSummary) -> Verdict {
    let saturated = s
        .open_loop
        .rate
        .as_ref()
        .is_some_and(|r| r.saturated.is_some());
    if saturated {
        return Verdict::Fail;
    }
    Verdict::all(checks.iter().map(|c| c.verdict))
}

/// A search's screen that its one batch left uncertain under `limits`: it bounds nothing and
/// no answer rests on it (`docs/search.md`, "Screening").
pub fn undecided_screen(limits: &SlaSet, s: &LevelSummary) -> bool {
    s.screened_only() && limits.verdict(s) == Verdict::Uncertain
}

/// The thresholds of one search (at least one).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(transparent)]
pub struct SlaSet(pub Vec<SlaThreshold>);

impl SlaSet {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Checks every threshold against a level. A level where nothing succeeded fails every
    /// latency threshold: it has nothing to measure.
    ///
    /// A threshold is decided either way only on at least [`min_samples`] values, the fewest
    /// with which it could pass: a p99 "failed" by 16 requests measured a few seconds of a
    /// server whose slow moments a longer level averages in, and contradicted levels that
    /// passed on 400. Below that a fail is uncertain: the level takes more requests.
    pub fn check(&self, s: &LevelSummary) -> Vec<SlaCheck> {
        self.0
            .iter()
            .map(|t| {
                let (observed, ci) = observe(t, s);
                let mut c = SlaCheck::judge(*t, observed, ci);
                if c.verdict == Verdict::Fail
                    && observed.is_some()
                    && sample_count(t, s) < min_samples(t)
                {
                    c.verdict = Verdict::Uncertain;
                }
                c
            })
            .collect()
    }

    /// The level's verdict on every threshold together.
    pub fn verdict(&self, s: &LevelSummary) -> Verdict {
        level_verdict(&self.check(s), s)
    }

    /// Whether a level meets every threshold with its whole interval.
    pub fn passes(&self, s: &LevelSummary) -> bool {
        self.verdict(s).is_pass()
    }

    /// These thresholds plus the error-rate limit `max_error_rate`, unless one is given.
    pub fn with_error_limit(&self, max_error_rate: f64) -> SlaSet {
        let mut out = self.clone();
        if !out.0.iter().any(|t| t.metric == SlaMetric::ErrorRate) {
            out.0.push(SlaThreshold::error_rate(max_error_rate));
        }
        out
    }

    /// The thresholds on latency (what goodput counts per request).
    pub fn latency(&self) -> impl Iterator<Item = &SlaThreshold> {
        self.0.iter().filter(|t| t.metric != SlaMetric::ErrorRate)
    }

    /// The error to give when a threshold needs streaming and the workload does not stream.
    pub fn streaming_error(&self, stream: bool) -> Option<String> {
        let t = self
            .0
            .iter()
            .find(|t| t.metric.needs_streaming() && !stream)?;
        Some(format!(
            "{} needs streamed responses to measure {}; drop --no-stream (or the profile's \
             stream = false) or remove that SLA",
            t.metric.key(),
            t.metric.label()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streaming_is_required_for_ttft_and_tpot() {
        let set = SlaSet(vec![
            SlaThreshold::parse(SlaMetric::E2e, "1s").unwrap(),
            SlaThreshold::parse(SlaMetric::Tpot, "1s").unwrap(),
        ]);
        assert_eq!(set.streaming_error(true), None);
        assert!(set
            .streaming_error(false)
            .unwrap()
            .starts_with("tpot_sla_ms needs streamed responses"));
    }

    #[test]
    fn the_error_limit_is_added_once() {
        let e2e = SlaThreshold::parse(SlaMetric::E2e, "1s").unwrap();
        let set = SlaSet(vec![e2e]).with_error_limit(0.01);
        assert_eq!(set.0, vec![e2e, SlaThreshold::error_rate(0.01)]);
        let own = SlaThreshold::parse(SlaMetric::ErrorRate, "0.3").unwrap();
        let set = SlaSet(vec![e2e, own]).with_error_limit(0.01);
        assert_eq!(set.0, vec![e2e, own]);
        assert_eq!(set.latency().count(), 1);
    }
}
