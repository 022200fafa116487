//! The drawing code shared by the SVG and PNG backends: a title band and four panels.
//! Sizes scale with the image so the text stays readable from 800x450 to 1600x900 and up.

use plotters::coord::combinators::{BindKeyPoints, LogCoord, WithKeyPoints};
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::{ChartPoint, ChartRun, ChartSpec, FONT};

type Fallible<DB> = Result<(), DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;
type ConcChart<'a, DB> =
    ChartContext<'a, DB, Cartesian2d<WithKeyPoints<LogCoord<f64>>, RangedCoordf64>>;

/// Colour of the SLA line.
pub const SLA_COLOR: RGBColor = RGBColor(214, 39, 40);
/// Colour of the subtitle.
const SUBTITLE_COLOR: RGBColor = RGBColor(80, 80, 80);
/// Colour of the knee marker.
pub const KNEE_COLOR: RGBColor = RGBColor(90, 90, 90);
/// Per run: (main series colour, second series colour).
pub const RUN_COLORS: [(RGBColor, RGBColor); 3] = [
    (RGBColor(31, 119, 180), RGBColor(255, 127, 14)),
    (RGBColor(44, 160, 44), RGBColor(148, 103, 189)),
    (RGBColor(140, 86, 75), RGBColor(227, 119, 194)),
];

/// Text and stroke sizes for one image size.
struct Sizes {
    title: f64,
    text: f64,
    small: f64,
    stroke: u32,
    dot: i32,
}

impl Sizes {
    fn for_image(w: u32, h: u32) -> Sizes {
        let s = (f64::from(w) / 1600.0).min(f64::from(h) / 900.0);
        Sizes {
            title: (28.0 * s).max(15.0),
            text: (19.0 * s).max(11.0),
            small: (16.0 * s).max(10.0),
            stroke: if s >= 0.75 { 3 } else { 2 },
            dot: if s >= 0.75 { 5 } else { 3 },
        }
    }
}

fn colors(i: usize) -> (RGBColor, RGBColor) {
    RUN_COLORS[i % RUN_COLORS.len()]
}

fn name(run: &ChartRun, what: &str) -> String {
    if run.label.is_empty() {
        what.to_string()
    } else {
        format!("{} {what}", run.label)
    }
}

fn axis_number(v: f64) -> String {
    if v.abs() >= 10.0 || v == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

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

/// The concurrency range over every run, padded, for a log axis.
fn conc_range(spec: &ChartSpec) -> (f64, f64) {
    let cs = spec
        .runs
        .iter()
        .flat_map(|r| r.points.iter().map(|p| p.concurrency));
    let lo = cs.clone().min().unwrap_or(1).max(1) as f64;
    let hi = cs.max().unwrap_or(1).max(1) as f64;
    (lo / 1.4, hi * 1.4)
}

/// Tick marks at the measured concurrencies, thinned to at most 10 so labels do not collide
/// (the first and last always stay).
fn conc_ticks(spec: &ChartSpec) -> Vec<f64> {
    let mut cs: Vec<u32> = spec
        .runs
        .iter()
        .flat_map(|r| r.points.iter().map(|p| p.concurrency))
        .collect();
    cs.sort_unstable();
    cs.dedup();
    // on a log axis neighbours closer than 1.25x overlap their labels
    let mut ticks: Vec<u32> = Vec::new();
    for c in cs.iter().copied() {
        if ticks
            .last()
            .is_none_or(|t| f64::from(c) >= f64::from(*t) * 1.25)
        {
            ticks.push(c);
        }
    }
    let step = ticks.len().div_ceil(10).max(1);
    let last = ticks.last().copied();
    let mut out: Vec<f64> = ticks.iter().step_by(step).map(|c| f64::from(*c)).collect();
    if let Some(l) = last.map(f64::from) {
        if out.last() != Some(&l) {
            out.push(l);
        }
    }
    out
}

fn nothing<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    caption: &str,
    why: &str,
    sz: &Sizes,
) -> Fallible<DB> {
    let (w, h) = area.dim_in_pixel();
    let style = |size: f64| {
        TextStyle::from((FONT, size).into_font())
            .color(&BLACK)
            .pos(Pos::new(HPos::Center, VPos::Center))
    };
    area.draw(&Text::new(
        caption.to_string(),
        ((w / 2) as i32, (sz.text * 1.2) as i32),
        style(sz.text),
    ))?;
    area.draw(&Text::new(
        why.to_string(),
        ((w / 2) as i32, (h / 2) as i32),
        style(sz.small),
    ))
}

fn conc_chart<'a, DB: DrawingBackend>(
    area: &'a DrawingArea<DB, Shift>,
    spec: &ChartSpec,
    caption: &str,
    y_desc: &str,
    y_max: f64,
    sz: &Sizes,
) -> Result<ConcChart<'a, DB>, DrawingAreaErrorKind<DB::ErrorType>> {
    let (lo, hi) = conc_range(spec);
    let mut chart = ChartBuilder::on(area)
        .caption(caption, (FONT, sz.text))
        .margin((sz.small * 0.8) as u32)
        .x_label_area_size((sz.small * 2.8) as u32)
        .y_label_area_size((sz.small * 5.0) as u32)
        .build_cartesian_2d(
            (lo..hi).log_scale().with_key_points(conc_ticks(spec)),
            0f64..y_max,
        )?;
    chart
        .configure_mesh()
        .x_desc("concurrency")
        .y_desc(y_desc)
        .x_label_formatter(&|v| format!("{v:.0}"))
        .y_label_formatter(&|v| axis_number(*v))
        .label_style((FONT, sz.small))
        .axis_desc_style((FONT, sz.small))
        .light_line_style(WHITE.mix(0.0))
        .bold_line_style(BLACK.mix(0.08))
        .draw()?;
    Ok(chart)
}

