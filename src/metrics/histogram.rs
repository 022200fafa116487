//! A histogram with units in its API: hdrhistogram for percentiles, exact running moments for
//! the mean and standard deviation, exact min and max.
//!
//! Durations are recorded at microsecond resolution (3 significant figures) and reported in
//! milliseconds. Plain values (token counts, tokens/sec) are recorded at a resolution chosen by
//! the constructor and reported in their own unit.

use serde::{Deserialize, Serialize};

use super::batch::{self, PastLimit};
use super::ci::{mean_interval, order_statistic_ranks};
use crate::record::Interval;

/// The percentiles (as quantiles) whose intervals [`Stats`] carries: p50, p90, p95, p99.
const QUANTILES: [f64; 4] = [0.50, 0.90, 0.95, 0.99];

/// 95 % confidence intervals of a metric's mean and of the percentiles an SLA may name
/// (see [`super::ci`]). Absent in files written before intervals existed, and in imports.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct StatIntervals {
    /// Student's t-interval of the mean.
    pub avg: Interval,
    /// Order-statistic bounds of each percentile.
    pub p50: Interval,
    pub p90: Interval,
    pub p95: Interval,
    pub p99: Interval,
}

/// Summary statistics of one metric, shaped like an AIPerf metric object
/// (`{unit, avg, min, max, p1 .. p99, std, count}`). All values are in `unit`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Stats {
    /// Unit of every value below: `"ms"`, `"tokens"`, `"tokens/sec"`, ...
    pub unit: String,
    /// Exact arithmetic mean (not quantized by the histogram).
    pub avg: f64,
    /// Exact smallest value.
    pub min: f64,
    /// Exact largest value.
    pub max: f64,
    /// Percentiles (nearest rank on the histogram, upper edge of the bucket, clamped to
    /// `[min, max]`): relative error at most 0.1 %.
    pub p1: f64,
    pub p5: f64,
    pub p10: f64,
    pub p25: f64,
    pub p50: f64,
    pub p75: f64,
    pub p90: f64,
    pub p95: f64,
    pub p99: f64,
    /// Exact population standard deviation (numpy's default, `ddof = 0`, as AIPerf reports).
    pub std: f64,
    /// Number of recorded values.
    pub count: u64,
    /// 95 % confidence intervals of `avg` and `p50`..`p99`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci95: Option<StatIntervals>,
    /// The values past the run's SLA limit on this metric, block by block, for the plain
    /// rule (`docs/search.md`, "Plain verdicts"); absent without a limit or blocks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub past_limit: Option<PastLimit>,
}

impl Stats {
    /// The 95 % interval of the statistic `q` (a percentile in percent, or `None` for the
    /// mean), when the stats carry intervals and that statistic has one.
    pub fn interval(&self, q: Option<f64>) -> Option<Interval> {
        let ci = self.ci95.as_ref()?;
        match q {
            None => Some(ci.avg),
            Some(q) if (q - 50.0).abs() < 1e-9 => Some(ci.p50),
            Some(q) if (q - 90.0).abs() < 1e-9 => Some(ci.p90),
            Some(q) if (q - 95.0).abs() < 1e-9 => Some(ci.p95),
            Some(q) if (q - 99.0).abs() < 1e-9 => Some(ci.p99),
            Some(_) => None,
        }
    }

    /// The percentile `q` in percent (1, 5, 10, 25, 50, 75, 90, 95 or 99; 0 gives `min`, 100
    /// gives `max`). Other values return `None`.
    pub fn percentile(&self, q: f64) -> Option<f64> {
        let table = [
            (0.0, self.min),
            (1.0, self.p1),
            (5.0, self.p5),
            (10.0, self.p10),
            (25.0, self.p25),
            (50.0, self.p50),
            (75.0, self.p75),
            (90.0, self.p90),
            (95.0, self.p95),
            (99.0, self.p99),
            (100.0, self.max),
        ];
        table
            .iter()
            .find(|(p, _)| (*p - q).abs() < 1e-9)
            .map(|(_, v)| *v)
    }
}

/// Unit string for latencies.
pub const UNIT_MS: &str = "ms";
/// Unit string for token counts.
pub const UNIT_TOKENS: &str = "tokens";
/// Unit string for token rates.
pub const UNIT_TOKENS_PER_SEC: &str = "tokens/sec";
/// Unit string for one user's (one request's) token rate, as AIPerf names it.
pub const UNIT_TOKENS_PER_SEC_PER_USER: &str = "tokens/sec/user";

