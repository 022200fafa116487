//! A series drawn on a panel: a line (dashed or not) with a marker at each point, hollow for
//! levels not held or uncertain, and its legend entry drawn the same way.

use plotters::prelude::*;

use super::legend::{marker, Legend, Shape, Swatch};
use super::parts::{Fallible, Sizes};

/// A line with dots, with a legend entry. Points marked `true` (not held, cut short or
/// uncertain) get hollow dots.
pub(super) fn line<DB: DrawingBackend, CT: CoordTranslate<From = (f64, f64)>>(
    chart: &mut ChartContext<DB, CT>,
    pts: &[(f64, f64, bool)],
    color: RGBColor,
    label: String,
    legend: &mut Legend,
    sz: &Sizes,
) -> Fallible<DB> {
    styled(chart, pts, (color, None, Shape::Circle), label, legend, sz)
}

/// How a series is drawn: its colour, its dash (in strokes) when dashed, its markers' shape.
pub(super) type Look = (RGBColor, Option<u32>, Shape);

/// A line drawn as `look` says, with its markers and a legend entry drawn the same way.
pub(super) fn styled<DB: DrawingBackend, CT: CoordTranslate<From = (f64, f64)>>(
    chart: &mut ChartContext<DB, CT>,
    pts: &[(f64, f64, bool)],
    (color, dash, shape): Look,
    label: String,
    legend: &mut Legend,
    sz: &Sizes,
) -> Fallible<DB> {
    let stroke = sz.stroke;
    let style = color.stroke_width(stroke);
    let xy = pts.iter().map(|p| (p.0, p.1));
    match dash {
        Some(d) => {
            let d = stroke * d;
            chart.draw_series(DashedLineSeries::new(xy, d, d, style))?;
        }
        None => {
            chart.draw_series(LineSeries::new(xy, style))?;
        }
    }
    legend.entry(
        label,
        Swatch::Line {
            color,
            width: stroke,
            dash: dash.map(|d| (stroke * d, stroke * d)),
            shape: Some(shape),
        },
    );
    dots(chart, pts, color, shape, sz)
}

/// The markers of a line's points, hollow where marked `true`.
pub(super) fn dots<DB: DrawingBackend, CT: CoordTranslate<From = (f64, f64)>>(
    chart: &mut ChartContext<DB, CT>,
    pts: &[(f64, f64, bool)],
    color: RGBColor,
    shape: Shape,
    sz: &Sizes,
) -> Fallible<DB> {
    let area = chart.plotting_area();
    for &(x, y, hollow) in pts {
        marker(area, shape, (x, y), sz.dot, color, hollow)?;
    }
    Ok(())
}
