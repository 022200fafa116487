//! The server chart: what the server's own metrics said at each level, against the load.
//! The left axis counts requests: the batch the server ran (solid) and its queue (dashed),
//! in the run's first colour. The right axis is KV-cache use in percent (solid, the run's
//! second colour) and, when the GPUs' power was recorded, the power (dashed) on the same axis,
//! each tick then naming both (`50 % · 250 W`, the power's scale ending on a round number of
//! watts). The right-hand figures are drawn on the left axis' coordinates, scaled so that the
//! right axis' top meets the left's. The answer and knee are named at the top of their lines,
//! leaving the legend to the series.

use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;

use super::legend::Legend;
use super::marks::markers_listed;
use super::parts::*;
use super::server_point::{fmt_watts, power_top, ServerPoint};
use super::{ChartRun, ChartSpec, HACK_ADVANCE_EM};

/// The right axis: whether it shows KV-cache use, GPU use (both in percent), and the top of
/// its power scale (watts) when it shows GPU power.
#[derive(Clone, Copy)]
struct Right {
    kv: bool,
    gpu_use: bool,
    power_top: Option<f64>,
}

impl Right {
    fn of(spec: &ChartSpec) -> Option<Right> {
        let kv = max_of(spec, |p| p.server?.kv_cache_usage).is_some();
        let gpu_use = max_of(spec, |p| p.server?.gpu_use).is_some();
        let power_top = max_of(spec, |p| p.server?.gpu_power_w).map(power_top);
        (kv || gpu_use || power_top.is_some()).then_some(Right {
            kv,
            gpu_use,
            power_top,
        })
    }

    /// A tick at `pct` percent of the axis: `50 %`, `250 W`, or both.
    fn tick(&self, pct: f64) -> String {
        let mut parts = Vec::new();
        if self.kv || self.gpu_use {
            parts.push(format!("{pct:.0} %"));
        }
        if let Some(top) = self.power_top {
            parts.push(fmt_watts(pct / 100.0 * top));
        }
        parts.join(" · ")
    }

    fn desc(&self) -> String {
        let mut parts = Vec::new();
        if self.kv {
            parts.push("KV-cache use");
        }
        if self.gpu_use {
            parts.push("GPU use");
        }
        if self.power_top.is_some() {
            parts.push("GPU power");
        }
        parts.join(" · ")
    }

    /// Pixels the axis' labels and description take.
    fn width(&self, sz: &Sizes) -> u32 {
        let widest = [0.0, 50.0, 100.0]
            .map(|p| self.tick(p).chars().count())
            .into_iter()
            .max()
            .unwrap_or(0);
        (widest as f64 * HACK_ADVANCE_EM * sz.small + sz.small * 2.8) as u32
    }
}

/// The panel's caption: what it draws (`requests`: the batch and queue are recorded).
fn caption(right: Option<Right>, requests: bool) -> String {
    let mut c = String::from(if requests {
        "server: batch, queue"
    } else {
        "server"
    });
    if right.is_some_and(|r| r.kv) {
        c += if requests { ", KV cache" } else { ": KV cache" };
    }
    if right.is_some_and(|r| r.gpu_use) {
        c += if c.contains(':') {
            ", GPU use"
        } else {
            ": GPU use"
        };
    }
    if right.is_some_and(|r| r.power_top.is_some()) {
        c += if c.contains(':') {
            ", GPU power"
        } else {
            ": GPU power"
        };
    }
    c
}

pub(super) fn server<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    spec: &ChartSpec,
    sz: &Sizes,
) -> Fallible<DB> {
    let right = Right::of(spec);
    let requests = max_of(spec, |p| {
        let s = p.server?;
        s.running.into_iter().chain(s.waiting).reduce(f64::max)
    });
    let caption = caption(right, requests.is_some());
    if !spec.has_server() {
        return nothing(area, &caption, "no server metrics were recorded", sz);
    }
    let y_max = headroom(requests.unwrap_or(0.0));
    let width = right.map_or(0, |r| r.width(sz));
    let mut chart = conc_frame(area, spec, &caption, y_max, width, sz)?;
    let Some(r) = right else {
        conc_mesh(&mut chart, spec, "requests", &si_fmt, sz)?;
        return curves(&mut chart, spec, y_max, None, sz);
    };
    let (lo, hi) = conc_range(spec);
    // the secondary coordinates take the right label area: the left mesh is drawn after
    let mut dual = chart.set_secondary_coord((lo..hi).log_scale(), 0f64..100.0);
    // without batch or queue figures (a SageMaker endpoint's CloudWatch) the left axis is bare
    match requests {
        Some(_) => conc_mesh(&mut dual, spec, "requests", &si_fmt, sz)?,
        None => conc_mesh(&mut dual, spec, "", &|_: &f64| String::new(), sz)?,
    }
    let tick = move |v: &f64| r.tick(*v);
    dual.configure_secondary_axes()
        .label_style((super::FONT, sz.small))
        .axis_desc_style((super::FONT, sz.small))
        .y_desc(r.desc())
        .y_labels(6)
        .y_label_formatter(&tick)
        .draw()?;
    curves(&mut dual, spec, y_max, Some(r), sz)
}

