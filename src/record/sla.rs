//! SLA thresholds and verdicts as data (see `docs/search.md`): what each threshold measures,
//! its default statistic, parsing of `p99:800ms`-style values, and one threshold's verdict on
//! one level. The level files (metrics), the planner (plan) and the consumers all use these
//! types; how a level is judged lives in `plan::judge`.

use super::Interval;
use serde::{Deserialize, Serialize};
use std::fmt;

/// What an SLA limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SlaMetric {
    /// Time to first token (ms); needs streaming.
    Ttft,
    /// Time per output token, vLLM's TPOT = AIPerf's inter-token latency (ms); needs streaming.
    Tpot,
    /// End-to-end request latency (ms).
    E2e,
    /// Fraction of failed requests (0-1).
    ErrorRate,
}

impl SlaMetric {
    /// The default statistic for this metric.
    pub fn default_stat(self) -> Statistic {
        match self {
            SlaMetric::Ttft | SlaMetric::Tpot => Statistic::P(95),
            SlaMetric::E2e => Statistic::P(99),
            SlaMetric::ErrorRate => Statistic::Avg,
        }
    }

    /// Whether it can only be measured on streamed responses.
    pub fn needs_streaming(self) -> bool {
        matches!(self, SlaMetric::Ttft | SlaMetric::Tpot)
    }

    /// The config key naming it (`ttft_sla_ms`, ...).
    pub fn key(self) -> &'static str {
        match self {
            SlaMetric::Ttft => "ttft_sla_ms",
            SlaMetric::Tpot => "tpot_sla_ms",
            SlaMetric::E2e => "e2e_sla_ms",
            SlaMetric::ErrorRate => "error_rate_sla",
        }
    }

    /// Short display name.
    pub fn label(self) -> &'static str {
        match self {
            SlaMetric::Ttft => "TTFT",
            SlaMetric::Tpot => "TPOT",
            SlaMetric::E2e => "e2e",
            SlaMetric::ErrorRate => "error rate",
        }
    }
}

/// Which statistic of the metric is compared with the limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Statistic {
    /// The mean.
    Avg,
    /// A percentile: 50, 90, 95 or 99 (what a level summary keeps).
    P(u8),
    /// The largest value.
    Max,
}

impl fmt::Display for Statistic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Statistic::Avg => write!(f, "avg"),
            Statistic::P(q) => write!(f, "p{q}"),
            Statistic::Max => write!(f, "max"),
        }
    }
}

impl Serialize for Statistic {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Statistic {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        parse_statistic(&s).map_err(serde::de::Error::custom)
    }
}

/// Parses `avg`, `max` or `pNN` (NN one of 50, 90, 95, 99).
pub fn parse_statistic(s: &str) -> Result<Statistic, String> {
    match s.trim().to_ascii_lowercase().as_str() {
        "avg" | "mean" => Ok(Statistic::Avg),
        "max" => Ok(Statistic::Max),
        p => match p.strip_prefix('p').and_then(|n| n.parse::<u8>().ok()) {
            Some(q @ (50 | 90 | 95 | 99)) => Ok(Statistic::P(q)),
            _ => Err(format!(
                "`{s}` is not a statistic (use avg, p50, p90, p95, p99 or max)"
            )),
        },
    }
}

/// One threshold: `metric`'s `stat` must not exceed `limit` (ms, or a fraction for the error
/// rate).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SlaThreshold {
    pub metric: SlaMetric,
    pub stat: Statistic,
    pub limit: f64,
}

impl SlaThreshold {
    /// Parses a flag value `[STAT:]VALUE`: a duration for latencies (`1.5s`, `p99:800ms`), a
    /// fraction for the error rate (`0.01`, `avg:0.01`).
    pub fn parse(metric: SlaMetric, s: &str) -> Result<SlaThreshold, String> {
        let (stat, value) = match s.split_once(':') {
            Some((st, v)) => (parse_statistic(st)?, v),
            None => (metric.default_stat(), s),
        };
        let limit = if metric == SlaMetric::ErrorRate {
            crate::values::parse_fraction(value)?
        } else {
            let d = crate::values::parse_duration(value)?;
            if d.is_zero() {
                return Err(format!("`{s}`: an SLA of zero can never be met"));
            }
            d.as_secs_f64() * 1e3
        };
        Ok(SlaThreshold {
            metric,
            stat,
            limit,
        })
    }

