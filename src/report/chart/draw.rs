//! The drawing code shared by the SVG and PNG backends: a title band and four panels, or five
//! (three over two) when a run recorded server metrics.
//! Sizes scale with the image so the text stays readable from 800x450 to 1600x900 and up.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::legend::Legend;
use super::marks::*;
use super::parts::*;
use super::server_panel;
use super::{ChartPanel, ChartPoint, ChartRun, ChartSpec, SlaMetric, FONT};

/// Draws the whole image on `root`.
pub fn draw<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, spec: &ChartSpec) -> Fallible<DB> {
    root.fill(&WHITE)?;
    let (w, h) = root.dim_in_pixel();
    let sz = Sizes::for_image(w, h);
    let band = (sz.title * 1.3 + sz.small * 1.6) as u32 + 8;
    let (top, body) = root.split_vertically(band);
    let centre = |size: f64, color: &'static RGBColor| {
        TextStyle::from((FONT, size).into_font())
            .color(color)
            .pos(Pos::new(HPos::Center, VPos::Top))
    };
    let cx = (w / 2) as i32;
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
    if !spec.has_server() {
        let panels = body.split_evenly((2, 2));
        throughput(&panels[0], spec, &sz)?;
        latency(&panels[1], spec, &sz)?;
        ttft(&panels[2], spec, &sz)?;
        return throughput_vs_p99(&panels[3], spec, &sz);
    }
    // five panels: the three against the load on top, the fourth and the server's below
    let (_, body_h) = body.dim_in_pixel();
    let (upper, lower) = body.split_vertically(body_h / 2);
    let top = upper.split_evenly((1, 3));
    let bottom = lower.split_evenly((1, 2));
    throughput(&top[0], spec, &sz)?;
    latency(&top[1], spec, &sz)?;
    ttft(&top[2], spec, &sz)?;
    throughput_vs_p99(&bottom[0], spec, &sz)?;
    server_panel::server(&bottom[1], spec, &sz)
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
    let sz = Sizes::for_image(w * 2, h * 2);
    match panel {
        ChartPanel::Throughput => throughput(root, spec, &sz),
        ChartPanel::Latency => latency(root, spec, &sz),
        ChartPanel::Ttft => ttft(root, spec, &sz),
        ChartPanel::ThroughputVsLatency => throughput_vs_p99(root, spec, &sz),
        ChartPanel::Server => server_panel::server(root, spec, &sz),
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
    spec: &ChartSpec,
    sz: &Sizes,
) -> Fallible<DB> {
    let caption = "output throughput";
    let Some(max) = max_of(spec, |p| Some(p.output_tps)) else {
        return nothing(area, caption, "no finished levels", sz);
    };
    let y_max = headroom(max);
    let mut chart = conc_chart(area, spec, caption, "output tok/s", y_max, &si_fmt, sz)?;
    let mut legend = Legend::default();
    // under the series, so the points at the markers stay visible
    markers(&mut chart, spec, y_max, &mut legend, sz)?;
    for (i, run) in spec.runs.iter().enumerate() {
        let pts = series(spec, run, |p| Some(p.output_tps));
        let label = name(run, "output tok/s");
        line(&mut chart, &pts, colors(i).0, label, &mut legend, sz)?;
    }
    legend.draw(&mut chart, sz)
}

fn latency<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    spec: &ChartSpec,
    sz: &Sizes,
) -> Fallible<DB> {
    let caption = "end-to-end latency";
    let Some(max) = max_of(spec, |p| p.e2e_p99_ms.or(p.e2e_p50_ms)) else {
        return nothing(area, caption, "no successful requests", sz);
    };
    let y_max = headroom(
        max.max(sla_max(spec, SlaMetric::E2e))
            .max(ci_max(spec, SlaMetric::E2e).min(max * 2.0)),
    );
    let mut chart = conc_chart(area, spec, caption, "latency", y_max, &ms_fmt, sz)?;
    let mut legend = Legend::default();
    markers(&mut chart, spec, y_max, &mut legend, sz)?;
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
            let anno = chart.draw_series(std::iter::once(Polygon::new(poly, fill.filled())))?;
            if spec.lists_markers() {
                anno.label(legend.entry(name(run, "p50-p99 spread")))
                    .legend(move |(x, y)| {
                        Rectangle::new([(x, y - 5), (x + 20, y + 5)], fill.filled())
                    });
            }
        }
        let p50 = series(spec, run, |p| p.e2e_p50_ms);
        line(&mut chart, &p50, c50, name(run, "e2e p50"), &mut legend, sz)?;
        let p99 = series(spec, run, |p| p.e2e_p99_ms);
        line(&mut chart, &p99, c99, name(run, "e2e p99"), &mut legend, sz)?;
    }
    error_bars(&mut chart, spec, SlaMetric::E2e, &mut legend, sz)?;
    let x_range = conc_range(spec);
    sla_lines(&mut chart, spec, SlaMetric::E2e, x_range, &mut legend, sz)?;
    legend.draw(&mut chart, sz)
}

