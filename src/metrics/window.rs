//! Rolling fixed-width time buckets for live rates (output tokens/s over the last few seconds)
//! and the sparkline series a dashboard draws ([`RollingRate`]: one ring of buckets), and for
//! the percentiles of recent durations ([`RecentDurations`]: one HDR histogram per bucket,
//! merged when read; no values kept, none sorted).
//!
//! Times are nanoseconds counted from the start of what is measured (0 = level start), the
//! same base as [`crate::record::RequestRecord`].

use std::collections::VecDeque;
use std::time::Duration;

use super::Histogram;

/// A ring of `buckets` completed buckets plus the current one.
#[derive(Debug, Clone)]
pub struct RollingRate {
    bucket_ns: u64,
    buckets: u64,
    /// `buckets + 1` slots; absolute bucket `k` lives in `ring[k % ring.len()]`.
    ring: Vec<f64>,
    /// The newest absolute bucket number the ring holds.
    head: Option<u64>,
}

impl RollingRate {
    /// A window of `buckets` buckets of width `bucket` (both at least 1 / 1 ns).
    pub fn new(bucket: Duration, buckets: usize) -> Self {
        let buckets = buckets.max(1) as u64;
        RollingRate {
            bucket_ns: (bucket.as_nanos() as u64).max(1),
            buckets,
            ring: vec![0.0; buckets as usize + 1],
            head: None,
        }
    }

    fn slot(&self, k: u64) -> usize {
        (k % self.ring.len() as u64) as usize
    }

    /// The value of absolute bucket `k`, 0 when it is outside what the ring holds.
    fn get(&self, k: u64) -> f64 {
        match self.head {
            Some(h) if k <= h && h - k <= self.buckets => self.ring[self.slot(k)],
            _ => 0.0,
        }
    }

    /// Adds `value` (e.g. tokens) at time `now_ns`. Values older than the window are dropped.
    pub fn add(&mut self, now_ns: u64, value: f64) {
        let k = now_ns / self.bucket_ns;
        match self.head {
            Some(h) if k <= h => {
                if h - k > self.buckets {
                    return;
                }
            }
            Some(h) => {
                let from = (h + 1).max(k.saturating_sub(self.buckets));
                for j in from..=k {
                    let s = self.slot(j);
                    self.ring[s] = 0.0;
                }
                self.head = Some(k);
            }
            None => {
                self.ring.iter_mut().for_each(|v| *v = 0.0);
                self.head = Some(k);
            }
        }
        let s = self.slot(k);
        self.ring[s] += value;
    }

    /// Rate per second over the last `buckets` completed buckets plus the current partial one
    /// (never reaching before time 0); 0 at time 0.
    pub fn rate_per_sec(&self, now_ns: u64) -> f64 {
        let cur = now_ns / self.bucket_ns;
        let lo = cur.saturating_sub(self.buckets);
        let sum: f64 = (lo..=cur).map(|k| self.get(k)).sum();
        let span_ns = now_ns - lo * self.bucket_ns;
        if span_ns == 0 {
            0.0
        } else {
            sum / (span_ns as f64 / 1e9)
        }
    }

    /// Per-second rate of each of the last `buckets` completed buckets, oldest first (buckets
    /// before time 0 are 0). The current partial bucket is left out so the line does not dip.
    pub fn series(&self, now_ns: u64) -> Vec<f64> {
        let cur = now_ns / self.bucket_ns;
        let per_sec = 1e9 / self.bucket_ns as f64;
        (1..=self.buckets)
            .rev()
            .map(|back| cur.checked_sub(back).map_or(0.0, |k| self.get(k) * per_sec))
            .collect()
    }
}

/// Durations by the time they came (a request's end, say), in fixed-width time buckets of
/// one HDR histogram each: the percentiles of any recent span are read from the merged
/// buckets, without keeping or sorting the values. A span is whole buckets: a bucket counts
/// when it starts inside the span. Buckets older than `keep` before the newest are dropped.
#[derive(Debug, Clone)]
pub struct RecentDurations {
    bucket_ns: u64,
    keep_buckets: u64,
    /// (absolute bucket number, its durations), oldest first.
    buckets: VecDeque<(u64, Histogram)>,
}

impl RecentDurations {
    /// Buckets `bucket` wide (at least 1 ns), kept for `keep` past the newest.
    pub fn new(bucket: Duration, keep: Duration) -> Self {
        let bucket_ns = (bucket.as_nanos() as u64).max(1);
        RecentDurations {
            bucket_ns,
            keep_buckets: (keep.as_nanos() as u64).div_ceil(bucket_ns),
            buckets: VecDeque::new(),
        }
    }

