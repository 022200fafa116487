//! Batch means: confidence intervals that allow for latencies correlated in time (see
//! `docs/search.md`, "Confidence").
//!
//! The order-statistic and t-intervals in [`super::ci`] assume a level's latencies are
//! independent. They are not when the server's speed moves during a level (a slow period
//! slows every request in it, a queue builds and drains): a level measured in a slow moment
//! then fails "with confidence" and passes when measured again. So the values are cut, in the
//! order the requests started, into [`BATCHES`] blocks of equal count, and the statistic is
//! computed per block: for a percentile the share of values above the level's estimate, for
//! the mean the block's mean. Under independence those per-block figures scatter by a known
//! amount (`q (1 - q) / m` for a share, `s^2 / m` for a mean, with `m` values a block). When
//! they scatter more than chance allows (a chi-square test at 5 %), the interval is the batch
//! means one instead: its variance from the blocks, Student's t with `BATCHES - 1` degrees of
//! freedom. Expressed as a *design effect* `D` (how many times the independent variance the
//! true one is), a percentile's interval uses the ranks of `n / D` samples scaled back to `n`,
//! and a mean's half-width grows by `sqrt(D)`. With fewer than [`MIN_VALUES`] values there
//! are too few per block to tell, and nothing changes.

use super::ci::{order_statistic_ranks, t_975, Z_975};

/// Blocks a level's values are cut into.
pub const BATCHES: usize = 10;
/// The fewest values (ten per block) for which the blocks are compared.
pub const MIN_VALUES: usize = 100;
/// The chi-square 0.95 quantile with `BATCHES - 1` = 9 degrees of freedom: the scatter of
/// ten block figures exceeds this multiple of its independent variance 5 % of the time.
const CHI2_95_DF9: f64 = 16.918_977_604_620_45;

/// The block boundaries of `n` values: `BATCHES + 1` indices, sizes differing by one at most.
fn bounds(n: usize) -> impl Iterator<Item = (usize, usize)> {
    cut(n, BATCHES)
}

/// The boundaries of `blocks` blocks of `n` values, sizes differing by one at most.
fn cut(n: usize, blocks: usize) -> impl Iterator<Item = (usize, usize)> {
    (0..blocks).map(move |b| (b * n / blocks, (b + 1) * n / blocks))
}

/// The sample variance of block figures (`blocks - 1` degrees of freedom).
fn variance(figures: &[f64]) -> f64 {
    let b = figures.len() as f64;
    let mean = figures.iter().sum::<f64>() / b;
    figures.iter().map(|f| (f - mean).powi(2)).sum::<f64>() / (b - 1.0)
}

/// The design effect of a set of block figures whose variance under independence is
/// `iid_var` each: 1 unless they scatter significantly more, then the batch-means variance
/// of their mean (with the t quantile) over the independent one (with the normal quantile).
fn effect(figures: &[f64], iid_var: f64) -> f64 {
    let b = figures.len() as f64;
    let var = variance(figures);
    if iid_var.is_nan() || iid_var <= 0.0 || (b - 1.0) * var / iid_var <= CHI2_95_DF9 {
        return 1.0;
    }
    let t = t_975(BATCHES as u64 - 1);
    (t * t * var) / (Z_975 * Z_975 * iid_var)
}

/// The design effect of the mean of `values` (in the order the requests started).
pub fn mean_effect(values: &[f64]) -> f64 {
    let n = values.len();
    if n < MIN_VALUES {
        return 1.0;
    }
    let avg = values.iter().sum::<f64>() / n as f64;
    let var = values.iter().map(|v| (v - avg).powi(2)).sum::<f64>() / (n as f64 - 1.0);
    let means: Vec<f64> = bounds(n)
        .map(|(a, b)| values[a..b].iter().sum::<f64>() / (b - a) as f64)
        .collect();
    // a block's mean varies as s^2 / m; the blocks' sizes differ by one at most
    effect(&means, var * BATCHES as f64 / n as f64)
}

