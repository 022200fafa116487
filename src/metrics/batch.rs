//! Batch means: confidence intervals that allow for latencies correlated in time (see
//! `docs/search.md`, "Confidence").
//!
//! The order-statistic and t-intervals in [`super::ci`] assume a level's latencies are
//! independent. They are not when the server's speed moves during a level (a slow period
//! slows every request in it, a queue builds and drains): a level measured in a slow moment
//! then fails "with confidence" and passes when measured again. So the values are cut, in the
//! order the requests started, into blocks of equal count, and the statistic is computed per
//! block: for a percentile the share of values above the level's estimate, for the mean the
//! block's mean. The scatter of those block figures gives the variance of the level's figure
//! whatever the correlation within a block (batch means, Student's t with one degree of
//! freedom fewer than blocks), always: there is no test that switches it off, because a test
//! on ten blocks has almost no power for a tail share (about one value above a p99 per
//! block) and kept short levels at the independent width.
//!
//! The blocks must be longer than the server's memory, or neighbouring blocks move together and
//! their scatter understates the variance. In a closed loop the requests of one round (as
//! many as the concurrency) are in flight together and share the server's batch, so a block
//! holds at least two rounds for a share above a threshold, three for a mean: ten blocks where
//! the level has enough rounds, fewer (down to three) where it has fewer. A mean's scatter
//! between levels is almost all the server's speed (a thousand requests' own scatter averages
//! away) and a request runs about a round, so a block of two rounds in start order shares
//! server time with its neighbour and their means move together (round means of the coverage
//! benchmark correlate 0.66 one round apart, 0.25 two apart, 0.06 three apart), which left its
//! interval too narrow (87.5 % coverage of 200 levels); a share's scatter is mostly which few
//! requests happen to land above the threshold, which short blocks read without that bias
//! (91 % and more in every run without a warmup). One cut, not the widest of several: with
//! five blocks Student's t has 4 degrees of freedom and alone doubles the variance of
//! independent values (`t(0.975, 4)^2 / 1.96^2`), and the widest of two cuts more than that,
//! so every p99 needed twice the requests whatever the server did. An open loop (no rounds)
//! takes ten blocks.
//! The independent interval is the floor (blocks that happen to agree do not make a level
//! more certain than independent values would). The result is expressed as a *design effect*
//! `D` (that variance over the independent one): a percentile's interval uses the exact
//! order-statistic ranks of `n / D` values scaled back to `n` (outward), so a side that
//! `n / D` values cannot bound stays open; a mean's half-width grows by `sqrt(D)`. With fewer
//! than [`MIN_VALUES`] values (two a block) there is no scatter to read, and the independent
//! interval stands.

use serde::{Deserialize, Serialize};

use super::ci::{order_statistic_ranks, t_975, Z_975};

/// The most blocks a level's values are cut into.
pub const BATCHES: usize = 10;
/// The fewest blocks (Student's t with 2 degrees of freedom).
const FEWEST: usize = 3;
/// Rounds of a closed loop (requests in flight together) a block holds at least, for a share
/// above a threshold (a percentile's interval).
const SHARE_ROUNDS: usize = 2;
/// Rounds a block holds at least for a mean, whose scatter is the server's speed (see the
/// module header).
const MEAN_ROUNDS: usize = 3;
/// The fewest values (two per block) for which the blocks are read.
pub const MIN_VALUES: usize = 2 * BATCHES;

/// How many blocks `n` values in start order are cut into when `round` requests are in flight
/// together (a closed loop's concurrency; 0 for an open loop, which has no rounds) and a
/// block holds at least `rounds` of them: as many as hold that much, at most [`BATCHES`] and
/// at least [`FEWEST`].
pub fn blocks(n: usize, round: u32, rounds: usize) -> usize {
    if round == 0 {
        return BATCHES;
    }
    (n / (rounds * round as usize)).clamp(FEWEST, BATCHES)
}

/// The boundaries of `blocks` blocks of `n` values, sizes differing by one at most.
fn bounds(n: usize, blocks: usize) -> impl Iterator<Item = (usize, usize)> {
    (0..blocks).map(move |b| (b * n / blocks, (b + 1) * n / blocks))
}

/// The sample variance of block figures (`blocks - 1` degrees of freedom).
fn variance(figures: &[f64]) -> f64 {
    let b = figures.len() as f64;
    let mean = figures.iter().sum::<f64>() / b;
    figures.iter().map(|f| (f - mean).powi(2)).sum::<f64>() / (b - 1.0)
}

