//! Knee detection (docs/search.md, "Knee"): the smallest concurrency past which a further doubling adds
//! little throughput (under 10 % by default) while p99 latency keeps rising; and the levels a
//! sweep adds to bracket it within 1.25x.
//!
//! Throughput and p99 at twice a level's concurrency are read off the measured curve,
//! interpolated linearly in log concurrency between the levels around it, so sparse and dense
//! sweeps judge the same thing. Nothing is extrapolated past the highest level: a level whose
//! double was not measured cannot be the knee, and while throughput still rises at the top
//! the knee is "not reached". The curve holds only the levels a run may name (see
//! `plan::analysis::qualified_curve`).
//!
//! Each level's throughput carries its 95 % interval (batch means, `metrics::batch`), so a
//! doubling's gain does too: the ratio of the two throughputs with their relative half-widths
//! added in quadrature. The knee is named only where the whole gain interval lies under the
//! threshold: the first such level. Levels before it whose interval straddles the threshold
//! are named beside it (the knee may lie there); with no level wholly under,
//! the knee is *not decided* from the first straddling level on. Curves read from files
//! without intervals (older runs, imports) judge the point figures as before.

use crate::metrics::LevelSummary;
use serde::Serialize;

/// A further doubling must add at least this much throughput (fraction) to be "worth it".
pub const DEFAULT_MIN_GAIN: f64 = 0.10;
/// `--refine-knee` stops when the knee's bracket is this narrow (high / low).
pub const REFINE_RATIO: f64 = 1.25;
/// `--refine-knee` adds at most this many levels.
pub const REFINE_MAX_EXTRA: u32 = 3;

/// One concurrency's measurements (means over its levels).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CurvePoint {
    pub concurrency: u32,
    /// Output tokens/sec.
    pub output_tps: f64,
    /// End-to-end p99 (ms).
    pub e2e_p99_ms: f64,
    /// The 95 % half-width of `output_tps`: infinite when a level could not bound it, `None`
    /// when no interval was recorded.
    #[serde(skip)]
    pub output_tps_half: Option<f64>,
}

/// Where the knee is.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Knee {
    pub concurrency: u32,
    /// The measured level just below it: the knee lies in (below, concurrency].
    pub below: Option<u32>,
    /// Throughput gain (fraction) of doubling from the knee.
    pub doubling_gain: f64,
    /// Its 95 % interval, when the levels' throughputs carry one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gain_ci: Option<[f64; 2]>,
    /// Levels below it whose gain interval straddles the threshold (with p99 rising): the
    /// measurements cannot rule out that the knee lies there.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub straddling: Vec<DoublingGain>,
    pub output_tps: f64,
    pub e2e_p99_ms: f64,
}

/// A doubling's gain at one level of the curve.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct DoublingGain {
    pub concurrency: u32,
    /// Output tokens/sec there, and at twice the load (interpolated).
    pub output_tps: f64,
    pub doubled_tps: f64,
    /// The gain (fraction) and its 95 % interval (`None` sides: unbounded).
    pub gain: f64,
    pub lo: Option<f64>,
    pub hi: Option<f64>,
}

/// A knee the intervals cannot place: no level's whole gain interval is under the threshold,
/// and from `from` on they straddle it (or cannot be bounded).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UndecidedKnee {
    pub from: u32,
    /// The gains from `from` on, to the last level with a double.
    pub gains: Vec<DoublingGain>,
}

/// What the curve says of its knee.
#[derive(Debug, Clone, PartialEq)]
pub enum KneeFinding {
    Named(Knee),
    Undecided(UndecidedKnee),
    /// Throughput still rises (or flat with falling latency) wherever a double was measured.
    NotFound,
}

