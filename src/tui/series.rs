//! Chart series derived from the run state, computed once per update so rendering only reads.
//! The x axis is log2(concurrency), labelled with the real concurrency values.

use crate::metrics::LevelSummary;
use crate::report::chart::{ChartPoint as Point, ChartRun};

/// Everything the run screen draws, in chart coordinates.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunView {
    /// Levels sorted by concurrency (a re-measured level shows its latest measurement).
    pub points: Vec<Point>,
    pub throughput: Vec<(f64, f64)>,
    pub e2e_p50: Vec<(f64, f64)>,
    pub e2e_p99: Vec<(f64, f64)>,
    /// Vertical segments filling the p50-p99 gap, interpolated between levels.
    pub band: Vec<[(f64, f64); 2]>,
    pub ttft_p50: Vec<(f64, f64)>,
    pub ttft_p95: Vec<(f64, f64)>,
    pub x_bounds: [f64; 2],
    /// (position, label) pairs for the x axis.
    pub x_ticks: Vec<(f64, String)>,
    pub tps_max: f64,
    pub latency_max_ms: f64,
    pub ttft_max_ms: f64,
    /// The SLA line on the latency chart (ms).
    pub sla_ms: Option<f64>,
    /// The knee, as a concurrency.
    pub knee: Option<u32>,
    /// A second run drawn over this one, for comparison.
    pub overlay: Option<Overlay>,
}

/// Another run's curves, drawn on the same axes.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Overlay {
    pub label: String,
    pub throughput: Vec<(f64, f64)>,
    pub e2e_p99: Vec<(f64, f64)>,
    pub ttft_p50: Vec<(f64, f64)>,
}

/// Levels as the exported charts see them: one point per concurrency, sorted, a re-measured
/// level keeping its latest measurement.
fn points_of(levels: &[LevelSummary]) -> Vec<Point> {
    ChartRun::from_levels("", levels, None).points
}

/// Band segments drawn between two neighbouring levels.
const BAND_STEPS: usize = 12;

fn x_of(c: u32) -> f64 {
    (c.max(1) as f64).log2()
}

impl RunView {
    /// Derives the view from finished levels, an optional SLA and the knee.
    pub fn build(
        levels: &[LevelSummary],
        sla_ms: Option<f64>,
        knee: Option<u32>,
        overlay: Option<(&str, &[LevelSummary])>,
    ) -> RunView {
        let points = points_of(levels);
        let series = |pts: &[Point], f: &dyn Fn(&Point) -> Option<f64>| -> Vec<(f64, f64)> {
            pts.iter()
                .filter_map(|p| f(p).map(|y| (x_of(p.concurrency), y)))
                .collect()
        };
        let overlay = overlay.map(|(label, levels)| {
            let pts = points_of(levels);
            Overlay {
                label: label.to_string(),
                throughput: series(&pts, &|p| Some(p.output_tps)),
                e2e_p99: series(&pts, &|p| p.e2e_p99_ms),
                ttft_p50: series(&pts, &|p| p.ttft_p50_ms),
            }
        });
        let throughput = series(&points, &|p| Some(p.output_tps));
        let e2e_p50 = series(&points, &|p| p.e2e_p50_ms);
        let e2e_p99 = series(&points, &|p| p.e2e_p99_ms);
        let ttft_p50 = series(&points, &|p| p.ttft_p50_ms);
        let ttft_p95 = series(&points, &|p| p.ttft_p95_ms);
        let mut band = Vec::new();
        for (i, (&(x, lo), &(_, hi))) in e2e_p50.iter().zip(&e2e_p99).enumerate() {
            band.push([(x, lo), (x, hi)]);
            if let (Some(&(x2, lo2)), Some(&(_, hi2))) = (e2e_p50.get(i + 1), e2e_p99.get(i + 1)) {
                for s in 1..BAND_STEPS {
                    let t = s as f64 / BAND_STEPS as f64;
                    let xi = x + t * (x2 - x);
                    band.push([(xi, lo + t * (lo2 - lo)), (xi, hi + t * (hi2 - hi))]);
                }
            }
        }
        let all_x = points.iter().map(|p| x_of(p.concurrency)).chain(
            overlay
                .iter()
                .flat_map(|o| o.throughput.iter().map(|p| p.0)),
        );
        let (x_min, x_max) = all_x.fold((f64::MAX, f64::MIN), |(a, b), x| (a.min(x), b.max(x)));
        let (x_min, x_max) = if x_min > x_max {
            (0.0, 10.0)
        } else if x_min == x_max {
            (x_min - 1.0, x_max + 1.0)
        } else {
            (x_min, x_max)
        };
        let pad = (x_max - x_min) * 0.04;
        let max_of = |v: &[(f64, f64)]| v.iter().map(|p| p.1).fold(0.0, f64::max);
        let nice = |v: f64| if v <= 0.0 { 1.0 } else { v * 1.1 };
        RunView {
            x_ticks: points
                .iter()
                .map(|p| (x_of(p.concurrency), p.concurrency.to_string()))
                .collect(),
            x_bounds: [x_min - pad, x_max + pad],
            tps_max: nice(
                max_of(&throughput).max(overlay.as_ref().map_or(0.0, |o| max_of(&o.throughput))),
            ),
            latency_max_ms: nice(
                max_of(&e2e_p99)
                    .max(sla_ms.unwrap_or(0.0))
                    .max(overlay.as_ref().map_or(0.0, |o| max_of(&o.e2e_p99))),
            ),
            ttft_max_ms: nice(
                max_of(&ttft_p95).max(overlay.as_ref().map_or(0.0, |o| max_of(&o.ttft_p50))),
            ),
            points,
            throughput,
            e2e_p50,
            e2e_p99,
            band,
            ttft_p50,
            ttft_p95,
            sla_ms,
            knee,
            overlay,
        }
    }

    /// The knee's x position, when there is one.
    pub fn knee_x(&self) -> Option<f64> {
        self.knee.map(x_of)
    }
}