/// The design effect read from block figures: the batch-means variance of the level's
/// figure (with the t quantile for `blocks - 1` degrees of freedom) over `iid_var`, the
/// variance of the level's figure were its values independent (with the normal quantile).
fn effect(figures: &[f64], iid_var: f64) -> f64 {
    let b = figures.len() as f64;
    let var = variance(figures);
    let t = t_975(figures.len() as u64 - 1);
    (t * t * var / b) / (Z_975 * Z_975 * iid_var)
}

/// The design effect over `blocks` blocks (at least 1): `figure` gives a block's figure from
/// its range of values.
fn block_effect(
    n: usize,
    iid_var: f64,
    blocks: usize,
    figure: impl Fn(usize, usize) -> f64,
) -> f64 {
    if n < MIN_VALUES || iid_var.is_nan() || iid_var <= 0.0 {
        return 1.0;
    }
    let figures: Vec<f64> = bounds(n, blocks).map(|(a, b)| figure(a, b)).collect();
    effect(&figures, iid_var).max(1.0)
}

/// The design effect of the mean of `values` (in the order the requests started; `round`
/// requests in flight together, see [`blocks`]).
pub fn mean_effect(values: &[f64], round: u32) -> f64 {
    let n = values.len();
    if n < MIN_VALUES {
        return 1.0;
    }
    let avg = values.iter().sum::<f64>() / n as f64;
    let var = values.iter().map(|v| (v - avg).powi(2)).sum::<f64>() / (n as f64 - 1.0);
    block_effect(n, var / n as f64, blocks(n, round, MEAN_ROUNDS), |a, b| {
        values[a..b].iter().sum::<f64>() / (b - a) as f64
    })
}

/// The design effect of the share of `values` (in start order) above `threshold` (for a
/// percentile's interval, the percentile's estimate): how that share scatters between
/// blocks, against `p (1 - p) / n` for independent values (`p` the share over all of them).
/// No value above it (or all): nothing to read, 1.
pub fn share_effect(values: &[f64], threshold: f64, round: u32) -> f64 {
    let n = values.len();
    let above = values.iter().filter(|v| **v > threshold).count();
    let p = above as f64 / n.max(1) as f64;
    block_effect(
        n,
        p * (1.0 - p) / n as f64,
        blocks(n, round, SHARE_ROUNDS),
        |a, b| {
            let above = values[a..b].iter().filter(|v| **v > threshold).count();
            above as f64 / (b - a) as f64
        },
    )
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
    if n < MIN_VALUES || sx <= 0.0 || sy <= 0.0 {
        return None;
    }
    let r = sy / sx;
    let mean_x = sx / n as f64;
    let residuals: f64 = pairs.iter().map(|(x, y)| (y - r * x).powi(2)).sum();
    let iid = t_975(n as u64 - 1) * (residuals / (n as f64 * (n as f64 - 1.0))).sqrt() / mean_x;
    let half = |blocks: usize| {
        let ratios: Vec<f64> = bounds(n, blocks)
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

/// A level's values past an SLA limit, block by block (the blocks a percentile's interval
/// reads, [`blocks`] with two rounds each, in start order): what the plain rule
/// ([`PastLimit::plain`]) decides on, kept in the level file so that a level read back is
/// judged as it was when it ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PastLimit {
    /// The limit the values were counted against, in the metric's unit.
    pub limit: f64,
    /// Per block: `[values, values above the limit]`.
    pub blocks: Vec<[u64; 2]>,
}

/// Which side of its limit a percentile plainly lies on: only above (see
/// [`PastLimit::plain_by`] for why never within).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Plain {
    /// Every block on its own puts the percentile far above the limit: the SLA fails.
    Above,
}

/// How `values` (in start order, `round` in flight together) fall about `limit`, block by
/// block; `None` below [`MIN_VALUES`] (no blocks to read).
pub fn past_limit(values: &[f64], limit: f64, round: u32) -> Option<PastLimit> {
    let n = values.len();
    if n < MIN_VALUES || !limit.is_finite() {
        return None;
    }
    let blocks = bounds(n, blocks(n, round, SHARE_ROUNDS))
        .map(|(a, e)| {
            let above = values[a..e].iter().filter(|v| **v > limit).count();
            [(e - a) as u64, above as u64]
        })
        .collect();
    Some(PastLimit { limit, blocks })
}