/// The curve of a run: complete levels with latency, one point per concurrency (means).
pub fn curve(levels: &[LevelSummary]) -> Vec<CurvePoint> {
    type Seen = (f64, f64, Option<f64>);
    let mut pts: Vec<(u32, Vec<Seen>)> = Vec::new();
    for l in levels.iter().filter(|l| !l.partial) {
        let Some(p99) = l.e2e_p99_ms() else { continue };
        let seen = (l.sustained_tps(), p99, l.sustained_tps_half_width());
        match pts.iter_mut().find(|p| p.0 == l.load()) {
            Some(p) => p.1.push(seen),
            None => pts.push((l.load(), vec![seen])),
        }
    }
    pts.sort_by_key(|p| p.0);
    pts.into_iter()
        .map(|(c, v)| {
            let k = v.len() as f64;
            // the mean of k independent measurements: half-widths add in quadrature, over k
            let half = v
                .iter()
                .map(|x| x.2.map(|h| h * h))
                .sum::<Option<f64>>()
                .map(|s| s.sqrt() / k);
            CurvePoint {
                concurrency: c,
                output_tps: v.iter().map(|x| x.0).sum::<f64>() / k,
                e2e_p99_ms: v.iter().map(|x| x.1).sum::<f64>() / k,
                output_tps_half: half,
            }
        })
        .collect()
}

/// (throughput, p99, throughput's half-width) at concurrency `x` on the curve (sorted by
/// concurrency): a weighted sum of two levels, whose half-widths add in quadrature.
fn at(curve: &[CurvePoint], x: f64) -> Option<(f64, f64, Option<f64>)> {
    let first = curve.first()?;
    let last = curve.last()?;
    if x < first.concurrency as f64 || x > last.concurrency as f64 {
        return None;
    }
    let w = curve.windows(2).find(|w| x <= w[1].concurrency as f64)?;
    let (a, b) = (&w[0], &w[1]);
    let t = (x / a.concurrency as f64).ln() / (b.concurrency as f64 / a.concurrency as f64).ln();
    let half = match (a.output_tps_half, b.output_tps_half) {
        _ if t >= 1.0 => b.output_tps_half,
        _ if t <= 0.0 => a.output_tps_half,
        (Some(ha), Some(hb)) => Some((((1.0 - t) * ha).powi(2) + (t * hb).powi(2)).sqrt()),
        _ => None,
    };
    Some((
        a.output_tps + t * (b.output_tps - a.output_tps),
        a.e2e_p99_ms + t * (b.e2e_p99_ms - a.e2e_p99_ms),
        half,
    ))
}

/// The gain of doubling from `p`, with its interval when both throughputs carry one:
/// `(gain, Some((lo, hi)))`, a side `None` when unbounded.
fn gain_at(p: &CurvePoint, tps2: f64, half2: Option<f64>) -> (f64, Option<GainInterval>) {
    let gain = tps2 / p.output_tps - 1.0;
    let ci = p.output_tps_half.zip(half2).map(|(h1, h2)| {
        let rel = ((h1 / p.output_tps).powi(2) + (h2 / tps2.max(f64::MIN_POSITIVE)).powi(2)).sqrt();
        if rel.is_finite() {
            let r = tps2 / p.output_tps;
            (Some(r * (1.0 - rel) - 1.0), Some(r * (1.0 + rel) - 1.0))
        } else {
            (None, None)
        }
    });
    (gain, ci)
}

/// A gain's interval, `None` sides unbounded.
type GainInterval = (Option<f64>, Option<f64>);

/// The knee of a curve (sorted by concurrency), or `None` when no knee is decided (throughput
/// never flattens within the measured range, or the intervals cannot tell).
pub fn find_knee(curve: &[CurvePoint], min_gain: f64) -> Option<Knee> {
    match knee_finding(curve, min_gain) {
        KneeFinding::Named(k) => Some(k),
        _ => None,
    }
}

