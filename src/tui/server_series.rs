//! The server chart's series, derived from the levels' recorded `server` summaries once per
//! update so rendering only reads: the server's batch and queue (means, in requests) at each
//! level, and its KV-cache use and GPUs' power scaled onto the same axis (its top is 100 %
//! and the power scale's top), as the exported server chart draws them.

use crate::report::chart::server_point::power_top;
use crate::report::chart::ChartPoint as Point;

/// What the server chart draws, in chart coordinates (x: log2 of the load).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ServerView {
    pub running: Vec<(f64, f64)>,
    pub waiting: Vec<(f64, f64)>,
    /// KV-cache use, `y_max` standing for 100 %.
    pub kv_use: Vec<(f64, f64)>,
    /// GPU power, `y_max` standing for `power_top_w`.
    pub gpu_power: Vec<(f64, f64)>,
    /// The top of the requests axis.
    pub y_max: f64,
    /// The top of the GPU power scale (watts), when power was recorded.
    pub power_top_w: Option<f64>,
}

impl ServerView {
    /// The series of the points that recorded server figures, at `x_of` their load; `None`
    /// when none did.
    pub fn of(points: &[Point], x_of: fn(u32) -> f64) -> Option<ServerView> {
        let with: Vec<(f64, crate::report::chart::ServerPoint)> = points
            .iter()
            .filter_map(|p| Some((x_of(p.concurrency), p.server?)))
            .collect();
        if with.is_empty() {
            return None;
        }
        let series = |f: &dyn Fn(&crate::report::chart::ServerPoint) -> Option<f64>| {
            with.iter()
                .filter_map(|(x, s)| Some((*x, f(s)?)))
                .collect::<Vec<_>>()
        };
        let running = series(&|s| s.running);
        let waiting = series(&|s| s.waiting);
        let top = running
            .iter()
            .chain(&waiting)
            .map(|p| p.1)
            .fold(0.0, f64::max);
        let y_max = if top > 0.0 { top * 1.1 } else { 1.0 };
        let power_top_w = with
            .iter()
            .filter_map(|(_, s)| s.gpu_power_w)
            .reduce(f64::max)
            .map(power_top);
        Some(ServerView {
            kv_use: series(&|s| Some(s.kv_cache_usage? * y_max)),
            gpu_power: series(&|s| Some(s.gpu_power_w? / power_top_w? * y_max)),
            running,
            waiting,
            y_max,
            power_top_w,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::chart::ServerPoint;

    #[test]
    fn means_at_the_levels_with_kv_and_power_scaled_onto_the_requests_axis() {
        let at = |c: u32, server: Option<ServerPoint>| Point {
            concurrency: c,
            server,
            ..Point::default()
        };
        let points = [
            at(4, None),
            at(
                16,
                Some(ServerPoint {
                    running: Some(16.0),
                    waiting: Some(0.0),
                    kv_cache_usage: Some(0.25),
                    gpu_power_w: Some(300.0),
                    ..ServerPoint::default()
                }),
            ),
            at(
                64,
                Some(ServerPoint {
                    running: Some(32.0),
                    waiting: Some(40.0),
                    kv_cache_usage: Some(0.5),
                    gpu_power_w: Some(450.0),
                    ..ServerPoint::default()
                }),
            ),
        ];
        let v = ServerView::of(&points, |c| f64::from(c).log2()).unwrap();
        assert_eq!(v.running, vec![(4.0, 16.0), (6.0, 32.0)]);
        assert_eq!(v.waiting, vec![(4.0, 0.0), (6.0, 40.0)]);
        let close = |got: &[(f64, f64)], want: [(f64, f64); 2]| {
            got.len() == 2
                && got
                    .iter()
                    .zip(want)
                    .all(|(g, w)| g.0 == w.0 && (g.1 - w.1).abs() < 1e-9)
        };
        assert!((v.y_max - 44.0).abs() < 1e-9, "{}", v.y_max);
        // a quarter and a half of the axis; 300 and 450 W of a 500 W scale
        assert!(
            close(&v.kv_use, [(4.0, 11.0), (6.0, 22.0)]),
            "{:?}",
            v.kv_use
        );
        assert_eq!(v.power_top_w, Some(500.0));
        assert!(
            close(&v.gpu_power, [(4.0, 26.4), (6.0, 39.6)]),
            "{:?}",
            v.gpu_power
        );
        assert_eq!(ServerView::of(&points[..1], f64::from), None);
    }
}
