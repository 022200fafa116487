//! The drawing code shared by the SVG and PNG backends: a title band (title, subtitle, the
//! right-size box when a peak or price was set, the legend of what every panel shares) and
//! four panels, or five (three over two) when a run recorded server metrics.
//! Sizes scale with the image so the text stays readable from 800x450 to 1600x900 and up.
//!
//! Each panel has a head above its plot for its caption, its legend and the names of its
//! vertical markers ([`Legend::draw_head`]): nothing is drawn over the data but the data. A
//! panel is drawn twice, first on [`Dry`] (which draws nothing) to measure its head.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::legend::{Head, Legend, Swatch};
use super::marks::*;
use super::panel_ctx::Ctx;
use super::parts::*;
use super::series::line;
use super::server_panel;
use super::{ChartPanel, ChartPoint, ChartRun, ChartSpec, SlaMetric, FONT};

/// The right-size box's lines: the same words and figures as `rightsize show`'s right-size
/// line, wrapped to `chars` characters.
pub(super) fn right_size_lines(spec: &ChartSpec, chars: usize) -> Vec<String> {
    let [run] = spec.runs.as_slice() else {
        return Vec::new();
    };
    let Some(r) = &run.right_size else {
        return Vec::new();
    };
    let t = crate::plan::analysis_text::right_size_line(r);
    wrap(&t, chars.max(20))
}

/// `text` broken at spaces into lines of at most `chars` characters.
fn wrap(text: &str, chars: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for word in text.split(' ') {
        match lines.last_mut() {
            Some(l) if l.chars().count() + 1 + word.chars().count() <= chars => {
                l.push(' ');
                l.push_str(word);
            }
            _ => lines.push(word.to_string()),
        }
    }
    lines
}

/// Draws the whole image on `root`.
pub fn draw<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, spec: &ChartSpec) -> Fallible<DB> {
    root.fill(&WHITE)?;
    let (w, h) = root.dim_in_pixel();
    let sz = Sizes::for_image(w, h);
    let ctx = Ctx {
        spec,
        sz,
        alone: false,
    };
    let sz = &ctx.sz;
    let centre = |size: f64, color: &'static RGBColor| {
        TextStyle::from((FONT, size).into_font())
            .color(color)
            .pos(Pos::new(HPos::Center, VPos::Top))
    };
    let cx = (w / 2) as i32;
    let title_h = (sz.title * 1.3 + sz.small * 1.6) as i32 + 6;
    // the right-size box, under the subtitle
    let line = (sz.small * 1.35).ceil() as i32;
    let chars = ((f64::from(w) * 0.9) / (sz.small * super::HACK_ADVANCE_EM)) as usize;
    let boxed = right_size_lines(spec, chars);
    let box_h = if boxed.is_empty() {
        0
    } else {
        boxed.len() as i32 * line + line / 2 + 4
    };
    // the legend of what the panels share, in rows under it
    let mut shared = Legend::default();
    marker_entries(spec, &mut shared, sz);
    dot_entries(spec, &mut shared);
    spread_entries(spec, &mut shared);
    let rows = shared.rows(w as i32 - 8, sz);
    let band = title_h + box_h + rows * line + if rows > 0 { 4 } else { 0 };
    let (top, body) = root.split_vertically(band as u32);
    top.draw(&Text::new(
        spec.title.clone(),
        (cx, 4),
        centre(sz.title, &BLACK),
    ))?;
    top.draw(&Text::new(
        spec.subtitle.clone(),
        (cx, (4.0 + sz.title * 1.25) as i32),
        centre(sz.small, &SUBTITLE_COLOR),
    ))?;
    if !boxed.is_empty() {
        let widest = boxed
            .iter()
            .map(|l| line_box(l, sz.small).0)
            .max()
            .unwrap_or(0);
        let (x0, y0) = (cx - widest / 2 - 8, title_h);
        top.draw(&Rectangle::new(
            [(x0, y0), (cx + widest - widest / 2 + 8, y0 + box_h - 2)],
            ShapeStyle::from(&ANSWER_COLOR.mix(0.08)).filled(),
        ))?;
        top.draw(&Rectangle::new(
            [(x0, y0), (cx + widest - widest / 2 + 8, y0 + box_h - 2)],
            ANSWER_COLOR.stroke_width(1),
        ))?;
        for (i, l) in boxed.iter().enumerate() {
            top.draw(&Text::new(
                l.clone(),
                (cx, y0 + line / 4 + 2 + i as i32 * line),
                centre(sz.small, &BLACK),
            ))?;
        }
    }
    if rows > 0 {
        let legend_area = top.margin((title_h + box_h) as u32, 0, 0, 0);
        shared.draw_rows(&legend_area, 4, sz)?;
    }
    if !spec.has_server() {
        let panels = body.split_evenly((2, 2));
        for (area, panel) in panels.iter().zip(ChartPanel::CLIENT) {
            laid_out(area, &ctx, panel)?;
        }
        return Ok(());
    }
    // five panels: the three against the load on top, the fourth and the server's below
    let (_, body_h) = body.dim_in_pixel();
    let (upper, lower) = body.split_vertically(body_h / 2);
    let top = upper.split_evenly((1, 3));
    let bottom = lower.split_evenly((1, 2));
    laid_out(&top[0], &ctx, ChartPanel::Throughput)?;
    laid_out(&top[1], &ctx, ChartPanel::Latency)?;
    laid_out(&top[2], &ctx, ChartPanel::Ttft)?;
    laid_out(&bottom[0], &ctx, ChartPanel::ThroughputVsLatency)?;
    laid_out(&bottom[1], &ctx, ChartPanel::Server)
}