fn si_fmt(v: &f64) -> String {
    si(*v)
}

/// One run's points of `f`, at the load and scaled by `scale`.
fn scaled(
    spec: &ChartSpec,
    run: &ChartRun,
    f: fn(&ServerPoint) -> Option<f64>,
    scale: f64,
) -> Vec<(f64, f64, bool)> {
    run.points
        .iter()
        .filter_map(|p| {
            let v = f(p.server.as_ref()?)?;
            Some((x_of(spec.axis, p.concurrency), v * scale, p.hollow))
        })
        .collect()
}

/// The markers, each run's series and the legend, on the left axis' coordinates.
fn curves<'a, DB: DrawingBackend + 'a>(
    chart: &mut ConcChart<'a, DB>,
    spec: &ChartSpec,
    y_max: f64,
    right: Option<Right>,
    sz: &Sizes,
) -> Fallible<DB> {
    let mut legend = Legend::default();
    markers_listed(chart, spec, y_max, false, &mut legend, sz)?;
    for (i, run) in spec.runs.iter().enumerate() {
        let (first, second) = colors(i);
        let running = scaled(spec, run, |s| s.running, 1.0);
        if !running.is_empty() {
            line(
                chart,
                &running,
                first,
                name(run, "running (batch)"),
                &mut legend,
                sz,
            )?;
        }
        let waiting = scaled(spec, run, |s| s.waiting, 1.0);
        if !waiting.is_empty() {
            let label = name(run, "waiting (queue)");
            broken(DASHED, chart, &waiting, first, label, &mut legend, sz)?;
        }
        let Some(r) = right else { continue };
        let kv = scaled(spec, run, |s| s.kv_cache_usage, y_max);
        if !kv.is_empty() {
            let label = name(run, "KV-cache use (right)");
            line(chart, &kv, second, label, &mut legend, sz)?;
        }
        let gpu_use = scaled(spec, run, |s| s.gpu_use, y_max);
        if !gpu_use.is_empty() {
            let per_minute = run
                .points
                .iter()
                .any(|p| p.server.is_some_and(|s| s.per_minute));
            let label = name(
                run,
                if per_minute {
                    "GPU use, CloudWatch per minute (right)"
                } else {
                    "GPU use (right)"
                },
            );
            broken(DOTTED, chart, &gpu_use, second, label, &mut legend, sz)?;
        }
        if let Some(top) = r.power_top {
            let power = scaled(spec, run, |s| s.gpu_power_w, y_max / top);
            if !power.is_empty() {
                let label = name(run, "GPU power (right)");
                broken(DASHED, chart, &power, second, label, &mut legend, sz)?;
            }
        }
    }
    legend.draw(chart, sz)
}

/// Dashes of a line broken into them: (length in strokes, legend's dash and gap in pixels).
type Dashes = (u32, u32, u32);
/// Long dashes: the queue, GPU power.
const DASHED: Dashes = (4, 6, 4);
/// Short dashes: GPU use.
const DOTTED: Dashes = (1, 2, 3);

/// A line with dots broken into `dashes`, with a legend entry drawn the same way.
fn broken<DB: DrawingBackend>(
    dashes: Dashes,
    chart: &mut ConcChart<DB>,
    pts: &[(f64, f64, bool)],
    color: RGBColor,
    label: String,
    legend: &mut Legend,
    sz: &Sizes,
) -> Fallible<DB> {
    let (dash, legend_dash, legend_gap) = dashes;
    let style = color.stroke_width(sz.stroke);
    let dash = sz.stroke * dash;
    legend.mark(chart, pts.iter().map(|p| (p.0, p.1)));
    chart
        .draw_series(DashedLineSeries::new(
            pts.iter().map(|p| (p.0, p.1)),
            dash,
            dash,
            style,
        ))?
        .label(legend.entry(label))
        .legend(move |(x, y)| {
            DashedPathElement::new(vec![(x, y), (x + 20, y)], legend_dash, legend_gap, style)
        });
    dots(chart, pts, color, sz)
}