/// The knee of a curve (sorted by concurrency), judged with the throughputs' intervals.
pub fn knee_finding(curve: &[CurvePoint], min_gain: f64) -> KneeFinding {
    let Some(top) = curve.last().map(|p| p.concurrency) else {
        return KneeFinding::NotFound;
    };
    // every level with a measured double, its gain, whether latency rises there and whether
    // the gain has an interval
    let candidates: Vec<(usize, DoublingGain, bool, bool)> = curve
        .iter()
        .enumerate()
        .filter(|(_, p)| p.concurrency < top && p.output_tps > 0.0)
        .filter_map(|(i, p)| {
            let (tps2, p99_2, half2) = at(curve, 2.0 * p.concurrency as f64)?;
            let (gain, ci) = gain_at(p, tps2, half2);
            let (lo, hi) = ci.unwrap_or((Some(gain), Some(gain)));
            let g = DoublingGain {
                concurrency: p.concurrency,
                output_tps: p.output_tps,
                doubled_tps: tps2,
                gain,
                lo,
                hi,
            };
            Some((i, g, p99_2 > p.e2e_p99_ms, ci.is_some()))
        })
        .collect();
    let under = |g: &DoublingGain| g.hi.is_some_and(|h| h < min_gain);
    let worth = |g: &DoublingGain| g.lo.is_some_and(|l| l >= min_gain);
    // the first level that is not clearly short of the knee (latency rising there)
    let Some(first) = candidates
        .iter()
        .position(|(_, g, rising, _)| *rising && !worth(g))
    else {
        return KneeFinding::NotFound;
    };
    // the knee: the first level from there whose whole interval is under the threshold; the
    // levels between straddle it and are named beside it
    let Some(at) = candidates[first..]
        .iter()
        .position(|(_, g, rising, _)| *rising && under(g))
        .map(|k| first + k)
    else {
        return KneeFinding::Undecided(UndecidedKnee {
            from: candidates[first].1.concurrency,
            gains: candidates[first..].iter().map(|c| c.1).collect(),
        });
    };
    let (i, g, _, has_ci) = &candidates[at];
    let p = &curve[*i];
    KneeFinding::Named(Knee {
        concurrency: p.concurrency,
        below: i.checked_sub(1).map(|j| curve[j].concurrency),
        doubling_gain: g.gain,
        gain_ci: g.lo.zip(g.hi).filter(|_| *has_ci).map(|(l, h)| [l, h]),
        straddling: candidates[first..at]
            .iter()
            .filter(|(_, g, rising, _)| *rising && !worth(g))
            .map(|c| c.1)
            .collect(),
        output_tps: p.output_tps,
        e2e_p99_ms: p.e2e_p99_ms,
    })
}