/// Draws one panel alone on `root` (the HTML report's charts), with the text sizes of a
/// full image twice its size, so a panel reads as it does in the four-panel image.
pub fn draw_panel<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    spec: &ChartSpec,
    panel: ChartPanel,
) -> Fallible<DB> {
    root.fill(&WHITE)?;
    let (w, h) = root.dim_in_pixel();
    let ctx = Ctx {
        spec,
        sz: Sizes::for_image(w * 2, h * 2),
        alone: true,
    };
    laid_out(root, &ctx, panel)
}

/// Draws `panel` on `area`: first on [`Dry`] to learn how tall its head must be, then for
/// real.
fn laid_out<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    ctx: &Ctx,
    panel: ChartPanel,
) -> Fallible<DB> {
    let (w, h) = area.dim_in_pixel();
    let dry = super::Dry(w, h).into_drawing_area();
    let mut head = Head::guess(&ctx.sz);
    // a failed measure leaves the guess
    let _ = one(&dry, ctx, panel, &mut head);
    let mut head = Head {
        height: head.needed.max(head.height).min(h * 3 / 5),
        needed: 0,
    };
    one(area, ctx, panel, &mut head)
}

fn one<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    ctx: &Ctx,
    panel: ChartPanel,
    head: &mut Head,
) -> Fallible<DB> {
    match panel {
        ChartPanel::Throughput => throughput(area, ctx, head),
        ChartPanel::Latency => latency(area, ctx, head),
        ChartPanel::Ttft => ttft(area, ctx, head),
        ChartPanel::ThroughputVsLatency => throughput_vs_p99(area, ctx, head),
        ChartPanel::Server => server_panel::server(area, ctx, head),
    }
}

/// One run's (x, value, hollow) points for the levels where `f` has a value.
fn series(
    spec: &ChartSpec,
    run: &ChartRun,
    f: fn(&ChartPoint) -> Option<f64>,
) -> Vec<(f64, f64, bool)> {
    run.points
        .iter()
        .filter_map(|p| Some((x_of(spec.axis, p.concurrency), f(p)?, p.hollow)))
        .collect()
}

/// The highest limit among the SLA lines of `metric` (0 without).
fn sla_max(spec: &ChartSpec, metric: SlaMetric) -> f64 {
    spec.slas
        .iter()
        .filter(|l| l.metric == metric)
        .map(|l| l.limit_ms)
        .fold(0.0, f64::max)
}

/// The highest interval end of `metric`'s SLA statistic (0 without).
fn ci_max(spec: &ChartSpec, metric: SlaMetric) -> f64 {
    spec.runs
        .iter()
        .flat_map(|r| r.points.iter().flat_map(|p| p.sla_marks.iter()))
        .filter(|m| m.metric == metric)
        .filter_map(|m| m.ci.map(|c| c.1))
        .filter(|v| v.is_finite())
        .fold(0.0, f64::max)
}

fn si_fmt(v: &f64) -> String {
    si(*v)
}

fn ms_fmt(v: &f64) -> String {
    si_ms(*v)
}