#[cfg(test)]
mod tests {
    use super::super::tests::one_run;
    use super::super::{render_panel_svg, render_svg, ChartSpec, ServerPoint};

    /// The texts of an SVG, trimmed.
    fn texts(svg: &str) -> Vec<String> {
        let doc = roxmltree::Document::parse(svg).unwrap();
        doc.descendants()
            .filter(|n| n.has_tag_name("text"))
            .map(|n| {
                let t: String = n
                    .descendants()
                    .filter_map(|c| c.text().filter(|_| c.is_text()))
                    .collect();
                t.trim().to_string()
            })
            .collect()
    }

    /// Two levels, the second with server figures; GPU power when `gpu`.
    fn spec(gpu: bool) -> ChartSpec {
        let mut s = one_run(&[(8, 100.0, 50.0, 80.0), (32, 300.0, 90.0, 200.0)], 10.0, 8);
        s.runs[0].points[1].server = Some(ServerPoint {
            running: Some(16.0),
            waiting: Some(14.0),
            kv_cache_usage: Some(0.5),
            gpu_power_w: gpu.then_some(450.0),
            ..ServerPoint::default()
        });
        s
    }

    #[test]
    fn the_whole_image_has_the_server_panel_only_when_a_run_recorded_server_metrics() {
        let with = texts(&render_svg(&spec(false), (1600, 900)).unwrap());
        for want in [
            "server: batch, queue, KV cache",
            "running (batch)",
            "waiting (queue)",
            "KV-cache use (right)",
            "requests",
            "KV-cache use",
            "100 %",
        ] {
            assert!(with.iter().any(|t| t == want), "{want} not in {with:?}");
        }
        assert!(!with.iter().any(|t| t.contains("GPU")), "{with:?}");
        // without: the four panels as before, nothing of the server's
        let mut old = spec(false);
        old.runs[0].points[1].server = None;
        let without = texts(&render_svg(&old, (1600, 900)).unwrap());
        assert!(
            !without
                .iter()
                .any(|t| t.starts_with("server") || t.contains("running") || t == "requests"),
            "{without:?}"
        );
        assert!(without
            .iter()
            .any(|t| t == "throughput against p99 latency"));
    }

    #[test]
    fn gpu_power_shares_the_right_axis_each_tick_naming_percent_and_watts() {
        let svg = render_panel_svg(&spec(true), super::super::ChartPanel::Server, (800, 450));
        let t = texts(&svg.unwrap());
        // 450 W at most: the scale ends at 500 W, its fifths 100 W apart
        for want in [
            "server: batch, queue, KV cache, GPU power",
            "GPU power (right)",
            "KV-cache use · GPU power",
            "0 % · 0 W",
            "40 % · 200 W",
            "100 % · 500 W",
        ] {
            assert!(t.iter().any(|x| x == want), "{want} not in {t:?}");
        }
    }

    #[test]
    fn a_compared_run_prefixes_its_series_and_a_server_without_kv_has_no_right_axis() {
        let mut s = spec(false);
        let mut b = s.runs[0].clone();
        s.runs[0].label = "A".into();
        b.label = "B".into();
        // llama.cpp: slots and queue, no KV-cache gauge
        b.points[1].server = Some(ServerPoint {
            running: Some(4.0),
            waiting: Some(28.0),
            ..ServerPoint::default()
        });
        s.runs.push(b);
        let t = texts(&render_panel_svg(&s, super::super::ChartPanel::Server, (800, 450)).unwrap());
        for want in [
            "A running (batch)",
            "B waiting (queue)",
            "A KV-cache use (right)",
        ] {
            assert!(t.iter().any(|x| x == want), "{want} not in {t:?}");
        }
        assert!(!t.iter().any(|x| x == "B KV-cache use (right)"), "{t:?}");
        s.runs.remove(0);
        let t = texts(&render_panel_svg(&s, super::super::ChartPanel::Server, (800, 450)).unwrap());
        assert!(t.iter().any(|x| x == "server: batch, queue"), "{t:?}");
        assert!(!t.iter().any(|x| x.contains('%')), "{t:?}");
    }
}