/// A histogram of one metric. Values are stored as integer ticks (`ticks_per_unit` per reported
/// unit) in an auto-resizing hdrhistogram with 3 significant figures.
#[derive(Debug, Clone)]
pub struct Histogram {
    hist: hdrhistogram::Histogram<u64>,
    unit: &'static str,
    ticks_per_unit: f64,
    // Welford's running mean and sum of squared deviations: exact up to f64 rounding and,
    // unlike a raw sum of squares, free of cancellation when values are large.
    count: u64,
    mean: f64,
    m2: f64,
    min: f64,
    max: f64,
}

impl Histogram {
    fn with_unit(unit: &'static str, ticks_per_unit: f64) -> Self {
        let mut hist = hdrhistogram::Histogram::<u64>::new(3)
            .expect("3 significant figures is within hdrhistogram's 0..=5");
        hist.auto(true);
        Histogram {
            hist,
            unit,
            ticks_per_unit,
            count: 0,
            mean: 0.0,
            m2: 0.0,
            min: f64::INFINITY,
            max: f64::NEG_INFINITY,
        }
    }

    /// A histogram of durations: recorded at 1 µs resolution, reported in milliseconds.
    pub fn latency() -> Self {
        Self::with_unit(UNIT_MS, 1_000.0)
    }

    /// A histogram of plain values in `unit`, resolved to `1 / ticks_per_unit` of that unit
    /// (e.g. `("tokens", 1.0)` for token counts, `("tokens/sec", 1000.0)` for rates).
    pub fn values(unit: &'static str, ticks_per_unit: f64) -> Self {
        Self::with_unit(unit, ticks_per_unit)
    }

    /// A histogram of token counts (integer resolution).
    pub fn tokens() -> Self {
        Self::values(UNIT_TOKENS, 1.0)
    }

