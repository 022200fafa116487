//! Batch means on whole levels: values from a process whose speed moves, put through
//! [`Histogram::stats_in_time`] as a level's are. Deterministic (a fixed generator and seeds),
//! so each test decides once.

use crate::metrics::histogram::{Histogram, Stats};
use crate::record::Interval;

/// xorshift64*: a small fixed generator, so the values never change between runs.
struct Rng(u64);

impl Rng {
    fn unit(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let x = self.0.wrapping_mul(0x2545_f491_4f6c_dd1d);
        ((x >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }
}

/// A latency in ms: 100 plus an exponential tail of mean 50, times the server's speed.
fn latency(rng: &mut Rng, speed: f64) -> f64 {
    speed * (100.0 - 50.0 * rng.unit().ln())
}

/// `n` latencies in start order whose speed is redrawn (0.6 to 1.4) every `period` requests.
fn moving(seed: u64, n: usize, period: usize) -> Vec<f64> {
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let mut speed = 1.0;
    (0..n)
        .map(|i| {
            if i % period == 0 {
                speed = 0.6 + 0.8 * rng.unit();
            }
            latency(&mut rng, speed)
        })
        .collect()
}

/// Requests in flight together: 1,000 values are 125 rounds (ten blocks), and a speed lasts
/// six rounds of [`moving`]'s 50 requests.
const ROUND: u32 = 8;

fn stats(in_order: &[f64]) -> Stats {
    let mut h = Histogram::latency();
    for v in in_order {
        h.record_ns((v * 1e6) as u64);
    }
    // the series holds what the histogram holds, at its resolution
    let series: Vec<f64> = in_order
        .iter()
        .map(|v| (v * 1e6) as u64 as f64 / 1e6)
        .collect();
    h.stats_in_time(&series, None, ROUND).unwrap()
}

/// Each interval's width (mean, p50, p90, p95, p99); an open side is infinitely wide.
fn widths(s: &Stats) -> [f64; 5] {
    let ci = s.ci95.as_ref().unwrap();
    let w = |i: &Interval| match (i.0, i.1) {
        (Some(lo), Some(hi)) => hi - lo,
        _ => f64::INFINITY,
    };
    [w(&ci.avg), w(&ci.p50), w(&ci.p90), w(&ci.p95), w(&ci.p99)]
}

const NAMES: [&str; 5] = ["mean", "p50", "p90", "p95", "p99"];

#[test]
fn a_slow_stretch_in_start_order_is_never_narrower_than_the_same_values_shuffled() {
    for seed in 1..=10u64 {
        let mut rng = Rng(seed | 1);
        // 1,000 requests, the middle fifth at half speed
        let in_order: Vec<f64> = (0..1000)
            .map(|i| latency(&mut rng, if (400..600).contains(&i) { 2.0 } else { 1.0 }))
            .collect();
        let mut shuffled = in_order.clone();
        for i in (1..shuffled.len()).rev() {
            let j = (rng.unit() * (i + 1) as f64) as usize;
            shuffled.swap(i, j);
        }
        let (a, b) = (widths(&stats(&in_order)), widths(&stats(&shuffled)));
        for k in 0..5 {
            assert!(
                a[k] >= b[k],
                "seed {seed} {}: in order {} narrower than shuffled {}",
                NAMES[k],
                a[k],
                b[k]
            );
        }
        // the stretch is seen: the mean's interval is wider than the independent one
        let iid = widths(
            &Histogram::stats(&{
                let mut h = Histogram::latency();
                in_order.iter().for_each(|v| h.record_ns((v * 1e6) as u64));
                h
            })
            .unwrap(),
        );
        assert!(a[0] > 1.5 * iid[0], "seed {seed}: {} vs {}", a[0], iid[0]);
    }
}

/// The rule, "no wider than a shorter level by more than chance": the same process measured
/// four times as long, over twenty seeds, per statistic: the median ratio of widths (long
/// over short; 1 when both are open) is at most 0.75 (about 0.5 is expected), the long
/// interval is wider in at most 4 of the 20, and never more than twice as wide, so never open
/// on a side the shorter one bounded. Chance: a width read from three blocks carries a
/// variance with 2 degrees of freedom, and one such variance exceeds another four times its
/// size (the long level's width over the short's above 1) with probability 1/5, sixteen times
/// its size (twice as wide) 1 in 17; a short level's tail interval is narrow now and then
/// because its few tail values happened to lie close.
#[test]
fn a_level_four_times_as_long_is_no_wider_than_chance_allows() {
    let ratios: Vec<[f64; 5]> = (1..=20u64)
        .map(|seed| {
            let values = moving(seed, 4000, 50);
            let (short, long) = (widths(&stats(&values[..1000])), widths(&stats(&values)));
            std::array::from_fn(|k| {
                if short[k].is_infinite() && long[k].is_infinite() {
                    1.0
                } else {
                    long[k] / short[k]
                }
            })
        })
        .collect();
    for (k, name) in NAMES.iter().enumerate() {
        let mut of_stat: Vec<f64> = ratios.iter().map(|r| r[k]).collect();
        of_stat.sort_by(f64::total_cmp);
        let median = (of_stat[9] + of_stat[10]) / 2.0;
        assert!(median <= 0.75, "{name}: median ratio {median}");
        let wider = of_stat.iter().filter(|r| **r > 1.0).count();
        assert!(wider <= 4, "{name}: wider in {wider} of 20: {of_stat:?}");
        assert!(of_stat[19] <= 2.0, "{name}: {of_stat:?}");
    }
}