/// How far past its allowed share `1 - q` a block's share past the limit must be for the
/// plain rule: a quarter of a block past a p95 limit, a twentieth past a p99. Chosen on the
/// coverage benchmark (`docs/search.md`, "Plain verdicts").
pub const PLAIN_FACTOR: f64 = 5.0;

impl PastLimit {
    /// The plain rule (`docs/search.md`, "Plain verdicts") with [`PLAIN_FACTOR`].
    pub fn plain(&self, q: f64) -> Option<Plain> {
        self.plain_by(q, PLAIN_FACTOR)
    }

    /// The plain rule with a given `factor`: the `q`-quantile (0-1) lies above the limit when
    /// *every* block, read on its own as independent values, puts the whole 95 %
    /// order-statistic interval of its own `q`-quantile above the limit (fewer of its values
    /// within the limit than the interval's lower rank) *and* has at least `factor` times the
    /// allowed share `1 - q` of its values past the limit. At least three blocks; otherwise
    /// `None`: the level's interval decides.
    ///
    /// There is no plain pass. Its mirror (every block's interval within the limit, and at
    /// most `1 - q` over `factor` past it) called a warm TTFT p95 within limits 2 to 20 %
    /// under the long level's value in up to a quarter of the coverage benchmark's levels,
    /// whatever the factor: the tail of a server whose slow moments last longer than a block
    /// lives in those moments, and a level that missed them has almost no value past the
    /// limit in any block. A level that only passes on its interval says so.
    pub fn plain_by(&self, q: f64, factor: f64) -> Option<Plain> {
        if self.blocks.len() < FEWEST {
            return None;
        }
        let allowed = 1.0 - q;
        let past = |[values, above]: [u64; 2]| {
            let within = values - above.min(values);
            let share = above as f64 / values.max(1) as f64;
            let (lo, _) = order_statistic_ranks(values, q);
            lo.is_some_and(|lo| within < lo) && share >= factor * allowed
        };
        self.blocks.iter().all(|b| past(*b)).then_some(Plain::Above)
    }
}

/// The 1-based ranks bounding the `q`-quantile of `n` values with 95 % confidence when their
/// design effect is `effect`: the ranks of `n / effect` independent values, scaled back to
/// `n` outward (the lower rank down, the upper up), and never past the estimate's rank
/// ([`estimate_rank`]). `None` where no rank does.
pub fn widened_ranks(n: u64, q: f64, effect: f64) -> (Option<u64>, Option<u64>) {
    if effect <= 1.0 || n == 0 {
        return order_statistic_ranks(n, q);
    }
    let n_eff = ((n as f64 / effect).floor() as u64).max(1);
    let (lo, hi) = order_statistic_ranks(n_eff, q);
    let scale = n as f64 / n_eff as f64;
    // Never past the estimate's own rank: with very few effective values the scaled rank of a
    // bound can land beyond it (the lower bound of a p99 of two values is their largest, which
    // scales to the level's largest), and an interval must hold what it is around.
    let at = estimate_rank(n, q);
    let lo = lo
        .map(|l| ((l as f64 * scale).floor() as u64).min(at))
        .filter(|l| *l >= 1);
    let hi = hi
        .map(|u| ((u as f64 * scale).ceil() as u64).max(at))
        .filter(|u| *u <= n);
    (lo, hi)
}

/// The rank (1-based) of the `q`-quantile's estimate among `n` values: the nearest rank
/// `ceil(q n)`, at least 1, as the histogram reads it.
pub fn estimate_rank(n: u64, q: f64) -> u64 {
    ((q * n as f64).ceil() as u64).clamp(1, n.max(1))
}