/// The next level `--refine-knee` adds: the geometric midpoint of the knee's bracket, while
/// it is wider than `ratio` and `extra_used < max_extra`.
pub fn refine_next(
    curve: &[CurvePoint],
    min_gain: f64,
    ratio: f64,
    extra_used: u32,
    max_extra: u32,
) -> Option<u32> {
    if extra_used >= max_extra {
        return None;
    }
    let knee = find_knee(curve, min_gain)?;
    let below = knee.below?;
    let (l, h) = (below as f64, knee.concurrency as f64);
    if h / l <= ratio || knee.concurrency - below <= 1 {
        return None;
    }
    Some(((l * h).sqrt().round() as u32).clamp(below + 1, knee.concurrency - 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A continuous-batching server with `slots` batch slots: throughput rises as
    /// c / (10 + 0.12 c) until the slots are full, then stays; latency keeps rising.
    fn server(c: u32, slots: u32) -> CurvePoint {
        let run = c.min(slots) as f64;
        let step = 10.0 + 0.12 * run;
        let tps = run * 1000.0 / step;
        let p99 = 256.0 * step * (c as f64 / run);
        CurvePoint {
            concurrency: c,
            output_tps: tps,
            e2e_p99_ms: p99,
            output_tps_half: None,
        }
    }

    fn sweep(levels: &[u32]) -> Vec<CurvePoint> {
        levels.iter().map(|c| server(*c, 256)).collect()
    }

    #[test]
    fn reference_levels_put_the_knee_at_256() {
        let k = find_knee(&sweep(&[64, 256, 1024]), DEFAULT_MIN_GAIN).unwrap();
        assert_eq!((k.concurrency, k.below), (256, Some(64)));
        assert_eq!(k.doubling_gain, 0.0);
        assert_eq!(
            find_knee(&sweep(&[16, 64, 256, 1024]), DEFAULT_MIN_GAIN)
                .unwrap()
                .concurrency,
            256
        );
    }

    #[test]
    fn a_dense_sweep_finds_the_doubling_point() {
        // tps(256) / tps(c) = 1.1 at c = 182: the first level past it is the knee
        let levels: Vec<u32> = (0..40).map(|i| (16.0 * 1.1f64.powi(i)) as u32).collect();
        let k = find_knee(&sweep(&levels), DEFAULT_MIN_GAIN).unwrap();
        assert_eq!((k.below, k.concurrency), (Some(173), 190));
    }

    #[test]
    fn refinement_narrows_the_bracket_within_three_levels() {
        let mut levels = vec![16, 64, 256, 1024];
        let mut added = vec![];
        while let Some(c) = refine_next(
            &sweep(&{
                let mut l = levels.clone();
                l.sort();
                l
            }),
            DEFAULT_MIN_GAIN,
            REFINE_RATIO,
            added.len() as u32,
            REFINE_MAX_EXTRA,
        ) {
            added.push(c);
            levels.push(c);
        }
        levels.sort();
        assert_eq!(added, vec![128, 181, 215]);
        let k = find_knee(&sweep(&levels), DEFAULT_MIN_GAIN).unwrap();
        assert_eq!((k.below, k.concurrency), (Some(181), 215));
        // the curve's true doubling point is 182: 215 is within REFINE_RATIO of it
        assert!(k.concurrency as f64 / 182.0 < REFINE_RATIO);
    }

    #[test]
    fn nothing_is_extrapolated_past_the_top_level() {
        // 128 flattens against 181 (0.4 % apart), but twice 128 was never measured: a noise
        // difference between the last two levels must not be read as a knee
        let pts: Vec<CurvePoint> = [
            (64, 1000.0, 100.0),
            (128, 1800.0, 110.0),
            (181, 1807.0, 150.0),
        ]
        .iter()
        .map(|(c, t, p)| CurvePoint {
            concurrency: *c,
            output_tps: *t,
            e2e_p99_ms: *p,
            output_tps_half: None,
        })
        .collect();
        assert_eq!(find_knee(&pts, DEFAULT_MIN_GAIN), None);
        // measure 256 and the knee is 128
        let mut more = pts.clone();
        more.push(CurvePoint {
            concurrency: 256,
            output_tps: 1810.0,
            e2e_p99_ms: 200.0,
            output_tps_half: None,
        });
        assert_eq!(find_knee(&more, DEFAULT_MIN_GAIN).unwrap().concurrency, 128);
    }

    #[test]
    fn no_knee_while_throughput_keeps_climbing() {
        assert_eq!(find_knee(&sweep(&[1, 2, 4, 8]), DEFAULT_MIN_GAIN), None);
        assert_eq!(find_knee(&sweep(&[64]), DEFAULT_MIN_GAIN), None);
        assert_eq!(find_knee(&[], DEFAULT_MIN_GAIN), None);
        // flat throughput but falling latency is not a knee
        let flat: Vec<CurvePoint> = [10, 20, 40]
            .iter()
            .map(|c| CurvePoint {
                concurrency: *c,
                output_tps: 100.0,
                e2e_p99_ms: 1000.0 / *c as f64,
                output_tps_half: None,
            })
            .collect();
        assert_eq!(find_knee(&flat, DEFAULT_MIN_GAIN), None);
    }

    /// The llama.cpp case (4 slots): steady 42.5, 49.0, 57.9 and 56.2 tok/s at 1, 2, 4 and 8,
    /// each level's throughput known to `rel` (its 95 % half-width over its value).
    fn llama(rel: f64) -> Vec<CurvePoint> {
        [
            (1, 42.5, 1000.0),
            (2, 49.0, 1500.0),
            (4, 57.9, 2500.0),
            (8, 56.2, 5000.0),
        ]
        .iter()
        .map(|(c, t, p)| CurvePoint {
            concurrency: *c,
            output_tps: *t,
            e2e_p99_ms: *p,
            output_tps_half: Some(t * rel),
        })
        .collect()
    }

    #[test]
    fn a_knee_is_named_only_where_the_whole_gain_interval_is_under_the_threshold() {
        // 1 % each: 1 -> 2 adds 15.3 % [13.7, 16.9], 2 -> 4 18.2 % [16.5, 19.9], both clearly
        // worth it; 4 -> 8 adds -2.9 % [-4.3, -1.6]: the knee is 4
        let k = find_knee(&llama(0.01), DEFAULT_MIN_GAIN).unwrap();
        assert_eq!((k.concurrency, k.below), (4, Some(2)));
        let r = 56.2 / 57.9;
        let rel = (2.0f64 * 0.01 * 0.01).sqrt();
        assert!((k.doubling_gain - (r - 1.0)).abs() < 1e-12);
        let [lo, hi] = k.gain_ci.unwrap();
        assert!((lo - (r * (1.0 - rel) - 1.0)).abs() < 1e-12, "{lo}");
        assert!((hi - (r * (1.0 + rel) - 1.0)).abs() < 1e-12, "{hi}");
        assert!((hi - -0.0157).abs() < 1e-4, "{hi}");
    }

    #[test]
    fn wide_or_open_intervals_leave_the_knee_not_decided() {
        // 20 % each: 1 -> 2 adds 15.3 % [-17.3, 47.9]: it may be the knee or not, and so may
        // every level after it (4 -> 8: [-30.4, 24.5])
        let KneeFinding::Undecided(u) = knee_finding(&llama(0.2), DEFAULT_MIN_GAIN) else {
            panic!("decided")
        };
        assert_eq!(u.from, 1);
        let at: Vec<u32> = u.gains.iter().map(|g| g.concurrency).collect();
        assert_eq!(at, [1, 2, 4]);
        let g = u.gains[0];
        let rel = (2.0f64 * 0.04).sqrt();
        let r = 49.0 / 42.5;
        assert_eq!((g.output_tps, g.doubled_tps), (42.5, 49.0));
        assert!((g.lo.unwrap() - (r * (1.0 - rel) - 1.0)).abs() < 1e-12);
        assert!((g.hi.unwrap() - 0.4790).abs() < 1e-4, "{:?}", g.hi);
        // levels too short to bound their throughput: nothing is decided, every side open
        let KneeFinding::Undecided(u) = knee_finding(&llama(f64::INFINITY), DEFAULT_MIN_GAIN)
        else {
            panic!("decided")
        };
        assert_eq!((u.from, u.gains.len()), (1, 3));
        assert!(u.gains.iter().all(|g| g.lo.is_none() && g.hi.is_none()));
        // no interval recorded (older files, imports): the point figures decide, as before
        let mut points = llama(0.0);
        points.iter_mut().for_each(|p| p.output_tps_half = None);
        let k = find_knee(&points, DEFAULT_MIN_GAIN).unwrap();
        assert_eq!((k.concurrency, k.gain_ci), (4, None));
        // nor when only the doubled level lacks one: no interval is made up
        let mut points = llama(0.01);
        points[3].output_tps_half = None;
        let k = find_knee(&points, DEFAULT_MIN_GAIN).unwrap();
        assert_eq!((k.concurrency, k.gain_ci), (4, None));
    }

    #[test]
    fn a_straddling_level_is_named_beside_the_knee() {
        // 2 -> 4 adds 9 % with 5 % each side: [3.4, 14.6] straddles 10 %; 4 -> 8 is flat and
        // wholly under: the knee is 4 (between 2 and 4), and 2 may hold it
        let mut points = llama(0.01);
        points[2].output_tps = 49.0 * 1.09;
        points[2].output_tps_half = Some(points[2].output_tps * 0.05);
        points[3].output_tps = points[2].output_tps;
        let k = find_knee(&points, DEFAULT_MIN_GAIN).unwrap();
        assert_eq!((k.concurrency, k.below), (4, Some(2)));
        assert_eq!(k.straddling.len(), 1);
        let s = k.straddling[0];
        assert_eq!(s.concurrency, 2);
        assert!(s.lo.unwrap() < DEFAULT_MIN_GAIN && s.hi.unwrap() > DEFAULT_MIN_GAIN);
        // a level clearly worth doubling between a straddler and the knee is not named: 1 -> 2
        // adds 9 % +- 5 % (straddles), 2 -> 4 adds 37 % (worth it), 4 -> 8 adds 0.7 % (under)
        let bumpy: Vec<CurvePoint> = [
            (1, 100.0, 0.05),
            (2, 109.0, 0.01),
            (4, 150.0, 0.01),
            (8, 151.0, 0.01),
        ]
        .iter()
        .map(|(c, t, rel)| CurvePoint {
            concurrency: *c,
            output_tps: *t,
            e2e_p99_ms: 1000.0 * f64::from(*c),
            output_tps_half: Some(t * rel),
        })
        .collect();
        let k = find_knee(&bumpy, DEFAULT_MIN_GAIN).unwrap();
        assert_eq!((k.concurrency, k.below), (4, Some(2)));
        let named: Vec<u32> = k.straddling.iter().map(|g| g.concurrency).collect();
        assert_eq!(named, [1]);
        // without the flat level above, nothing is wholly under: not decided from 2 on
        let KneeFinding::Undecided(u) = knee_finding(&points[..3], DEFAULT_MIN_GAIN) else {
            panic!("decided")
        };
        assert_eq!((u.from, u.gains.len()), (2, 1));
    }
}