    /// The error-rate limit every analysis applies: the average error rate at most `limit`.
    pub fn error_rate(limit: f64) -> SlaThreshold {
        SlaThreshold {
            metric: SlaMetric::ErrorRate,
            stat: Statistic::Avg,
            limit,
        }
    }

    /// `p99 e2e <= 50.0 s`.
    pub fn describe(&self) -> String {
        format!(
            "{} {} <= {}",
            self.stat,
            self.metric.label(),
            fmt_value(self.metric, self.limit)
        )
    }
}

/// A value in the metric's unit, for people: `812 ms`, `1.50 s`, `2.0 %`.
pub fn fmt_value(metric: SlaMetric, v: f64) -> String {
    match metric {
        SlaMetric::ErrorRate => format!("{:.1} %", v * 100.0),
        _ if v >= 10_000.0 => format!("{:.1} s", v / 1e3),
        _ if v >= 1_000.0 => format!("{:.2} s", v / 1e3),
        _ if v >= 10.0 => format!("{v:.0} ms"),
        _ => format!("{v:.2} ms"),
    }
}

/// A level's verdict on one threshold, or on all of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The whole 95 % interval meets the limit.
    Pass,
    /// The interval straddles the limit: more requests would decide it.
    Uncertain,
    /// The whole interval breaks the limit (or nothing could be measured).
    Fail,
}

impl Verdict {
    /// Several verdicts together: any fail fails; else any uncertain is uncertain.
    pub fn all(verdicts: impl IntoIterator<Item = Verdict>) -> Verdict {
        verdicts.into_iter().max().unwrap_or(Verdict::Pass)
    }

    pub fn is_pass(self) -> bool {
        self == Verdict::Pass
    }

    /// `pass`, `FAIL`, `uncertain`: how tables show it.
    pub fn label(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Uncertain => "uncertain",
            Verdict::Fail => "FAIL",
        }
    }
}

/// One threshold checked against one level: what was measured, its 95 % interval, and the
/// verdict (`{"metric","stat","limit","observed","ci":[lo,hi],"verdict"}` in level files).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SlaCheck {
    #[serde(flatten)]
    pub threshold: SlaThreshold,
    /// What was measured (`None`: nothing to measure, e.g. every request failed).
    pub observed: Option<f64>,
    /// The 95 % interval of `observed`; `None` when the data has none (an import's
    /// percentiles), in which case the verdict compares `observed` alone.
    pub ci: Option<Interval>,
    pub verdict: Verdict,
    /// The verdict was decided by the plain rule (every block of the level on the same side
    /// of the limit) where the interval left it open (`docs/search.md`, "Plain verdicts").
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub plain: bool,
}

impl SlaCheck {
    /// Judges `observed` (with its interval, if any) against `threshold`.
    pub fn judge(threshold: SlaThreshold, observed: Option<f64>, ci: Option<Interval>) -> Self {
        let limit = threshold.limit;
        let verdict = match (observed, ci) {
            (None, _) => Verdict::Fail,
            (Some(_), Some(Interval(lo, hi))) => {
                if hi.is_some_and(|h| h <= limit) {
                    Verdict::Pass
                } else if lo.is_some_and(|l| l > limit) {
                    Verdict::Fail
                } else {
                    Verdict::Uncertain
                }
            }
            (Some(o), None) if o <= limit => Verdict::Pass,
            (Some(_), None) => Verdict::Fail,
        };
        SlaCheck {
            threshold,
            observed,
            ci,
            verdict,
            plain: false,
        }
    }

    /// observed / limit: above 1 breaches. Unmeasurable counts as a large breach.
    pub fn ratio(&self) -> f64 {
        ratio(self.observed, self.threshold.limit, f64::INFINITY)
    }

    /// The interval's ends as ratios to the limit: (optimistic, pessimistic). An unbounded
    /// side is 0 below and infinite above; without an interval both are [`SlaCheck::ratio`].
    pub fn ratio_bounds(&self) -> (f64, f64) {
        match self.ci {
            Some(Interval(lo, hi)) if self.observed.is_some() => (
                ratio(lo, self.threshold.limit, 0.0),
                ratio(hi, self.threshold.limit, f64::INFINITY),
            ),
            _ => (self.ratio(), self.ratio()),
        }
    }
}