/// The design effect of the share of `values` (in start order) above `threshold`: how that
/// share scatters between blocks, against `p (1 - p) / m` for independent values (`p` the
/// share over all of them). For a percentile's interval the threshold is the SLA's limit
/// when the run has one (what the verdict turns on: whether the values above the limit come
/// in bursts), else the percentile's estimate. No value above it (or all): no scatter, 1.
pub fn share_effect(values: &[f64], threshold: f64) -> f64 {
    let n = values.len();
    if n < MIN_VALUES {
        return 1.0;
    }
    let shares: Vec<f64> = bounds(n)
        .map(|(a, b)| {
            let above = values[a..b].iter().filter(|v| **v > threshold).count();
            above as f64 / (b - a) as f64
        })
        .collect();
    let p = values.iter().filter(|v| **v > threshold).count() as f64 / n as f64;
    effect(&shares, p * (1.0 - p) * BATCHES as f64 / n as f64)
}

/// The relative 95 % half-width of the ratio `sum(y) / sum(x)` of `pairs` `(x, y)` in start
/// order (a throughput: tokens over latency), by batch means always: [`BATCHES`] blocks and
/// half as many of twice the size (Student's t with blocks - 1 degrees of freedom), the wider,
/// with the independent (linearised) interval as the floor. No test switches it off: a
/// throughput's blocks are few and its interval only matters where a knee is named. `None`
/// with fewer than 20 pairs (two a block) or no positive ratio: it cannot be bounded.
pub fn ratio_half_width(pairs: &[(f64, f64)]) -> Option<f64> {
    let n = pairs.len();
    let (sx, sy) = pairs
        .iter()
        .fold((0.0, 0.0), |(sx, sy), (x, y)| (sx + x, sy + y));
    if n < 2 * BATCHES || sx <= 0.0 || sy <= 0.0 {
        return None;
    }
    let r = sy / sx;
    let mean_x = sx / n as f64;
    let residuals: f64 = pairs.iter().map(|(x, y)| (y - r * x).powi(2)).sum();
    let iid = t_975(n as u64 - 1) * (residuals / (n as f64 * (n as f64 - 1.0))).sqrt() / mean_x;
    let half = |blocks: usize| {
        let ratios: Vec<f64> = cut(n, blocks)
            .map(|(a, e)| {
                let (x, y) = pairs[a..e]
                    .iter()
                    .fold((0.0, 0.0), |(sx, sy), (x, y)| (sx + x, sy + y));
                if x > 0.0 {
                    y / x
                } else {
                    r
                }
            })
            .collect();
        t_975(blocks as u64 - 1) * (variance(&ratios) / blocks as f64).sqrt()
    };
    Some(iid.max(half(BATCHES)).max(half(BATCHES / 2)) / r)
}