fn throughput<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    ctx: &Ctx,
    head: &mut Head,
) -> Fallible<DB> {
    let (spec, sz) = (ctx.spec, &ctx.sz);
    let caption = "output throughput";
    let Some(max) = max_of(spec, |p| Some(p.output_tps)) else {
        return nothing(area, caption, "no finished levels", sz);
    };
    let y_max = headroom(max);
    let (top, body) = area.split_vertically(head.height);
    let mut chart = conc_chart(&body, spec, "output tok/s", y_max, &si_fmt, sz)?;
    let mut legend = Legend::default();
    ctx.shared(&mut legend);
    // under the series, so the points at the markers stay visible
    markers(&mut chart, spec, y_max, false, &mut legend, sz)?;
    for (i, run) in spec.runs.iter().enumerate() {
        let pts = series(spec, run, |p| Some(p.output_tps));
        let label = name(run, "output tok/s");
        line(&mut chart, &pts, colors(i).0, label, &mut legend, sz)?;
        if spec.runs.len() == 1 {
            // one line: the axis names it
            legend.pop();
        }
    }
    legend.draw_head(&top, caption, plot_left(&chart), sz, head)
}

fn latency<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    ctx: &Ctx,
    head: &mut Head,
) -> Fallible<DB> {
    let (spec, sz) = (ctx.spec, &ctx.sz);
    let caption = "end-to-end latency";
    let Some(max) = max_of(spec, |p| p.e2e_p99_ms.or(p.e2e_p50_ms)) else {
        return nothing(area, caption, "no successful requests", sz);
    };
    let y_max = headroom(
        max.max(sla_max(spec, SlaMetric::E2e))
            .max(ci_max(spec, SlaMetric::E2e).min(max * 2.0)),
    );
    let (top, body) = area.split_vertically(head.height);
    let mut chart = conc_chart(&body, spec, "latency", y_max, &ms_fmt, sz)?;
    let mut legend = Legend::default();
    ctx.shared(&mut legend);
    markers(&mut chart, spec, y_max, false, &mut legend, sz)?;
    for (i, run) in spec.runs.iter().enumerate() {
        let (c50, c99) = colors(i);
        let both: Vec<(f64, f64, f64)> = run
            .points
            .iter()
            .filter_map(|p| Some((x_of(spec.axis, p.concurrency), p.e2e_p50_ms?, p.e2e_p99_ms?)))
            .collect();
        if both.len() >= 2 {
            let mut poly: Vec<(f64, f64)> = both.iter().map(|(c, p50, _)| (*c, *p50)).collect();
            poly.extend(both.iter().rev().map(|(c, _, p99)| (*c, *p99)));
            let fill = c99.mix(0.18);
            chart.draw_series(std::iter::once(Polygon::new(poly, fill.filled())))?;
            if spec.lists_markers() && ctx.alone {
                legend.entry(name(run, "p50-p99 spread"), Swatch::Fill(fill));
            }
        }
        let p50 = series(spec, run, |p| p.e2e_p50_ms);
        line(&mut chart, &p50, c50, name(run, "e2e p50"), &mut legend, sz)?;
        let p99 = series(spec, run, |p| p.e2e_p99_ms);
        line(&mut chart, &p99, c99, name(run, "e2e p99"), &mut legend, sz)?;
    }
    error_bars(&mut chart, spec, SlaMetric::E2e, ctx.alone, &mut legend, sz)?;
    let x_range = conc_range(spec);
    sla_lines(&mut chart, spec, SlaMetric::E2e, x_range, &mut legend, sz)?;
    legend.draw_head(&top, caption, plot_left(&chart), sz, head)
}

fn ttft<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    ctx: &Ctx,
    head: &mut Head,
) -> Fallible<DB> {
    let (spec, sz) = (ctx.spec, &ctx.sz);
    let caption = "time to first token";
    let Some(max) = max_of(spec, |p| p.ttft_p95_ms.or(p.ttft_p50_ms)) else {
        return nothing(area, caption, "no TTFT: the run did not stream", sz);
    };
    let y_max = headroom(
        max.max(sla_max(spec, SlaMetric::Ttft))
            .max(ci_max(spec, SlaMetric::Ttft).min(max * 2.0)),
    );
    let (top, body) = area.split_vertically(head.height);
    let mut chart = conc_chart(&body, spec, "TTFT", y_max, &ms_fmt, sz)?;
    let mut legend = Legend::default();
    ctx.shared(&mut legend);
    markers(&mut chart, spec, y_max, false, &mut legend, sz)?;
    for (i, run) in spec.runs.iter().enumerate() {
        let (c50, c95) = colors(i);
        let p50 = series(spec, run, |p| p.ttft_p50_ms);
        let label = name(run, "TTFT p50");
        line(&mut chart, &p50, c50, label, &mut legend, sz)?;
        let p95 = series(spec, run, |p| p.ttft_p95_ms);
        let label = name(run, "TTFT p95");
        line(&mut chart, &p95, c95, label, &mut legend, sz)?;
    }
    error_bars(
        &mut chart,
        spec,
        SlaMetric::Ttft,
        ctx.alone,
        &mut legend,
        sz,
    )?;
    let x_range = conc_range(spec);
    sla_lines(&mut chart, spec, SlaMetric::Ttft, x_range, &mut legend, sz)?;
    legend.draw_head(&top, caption, plot_left(&chart), sz, head)
}