fn ratio(v: Option<f64>, limit: f64, missing: f64) -> f64 {
    match v {
        Some(o) if limit > 0.0 => o / limit,
        Some(o) if o <= 0.0 => 0.0,
        Some(_) => f64::INFINITY,
        None => missing,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_table() {
        let cases: &[(SlaMetric, &str, Statistic, f64)] = &[
            (SlaMetric::Ttft, "1.5s", Statistic::P(95), 1500.0),
            (SlaMetric::Ttft, "p99:800ms", Statistic::P(99), 800.0),
            (SlaMetric::Tpot, "50ms", Statistic::P(95), 50.0),
            (SlaMetric::E2e, "50s", Statistic::P(99), 50_000.0),
            (SlaMetric::E2e, "avg:2s", Statistic::Avg, 2000.0),
            (SlaMetric::ErrorRate, "0.01", Statistic::Avg, 0.01),
            (SlaMetric::ErrorRate, "max:0.5", Statistic::Max, 0.5),
        ];
        for (m, s, stat, limit) in cases {
            let t = SlaThreshold::parse(*m, s).unwrap();
            assert_eq!((t.stat, t.limit), (*stat, *limit), "{s}");
        }
        assert_eq!(
            SlaThreshold::parse(SlaMetric::Ttft, "p42:1s").unwrap_err(),
            "`p42` is not a statistic (use avg, p50, p90, p95, p99 or max)"
        );
        assert!(SlaThreshold::parse(SlaMetric::ErrorRate, "2").is_err());
        assert!(SlaThreshold::parse(SlaMetric::E2e, "0s").is_err());
        assert!(SlaThreshold::parse(SlaMetric::E2e, "soon").is_err());
    }

    #[test]
    fn values_format_in_their_units() {
        assert_eq!(fmt_value(SlaMetric::E2e, 50_000.0), "50.0 s");
        assert_eq!(fmt_value(SlaMetric::Ttft, 1500.0), "1.50 s");
        assert_eq!(fmt_value(SlaMetric::Ttft, 812.4), "812 ms");
        assert_eq!(fmt_value(SlaMetric::Tpot, 4.257), "4.26 ms");
        assert_eq!(fmt_value(SlaMetric::ErrorRate, 0.02), "2.0 %");
    }

    #[test]
    fn verdicts_from_intervals_table() {
        let t = SlaThreshold::parse(SlaMetric::E2e, "100ms").unwrap();
        let i = |lo: Option<f64>, hi: Option<f64>| Some(Interval(lo, hi));
        let cases = [
            (Some(90.0), i(Some(80.0), Some(99.0)), Verdict::Pass),
            (Some(90.0), i(Some(80.0), Some(100.0)), Verdict::Pass),
            (Some(90.0), i(Some(80.0), Some(101.0)), Verdict::Uncertain),
            (Some(90.0), i(Some(80.0), None), Verdict::Uncertain),
            (Some(120.0), i(Some(100.5), None), Verdict::Fail),
            (Some(120.0), i(None, None), Verdict::Uncertain),
            (Some(99.0), None, Verdict::Pass),
            (Some(101.0), None, Verdict::Fail),
            (None, None, Verdict::Fail),
        ];
        for (observed, ci, want) in cases {
            assert_eq!(
                SlaCheck::judge(t, observed, ci).verdict,
                want,
                "{observed:?} {ci:?}"
            );
        }
        let c = SlaCheck::judge(t, Some(90.0), i(Some(80.0), None));
        assert_eq!(c.ratio_bounds(), (0.8, f64::INFINITY));
        assert_eq!(
            Verdict::all([Verdict::Pass, Verdict::Uncertain]),
            Verdict::Uncertain
        );
        assert_eq!(
            Verdict::all([Verdict::Fail, Verdict::Uncertain]),
            Verdict::Fail
        );
        assert_eq!(Verdict::all([]), Verdict::Pass);
        let json = serde_json::to_value(&c).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"metric": "e2e", "stat": "p99", "limit": 100.0,
                "observed": 90.0, "ci": [80.0, null], "verdict": "uncertain"})
        );
        assert_eq!(serde_json::from_value::<SlaCheck>(json).unwrap(), c);
    }
}