#[cfg(test)]
#[path = "batch_tests.rs"]
mod process_tests;

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
    fn a_block_holds_two_rounds_for_a_share_three_for_a_mean_ten_at_most_three_at_least() {
        // (values, requests in flight together) -> blocks for a share, for a mean
        let table = [
            (1024, 0, 10, 10), // an open loop: ten
            (1024, 8, 10, 10), // 128 rounds
            (600, 20, 10, 10), // thirty rounds, exactly three a block
            (599, 20, 10, 9),  // one request short
            (400, 20, 10, 6),  // twenty rounds, exactly two a block
            (399, 20, 9, 6),   // one request short
            (1536, 128, 6, 4), // twelve rounds
            (1024, 128, 4, 3), // eight rounds
            (1024, 256, 3, 3), // four rounds: three blocks, not two
            (100, 512, 3, 3),  // less than a round
        ];
        for (n, round, share, mean) in table {
            let got = (
                blocks(n, round, SHARE_ROUNDS),
                blocks(n, round, MEAN_ROUNDS),
            );
            assert_eq!(got, (share, mean), "{n} values, {round} a round");
        }
    }

    #[test]
    fn values_past_a_limit_are_counted_block_by_block() {
        // 400 values at concurrency 20: twenty rounds, ten blocks of 40 for a share
        let values: Vec<f64> = (0..400)
            .map(|i| if i % 10 == 0 { 9.0 } else { 1.0 })
            .collect();
        let past = past_limit(&values, 5.0, 20).unwrap();
        assert_eq!(past.limit, 5.0);
        assert_eq!(past.blocks, vec![[40, 4]; 10]);
        // a value at the limit is within it
        assert_eq!(
            past_limit(&values, 9.0, 20).unwrap().blocks,
            vec![[40, 0]; 10]
        );
        // too few values to cut, or no limit to count against
        assert_eq!(past_limit(&values[..19], 5.0, 20), None);
        assert_eq!(past_limit(&values, f64::NAN, 20), None);
    }

    #[test]
    fn the_plain_rule_needs_every_block_on_one_side_and_far_from_its_share() {
        // (blocks [values, past the limit], quantile, factor) -> plain side. For 341 values
        // the p95's 95 % order-statistic ranks are 316 and 332 (p99: 334, with no upper bound
        // for fewer than 368), so with the factor 1 a block is plainly above a p95 limit with
        // 26 past it (342 values: 317, the same count past); with the factor 5 a quarter of a block (86 of 341) must be past a p95
        // limit, a twentieth (18) past a p99 one.
        let p = |blocks: Vec<[u64; 2]>, q: f64, factor: f64| {
            PastLimit {
                limit: 500.0,
                blocks,
            }
            .plain_by(q, factor)
        };
        assert_eq!(order_statistic_ranks(341, 0.95), (Some(316), Some(332)));
        assert_eq!(order_statistic_ranks(341, 0.99), (Some(334), None));
        type Row = (Vec<[u64; 2]>, f64, f64, Option<Plain>);
        let table: [Row; 16] = [
            // level 512's TTFT: 86, 340 and 342 past 500 ms
            (
                vec![[341, 86], [341, 340], [342, 342]],
                0.95,
                1.0,
                Some(Plain::Above),
            ),
            (
                vec![[341, 86], [341, 340], [342, 342]],
                0.95,
                5.0,
                Some(Plain::Above),
            ),
            (vec![[341, 85], [341, 340], [342, 342]], 0.95, 5.0, None),
            (vec![[341, 26]; 3], 0.95, 1.0, Some(Plain::Above)),
            (vec![[341, 26]; 3], 0.95, 5.0, None),
            (vec![[341, 26], [341, 26], [342, 25]], 0.95, 1.0, None),
            // never plainly within, however few values are past the limit
            (vec![[341, 9], [341, 9], [342, 9]], 0.95, 1.0, None),
            (vec![[341, 0]; 3], 0.95, 5.0, None),
            (vec![[341, 0]; 3], 0.5, 5.0, None),
            (vec![[341, 0], [341, 1], [341, 0]], 0.95, 1.0, None),
            // one block on each side: nothing is plain
            (vec![[341, 200], [341, 0], [342, 0]], 0.95, 1.0, None),
            // a p99 of 341 values has no upper bound: never plainly within
            (vec![[341, 0]; 3], 0.99, 1.0, None),
            (vec![[341, 8]; 3], 0.99, 1.0, Some(Plain::Above)),
            (vec![[341, 18]; 3], 0.99, 5.0, Some(Plain::Above)),
            (vec![[341, 18], [341, 17], [341, 18]], 0.99, 5.0, None),
            // two blocks are too few to read
            (vec![[512, 400]; 2], 0.95, 1.0, None),
        ];
        for (blocks, q, factor, want) in table {
            assert_eq!(
                p(blocks.clone(), q, factor),
                want,
                "{blocks:?} at {q}, {factor}"
            );
        }
    }

    #[test]
    fn widened_ranks_never_pass_the_estimate() {
        // 1,024 values with a design effect of 600: one effective value and a half. A p99 of
        // one value is bounded below by that value (rank 1 of 1), which scaled to 1,024 was
        // rank 1,024, past the estimate's 1,014; a p95's upper rank likewise stays at or above
        // its estimate's 973
        assert_eq!(estimate_rank(1024, 0.99), 1014);
        assert_eq!(widened_ranks(1024, 0.99, 600.0), (Some(1014), None));
        assert_eq!(estimate_rank(1024, 0.95), 973);
        for effect in [1.0, 1.5, 3.0, 10.0, 50.0, 300.0, 600.0, 1024.0] {
            for q in [0.5, 0.9, 0.95, 0.99] {
                let (lo, hi) = widened_ranks(1024, q, effect);
                let at = estimate_rank(1024, q);
                assert!(lo.is_none_or(|l| l <= at), "{q} {effect}: {lo:?}");
                assert!(hi.is_none_or(|h| h >= at), "{q} {effect}: {hi:?}");
            }
        }
    }

    #[test]
    fn blocks_cover_every_value_once() {
        for blocks in [BATCHES, BATCHES / 2] {
            let b: Vec<(usize, usize)> = bounds(105, blocks).collect();
            assert_eq!(b.len(), blocks);
            assert_eq!(b[0].0, 0);
            assert_eq!(b[blocks - 1].1, 105);
            assert!(b.windows(2).all(|w| w[0].1 == w[1].0));
        }
        assert_eq!(bounds(105, 10).nth(9), Some((94, 105)));
        assert_eq!(bounds(105, 5).next(), Some((0, 21)));
    }

    #[test]
    fn blocks_that_agree_leave_the_independent_interval() {
        // 1..=20 over and over: every block (of 60, 120 or 200) holds the same values
        let v: Vec<f64> = (0..600).map(|i| (i % 20 + 1) as f64).collect();
        for round in [0, 10, 20] {
            assert_eq!(mean_effect(&v, round), 1.0);
            assert_eq!(share_effect(&v, 18.0, round), 1.0);
        }
        // nothing above the threshold, or everything: nothing to read
        let slow = two_periods(10.0, 20.0);
        assert_eq!(share_effect(&slow, 25.0, 0), 1.0);
        assert_eq!(share_effect(&slow, 5.0, 0), 1.0);
        // too few values for two a block
        assert_eq!(mean_effect(&two_periods(1.0, 2.0)[..19], 0), 1.0);
        assert_eq!(share_effect(&two_periods(1.0, 2.0)[..19], 1.0, 0), 1.0);
    }

    #[test]
    fn a_slow_period_raises_the_effect_and_longer_rounds_take_fewer_blocks() {
        // share above 10 over ten blocks (an open loop, or rounds of 10): 1,1,1,1,1,0,0,0,0,0,
        // variance 0.25 * 10/9; independent: 0.25 / 200
        let v = two_periods(10.0, 20.0);
        let iid = 0.25 / 200.0;
        let ten = t_975(9).powi(2) * (0.25 * 10.0 / 9.0 / 10.0) / (Z_975 * Z_975 * iid);
        assert!((ten - 29.61).abs() < 0.01, "{ten}");
        for round in [0, 10] {
            let got = share_effect(&v, 10.0, round);
            assert!((got - ten).abs() < 1e-9, "{round}: {got} vs {ten}");
        }
        // rounds of 20 make five blocks of 40: 1, 1, 0.5, 0, 0 (variance 0.25), t with 4
        // degrees of freedom
        let five = t_975(4).powi(2) * (0.25 / 5.0) / (Z_975 * Z_975 * iid);
        assert!((five - 80.26).abs() < 0.01, "{five}");
        let got = share_effect(&v, 10.0, 20);
        assert!((got - five).abs() < 1e-9, "{got} vs {five}");
        // the mean, against s^2 / 200, rounds of 40: three blocks, 20 (0..66), 15.07
        // (66..133: 34 slow, 33 fast), 10, with 2 degrees of freedom
        let s2 = 25.0 * 200.0 / 199.0;
        let thirds: [f64; 3] = [20.0, (34.0 * 20.0 + 33.0 * 10.0) / 67.0, 10.0];
        let m = thirds.iter().sum::<f64>() / 3.0;
        let var3 = thirds.iter().map(|x| (x - m).powi(2)).sum::<f64>() / 2.0;
        let three = t_975(2).powi(2) * (var3 / 3.0) / (Z_975 * Z_975 * s2 / 200.0);
        let got = mean_effect(&v, 40);
        assert!((got - three).abs() < 1e-9, "{got} vs {three}");
        assert!((got - 319.7).abs() < 0.1, "{got}");
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
