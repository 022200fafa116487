//! The server chart: what the server's own metrics said at each level, against the load, one
//! unit per axis. The left axis counts requests: the batch the server ran (solid, round
//! markers) and its queue (dashed, square markers). The right axis is percent: KV-cache use
//! (solid, triangles) and GPU use (dotted, diamonds), drawn on the left axis' coordinates,
//! scaled so that the right axis' top meets the left's. GPU power, in watts, has a panel of
//! its own beside it (the panel splits in two), its scale ending on a round number of watts.
//! Every series has its own colour and marker shape, so none is told apart by dash alone. The
//! answer and knee are named at the top of their lines, leaving the legend to the series.

use super::theme;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::legend::{Head, Legend, Shape};
use super::marks::markers;
use super::panel_ctx::Ctx;
use super::parts::*;
use super::series::{styled, Look};
use super::server_point::{fmt_watts, power_top, ServerPoint};
use super::{ChartRun, ChartSpec, HACK_ADVANCE_EM};

/// The right axis, in percent: whether it shows KV-cache use and GPU use.
#[derive(Clone, Copy)]
struct Right {
    kv: bool,
    gpu_use: bool,
}

impl Right {
    fn of(spec: &ChartSpec) -> Option<Right> {
        let kv = max_of(spec, |p| p.server?.kv_cache_usage).is_some();
        let gpu_use = max_of(spec, |p| p.server?.gpu_use).is_some();
        (kv || gpu_use).then_some(Right { kv, gpu_use })
    }

    /// The axis' description: what it shows, or `percent` when both (the legend's `(right)`
    /// entries name them), short enough for a small panel.
    fn desc(&self) -> &'static str {
        match (self.kv, self.gpu_use) {
            (true, false) => "KV-cache use",
            (false, true) => "GPU use",
            _ => "percent",
        }
    }

    /// Pixels the axis' labels and description take.
    fn width(&self, sz: &Sizes) -> u32 {
        ("100 %".len() as f64 * HACK_ADVANCE_EM * sz.small + sz.small * 2.8) as u32
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
    c
}

/// How each server series is drawn: (colour with one run, dash in strokes, shape); with
/// several runs the colour is the run's.
const RUNNING: (RGBColor, Option<u32>, Shape) = (theme::SERVER_RUNNING, None, Shape::Circle);
const WAITING: (RGBColor, Option<u32>, Shape) = (theme::SERVER_WAITING, Some(4), Shape::Square);
const KV: (RGBColor, Option<u32>, Shape) = (theme::SERVER_KV, None, Shape::Triangle);
const GPU_USE: (RGBColor, Option<u32>, Shape) = (theme::SERVER_GPU_USE, Some(1), Shape::Diamond);
const POWER: (RGBColor, Option<u32>, Shape) = (theme::SERVER_POWER, None, Shape::Circle);

/// `look` for run `i` of `runs`: its own colour with one run, the run's `which` colour
/// (0 first, 1 second) with several.
fn look(look: Look, spec: &ChartSpec, i: usize, which: usize) -> Look {
    if spec.runs.len() == 1 {
        look
    } else {
        let (a, b) = colors(i);
        (if which == 0 { a } else { b }, look.1, look.2)
    }
}

pub(super) fn server<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    ctx: &Ctx,
    head: &mut Head,
) -> Fallible<DB> {
    let spec = ctx.spec;
    let right = Right::of(spec);
    let requests = max_of(spec, |p| {
        let s = p.server?;
        s.running.into_iter().chain(s.waiting).reduce(f64::max)
    });
    let power = max_of(spec, |p| p.server?.gpu_power_w);
    let caption = caption(right, requests.is_some());
    if !spec.has_server() {
        return nothing(area, &caption, "no server metrics were recorded", &ctx.sz);
    }
    match power {
        Some(max) if requests.is_some() || right.is_some() => {
            let (w, _) = area.dim_in_pixel();
            let (left, beside) = area.split_horizontally(w / 2);
            counts(&left, ctx, head, &caption, right, requests)?;
            watts(&beside, ctx, head, max)
        }
        Some(max) => watts(area, ctx, head, max),
        None => counts(area, ctx, head, &caption, right, requests),
    }
}