fn legend<'a, DB: DrawingBackend + 'a, CT: CoordTranslate>(
    chart: &mut ChartContext<'a, DB, CT>,
    sz: &Sizes,
    pos: SeriesLabelPosition,
) -> Fallible<DB> {
    chart
        .configure_series_labels()
        .position(pos)
        .label_font((FONT, sz.small))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.4))
        .draw()
}

/// A line with dots, with a legend entry.
fn line<DB: DrawingBackend, CT: CoordTranslate<From = (f64, f64)>>(
    chart: &mut ChartContext<DB, CT>,
    pts: &[(f64, f64)],
    color: RGBColor,
    label: String,
    sz: &Sizes,
) -> Fallible<DB> {
    let stroke = sz.stroke;
    chart
        .draw_series(LineSeries::new(
            pts.iter().copied(),
            color.stroke_width(stroke),
        ))?
        .label(label)
        .legend(move |(x, y)| {
            PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(stroke))
        });
    let dot = sz.dot;
    chart.draw_series(pts.iter().map(|p| Circle::new(*p, dot, color.filled())))?;
    Ok(())
}

/// The knee of each run: a dashed vertical line with a legend entry `knee c=N`.
fn knees<DB: DrawingBackend>(
    chart: &mut ConcChart<DB>,
    spec: &ChartSpec,
    y_max: f64,
    sz: &Sizes,
) -> Fallible<DB> {
    for run in &spec.runs {
        let Some(k) = run.knee else { continue };
        let style = KNEE_COLOR.stroke_width(sz.stroke);
        chart
            .draw_series(DashedLineSeries::new(
                vec![(f64::from(k), 0.0), (f64::from(k), y_max)],
                8,
                6,
                style,
            ))?
            .label(name(run, &format!("knee c={k}")))
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style));
    }
    Ok(())
}

fn max_of(spec: &ChartSpec, f: impl Fn(&ChartPoint) -> Option<f64>) -> Option<f64> {
    spec.runs
        .iter()
        .flat_map(|r| r.points.iter().filter_map(&f))
        .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))))
}

fn headroom(v: f64) -> f64 {
    if v > 0.0 && v.is_finite() {
        v * 1.15
    } else {
        1.0
    }
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
    for (i, run) in spec.runs.iter().enumerate() {
        let pts: Vec<(f64, f64)> = run
            .points
            .iter()
            .map(|p| (f64::from(p.concurrency), p.output_tps))
            .collect();
        line(&mut chart, &pts, colors(i).0, name(run, "output tok/s"), sz)?;
    }
    knees(&mut chart, spec, y_max, sz)?;
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
        let series = |f: fn(&ChartPoint) -> Option<f64>| -> Vec<(f64, f64)> {
            run.points
                .iter()
                .filter_map(|p| Some((f64::from(p.concurrency), f(p)?)))
                .collect()
        };
        line(
            &mut chart,
            &series(|p| p.e2e_p50_ms),
            c50,
            name(run, "e2e p50"),
            sz,
        )?;
        line(
            &mut chart,
            &series(|p| p.e2e_p99_ms),
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
    knees(&mut chart, spec, y_max, sz)?;
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
    for (i, run) in spec.runs.iter().enumerate() {
        let (c50, c95) = colors(i);
        let series = |f: fn(&ChartPoint) -> Option<f64>| -> Vec<(f64, f64)> {
            run.points
                .iter()
                .filter_map(|p| Some((f64::from(p.concurrency), f(p)?)))
                .collect()
        };
        line(
            &mut chart,
            &series(|p| p.ttft_p50_ms),
            c50,
            name(run, "TTFT p50"),
            sz,
        )?;
        line(
            &mut chart,
            &series(|p| p.ttft_p95_ms),
            c95,
            name(run, "TTFT p95"),
            sz,
        )?;
    }
    knees(&mut chart, spec, y_max, sz)?;
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
    let mut chart = ChartBuilder::on(area)
        .caption(caption, (FONT, sz.text))
        .margin((sz.small * 0.8) as u32)
        .x_label_area_size((sz.small * 2.8) as u32)
        .y_label_area_size((sz.small * 5.0) as u32)
        .build_cartesian_2d(0f64..x_max, 0f64..y_max)?;
    chart
        .configure_mesh()
        .x_desc("e2e p99 latency ms")
        .y_desc("output tokens/s")
        .x_label_formatter(&|v| axis_number(*v))
        .y_label_formatter(&|v| axis_number(*v))
        .label_style((FONT, sz.small))
        .axis_desc_style((FONT, sz.small))
        .light_line_style(WHITE.mix(0.0))
        .bold_line_style(BLACK.mix(0.08))
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
