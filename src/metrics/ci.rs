//! 95 % confidence intervals for the statistics an SLA compares (see `docs/search.md`,
//! "Confidence"):
//!
//! - a percentile: distribution-free order-statistic bounds. With `n` samples, the `l`-th
//!   smallest lies below the true `q`-quantile with probability `P(Bin(n, q) >= l)`, and the
//!   `u`-th smallest above it with probability `P(Bin(n, q) < u)`. The ranks are the tightest
//!   with 2.5 % in each tail; the values at those ranks are read from the HDR histogram (no
//!   sorting). When `n` is too small for a rank to exist (p99 needs 368 samples before any
//!   sample bounds it from above), that side is unbounded;
//! - a mean: Student's t-interval, `avg +- t(0.975, n - 1) * s / sqrt(n)`;
//! - an error rate: the Wilson score interval.
//!
//! Written here rather than taken from a statistics crate: the whole need is a binomial CDF
//! over a window, one log-gamma and a t-quantile table, far less than any such crate brings.

use crate::record::Interval;

/// Two-sided confidence level of every interval here.
pub const CONFIDENCE: f64 = 0.95;
/// Each tail's share: (1 - [`CONFIDENCE`]) / 2.
const TAIL: f64 = 0.025;
/// The standard normal quantile at 0.975.
pub const Z_975: f64 = 1.959_963_984_540_054;

/// The 1-based ranks of the order statistics that bound the `q`-quantile of `n` samples with
/// 95 % confidence (2.5 % each side): `(lower, upper)`, `None` where no rank does.
pub fn order_statistic_ranks(n: u64, q: f64) -> (Option<u64>, Option<u64>) {
    if n == 0 || !(q > 0.0 && q < 1.0) {
        return (None, None);
    }
    let cdf = BinomialCdf::new(n, q);
    // lower: the largest l with P(Bin <= l - 1) <= 2.5 %; upper: the smallest u with
    // P(Bin <= u - 1) >= 97.5 %
    let mut lower = None;
    let mut upper = None;
    let mut acc = 0.0;
    let mut pmf = cdf.pmf(cdf.first);
    // pmf(k + 1) = pmf(k) (n - k) / (k + 1) q / (1 - q)
    let odds = q / (1.0 - q);
    for k in cdf.first..=cdf.last {
        if k > cdf.first {
            pmf *= (n - k + 1) as f64 / k as f64 * odds;
        }
        acc += pmf;
        if acc <= TAIL {
            lower = Some(k + 1);
        }
        if acc >= 1.0 - TAIL {
            upper = Some(k + 1);
            break;
        }
    }
    (lower.filter(|l| *l <= n), upper.filter(|u| *u <= n))
}

/// The fewest samples for which the 95 % interval of the `q`-quantile is bounded above:
/// `q^n <= 2.5 %` (368 for p99, 72 for p95, 36 for p90, 6 for the median).
pub fn min_samples_for_upper_bound(q: f64) -> u64 {
    if q <= 0.0 {
        return 1;
    }
    if q >= 1.0 {
        return u64::MAX;
    }
    let mut n = (TAIL.ln() / q.ln()).floor().max(1.0) as u64;
    while q.powf(n as f64) > TAIL {
        n += 1;
    }
    n
}

/// The binomial distribution `Bin(n, q)` over the window where its mass is, `[first, last]`
/// (the mass outside it is below 1e-30).
struct BinomialCdf {
    n: u64,
    ln_q: f64,
    ln_1q: f64,
    ln_n_fact: f64,
    first: u64,
    last: u64,
}

impl BinomialCdf {
    fn new(n: u64, q: f64) -> Self {
        let mean = n as f64 * q;
        let sd = (mean * (1.0 - q)).sqrt();
        // 12 standard deviations (plus a margin for small n) hold all but ~1e-32 of the mass
        let reach = 12.0 * sd + 10.0;
        let first = (mean - reach).floor().max(0.0) as u64;
        let last = ((mean + reach).ceil() as u64).min(n);
        BinomialCdf {
            n,
            ln_q: q.ln(),
            ln_1q: (1.0 - q).ln(),
            ln_n_fact: ln_gamma(n as f64 + 1.0),
            first,
            last,
        }
    }