    /// Records a duration of `ns` that came at `at_ns`; one older than what is kept is
    /// dropped.
    pub fn record(&mut self, at_ns: u64, ns: u64) {
        let k = at_ns / self.bucket_ns;
        let newest = self.buckets.back().map_or(k, |b| b.0.max(k));
        if newest - k > self.keep_buckets {
            return;
        }
        // records come nearly in time order: the bucket is found from the back
        let at = self.buckets.iter().rposition(|b| b.0 <= k);
        match at {
            Some(i) if self.buckets[i].0 == k => self.buckets[i].1.record_ns(ns),
            _ => {
                let mut h = Histogram::latency();
                h.record_ns(ns);
                self.buckets.insert(at.map_or(0, |i| i + 1), (k, h));
            }
        }
        while self
            .buckets
            .front()
            .is_some_and(|b| newest - b.0 > self.keep_buckets)
        {
            self.buckets.pop_front();
        }
    }

    /// The durations of the buckets that start in `[from_ns, to_ns)`, in one histogram.
    pub fn between(&self, from_ns: u64, to_ns: u64) -> Histogram {
        let mut all = Histogram::latency();
        for (k, h) in &self.buckets {
            let start = k * self.bucket_ns;
            if start >= from_ns && start < to_ns {
                all.merge(h);
            }
        }
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: u64 = 1_000_000_000;

    fn sample() -> RollingRate {
        let mut r = RollingRate::new(Duration::from_secs(1), 3);
        r.add(S / 2, 10.0);
        r.add(S + S / 5, 20.0);
        r.add(S + 4 * S / 5, 10.0);
        r.add(2 * S + S / 2, 40.0);
        r
    }

    #[test]
    fn rates_and_series_table() {
        let r = sample();
        // (now, rate per sec, series)
        let cases: [(u64, f64, [f64; 3]); 5] = [
            (0, 0.0, [0.0, 0.0, 0.0]),
            (2 * S + S / 2, 32.0, [0.0, 10.0, 30.0]),
            (3 * S, 80.0 / 3.0, [10.0, 30.0, 40.0]),
            (4 * S + S / 2, 70.0 / 3.5, [30.0, 40.0, 0.0]),
            (10 * S, 0.0, [0.0, 0.0, 0.0]),
        ];
        for (now, rate, series) in cases {
            assert!((r.rate_per_sec(now) - rate).abs() < 1e-9, "rate at {now}");
            assert_eq!(r.series(now), series.to_vec(), "series at {now}");
        }
    }

    #[test]
    fn late_values_inside_the_window_count_and_old_ones_drop() {
        let mut r = sample();
        r.add(S / 5, 5.0); // bucket 0 still held (head is bucket 2)
        assert_eq!(r.series(3 * S), vec![15.0, 30.0, 40.0]);
        r.add(9 * S, 1.0); // advances far: everything older is cleared
        r.add(S, 100.0); // too old: dropped
        assert_eq!(r.series(10 * S), vec![0.0, 0.0, 1.0]);
        assert_eq!(r.rate_per_sec(9 * S + S / 2), 1.0 / 3.5);
    }

    #[test]
    fn recent_durations_merge_whole_buckets_and_forget_old_ones() {
        // durations below 2.048 ms are exact in a latency histogram (µs ticks, 3 figures)
        let (ms, us) = (1_000_000u64, 1_000u64);
        let mut r = RecentDurations::new(Duration::from_millis(500), Duration::from_secs(2));
        // 100, 200, 300 µs in the first bucket; 400 µs in the third; 500 µs in the second
        for (at, d) in [(0, 100), (100, 200), (499, 300), (1_200, 400), (700, 500)] {
            r.record(at * ms, d * us);
        }
        let all = r.between(0, u64::MAX);
        assert_eq!(all.len(), 5);
        assert_eq!(all.nearest_rank(0.5), Some(0.3));
        assert_eq!(all.nearest_rank(0.99), Some(0.5));
        // the span [500 ms, 1.5 s) holds the second and third buckets
        let later = r.between(500 * ms, 1_500 * ms);
        assert_eq!((later.len(), later.nearest_rank(0.5)), (2, Some(0.4)));
        // at 3.2 s (bucket 3-3.5 s) the buckets more than four widths (2 s) behind it go:
        // 0-0.5 s and 0.5-1 s; 1-1.5 s stays
        r.record(3_200 * ms, 600 * us);
        assert_eq!(r.between(0, 1_000 * ms).len(), 0);
        assert_eq!(r.between(0, u64::MAX).len(), 2);
        // a duration older than what is kept is dropped too
        r.record(100 * ms, 700 * us);
        assert_eq!(r.between(0, u64::MAX).len(), 2);
    }
}