    /// The unit values are reported in.
    pub fn unit(&self) -> &'static str {
        self.unit
    }

    /// Number of recorded values.
    pub fn len(&self) -> u64 {
        self.count
    }

    /// True when nothing has been recorded.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Records a duration in nanoseconds (for histograms made with [`Histogram::latency`]).
    pub fn record_ns(&mut self, ns: u64) {
        debug_assert_eq!(self.unit, UNIT_MS, "record_ns on a non-latency histogram");
        self.record_value(ns as f64 / 1e6);
    }

    /// Records a value in the histogram's unit (milliseconds for a latency histogram).
    /// Negative values are clamped to 0; NaN and infinities are ignored.
    pub fn record_value(&mut self, value: f64) {
        if !value.is_finite() {
            return;
        }
        let v = value.max(0.0);
        self.count += 1;
        let delta = v - self.mean;
        self.mean += delta / self.count as f64;
        self.m2 += delta * (v - self.mean);
        self.min = self.min.min(v);
        self.max = self.max.max(v);
        let ticks = (v * self.ticks_per_unit).round();
        // `saturating_record` would clamp instead of resizing, so resize via `record` and clamp
        // only a value beyond what any histogram can track (`as` saturates at u64::MAX).
        if self.hist.record(ticks as u64).is_err() {
            self.hist.saturating_record(ticks as u64);
        }
    }

    /// Adds every value of `other` (same unit and resolution) to this histogram.
    pub fn merge(&mut self, other: &Histogram) {
        debug_assert_eq!(self.unit, other.unit);
        if other.count == 0 {
            return;
        }
        // Chan et al.'s parallel combination of Welford moments.
        let n = self.count + other.count;
        let delta = other.mean - self.mean;
        let mean = self.mean + delta * other.count as f64 / n as f64;
        let m2 =
            self.m2 + other.m2 + delta * delta * self.count as f64 * other.count as f64 / n as f64;
        self.count = n;
        self.mean = mean;
        self.m2 = m2;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
        // Both auto-resize, so adding cannot run out of range.
        let _ = self.hist.add(&other.hist);
    }

    /// The `rank`-th smallest value (1-based) in the histogram's unit: the upper edge of its
    /// bucket clamped to `[min, max]`, the exact min and max at the ends. `None` outside
    /// `1..=len`.
    pub fn value_at_rank(&self, rank: u64) -> Option<f64> {
        if rank == 0 || rank > self.count {
            return None;
        }
        if rank == 1 {
            return Some(self.min);
        }
        if rank == self.count {
            return Some(self.max);
        }
        let mut seen = 0u64;
        for v in self.hist.iter_recorded() {
            seen += v.count_at_value();
            if seen >= rank {
                let top = self.hist.highest_equivalent(v.value_iterated_to());
                return Some((top as f64 / self.ticks_per_unit).clamp(self.min, self.max));
            }
        }
        Some(self.max)
    }

    /// The nearest-rank `q`-quantile (`0 < q <= 1`): the value at rank `ceil(q * len)`, at
    /// least 1. `None` when empty.
    pub fn nearest_rank(&self, q: f64) -> Option<f64> {
        if self.count == 0 {
            return None;
        }
        let rank = (q * self.count as f64).ceil().clamp(1.0, self.count as f64) as u64;
        self.value_at_rank(rank)
    }

    /// The values at several ranks (1-based, any order) in one pass over the histogram: the
    /// same values [`Histogram::value_at_rank`] gives one by one.
    pub fn values_at_ranks(&self, ranks: &[Option<u64>]) -> Vec<Option<f64>> {
        let mut order: Vec<(u64, usize)> = ranks
            .iter()
            .enumerate()
            .filter_map(|(i, r)| r.filter(|r| (2..self.count).contains(r)).map(|r| (r, i)))
            .collect();
        order.sort_unstable();
        let mut out: Vec<Option<f64>> = ranks
            .iter()
            .map(|r| r.and_then(|r| (r == 1 || r == self.count).then(|| self.value_at_rank(r)))?)
            .collect();
        let mut next = order.into_iter().peekable();
        let mut seen = 0u64;
        for v in self.hist.iter_recorded() {
            seen += v.count_at_value();
            while let Some((rank, i)) = next.next_if(|(rank, _)| *rank <= seen) {
                let _ = rank;
                let top = self.hist.highest_equivalent(v.value_iterated_to());
                out[i] = Some((top as f64 / self.ticks_per_unit).clamp(self.min, self.max));
            }
            if next.peek().is_none() {
                break;
            }
        }
        out
    }

    /// The 95 % order-statistic interval of the `q`-quantile (0-1).
    pub fn quantile_interval(&self, q: f64) -> Interval {
        let (lo, hi) = order_statistic_ranks(self.count, q);
        let v = self.values_at_ranks(&[lo, hi]);
        Interval(v[0], v[1])
    }

    /// Summary statistics in the histogram's unit; `None` when empty. The intervals assume
    /// independent values.
    pub fn stats(&self) -> Option<Stats> {
        self.stats_with_effects(&[1.0; 5])
    }

    /// Summary statistics whose intervals allow for values correlated in time: `in_order`
    /// holds the same values as the histogram, in the order the requests started, `round`
    /// of them in flight together (a closed loop's concurrency, 0 for an open loop), and
    /// `limit` is the SLA limit on this metric, if any: a percentile's blocks count the values
    /// above it (what the verdict turns on), else above the percentile's estimate (see
    /// [`super::batch`]).
    pub fn stats_in_time(&self, in_order: &[f64], limit: Option<f64>, round: u32) -> Option<Stats> {
        if self.count == 0 {
            return None;
        }
        if in_order.len() as u64 != self.count {
            debug_assert!(
                false,
                "series of {} for {} values",
                in_order.len(),
                self.count
            );
            return self.stats();
        }
        let mut effects = [batch::mean_effect(in_order, round), 1.0, 1.0, 1.0, 1.0];
        for (e, q) in effects[1..].iter_mut().zip(QUANTILES) {
            let estimate = self.hist.value_at_quantile(q) as f64 / self.ticks_per_unit;
            let at = limit.unwrap_or(estimate.clamp(self.min, self.max));
            *e = batch::share_effect(in_order, at, round);
        }
        let mut stats = self.stats_with_effects(&effects)?;
        stats.past_limit = limit.and_then(|l| batch::past_limit(in_order, l, round));
        Some(stats)
    }

    /// Summary statistics with the mean's and each of [`QUANTILES`]' intervals widened by
    /// their design effects (1 for independent values).
    fn stats_with_effects(&self, effects: &[f64; 5]) -> Option<Stats> {
        if self.count == 0 {
            return None;
        }
        let q = |quantile: f64| {
            let v = self.hist.value_at_quantile(quantile) as f64 / self.ticks_per_unit;
            v.clamp(self.min, self.max)
        };
        let std = (self.m2 / self.count as f64).max(0.0).sqrt();
        let ranks: Vec<Option<u64>> = QUANTILES
            .iter()
            .zip(&effects[1..])
            .flat_map(|(q, effect)| {
                let (lo, hi) = batch::widened_ranks(self.count, *q, *effect);
                [lo, hi]
            })
            .collect();
        let v = self.values_at_ranks(&ranks);
        // The bounds' ranks never pass the estimate's (see `batch::widened_ranks`), but the
        // values differ in one way: the first and last ranks read the exact min and max, the
        // estimate the top of its bucket. So each side is held to the estimate as well.
        let around = |i: usize, quantile: f64| {
            let at = q(quantile);
            Interval(v[i].map(|lo| lo.min(at)), v[i + 1].map(|hi| hi.max(at)))
        };
        let ci95 = StatIntervals {
            avg: mean_interval(self.mean, std * effects[0].max(1.0).sqrt(), self.count),
            p50: around(0, 0.50),
            p90: around(2, 0.90),
            p95: around(4, 0.95),
            p99: around(6, 0.99),
        };
        Some(Stats {
            unit: self.unit.to_string(),
            avg: self.mean,
            min: self.min,
            max: self.max,
            p1: q(0.01),
            p5: q(0.05),
            p10: q(0.10),
            p25: q(0.25),
            p50: q(0.50),
            p75: q(0.75),
            p90: q(0.90),
            p95: q(0.95),
            p99: q(0.99),
            std,
            count: self.count,
            ci95: Some(ci95),
            past_limit: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_has_no_stats() {
        assert!(Histogram::latency().stats().is_none());
        assert!(Histogram::tokens().stats().is_none());
    }

    #[test]
    fn latency_reports_ms_with_exact_moments() {
        let mut h = Histogram::latency();
        // 1.0005 ms is not representable at 1 µs ticks; avg/min/max must still be exact.
        for ns in [1_000_500u64, 2_000_000, 3_000_000, 4_000_000] {
            h.record_ns(ns);
        }
        let s = h.stats().unwrap();
        assert_eq!(s.unit, "ms");
        assert_eq!(s.count, 4);
        assert!((s.avg - 2.500125).abs() < 1e-12, "{}", s.avg);
        assert_eq!(s.min, 1.0005);
        assert_eq!(s.max, 4.0);
        let mean = 2.500125;
        let var = [1.0005f64, 2.0, 3.0, 4.0]
            .iter()
            .map(|v| (v - mean) * (v - mean))
            .sum::<f64>()
            / 4.0;
        assert!((s.std - var.sqrt()).abs() < 1e-12);
        // nearest rank: p50 of 4 values is the 2nd, p99 the 4th; from 2048 ticks on buckets
        // are 2 µs wide here, and hdrhistogram reports a bucket's upper edge
        assert_eq!(s.p50, 2.0);
        assert_eq!(s.p75, 3.001);
        // p99 is clamped to the exact max
        assert_eq!(s.p99, 4.0);
        // p1 is the first value at 1 µs resolution (1000.5 µs rounds to 1001)
        assert_eq!(s.p1, 1.001);
    }

    #[test]
    fn percentiles_of_1_to_100() {
        let mut h = Histogram::tokens();
        for v in 1..=100 {
            h.record_value(v as f64);
        }
        let s = h.stats().unwrap();
        assert_eq!(s.unit, "tokens");
        assert_eq!(
            [s.p1, s.p5, s.p10, s.p25, s.p50, s.p75, s.p90, s.p95, s.p99],
            [1.0, 5.0, 10.0, 25.0, 50.0, 75.0, 90.0, 95.0, 99.0]
        );
        assert_eq!(s.avg, 50.5);
        assert_eq!(s.percentile(95.0), Some(95.0));
        assert_eq!(s.percentile(100.0), Some(100.0));
        assert_eq!(s.percentile(42.0), None);
    }

    #[test]
    fn large_values_quantized_within_a_tenth_of_a_percent() {
        let mut h = Histogram::latency();
        // 50 s and 61.2345 s: far above the exact range of 3 significant figures
        h.record_ns(50_000_000_000);
        h.record_ns(61_234_500_000);
        let s = h.stats().unwrap();
        assert!((s.p50 - 50_000.0).abs() / 50_000.0 < 1e-3, "{}", s.p50);
        assert_eq!(s.p99, 61_234.5); // clamped to the exact max
        assert_eq!(s.avg, 55_617.25);
    }

    #[test]
    fn merge_equals_recording_everything_in_one() {
        let mut a = Histogram::latency();
        let mut b = Histogram::latency();
        let mut all = Histogram::latency();
        for (i, ns) in [5_000u64, 7_000_000, 12_345_000, 900, 3_333_333]
            .iter()
            .enumerate()
        {
            if i % 2 == 0 {
                a.record_ns(*ns)
            } else {
                b.record_ns(*ns)
            }
            all.record_ns(*ns);
        }
        a.merge(&b);
        let (sa, sall) = (a.stats().unwrap(), all.stats().unwrap());
        assert!((sa.avg - sall.avg).abs() < 1e-9);
        assert!((sa.std - sall.std).abs() < 1e-9);
        assert_eq!(
            (sa.min, sa.max, sa.p50, sa.count),
            (sall.min, sall.max, sall.p50, 5)
        );
    }

    #[test]
    fn percentile_intervals_read_the_ranks_from_the_histogram() {
        // 1..=100 tokens: ranks (90, 100) bound p95, (97, none) p99, (40, 61) the median
        let mut h = Histogram::tokens();
        for v in 1..=100 {
            h.record_value(v as f64);
        }
        let s = h.stats().unwrap();
        let ci = s.ci95.unwrap();
        assert_eq!(ci.p95, Interval(Some(90.0), Some(100.0)));
        assert_eq!(ci.p99, Interval(Some(97.0), None));
        assert_eq!(ci.p50, Interval(Some(40.0), Some(61.0)));
        assert_eq!(s.interval(Some(95.0)), Some(ci.p95));
        assert_eq!(s.interval(None), Some(ci.avg));
        assert_eq!(s.interval(Some(42.0)), None);
        assert_eq!(h.value_at_rank(0), None);
        assert_eq!(h.value_at_rank(101), None);
        // repeated values: 16 samples, rank 15 of p99 lands in the top bucket's run
        let mut h = Histogram::tokens();
        for v in [5, 5, 5, 5, 6, 6, 6, 6, 7, 7, 7, 7, 8, 8, 9, 40] {
            h.record_value(v as f64);
        }
        assert_eq!(h.quantile_interval(0.99), Interval(Some(9.0), None));
        assert_eq!(h.quantile_interval(0.50), Interval(Some(5.0), Some(8.0)));
        // a latency is read at its bucket's upper edge: 9 ms lies in a bucket 8 µs wide
        let mut h = Histogram::latency();
        for ms in [5u64, 5, 5, 5, 6, 6, 6, 6, 7, 7, 7, 7, 8, 8, 9, 40] {
            h.record_ns(ms * 1_000_000);
        }
        assert_eq!(h.quantile_interval(0.99), Interval(Some(9.007), None));
    }

    #[test]
    fn ranks_in_one_pass_match_ranks_one_by_one() {
        let mut h = Histogram::latency();
        let mut x = 12345u64;
        for _ in 0..500 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            h.record_ns(1_000_000 + (x >> 40) % 90_000_000);
        }
        let ranks: Vec<Option<u64>> = (0..=501).rev().map(Some).chain([None]).collect();
        let one_pass = h.values_at_ranks(&ranks);
        for (r, v) in ranks.iter().zip(&one_pass) {
            assert_eq!(*v, r.and_then(|r| h.value_at_rank(r)), "rank {r:?}");
        }
    }

    #[test]
    fn rates_keep_fractional_resolution() {
        let mut h = Histogram::values(UNIT_TOKENS_PER_SEC, 1000.0);
        h.record_value(45.25);
        h.record_value(f64::NAN);
        let s = h.stats().unwrap();
        assert_eq!((s.count, s.p50, s.unit.as_str()), (1, 45.25, "tokens/sec"));
    }
}