    fn pmf(&self, k: u64) -> f64 {
        let (kf, rest) = (k as f64, (self.n - k) as f64);
        let ln_choose = self.ln_n_fact - ln_gamma(kf + 1.0) - ln_gamma(rest + 1.0);
        // 0 * ln(0) is 0 here: q = 0 or 1 puts all the mass on one k
        let term = |count: f64, ln_p: f64| if count == 0.0 { 0.0 } else { count * ln_p };
        (ln_choose + term(kf, self.ln_q) + term(rest, self.ln_1q)).exp()
    }
}

/// ln Γ(x) for x > 0 (Lanczos, g = 7, nine terms; relative error below 1e-14).
pub fn ln_gamma(x: f64) -> f64 {
    const G: f64 = 7.0;
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // reflection: Γ(x) Γ(1 - x) = π / sin(π x)
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut a = C[0];
    let t = x + G + 0.5;
    for (i, c) in C.iter().enumerate().skip(1) {
        a += c / (x + i as f64);
    }
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

/// Student's t quantile at 0.975 for `df` degrees of freedom (exact to 9 digits up to 30,
/// then the Cornish-Fisher expansion around the normal quantile, within 1e-6).
pub fn t_975(df: u64) -> f64 {
    const TABLE: [f64; 30] = [
        12.706_204_736,
        4.302_652_730,
        3.182_446_305,
        2.776_445_105,
        2.570_581_836,
        2.446_911_851,
        2.364_624_252,
        2.306_004_135,
        2.262_157_163,
        2.228_138_852,
        2.200_985_160,
        2.178_812_830,
        2.160_368_656,
        2.144_786_688,
        2.131_449_546,
        2.119_905_299,
        2.109_815_578,
        2.100_922_040,
        2.093_024_054,
        2.085_963_447,
        2.079_613_845,
        2.073_873_068,
        2.068_657_610,
        2.063_898_562,
        2.059_538_553,
        2.055_529_439,
        2.051_830_516,
        2.048_407_142,
        2.045_229_642,
        2.042_272_456,
    ];
    match df {
        0 => f64::INFINITY,
        1..=30 => TABLE[df as usize - 1],
        _ => {
            let z = Z_975;
            let v = df as f64;
            let (z3, z5, z7, z9) = (z.powi(3), z.powi(5), z.powi(7), z.powi(9));
            z + (z3 + z) / (4.0 * v)
                + (5.0 * z5 + 16.0 * z3 + 3.0 * z) / (96.0 * v * v)
                + (3.0 * z7 + 19.0 * z5 + 17.0 * z3 - 15.0 * z) / (384.0 * v.powi(3))
                + (79.0 * z9 + 776.0 * z7 + 1482.0 * z5 - 1920.0 * z3 - 945.0 * z)
                    / (92_160.0 * v.powi(4))
        }
    }
}

/// The t-interval of a mean from `n` values with population standard deviation `std_pop`
/// (ddof = 0, as [`super::Stats`] reports it). Unbounded below two values.
pub fn mean_interval(avg: f64, std_pop: f64, n: u64) -> Interval {
    if n < 2 {
        return Interval(None, None);
    }
    let s = std_pop * (n as f64 / (n - 1) as f64).sqrt();
    let half = t_975(n - 1) * s / (n as f64).sqrt();
    Interval(Some(avg - half), Some(avg + half))
}

/// The Wilson score interval of a proportion: `hits` of `n`. Unbounded when `n` is 0.
pub fn wilson(hits: u64, n: u64) -> Interval {
    if n == 0 {
        return Interval(None, None);
    }
    let (nf, z) = (n as f64, Z_975);
    let p = hits as f64 / nf;
    let denom = 1.0 + z * z / nf;
    let centre = (p + z * z / (2.0 * nf)) / denom;
    let half = z / denom * (p * (1.0 - p) / nf + z * z / (4.0 * nf * nf)).sqrt();
    // with no hits (or all) the bound is 0 (or 1) exactly, not a rounding residue of it
    let lo = if hits == 0 {
        0.0
    } else {
        (centre - half).max(0.0)
    };
    let hi = if hits == n {
        1.0
    } else {
        (centre + half).min(1.0)
    };
    Interval(Some(lo), Some(hi))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_statistic_ranks_table() {
        // exact binomial sums (Python fractions): n, q, lower rank, upper rank
        let cases: &[(u64, f64, Option<u64>, Option<u64>)] = &[
            (16, 0.50, Some(4), Some(13)),
            (16, 0.90, Some(12), None),
            (16, 0.95, Some(13), None),
            (16, 0.99, Some(15), None),
            (100, 0.50, Some(40), Some(61)),
            (100, 0.90, Some(84), Some(96)),
            (100, 0.95, Some(90), Some(100)),
            (100, 0.99, Some(97), None),
            (1000, 0.50, Some(469), Some(532)),
            (1000, 0.90, Some(881), Some(919)),
            (1000, 0.95, Some(936), Some(964)),
            (1000, 0.99, Some(983), Some(997)),
            (5, 0.50, None, None),
            (0, 0.50, None, None),
        ];
        for (n, q, lo, hi) in cases {
            assert_eq!(order_statistic_ranks(*n, *q), (*lo, *hi), "n={n} q={q}");
        }
    }

    #[test]
    fn large_samples_stay_near_the_normal_approximation() {
        // n = 1,000,000, p99: q n = 990,000, sd = 99.5; ranks within a unit of q n -+ 1.96 sd
        let (lo, hi) = order_statistic_ranks(1_000_000, 0.99);
        let (lo, hi) = (lo.unwrap() as f64, hi.unwrap() as f64);
        assert!((lo - (990_000.0 - 195.0)).abs() <= 2.0, "{lo}");
        assert!((hi - (990_000.0 + 196.0)).abs() <= 2.0, "{hi}");
    }

    #[test]
    fn fewest_samples_that_bound_a_percentile() {
        assert_eq!(min_samples_for_upper_bound(0.99), 368);
        assert_eq!(min_samples_for_upper_bound(0.95), 72);
        assert_eq!(min_samples_for_upper_bound(0.90), 36);
        assert_eq!(min_samples_for_upper_bound(0.50), 6);
        // consistent with the ranks: one sample fewer has no upper bound
        for q in [0.5, 0.9, 0.95, 0.99] {
            let n = min_samples_for_upper_bound(q);
            assert!(order_statistic_ranks(n, q).1.is_some(), "{q}");
            assert!(order_statistic_ranks(n - 1, q).1.is_none(), "{q}");
        }
    }

    #[test]
    fn ln_gamma_matches_factorials() {
        let mut fact = 1.0f64;
        for k in 1..=30u32 {
            fact *= k as f64;
            let got = ln_gamma(k as f64 + 1.0);
            assert!((got - fact.ln()).abs() < 1e-10 * fact.ln().max(1.0), "{k}");
        }
        assert!((ln_gamma(0.5) - std::f64::consts::PI.sqrt().ln()).abs() < 1e-13);
    }

    #[test]
    fn t_quantiles_table() {
        // scipy.stats.t.ppf(0.975, df)
        let cases = [
            (1, 12.706204736),
            (10, 2.228138852),
            (30, 2.042272456),
            (31, 2.039513446),
            (40, 2.021075390),
            (60, 2.000297822),
            (100, 1.983971519),
            (1000, 1.962339081),
        ];
        for (df, want) in cases {
            assert!((t_975(df) - want).abs() < 2e-6, "df {df}: {}", t_975(df));
        }
        assert!(t_975(0).is_infinite());
    }

    #[test]
    fn mean_and_wilson_intervals() {
        // 4 values with population std 1: s = sqrt(4/3), half = 3.182446305 * s / 2
        let i = mean_interval(10.0, 1.0, 4);
        let half = 3.182_446_305 * (4.0f64 / 3.0).sqrt() / 2.0;
        assert!((i.hi().unwrap() - (10.0 + half)).abs() < 1e-9);
        assert!((i.lo().unwrap() - (10.0 - half)).abs() < 1e-9);
        assert_eq!(mean_interval(10.0, 0.0, 1), Interval(None, None));
        // Wilson, 0 of 100: [0, 3.70 %]; 5 of 100: [2.15 %, 11.17 %]
        let w = wilson(0, 100);
        assert_eq!(w.lo(), Some(0.0));
        assert!((w.hi().unwrap() - 0.036_994).abs() < 1e-6, "{w:?}");
        let w = wilson(5, 100);
        assert!((w.lo().unwrap() - 0.021_544).abs() < 1e-6, "{w:?}");
        assert!((w.hi().unwrap() - 0.111_750).abs() < 1e-6, "{w:?}");
        assert_eq!(wilson(0, 0), Interval(None, None));
        assert_eq!(
            serde_json::to_string(&Interval(Some(1.5), None)).unwrap(),
            "[1.5,null]"
        );
    }
}
