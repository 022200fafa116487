//! The drawing code shared by the SVG and PNG backends: a title band and four panels.
//! Sizes scale with the image so the text stays readable from 800x450 to 1600x900 and up.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::parts::*;
use super::{ChartPoint, ChartRun, ChartSpec, FONT};

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
    let panels = body.split_evenly((2, 2));
    throughput(&panels[0], spec, &sz)?;
    latency(&panels[1], spec, &sz)?;
    ttft(&panels[2], spec, &sz)?;
    throughput_vs_p99(&panels[3], spec, &sz)?;
    Ok(())
}

/// One run's (concurrency, value) points for the levels where `f` has a value.
fn series(run: &ChartRun, f: fn(&ChartPoint) -> Option<f64>) -> Vec<(f64, f64)> {
    run.points
        .iter()
        .filter_map(|p| Some((f64::from(p.concurrency), f(p)?)))
        .collect()
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
    let mut chart = conc_chart(area, spec, caption, "output tokens/s", y_max, sz)?;
    // under the series, so the points at the knee stay visible
    knees(&mut chart, spec, y_max, sz)?;
    for (i, run) in spec.runs.iter().enumerate() {
        let pts = series(run, |p| Some(p.output_tps));
        line(&mut chart, &pts, colors(i).0, name(run, "output tok/s"), sz)?;
    }
    legend(&mut chart, sz, SeriesLabelPosition::LowerRight)
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
    let y_max = headroom(max.max(spec.sla_ms.unwrap_or(0.0)));
    let mut chart = conc_chart(area, spec, caption, "latency ms", y_max, sz)?;
    // under the series, so the points at the knee stay visible
    knees(&mut chart, spec, y_max, sz)?;
    for (i, run) in spec.runs.iter().enumerate() {
        let (c50, c99) = colors(i);
        let both: Vec<(f64, f64, f64)> = run
            .points
            .iter()
            .filter_map(|p| Some((f64::from(p.concurrency), p.e2e_p50_ms?, p.e2e_p99_ms?)))
            .collect();
        if both.len() >= 2 {
            let mut poly: Vec<(f64, f64)> = both.iter().map(|(c, p50, _)| (*c, *p50)).collect();
            poly.extend(both.iter().rev().map(|(c, _, p99)| (*c, *p99)));
            let fill = c99.mix(0.18);
            chart
                .draw_series(std::iter::once(Polygon::new(poly, fill.filled())))?
                .label(name(run, "p50-p99 spread"))
                .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 20, y + 5)], fill.filled()));
        }
        line(
            &mut chart,
            &series(run, |p| p.e2e_p50_ms),
            c50,
            name(run, "e2e p50"),
            sz,
        )?;
        line(
            &mut chart,
            &series(run, |p| p.e2e_p99_ms),
            c99,
            name(run, "e2e p99"),
            sz,
        )?;
    }
    if let Some(sla) = spec.sla_ms {
        let (lo, hi) = conc_range(spec);
        let style = SLA_COLOR.stroke_width(sz.stroke);
        chart
            .draw_series(DashedLineSeries::new(
                vec![(lo, sla), (hi, sla)],
                12,
                6,
                style,
            ))?
            .label(format!("SLA e2e p99 < {} ms", axis_number(sla)))
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style));
    }
    legend(&mut chart, sz, SeriesLabelPosition::UpperLeft)
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
    let y_max = headroom(max);
    let mut chart = conc_chart(area, spec, caption, "TTFT ms", y_max, sz)?;
    // under the series, so the points at the knee stay visible
    knees(&mut chart, spec, y_max, sz)?;
    for (i, run) in spec.runs.iter().enumerate() {
        let (c50, c95) = colors(i);
        line(
            &mut chart,
            &series(run, |p| p.ttft_p50_ms),
            c50,
            name(run, "TTFT p50"),
            sz,
        )?;
        line(
            &mut chart,
            &series(run, |p| p.ttft_p95_ms),
            c95,
            name(run, "TTFT p95"),
            sz,
        )?;
    }
    legend(&mut chart, sz, SeriesLabelPosition::UpperLeft)
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
    let x_max = headroom(x_max.max(spec.sla_ms.unwrap_or(0.0)));
    let y_max = headroom(y_max);
    let mut chart = builder(area, caption, sz).build_cartesian_2d(0f64..x_max, 0f64..y_max)?;
    house_mesh(&mut chart.configure_mesh(), sz)
        .x_desc("e2e p99 latency ms")
        .y_desc("output tokens/s")
        .x_label_formatter(&|v| axis_number(*v))
        .y_label_formatter(&|v| axis_number(*v))
        .draw()?;
    let label_style = TextStyle::from((FONT, sz.small).into_font()).color(&BLACK);
    for (i, run) in spec.runs.iter().enumerate() {
        let color = colors(i).0;
        let pts: Vec<(f64, f64, u32)> = run
            .points
            .iter()
            .filter_map(|p| Some((p.e2e_p99_ms?, p.output_tps, p.concurrency)))
            .collect();
        let xy: Vec<(f64, f64)> = pts.iter().map(|(x, y, _)| (*x, *y)).collect();
        line(&mut chart, &xy, color, name(run, "by concurrency"), sz)?;
        let (dx, dy) = (sz.dot + 3, -(sz.small as i32) - 2);
        chart.draw_series(pts.iter().map(|(x, y, c)| {
            EmptyElement::at((*x, *y)) + Text::new(format!("c={c}"), (dx, dy), label_style.clone())
        }))?;
    }
    if let Some(sla) = spec.sla_ms {
        let style = SLA_COLOR.stroke_width(sz.stroke);
        chart
            .draw_series(DashedLineSeries::new(
                vec![(sla, 0.0), (sla, y_max)],
                12,
                6,
                style,
            ))?
            .label(format!("SLA e2e p99 < {} ms", axis_number(sla)))
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style));
    }
    legend(&mut chart, sz, SeriesLabelPosition::LowerRight)
}
