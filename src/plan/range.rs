//! How far the 95 % intervals let an answer move (see `docs/search.md`, "Confidence"): where
//! the SLA boundary lies between the measured levels, read off each SLA's curve of
//! observed / limit against log concurrency three times, through the intervals' pessimistic
//! ends, through the observed values, and through the optimistic ends. Each curve's first
//! crossing of the limit is interpolated between the two measured levels around it; over
//! several SLAs the earliest crossing binds.

use crate::metrics::LevelSummary;
use crate::plan::judge::{undecided_screen, SlaSet};
use serde::Serialize;

/// Where the SLA boundary lies, in concurrency (fractional: between measured levels).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct BoundaryRange {
    /// The lowest the boundary can be at 95 % (pessimistic ends of the intervals).
    pub low: f64,
    /// Where the observed values cross the limit.
    pub estimate: f64,
    /// The highest it can be at 95 % (optimistic ends); infinite when even the optimistic
    /// curve stays within the limit up to the highest level (the boundary is above it).
    pub high: f64,
}

/// One concurrency's ratios to the limit: (optimistic, observed, pessimistic).
type Ratios = (f64, f64, f64);

/// The boundary range of `levels` (held, complete levels only, a search's undecided screens
/// left out) under `limits`; `None` without
/// such levels or thresholds.
pub fn boundary_range(limits: &SlaSet, levels: &[LevelSummary]) -> Option<BoundaryRange> {
    let mut by_c: Vec<(u32, Vec<Vec<Ratios>>)> = Vec::new();
    // a search's screen left uncertain bounds nothing: its one batch was to steer
    for l in levels
        .iter()
        .filter(|l| !l.partial && l.held && !undecided_screen(limits, l))
    {
        let r: Vec<Ratios> = limits
            .check(l)
            .iter()
            .map(|c| {
                let (lo, hi) = c.ratio_bounds();
                (lo, c.ratio(), hi)
            })
            .collect();
        match by_c.iter_mut().find(|(c, _)| *c == l.load()) {
            Some((_, v)) => v.push(r),
            None => by_c.push((l.load(), vec![r])),
        }
    }
    if by_c.is_empty() || limits.is_empty() {
        return None;
    }
    by_c.sort_by_key(|(c, _)| *c);
    let mean = |v: &[Vec<Ratios>], j: usize, pick: fn(&Ratios) -> f64| {
        v.iter().map(|r| pick(&r[j])).sum::<f64>() / v.len() as f64
    };
    let crossing = |j: usize, pick: fn(&Ratios) -> f64| {
        let curve: Vec<(f64, f64)> = by_c
            .iter()
            .map(|(c, v)| (*c as f64, mean(v, j, pick)))
            .collect();
        first_crossing(&curve)
    };
    let over = |pick: fn(&Ratios) -> f64| {
        (0..limits.0.len())
            .map(|j| crossing(j, pick))
            .fold(f64::INFINITY, f64::min)
    };
    Some(BoundaryRange {
        low: over(|r| r.2),
        estimate: over(|r| r.1),
        high: over(|r| r.0),
    })
}

/// Where `(concurrency, ratio)` points (sorted) first rise above 1: interpolated linearly in
/// log concurrency between the last point within the limit and the first beyond it (at that
/// last point when the next is unbounded); the first level when it already breaks; infinite
/// when none does.
pub fn first_crossing(curve: &[(f64, f64)]) -> f64 {
    let Some(i) = curve.iter().position(|(_, y)| *y > 1.0) else {
        return f64::INFINITY;
    };
    if i == 0 {
        return curve[0].0;
    }
    let ((c0, y0), (c1, y1)) = (curve[i - 1], curve[i]);
    if !y1.is_finite() {
        return c0;
    }
    let (x0, x1) = (c0.ln(), c1.ln());
    (x0 + (1.0 - y0) / (y1 - y0) * (x1 - x0)).exp()
}

/// `y` at concurrency `c` on `(concurrency, y)` points (sorted), interpolated linearly in log
/// concurrency and held at the ends (nothing is extrapolated).
pub fn at_concurrency(curve: &[(f64, f64)], c: f64) -> Option<f64> {
    let (first, last) = (curve.first()?, curve.last()?);
    if c <= first.0 {
        return Some(first.1);
    }
    if c >= last.0 {
        return Some(last.1);
    }
    let w = curve.windows(2).find(|w| c <= w[1].0)?;
    let t = (c.ln() - w[0].0.ln()) / (w[1].0.ln() - w[0].0.ln());
    Some(w[0].1 + t * (w[1].1 - w[0].1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crossings_table() {
        let inf = f64::INFINITY;
        // (points, crossing)
        let cases: &[(&[(f64, f64)], f64)] = &[
            (&[(16.0, 0.5), (32.0, 0.8)], inf),
            (&[(16.0, 1.5), (32.0, 2.0)], 16.0),
            // halfway in ratio between 32 and 64: at sqrt(32 * 64)
            (
                &[(16.0, 0.5), (32.0, 0.8), (64.0, 1.2)],
                (32.0f64 * 64.0).sqrt(),
            ),
            (&[(16.0, 0.5), (32.0, 0.9), (64.0, inf)], 32.0),
            // a later dip below the limit does not move the first crossing
            (
                &[(16.0, 0.5), (32.0, 1.5), (64.0, 0.9)],
                (16.0f64 * 32.0).sqrt(),
            ),
        ];
        for (pts, want) in cases {
            let got = first_crossing(pts);
            assert!(
                (got - want).abs() < 1e-9 || (got.is_infinite() && want.is_infinite()),
                "{pts:?}: {got}"
            );
        }
    }

    #[test]
    fn values_between_levels() {
        let pts = [(16.0, 100.0), (64.0, 300.0)];
        assert!((at_concurrency(&pts, 32.0).unwrap() - 200.0).abs() < 1e-9);
        assert_eq!(at_concurrency(&pts, 8.0), Some(100.0));
        assert_eq!(at_concurrency(&pts, 128.0), Some(300.0));
        assert_eq!(at_concurrency(&[], 1.0), None);
    }
}
