//! The campaign's Pareto chart (docs/campaigns.md): one point per candidate, its cost per
//! million output tokens against its SLA statistic at the answer, each with its error bars,
//! and the frontier (the candidates no other beats on both) drawn through them.

use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::ops::Range;

use super::legend::{Legend, Swatch};
use super::marks::{place_labels, LabelAt, LabelBox};
use super::parts::{line_box, Fallible, Sizes};
use super::FONT;

/// One candidate on the chart.
#[derive(Debug, Clone, PartialEq)]
pub struct ParetoPoint {
    pub label: String,
    /// The SLA statistic at the answer (ms), with its 95 % interval.
    pub x: f64,
    pub x_range: (f64, f64),
    /// Cost per million output tokens, with the range the answer's interval allows.
    pub y: f64,
    pub y_range: (f64, f64),
}

/// What the chart shows.
#[derive(Debug, Clone, PartialEq)]
pub struct ParetoSpec {
    pub title: String,
    pub subtitle: String,
    /// The x axis' name, e.g. `p90 e2e at the answer (ms)`.
    pub x_label: String,
    pub points: Vec<ParetoPoint>,
}

/// The colour of the frontier line (also how a test finds it in the SVG).
pub const FRONTIER_COLOR: RGBColor = super::theme::PARETO_FRONTIER;
const POINT_COLOR: RGBColor = super::theme::PARETO_POINT;
const BAR_COLOR: RGBColor = super::theme::PARETO_BAR;

/// The indices of the points on the frontier, by increasing x: each cheaper than every point
/// at a lower or equal statistic.
pub fn frontier(points: &[ParetoPoint]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..points.len()).collect();
    order.sort_by(|a, b| {
        points[*a]
            .x
            .total_cmp(&points[*b].x)
            .then(points[*a].y.total_cmp(&points[*b].y))
    });
    let mut best = f64::INFINITY;
    let mut out = Vec::new();
    for i in order {
        if points[i].y < best {
            best = points[i].y;
            out.push(i);
        }
    }
    out
}

fn padded(lo: f64, hi: f64) -> (f64, f64) {
    let span = (hi - lo).abs().max(hi.abs() * 0.1).max(1e-9);
    ((lo - span * 0.15).max(0.0), hi + span * 0.15)
}

/// The chart's coordinates: the SLA statistic (ms) across, the cost up.
type ParetoChart<'a, DB> = ChartContext<'a, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// A drawing area of the chart, or why drawing failed.
type Area<DB> =
    Result<DrawingArea<DB, Shift>, DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;

/// Draws the chart on `root`.
pub fn draw<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, spec: &ParetoSpec) -> Fallible<DB> {
    root.fill(&WHITE)?;
    let (w, h) = root.dim_in_pixel();
    let sz = Sizes::for_image(w, h);
    let body = title_band(root, spec, &sz)?;
    let body = legend_band(&body, w, &sz)?;
    let (xs, ys) = axis_ranges(&spec.points);
    let mut chart = ChartBuilder::on(&body)
        .margin(sz.small as u32)
        .x_label_area_size((sz.text * 3.0) as u32)
        .y_label_area_size((sz.text * 5.0) as u32)
        .build_cartesian_2d(xs, ys)?;
    chart
        .configure_mesh()
        .x_desc(spec.x_label.clone())
        .y_desc("cost per million output tokens")
        .label_style((FONT, sz.text))
        .axis_desc_style((FONT, sz.text))
        .light_line_style(super::theme::GRID)
        .draw()?;
    // a ring around each frontier point: a frontier of one point draws no line
    let ring = (sz.small * 0.9) as i32;
    candidates(&mut chart, &spec.points, ring, &sz)?;
    names(&mut chart, &spec.points, ring, &sz)
}

/// The title and subtitle in a band at the top; returns the area below it.
fn title_band<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    spec: &ParetoSpec,
    sz: &Sizes,
) -> Area<DB> {
    let centre = |size: f64| {
        TextStyle::from((FONT, size).into_font()).pos(Pos::new(HPos::Center, VPos::Top))
    };
    let band = (sz.title * 1.3 + sz.small * 1.6) as u32 + 8;
    let (top, body) = root.split_vertically(band);
    let cx = (root.dim_in_pixel().0 / 2) as i32;
    top.draw(&Text::new(spec.title.clone(), (cx, 4), centre(sz.title)))?;
    top.draw(&Text::new(
        spec.subtitle.clone(),
        (cx, (4.0 + sz.title * 1.25) as i32),
        centre(sz.small),
    ))?;
    Ok(body)
}

/// The legend in a band above the plot (`w` pixels wide); returns the area below it.
fn legend_band<DB: DrawingBackend>(body: &DrawingArea<DB, Shift>, w: u32, sz: &Sizes) -> Area<DB> {
    let mut legend = Legend::default();
    let frontier_label = "frontier (no other candidate is both cheaper and faster)";
    legend.entry(
        frontier_label,
        Swatch::Line {
            color: FRONTIER_COLOR,
            width: 2,
            dash: None,
            shape: None,
        },
    );
    let line = (sz.small * 1.45).ceil() as i32;
    let rows = legend.rows(w as i32 - 8, sz);
    let (band, body) = body.split_vertically((rows * line + sz.small as i32) as u32);
    legend.draw_rows(&band, (sz.text * 5.0) as i32 + sz.small as i32, sz)?;
    Ok(body)
}

