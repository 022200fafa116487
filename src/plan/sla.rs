//! SLA thresholds (SPEC "SLA thresholds"): what each measures, its default statistic, parsing
//! of `p99:800ms`-style values, and the verdict of one level against a set of thresholds.

use crate::metrics::LevelSummary;
use serde::Serialize;
use std::fmt;

/// What an SLA limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
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
    /// The SPEC's default statistic for this metric.
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
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
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
            crate::config::values::parse_fraction(value)?
        } else {
            let d = crate::config::values::parse_duration(value)?;
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

    /// What the level measured for this threshold; `None` when it cannot say (e.g. every
    /// request failed, or TTFT without streaming).
    pub fn observe(&self, s: &LevelSummary) -> Option<f64> {
        if self.metric == SlaMetric::ErrorRate {
            return Some(s.error_rate);
        }
        let stats = match self.metric {
            SlaMetric::Ttft => s.time_to_first_token.as_ref(),
            SlaMetric::Tpot => s.inter_token_latency.as_ref(),
            _ => s.request_latency.as_ref(),
        }?;
        match self.stat {
            Statistic::Avg => Some(stats.avg),
            Statistic::Max => Some(stats.max),
            Statistic::P(q) => stats.percentile(q as f64),
        }
    }

    /// `p99 e2e < 50000 ms`.
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

/// One threshold checked against one level.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SlaCheck {
    #[serde(flatten)]
    pub threshold: SlaThreshold,
    /// What was measured (`None`: nothing to measure, which fails).
    pub observed: Option<f64>,
    pub pass: bool,
}

impl SlaCheck {
    /// observed / limit: above 1 breaches. Unmeasurable counts as a large breach.
    pub fn ratio(&self) -> f64 {
        match self.observed {
            Some(o) if self.threshold.limit > 0.0 => o / self.threshold.limit,
            Some(o) if o <= 0.0 => 0.0,
            _ => f64::INFINITY,
        }
    }
}

/// The thresholds of one search (at least one).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(transparent)]
pub struct SlaSet(pub Vec<SlaThreshold>);

impl SlaSet {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Checks every threshold against a level. A level whose error rate is 1 (nothing
    /// succeeded) fails every latency threshold, as it has nothing to measure.
    pub fn check(&self, s: &LevelSummary) -> Vec<SlaCheck> {
        self.0
            .iter()
            .map(|t| {
                let observed = t.observe(s);
                SlaCheck {
                    threshold: *t,
                    observed,
                    pass: observed.is_some_and(|o| o <= t.limit),
                }
            })
            .collect()
    }

    /// Whether a level meets every threshold.
    pub fn passes(&self, s: &LevelSummary) -> bool {
        self.check(s).iter().all(|c| c.pass)
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
    fn values_format_in_their_units() {
        assert_eq!(fmt_value(SlaMetric::E2e, 50_000.0), "50.0 s");
        assert_eq!(fmt_value(SlaMetric::Ttft, 1500.0), "1.50 s");
        assert_eq!(fmt_value(SlaMetric::Ttft, 812.4), "812 ms");
        assert_eq!(fmt_value(SlaMetric::Tpot, 4.257), "4.26 ms");
        assert_eq!(fmt_value(SlaMetric::ErrorRate, 0.02), "2.0 %");
    }
}