fn throughput_vs_p99<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    ctx: &Ctx,
    head: &mut Head,
) -> Fallible<DB> {
    let (spec, sz) = (ctx.spec, &ctx.sz);
    let caption = "throughput against p99 latency";
    let (Some(x_max), Some(y_max)) = (
        max_of(spec, |p| p.e2e_p99_ms),
        max_of(spec, |p| Some(p.output_tps)),
    ) else {
        return nothing(area, caption, "no successful requests", sz);
    };
    // only a p99 limit belongs on this x axis
    let sla = spec
        .e2e_sla()
        .filter(|l| l.stat == crate::record::sla::Statistic::P(99));
    let x_max = headroom(x_max.max(sla.map_or(0.0, |l| l.limit_ms)));
    let y_max = headroom(y_max);
    let (top, body) = area.split_vertically(head.height);
    let mut chart = builder(&body, sz).build_cartesian_2d(0f64..x_max, 0f64..y_max)?;
    let n = y_labels(&chart, sz);
    house_mesh(&mut chart.configure_mesh(), sz)
        .y_labels(n)
        .x_desc("e2e p99 latency")
        .y_desc("output tok/s")
        .x_label_formatter(&ms_fmt)
        .y_label_formatter(&si_fmt)
        .draw()?;
    let label_style = TextStyle::from((FONT, sz.small).into_font()).color(&BLACK);
    let mut legend = Legend::default();
    if ctx.alone {
        dot_entries(spec, &mut legend);
    }
    let mut labels: Vec<((f64, f64), String)> = Vec::new();
    let mut dots: Vec<LabelBox> = Vec::new();
    for (i, run) in spec.runs.iter().enumerate() {
        let color = colors(i).0;
        let pts: Vec<(f64, f64, bool)> = run
            .points
            .iter()
            .filter_map(|p| Some((p.e2e_p99_ms?, p.output_tps, p.hollow)))
            .collect();
        let label = name(run, "by load");
        line(&mut chart, &pts, color, label, &mut legend, sz)?;
        if spec.runs.len() == 1 {
            // one line: each point names its load
            legend.pop();
        }
        let r = sz.dot + 1;
        dots.extend(pts.iter().map(|p| {
            let (x, y) = chart.backend_coord(&(p.0, p.1));
            (x - r, y - r, x + r, y + r)
        }));
        labels.extend(run.points.iter().filter_map(|p| {
            Some((
                (p.e2e_p99_ms?, p.output_tps),
                load_label(spec.axis, p.concurrency),
            ))
        }));
    }
    if let Some(l) = sla {
        let ends = [(l.limit_ms, 0.0), (l.limit_ms, y_max)];
        sla_line(&mut chart, l, ends, &mut legend, sz)?;
    }
    // labels placed in pixels so that none overlaps another or a point, inside the plot
    // (crowded ones are dropped: the load axes' ticks name every level)
    let (xr, yr) = chart.plotting_area().get_pixel_range();
    let bounds = (xr.start, yr.start, xr.end, yr.end);
    let boxes: Vec<LabelAt> = labels
        .iter()
        .map(|(xy, text)| (chart.backend_coord(xy), line_box(text, sz.small)))
        .collect();
    let places = place_labels(&boxes, sz.dot + 3, &dots, bounds);
    chart.draw_series(labels.iter().zip(places).filter_map(|((xy, text), at)| {
        Some(EmptyElement::at(*xy) + Text::new(text.clone(), at?, label_style.clone()))
    }))?;
    legend.draw_head(&top, caption, plot_left(&chart), sz, head)
}