/// The batch and queue (requests, left) with KV-cache and GPU use (percent, right).
fn counts<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    ctx: &Ctx,
    head: &mut Head,
    caption: &str,
    right: Option<Right>,
    requests: Option<f64>,
) -> Fallible<DB> {
    let (spec, sz) = (ctx.spec, &ctx.sz);
    let y_max = headroom(requests.unwrap_or(0.0));
    let width = right.map_or(0, |r| r.width(sz));
    let (top, body) = area.split_vertically(head.height);
    let mut chart = conc_frame(&body, spec, y_max, width, sz)?;
    let Some(r) = right else {
        conc_mesh(&mut chart, spec, "requests", &si_fmt, sz)?;
        let mut legend = Legend::default();
        curves(&mut chart, ctx, y_max, false, &mut legend)?;
        return legend.draw_head(&top, caption, plot_left(&chart), sz, head);
    };
    let (lo, hi) = conc_range(spec);
    // the secondary coordinates take the right label area: the left mesh is drawn after
    let mut dual = chart.set_secondary_coord((lo..hi).log_scale(), 0f64..100.0);
    // without batch or queue figures (a SageMaker endpoint's CloudWatch) the left axis is bare
    match requests {
        Some(_) => conc_mesh(&mut dual, spec, "requests", &si_fmt, sz)?,
        None => conc_mesh(&mut dual, spec, "", &|_: &f64| String::new(), sz)?,
    }
    let n = y_labels(&dual, sz).min(6);
    dual.configure_secondary_axes()
        .label_style((super::FONT, sz.small))
        .axis_desc_style((super::FONT, sz.small))
        .y_desc(r.desc())
        .y_labels(n)
        .y_label_formatter(&|v: &f64| format!("{v:.0} %"))
        .draw()?;
    let mut legend = Legend::default();
    curves(&mut dual, ctx, y_max, true, &mut legend)?;
    legend.draw_head(&top, caption, plot_left(&dual), sz, head)
}

/// GPU power against the load, in watts, on a panel of its own.
fn watts<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    ctx: &Ctx,
    head: &mut Head,
    max: f64,
) -> Fallible<DB> {
    let (spec, sz) = (ctx.spec, &ctx.sz);
    let y_max = power_top(max);
    let (top, body) = area.split_vertically(head.height);
    let watt_fmt = |v: &f64| fmt_watts(*v);
    let mut chart = conc_chart(&body, spec, "GPU power", y_max, &watt_fmt, sz)?;
    let mut legend = Legend::default();
    ctx.shared(&mut legend);
    markers(&mut chart, spec, y_max, false, &mut legend, sz)?;
    for (i, run) in spec.runs.iter().enumerate() {
        let power = scaled(spec, run, |s| s.gpu_power_w, 1.0);
        if !power.is_empty() {
            let label = name(run, "GPU power");
            styled(
                &mut chart,
                &power,
                look(POWER, spec, i, 1),
                label,
                &mut legend,
                sz,
            )?;
        }
    }
    legend.draw_head(&top, "server: GPU power", plot_left(&chart), sz, head)
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

/// The markers and each run's series, on the left axis' coordinates (`right`: the percent
/// series too).
fn curves<'a, DB: DrawingBackend + 'a>(
    chart: &mut ConcChart<'a, DB>,
    ctx: &Ctx,
    y_max: f64,
    right: bool,
    legend: &mut Legend,
) -> Fallible<DB> {
    let (spec, sz) = (ctx.spec, &ctx.sz);
    ctx.shared(legend);
    markers(chart, spec, y_max, false, legend, sz)?;
    for (i, run) in spec.runs.iter().enumerate() {
        let running = scaled(spec, run, |s| s.running, 1.0);
        if !running.is_empty() {
            let label = name(run, "running (batch)");
            styled(
                chart,
                &running,
                look(RUNNING, spec, i, 0),
                label,
                legend,
                sz,
            )?;
        }
        let waiting = scaled(spec, run, |s| s.waiting, 1.0);
        if !waiting.is_empty() {
            let label = name(run, "waiting (queue)");
            styled(
                chart,
                &waiting,
                look(WAITING, spec, i, 0),
                label,
                legend,
                sz,
            )?;
        }
        if !right {
            continue;
        }
        let kv = scaled(spec, run, |s| s.kv_cache_usage, y_max);
        if !kv.is_empty() {
            let label = name(run, "KV-cache use (right)");
            styled(chart, &kv, look(KV, spec, i, 1), label, legend, sz)?;
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
            styled(
                chart,
                &gpu_use,
                look(GPU_USE, spec, i, 1),
                label,
                legend,
                sz,
            )?;
        }
    }
    Ok(())
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
    fn gpu_power_has_a_panel_of_its_own_in_watts_and_every_axis_one_unit() {
        let svg = render_panel_svg(&spec(true), super::super::ChartPanel::Server, (800, 450));
        let t = texts(&svg.unwrap());
        // 450 W at most: the scale ends at 500 W
        for want in [
            "server: batch, queue, KV cache",
            "server: GPU power",
            "GPU power",
            "KV-cache use",
            "500 W",
            "100 %",
        ] {
            assert!(t.iter().any(|x| x == want), "{want} not in {t:?}");
        }
        // no tick mixes percent and watts
        assert!(
            !t.iter().any(|x| x.contains('%') && x.contains('W')),
            "{t:?}"
        );
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