/// The axes' ranges: every point's error bars, padded.
fn axis_ranges(pts: &[ParetoPoint]) -> (Range<f64>, Range<f64>) {
    let (x0, x1) = padded(
        pts.iter()
            .map(|p| p.x_range.0)
            .fold(f64::INFINITY, f64::min),
        pts.iter().map(|p| p.x_range.1).fold(0.0, f64::max),
    );
    let (y0, y1) = padded(
        pts.iter()
            .map(|p| p.y_range.0)
            .fold(f64::INFINITY, f64::min),
        pts.iter().map(|p| p.y_range.1).fold(0.0, f64::max),
    );
    let (x0, y0) = (
        if x0.is_finite() { x0 } else { 0.0 },
        if y0.is_finite() { y0 } else { 0.0 },
    );
    (x0..x1.max(x0 + 1e-9), y0..y1.max(y0 + 1e-9))
}

/// The candidates: error bars first, then the frontier (ringed points and the line through
/// them), then the points over them.
fn candidates<DB: DrawingBackend>(
    chart: &mut ParetoChart<DB>,
    pts: &[ParetoPoint],
    ring: i32,
    sz: &Sizes,
) -> Fallible<DB> {
    for p in pts {
        chart.draw_series(std::iter::once(PathElement::new(
            vec![(p.x_range.0, p.y), (p.x_range.1, p.y)],
            BAR_COLOR.stroke_width(1),
        )))?;
        chart.draw_series(std::iter::once(PathElement::new(
            vec![(p.x, p.y_range.0), (p.x, p.y_range.1)],
            BAR_COLOR.stroke_width(1),
        )))?;
    }
    let front: Vec<(f64, f64)> = frontier(pts)
        .iter()
        .map(|i| (pts[*i].x, pts[*i].y))
        .collect();
    for (x, y) in &front {
        chart.draw_series(std::iter::once(Circle::new(
            (*x, *y),
            ring,
            FRONTIER_COLOR.stroke_width(2),
        )))?;
    }
    chart.draw_series(std::iter::once(PathElement::new(
        front,
        FRONTIER_COLOR.stroke_width(2),
    )))?;
    let dot = (sz.small * 0.45) as i32;
    for p in pts {
        chart.draw_series(std::iter::once(Circle::new(
            (p.x, p.y),
            dot,
            POINT_COLOR.filled(),
        )))?;
    }
    Ok(())
}

/// Each candidate's name beside its point, over no point and no other name.
fn names<DB: DrawingBackend>(
    chart: &mut ParetoChart<DB>,
    pts: &[ParetoPoint],
    ring: i32,
    sz: &Sizes,
) -> Fallible<DB> {
    let rings: Vec<LabelBox> = pts
        .iter()
        .map(|p| {
            let (x, y) = chart.backend_coord(&(p.x, p.y));
            (x - ring - 1, y - ring - 1, x + ring + 1, y + ring + 1)
        })
        .collect();
    let boxes: Vec<LabelAt> = pts
        .iter()
        .map(|p| {
            (
                chart.backend_coord(&(p.x, p.y)),
                line_box(&p.label, sz.small),
            )
        })
        .collect();
    let (xr, yr) = chart.plotting_area().get_pixel_range();
    let places = place_labels(
        &boxes,
        ring + 2,
        &rings,
        (xr.start, yr.start, xr.end, yr.end),
    );
    let style = TextStyle::from((FONT, sz.small).into_font()).pos(Pos::new(HPos::Left, VPos::Top));
    chart.draw_series(pts.iter().zip(places).filter_map(|(p, at)| {
        Some(EmptyElement::at((p.x, p.y)) + Text::new(p.label.clone(), at?, style.clone()))
    }))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::legend::tests::{covered, texts_and_dots};
    use super::*;

    fn p(label: &str, x: f64, y: f64) -> ParetoPoint {
        ParetoPoint {
            label: label.into(),
            x,
            x_range: (x, x),
            y,
            y_range: (y, y),
        }
    }

    #[test]
    fn the_frontier_keeps_what_nothing_beats_on_both() {
        let pts = [
            p("fast dear", 100.0, 3.0),
            p("slow cheap", 200.0, 1.0),
            p("dominated", 250.0, 2.0),
            p("middle", 150.0, 2.0),
        ];
        assert_eq!(frontier(&pts), vec![0, 3, 1]);
    }

    #[test]
    fn no_text_covers_a_candidate() {
        // candidates towards both top corners and the bottom middle
        let spec = ParetoSpec {
            title: "t".into(),
            subtitle: "s".into(),
            x_label: "p90 e2e at the answer (ms)".into(),
            points: vec![
                p("fast dear", 100.0, 3.0),
                p("slow dear", 300.0, 3.0),
                p("middle", 200.0, 1.0),
            ],
        };
        let svg = super::super::render_pareto_svg(&spec, (1600, 900)).unwrap();
        let (texts, dots) = texts_and_dots(&svg);
        assert!(dots.len() >= 3, "{dots:?}");
        for (t, b) in &texts {
            assert_eq!(covered(*b, &dots), None, "{t} at {b:?}");
        }
        for name in ["fast dear", "slow dear", "middle"] {
            assert!(texts.iter().any(|(t, _)| t == name), "{name}");
        }
    }
}
