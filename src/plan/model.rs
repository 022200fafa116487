//! The model-guided step of the SLA search: where the breaching metric, modelled against log
//! concurrency through the measured levels nearest its limit, reaches the limit.

use super::search_points::{aggregate, Point};

/// Where the breaching metric reaches its limit, modelled against log concurrency through the
/// measured levels whose values are nearest the limit: a parabola through three when the
/// bracket [lo, hi] holds its root, else a line through two. Over the SLAs that breach at
/// `hi` the lowest crossing wins. `None` when no SLA has two usable (finite, nonzero) values
/// on a rising line.
pub fn model_crossing(points: &[Point], lo: u32, hi: u32) -> Option<f64> {
    let agg = aggregate(points);
    let at_hi = &agg.get(&hi)?.1;
    let (xl, xh) = ((lo as f64).ln(), (hi as f64).ln());
    (0..at_hi.len())
        .filter(|j| at_hi[*j] > 1.0)
        .filter_map(|j| {
            let mut near: Vec<(f64, f64)> = agg
                .iter()
                .filter_map(|(c, (_, r))| r.get(j).map(|r| ((*c as f64).ln(), *r)))
                .filter(|(_, r)| r.is_finite() && *r > 0.0)
                .collect();
            near.sort_by(|a, b| a.1.ln().abs().total_cmp(&b.1.ln().abs()));
            if near.len() >= 3 {
                if let Some(x) = parabola_root(&near[..3], xl, xh) {
                    return Some(x.exp());
                }
            }
            let (x1, y1) = *near.first()?;
            let (x2, y2) = *near.get(1)?;
            let slope = (y2 - y1) / (x2 - x1);
            (slope.is_finite() && slope > 0.0).then(|| (x1 + (1.0 - y1) / slope).exp())
        })
        .min_by(f64::total_cmp)
}

/// The root of y = 1 on the parabola through three points, if exactly one root lies in
/// [xl, xh] where the parabola rises.
fn parabola_root(p: &[(f64, f64)], xl: f64, xh: f64) -> Option<f64> {
    let [(x0, y0), (x1, y1), (x2, y2)] = [p[0], p[1], p[2]];
    let d01 = (y1 - y0) / (x1 - x0);
    let d12 = (y2 - y1) / (x2 - x1);
    let a = (d12 - d01) / (x2 - x0);
    let b = d01 - a * (x0 + x1);
    let c = y0 - a * x0 * x0 - b * x0 - 1.0;
    if !(a.is_finite() && b.is_finite() && c.is_finite()) {
        return None;
    }
    let roots: Vec<f64> = if a.abs() < 1e-12 {
        vec![-c / b]
    } else {
        let disc = b * b - 4.0 * a * c;
        if disc < 0.0 {
            return None;
        }
        let s = disc.sqrt();
        vec![(-b - s) / (2.0 * a), (-b + s) / (2.0 * a)]
    };
    let inside: Vec<f64> = roots
        .into_iter()
        .filter(|x| x.is_finite() && *x >= xl && *x <= xh && 2.0 * a * x + b > 0.0)
        .collect();
    (inside.len() == 1).then(|| inside[0])
}
