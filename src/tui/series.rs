//! Chart series derived from the run state, computed once per update so rendering only reads.
//! The x axis is log2 of the run's load: the concurrency, or for a rate sweep or search the
//! request rate (in the analysis' load units, hundredths of a request/s), labelled at its
//! ends and its middle with the loads that lie there (the middle of 16 and 256 is 64).

use crate::metrics::summary::load_to_rps;
use crate::metrics::LevelSummary;
use crate::plan::analysis::{on_axis, Axis};
use crate::report::chart::{ChartPoint as Point, ServerPoint};
use crate::tui::server_series::ServerView;
use crate::values::fmt_rps;

/// Everything the run screen draws, in chart coordinates.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunView {
    /// What the x axis is: concurrency, or request rate.
    pub axis: Axis,
    /// The levels on the axis, sorted by load (a re-measured level shows its latest
    /// measurement); `concurrency` holds the load (load units on a rate axis).
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
    /// The knee, as a load on the axis.
    pub knee: Option<u32>,
    /// From where the knee may lie when the throughputs' intervals cannot name it; set by the
    /// app from the run's analysis.
    pub knee_undecided: Option<u32>,
    /// The answer so far (a search's, or a sweep's highest passing level), as a load on the
    /// axis; set by the app from the run's analysis when the run has SLAs or is a search.
    pub answer: Option<u32>,
    /// The SLA line's legend: metric, statistic and limit (`SLA e2e p95 <= 400 ms`).
    pub sla_label: Option<String>,
    /// A second run drawn over this one, for comparison.
    pub overlay: Option<Overlay>,
    /// The server chart's series, when a level recorded what the server's metrics said.
    pub server: Option<ServerView>,
}

/// Another run's curves, drawn on the same axes.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Overlay {
    pub label: String,
    pub throughput: Vec<(f64, f64)>,
    pub e2e_p99: Vec<(f64, f64)>,
    pub ttft_p50: Vec<(f64, f64)>,
}

/// The levels on the run's axis, one point per load, sorted, a re-measured level keeping its
/// latest measurement (as the exported charts read a concurrency sweep). `None` when the
/// levels lie on the other axis than `axis`.
fn points_of(levels: &[LevelSummary], axis: Axis) -> Option<Vec<Point>> {
    let (by_rate, levels) = on_axis(levels);
    if by_rate != (axis == Axis::Rate) && !levels.is_empty() {
        return None;
    }
    let mut points: Vec<Point> = Vec::new();
    for l in &levels {
        let p = Point {
            concurrency: l.load(),
            output_tps: l.sustained_tps(),
            e2e_p50_ms: l.e2e_p50_ms(),
            e2e_p99_ms: l.e2e_p99_ms(),
            ttft_p50_ms: l.ttft_p(50.0),
            ttft_p95_ms: l.ttft_p95_ms(),
            server: l.server.as_ref().and_then(ServerPoint::of),
            ..Point::default()
        };
        match points.iter_mut().find(|q| q.concurrency == p.concurrency) {
            Some(q) => *q = p,
            None => points.push(p),
        }
    }
    points.sort_by_key(|p| p.concurrency);
    Some(points)
}

/// A tick label: `64`, or a rate in requests/s (`2.5`; the axis title gives the unit).
fn tick(axis: Axis, load: u32) -> String {
    match axis {
        Axis::Concurrency => load.to_string(),
        Axis::Rate => fmt_rps(load_to_rps(load)),
    }
}

/// Band segments drawn between two neighbouring levels.
const BAND_STEPS: usize = 12;

fn x_of(c: u32) -> f64 {
    (c.max(1) as f64).log2()
}

impl RunView {
    /// Derives the view from finished levels on `axis`, an optional SLA and the knee (a load
    /// on the axis). An overlay measured on the other axis is left out.
    pub fn build(
        levels: &[LevelSummary],
        axis: Axis,
        sla_ms: Option<f64>,
        knee: Option<u32>,
        overlay: Option<(&str, &[LevelSummary])>,
    ) -> RunView {
        let points = points_of(levels, axis).unwrap_or_default();
        let series = |pts: &[Point], f: &dyn Fn(&Point) -> Option<f64>| -> Vec<(f64, f64)> {
            pts.iter()
                .filter_map(|p| f(p).map(|y| (x_of(p.concurrency), y)))
                .collect()
        };
        let overlay = overlay.and_then(|(label, levels)| {
            let pts = points_of(levels, axis)?;
            Some(Overlay {
                label: label.to_string(),
                throughput: series(&pts, &|p| Some(p.output_tps)),
                e2e_p99: series(&pts, &|p| p.e2e_p99_ms),
                ttft_p50: series(&pts, &|p| p.ttft_p50_ms),
            })
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
        let max_of = |v: &[(f64, f64)]| v.iter().map(|p| p.1).fold(0.0, f64::max);
        let nice = |v: f64| if v <= 0.0 { 1.0 } else { v * 1.1 };
        RunView {
            // ratatui spaces an axis's labels evenly: labels at the ends and the middle of
            // the log scale name the loads that lie there
            x_ticks: [x_min, (x_min + x_max) / 2.0, x_max]
                .into_iter()
                .filter(|_| !points.is_empty())
                .map(|x| (x, tick(axis, 2f64.powf(x).round() as u32)))
                .collect(),
            x_bounds: [x_min, x_max],
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
            server: ServerView::of(&points, x_of),
            axis,
            points,
            throughput,
            e2e_p50,
            e2e_p99,
            band,
            ttft_p50,
            ttft_p95,
            sla_ms,
            knee,
            knee_undecided: None,
            answer: None,
            sla_label: None,
            overlay,
        }
    }

    /// The knee's x position, when there is one.
    pub fn knee_x(&self) -> Option<f64> {
        self.knee.map(x_of)
    }

    /// The answer's x position, when there is one.
    pub fn answer_x(&self) -> Option<f64> {
        self.answer.map(x_of)
    }
}