/// The 1-based ranks bounding the `q`-quantile of `n` values with 95 % confidence when their
/// design effect is `effect`: the ranks of `n / effect` independent values, scaled back to
/// `n` outward (the lower rank down, the upper up). `None` where no rank does.
pub fn widened_ranks(n: u64, q: f64, effect: f64) -> (Option<u64>, Option<u64>) {
    if effect <= 1.0 || n == 0 {
        return order_statistic_ranks(n, q);
    }
    let n_eff = ((n as f64 / effect).floor() as u64).max(1);
    let (lo, hi) = order_statistic_ranks(n_eff, q);
    let scale = n as f64 / n_eff as f64;
    let lo = lo
        .map(|l| (l as f64 * scale).floor() as u64)
        .filter(|l| *l >= 1);
    let hi = hi
        .map(|u| (u as f64 * scale).ceil() as u64)
        .filter(|u| *u <= n);
    (lo, hi)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 200 values: `slow` for the first half of the requests, `fast` for the second.
    fn two_periods(fast: f64, slow: f64) -> Vec<f64> {
        (0..200)
            .map(|i| if i < 100 { slow } else { fast })
            .collect()
    }

    #[test]
    fn blocks_cover_every_value_once() {
        let b: Vec<(usize, usize)> = bounds(105).collect();
        assert_eq!(b.len(), BATCHES);
        assert_eq!(b[0], (0, 10));
        assert_eq!(b[9], (94, 105));
        assert!(b.windows(2).all(|w| w[0].1 == w[1].0));
    }

    #[test]
    fn independent_looking_values_are_left_alone() {
        // 1..=200 interleaved so every block holds the same spread: no scatter between blocks
        let v: Vec<f64> = (0..200).map(|i| ((i * 37) % 200 + 1) as f64).collect();
        assert_eq!(mean_effect(&v), 1.0);
        assert_eq!(share_effect(&v, 180.0), 1.0);
        // nothing above the threshold, or everything: no scatter
        let slow = two_periods(10.0, 20.0);
        assert_eq!(share_effect(&slow, 25.0), 1.0);
        assert_eq!(share_effect(&slow, 5.0), 1.0);
        // too few values to cut into blocks of ten
        assert_eq!(mean_effect(&two_periods(1.0, 2.0)[..99]), 1.0);
        assert_eq!(share_effect(&two_periods(1.0, 2.0)[..99], 1.0), 1.0);
    }

    #[test]
    fn a_slow_period_raises_the_effect() {
        // half the blocks all above the median, half all below: shares 1,1,1,1,1,0,0,0,0,0,
        // variance 0.5 * 10/9 = 0.2778 against 0.25 * 10 / 200 = 0.0125 independent
        let v = two_periods(10.0, 20.0);
        let want = t_975(9).powi(2) * (0.25 * 10.0 / 9.0) / (Z_975 * Z_975 * 0.0125);
        let got = share_effect(&v, 10.0);
        assert!((got - want).abs() < 1e-9, "{got} vs {want}");
        assert!((got - 29.61).abs() < 0.01, "{got}");
        // the mean: block means 20 x 5, 10 x 5 (variance 27.78) against s^2 / 20 = 1.256
        let got = mean_effect(&v);
        let s2 = 25.0 * 200.0 / 199.0;
        let want = t_975(9).powi(2) * (25.0 * 10.0 / 9.0) / (Z_975 * Z_975 * s2 / 20.0);
        assert!((got - want).abs() < 1e-9, "{got} vs {want}");
    }

    #[test]
    fn ratio_half_width_table() {
        // 40 requests of 10 tokens in 100 ms, then 40 of 10 in 300 ms: ratio 20 / 400 = 0.05;
        // five blocks' ratios 0.1, 0.1, 0.05, 0.0333, 0.0333 (the middle block 8 fast, 8
        // slow), wider than ten blocks' five of 0.1 and five of 0.0333
        let pairs: Vec<(f64, f64)> = (0..80)
            .map(|i| (if i < 40 { 100.0 } else { 300.0 }, 10.0))
            .collect();
        let five = [0.1, 0.1, 0.05, 10.0 / 300.0, 10.0 / 300.0];
        let mean = five.iter().sum::<f64>() / 5.0;
        let var = five.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / 4.0;
        let want = t_975(4) * (var / 5.0).sqrt() / 0.05;
        let got = ratio_half_width(&pairs).unwrap();
        assert!((got - want).abs() < 1e-12, "{got} vs {want}");
        assert!((got - 0.8482).abs() < 1e-4, "{got}");
        // every request alike: no scatter, no width
        assert!(ratio_half_width(&[(100.0, 10.0); 40]).unwrap() < 1e-12);
        // too few to bound, or nothing produced
        assert_eq!(ratio_half_width(&pairs[..19]), None);
        assert_eq!(ratio_half_width(&[(100.0, 0.0); 40]), None);
    }

    #[test]
    fn widened_ranks_table() {
        // effect 1 is the independent ranks; effect 2 takes 500's ranks and doubles them
        assert_eq!(
            widened_ranks(1000, 0.99, 1.0),
            order_statistic_ranks(1000, 0.99)
        );
        let (l, u) = order_statistic_ranks(500, 0.99);
        assert_eq!(
            widened_ranks(1000, 0.99, 2.0),
            (
                Some(l.unwrap() * 2),
                u.map(|u| u * 2).filter(|u| *u <= 1000)
            )
        );
        // 368 values at effect 1.5: 245 effective ones cannot bound p99 from above
        assert_eq!(order_statistic_ranks(368, 0.99).1, Some(368));
        assert_eq!(widened_ranks(368, 0.99, 1.5).1, None);
        // n = 100 at effect 4: the ranks of 25 values, times 4
        let (l, u) = order_statistic_ranks(25, 0.5);
        assert_eq!(
            widened_ranks(100, 0.5, 4.0),
            (l.map(|l| l * 4), u.map(|u| u * 4))
        );
    }
}
