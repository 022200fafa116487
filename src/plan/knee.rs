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
}

/// Where the knee is.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Knee {
    pub concurrency: u32,
    /// The measured level just below it: the knee lies in (below, concurrency].
    pub below: Option<u32>,
    /// Throughput gain (fraction) of doubling from the knee.
    pub doubling_gain: f64,
    pub output_tps: f64,
    pub e2e_p99_ms: f64,
}

/// The curve of a run: complete levels with latency, one point per concurrency (means).
pub fn curve(levels: &[LevelSummary]) -> Vec<CurvePoint> {
    let mut pts: Vec<(u32, Vec<(f64, f64)>)> = Vec::new();
    for l in levels.iter().filter(|l| !l.partial) {
        let Some(p99) = l.e2e_p99_ms() else { continue };
        match pts.iter_mut().find(|p| p.0 == l.load()) {
            Some(p) => p.1.push((l.sustained_tps(), p99)),
            None => pts.push((l.load(), vec![(l.sustained_tps(), p99)])),
        }
    }
    pts.sort_by_key(|p| p.0);
    pts.into_iter()
        .map(|(c, v)| CurvePoint {
            concurrency: c,
            output_tps: v.iter().map(|x| x.0).sum::<f64>() / v.len() as f64,
            e2e_p99_ms: v.iter().map(|x| x.1).sum::<f64>() / v.len() as f64,
        })
        .collect()
}

/// (throughput, p99) at concurrency `x` on the curve (sorted by concurrency).
fn at(curve: &[CurvePoint], x: f64) -> Option<(f64, f64)> {
    let first = curve.first()?;
    let last = curve.last()?;
    if x < first.concurrency as f64 || x > last.concurrency as f64 {
        return None;
    }
    let w = curve.windows(2).find(|w| x <= w[1].concurrency as f64)?;
    let (a, b) = (&w[0], &w[1]);
    let t = (x / a.concurrency as f64).ln() / (b.concurrency as f64 / a.concurrency as f64).ln();
    Some((
        a.output_tps + t * (b.output_tps - a.output_tps),
        a.e2e_p99_ms + t * (b.e2e_p99_ms - a.e2e_p99_ms),
    ))
}

/// The knee of a curve (sorted by concurrency), or `None` when throughput never flattens
/// within the measured range.
pub fn find_knee(curve: &[CurvePoint], min_gain: f64) -> Option<Knee> {
    let top = curve.last()?.concurrency;
    curve.iter().enumerate().find_map(|(i, p)| {
        if p.concurrency >= top || p.output_tps <= 0.0 {
            return None;
        }
        let (tps2, p99_2) = at(curve, 2.0 * p.concurrency as f64)?;
        let gain = tps2 / p.output_tps - 1.0;
        (gain < min_gain && p99_2 > p.e2e_p99_ms).then(|| Knee {
            concurrency: p.concurrency,
            below: i.checked_sub(1).map(|j| curve[j].concurrency),
            doubling_gain: gain,
            output_tps: p.output_tps,
            e2e_p99_ms: p.e2e_p99_ms,
        })
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
        })
        .collect();
        assert_eq!(find_knee(&pts, DEFAULT_MIN_GAIN), None);
        // measure 256 and the knee is 128
        let mut more = pts.clone();
        more.push(CurvePoint {
            concurrency: 256,
            output_tps: 1810.0,
            e2e_p99_ms: 200.0,
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
            })
            .collect();
        assert_eq!(find_knee(&flat, DEFAULT_MIN_GAIN), None);
    }
}