fn ttft<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    spec: &ChartSpec,
    sz: &Sizes,
) -> Fallible<DB> {
    let caption = "time to first token";
    let Some(max) = max_of(spec, |p| p.ttft_p95_ms.or(p.ttft_p50_ms)) else {
        return nothing(area, caption, "no TTFT: the run did not stream", sz);
    };
    let y_max = headroom(
        max.max(sla_max(spec, SlaMetric::Ttft))
            .max(ci_max(spec, SlaMetric::Ttft).min(max * 2.0)),
    );
    let mut chart = conc_chart(area, spec, caption, "TTFT", y_max, &ms_fmt, sz)?;
    let mut legend = Legend::default();
    markers(&mut chart, spec, y_max, &mut legend, sz)?;
    for (i, run) in spec.runs.iter().enumerate() {
        let (c50, c95) = colors(i);
        let p50 = series(spec, run, |p| p.ttft_p50_ms);
        line(
            &mut chart,
            &p50,
            c50,
            name(run, "TTFT p50"),
            &mut legend,
            sz,
        )?;
        let p95 = series(spec, run, |p| p.ttft_p95_ms);
        line(
            &mut chart,
            &p95,
            c95,
            name(run, "TTFT p95"),
            &mut legend,
            sz,
        )?;
    }
    error_bars(&mut chart, spec, SlaMetric::Ttft, &mut legend, sz)?;
    let x_range = conc_range(spec);
    sla_lines(&mut chart, spec, SlaMetric::Ttft, x_range, &mut legend, sz)?;
    legend.draw(&mut chart, sz)
}

fn throughput_vs_p99<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    spec: &ChartSpec,
    sz: &Sizes,
) -> Fallible<DB> {
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
    let mut chart = builder(area, caption, sz).build_cartesian_2d(0f64..x_max, 0f64..y_max)?;
    house_mesh(&mut chart.configure_mesh(), sz)
        .x_desc("e2e p99 latency")
        .y_desc("output tok/s")
        .x_label_formatter(&ms_fmt)
        .y_label_formatter(&si_fmt)
        .draw()?;
    let label_style = TextStyle::from((FONT, sz.small).into_font()).color(&BLACK);
    let mut legend = Legend::default();
    let mut labels: Vec<((f64, f64), String)> = Vec::new();
    for (i, run) in spec.runs.iter().enumerate() {
        let color = colors(i).0;
        let pts: Vec<(f64, f64, bool)> = run
            .points
            .iter()
            .filter_map(|p| Some((p.e2e_p99_ms?, p.output_tps, p.hollow)))
            .collect();
        line(
            &mut chart,
            &pts,
            color,
            name(run, "by load"),
            &mut legend,
            sz,
        )?;
        labels.extend(run.points.iter().filter_map(|p| {
            Some((
                (p.e2e_p99_ms?, p.output_tps),
                load_label(spec.axis, p.concurrency),
            ))
        }));
    }
    // labels placed in pixels so that none overlaps another (crowded ones are dropped)
    let boxes: Vec<LabelAt> = labels
        .iter()
        .map(|(xy, text)| (chart.backend_coord(xy), line_box(text, sz.small)))
        .collect();
    let places = place_labels(&boxes, sz.dot + 3);
    for (((px, py), (w, h)), at) in boxes.iter().zip(&places) {
        if let Some((dx, dy)) = at {
            legend.mark_box((px + dx, py + dy, px + dx + w, py + dy + h));
        }
    }
    chart.draw_series(labels.iter().zip(places).filter_map(|((xy, text), at)| {
        Some(EmptyElement::at(*xy) + Text::new(text.clone(), at?, label_style.clone()))
    }))?;
    if let Some(l) = sla {
        let ends = [(l.limit_ms, 0.0), (l.limit_ms, y_max)];
        sla_line(&mut chart, l, ends, &mut legend, sz)?;
    }
    legend.draw(&mut chart, sz)
}
