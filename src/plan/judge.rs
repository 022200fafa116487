//! Judging a level against SLA thresholds (see `docs/search.md`): what the level measured
//! for each threshold, with its 95 % interval (order-statistic bounds for percentiles, a
//! t-interval for means, Wilson for the error rate), and the verdict. The threshold and
//! verdict types are data in [`crate::record::sla`].

use crate::metrics::batch::Plain;
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
        // the level's own interval of the mean (batch means: widened where its requests
        // moved together in time); the t-interval of independent values where the stats
        // carry none (an import)
        Statistic::Avg => (
            Some(stats.avg),
            Some(
                stats
                    .interval(None)
                    .unwrap_or_else(|| mean_interval(stats.avg, stats.std, stats.count)),
            ),
        ),
        // the largest value seen is what it is: no interval to widen it
        Statistic::Max => (Some(stats.max), Some(Interval::exact(stats.max))),
        Statistic::P(q) => (stats.percentile(q as f64), stats.interval(Some(q as f64))),
    }
}

/// The verdict the plain rule gives `t` on `s` where the level's interval leaves it open
/// (`docs/search.md`, "Plain verdicts"): a fail, where every block of the level's requests,
/// read on its own, puts the percentile far past the limit. Only for a percentile, and only
/// where the level counted its values against this very limit (its run's SLA on the
/// metric); `None` otherwise.
pub fn plain(t: &SlaThreshold, s: &LevelSummary) -> Option<Verdict> {
    let Statistic::P(q) = t.stat else {
        return None;
    };
    let stats = match t.metric {
        SlaMetric::Ttft => s.time_to_first_token.as_ref(),
        SlaMetric::Tpot => s.inter_token_latency.as_ref(),
        SlaMetric::E2e => s.request_latency.as_ref(),
        SlaMetric::ErrorRate => None,
    }?;
    let past = stats.past_limit.as_ref()?;
    if (past.limit - t.limit).abs() > 1e-9 * t.limit.abs().max(1.0) {
        return None;
    }
    Some(match past.plain(f64::from(q) / 100.0)? {
        Plain::Above => Verdict::Fail,
    })
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
                if c.verdict == Verdict::Uncertain {
                    if let Some(plain) = plain(t, s) {
                        c.verdict = plain;
                        c.plain = true;
                    }
                }
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

    /// 1,024 requests at concurrency 512 against 256 batch slots, in start order: the first
    /// 255 found a slot and took `fast`, the other 769 queued and took `slow(k)`, k = 0..=1
    /// (the search's level 512 had 86, 340 and 342 of its three blocks past the limit).
    fn queued(fast: (f64, f64), slow: impl Fn(f64) -> (f64, f64)) -> Vec<(f64, f64)> {
        (0..1024)
            .map(|i| match i {
                0..255 => fast,
                _ => slow((i - 255) as f64 / 768.0),
            })
            .collect()
    }

    #[test]
    fn plain_misses_are_decided_and_every_interval_holds_its_estimate() {
        use crate::metrics::fixtures::timed_level;
        use crate::metrics::RequestLimits;
        let e2e = SlaThreshold::parse(SlaMetric::E2e, "1.5s").unwrap();
        let ttft = SlaThreshold::parse(SlaMetric::Ttft, "500ms").unwrap();
        let p50 = SlaThreshold::parse(SlaMetric::E2e, "p50:500ms").unwrap();
        let limits = |t: &SlaThreshold| match t.metric {
            SlaMetric::Ttft => RequestLimits {
                ttft_ms: Some(t.limit),
                ..Default::default()
            },
            _ => RequestLimits {
                e2e_ms: Some(t.limit),
                ..Default::default()
            },
        };
        // (what, the SLA, requests in start order, concurrency, observed, verdict, by the
        // plain rule)
        type Row = (
            &'static str,
            SlaThreshold,
            Vec<(f64, f64)>,
            u32,
            f64,
            Verdict,
            bool,
        );
        let table: [Row; 5] = [
            (
                // the search's level 512: e2e p99 1.25x its limit on one batch of 1,024; the
                // blocks' shares past the limit (0.25, 1, 1) made its design effect so large
                // that the lower bound's rank scaled past the estimate's, to the largest value
                "e2e p99 at 1.25x the limit, one batch",
                e2e,
                queued((50.0, 900.0), |k| (400.0, 1510.0 + 370.0 * k)),
                512,
                1875.0,
                Verdict::Fail,
                false,
            ),
            (
                // the same level's TTFT p95, twice its limit, its interval open on both sides
                // for the same reason: every block on its own puts the p95 above 500 ms
                "TTFT p95 at 2x the limit, one batch",
                ttft,
                queued((50.0, 900.0), |k| (900.0 + 200.0 * k, 1900.0 + 200.0 * k)),
                512,
                1086.0,
                Verdict::Fail,
                true,
            ),
            (
                // far within: the interval decides, no block needs reading
                "e2e p50 well within",
                p50,
                (0..1024)
                    .map(|i| (10.0, 100.0 + (i % 100) as f64))
                    .collect(),
                128,
                148.1,
                Verdict::Pass,
                false,
            ),
            (
                // a slow first third: one block on each side, so nothing is plain
                "TTFT p95 past the limit in one block of three",
                ttft,
                (0..1024)
                    .map(|i| {
                        if i < 342 {
                            (900.0, 1900.0)
                        } else {
                            (100.0, 1100.0)
                        }
                    })
                    .collect(),
                256,
                900.0,
                Verdict::Uncertain,
                false,
            ),
            (
                // at the limit: 1 % of the values past it, spread evenly
                "e2e p99 at its limit",
                e2e,
                (0..1024)
                    .map(|i| (10.0, if i % 100 == 99 { 1600.0 } else { 1400.0 }))
                    .collect(),
                16,
                1400.0,
                Verdict::Uncertain,
                false,
            ),
        ];
        for (what, t, times, concurrency, observed, verdict, plain) in table {
            let level = timed_level(concurrency, limits(&t), &times);
            let c = &SlaSet(vec![t]).check(&level)[0];
            let seen = c.observed.unwrap();
            assert!((seen - observed).abs() <= 0.002 * observed, "{what}: {c:?}");
            assert_eq!((c.verdict, c.plain), (verdict, plain), "{what}: {c:?}");
            assert!(c.ci.unwrap().holds(seen), "{what}: {c:?}");
            assert_eq!(level.intervals_hold_estimates(), Ok(()), "{what}");
        }
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
