//! A panel's legend: its entries and the marks drawn on the panel, collected as the panel is
//! drawn, then the legend drawn in the corner where it hides the fewest of them
//! ([`corner`](super::corner)).

use plotters::prelude::*;

use super::corner::{Corner, Fit};
use super::parts::{Fallible, Sizes};
use super::FONT;

/// plotters' legend layout: the swatch column, the margin inside the box, the box's inset from
/// the plot's edges, and the line height in font sizes.
const SWATCH: f64 = 30.0;
const MARGIN: f64 = 10.0;
const INSET: f64 = 5.0;
const LINE_HEIGHT: f64 = 1.25;
/// The grid the marks are counted on, in pixels.
const CELL: f64 = 4.0;

/// Rows tried for a label at the top of a vertical marker before it gives up on finding a
/// free one (and overlaps the first).
const TOP_ROWS: i32 = 8;

#[derive(Default)]
pub(super) struct Legend {
    entries: Vec<String>,
    /// Polylines in backend pixels.
    marks: Vec<Vec<(f64, f64)>>,
    /// Labels placed at the tops of vertical markers (left, top, right, bottom pixels).
    tops: Vec<(i32, i32, i32, i32)>,
}

impl Legend {
    /// Records a legend entry; returns it for the series' `label`.
    pub fn entry(&mut self, label: String) -> String {
        self.entries.push(label.clone());
        label
    }

    /// Records a mark through these points in the chart's coordinates.
    pub fn mark<DB: DrawingBackend, CT: CoordTranslate<From = (f64, f64)>>(
        &mut self,
        chart: &ChartContext<DB, CT>,
        points: impl IntoIterator<Item = (f64, f64)>,
    ) {
        let px = points
            .into_iter()
            .map(|p| {
                if p.0.is_finite() && p.1.is_finite() {
                    let (x, y) = chart.plotting_area().map_coordinate(&p);
                    (f64::from(x), f64::from(y))
                } else {
                    (f64::NAN, f64::NAN)
                }
            })
            .collect();
        self.marks.push(px);
    }

    /// Records a text box drawn on the panel, in backend pixels (left, top, right, bottom): its
    /// outline and its middle line.
    pub fn mark_box(&mut self, (l, t, r, b): (i32, i32, i32, i32)) {
        let [l, t, r, b] = [l, t, r, b].map(f64::from);
        let mid = (t + b) / 2.0;
        self.marks
            .push(vec![(l, t), (r, t), (r, b), (l, b), (l, t)]);
        self.marks.push(vec![(l, mid), (r, mid)]);
    }

    /// Where a label of `w` x `h` pixels goes at the top of a vertical marker whose top is at
    /// pixel `(x, y)`, as an offset from there: in the first row, from the top, where it
    /// overlaps no label placed there before, right of the line or, where the plot (ending at
    /// pixel column `right`) is too narrow for that, left of it. With several runs their
    /// answers and knees stack this way instead of printing over each other. The label is
    /// recorded as a mark.
    pub fn top_label(&mut self, (x, y): (i32, i32), (w, h): (i32, i32), right: i32) -> (i32, i32) {
        let dx = if x + 4 + w > right { -w - 4 } else { 4 };
        let boxed = |row: i32| {
            let top = y + 2 + row * (h + 2);
            (x + dx, top, x + dx + w, top + h)
        };
        let free = |b: &(i32, i32, i32, i32)| {
            !self
                .tops
                .iter()
                .any(|p| p.0 < b.2 && b.0 < p.2 && p.1 < b.3 && b.1 < p.3)
        };
        let b = (0..TOP_ROWS)
            .map(boxed)
            .find(free)
            .unwrap_or_else(|| boxed(0));
        self.tops.push(b);
        self.mark_box(b);
        (b.0 - x, b.1 - y)
    }

    /// The legend's size in pixels as plotters lays it out: the widest entry after the swatch,
    /// one line height per entry, a margin all round.
    fn size(&self, sz: &Sizes) -> (f64, f64) {
        let font = (FONT, sz.small).into_font();
        let widest = self
            .entries
            .iter()
            .map(|e| font.box_size(e).map_or(0, |(w, _)| w))
            .max()
            .unwrap_or(0);
        let n = self.entries.len() as f64;
        let lines = (n - 1.0).max(0.0) * LINE_HEIGHT * sz.small + sz.small;
        (
            f64::from(widest) + SWATCH + 2.0 * MARGIN,
            lines + 2.0 * MARGIN,
        )
    }

    /// Draws the legend in the corner of the plot where it hides the fewest marks.
    pub fn draw<'a, DB: DrawingBackend + 'a, CT: CoordTranslate>(
        self,
        chart: &mut ChartContext<'a, DB, CT>,
        sz: &Sizes,
    ) -> Fallible<DB> {
        let (xr, yr) = chart.plotting_area().get_pixel_range();
        let (x0, y0) = (f64::from(xr.start), f64::from(yr.start));
        let marks: Vec<Vec<(f64, f64)>> = self
            .marks
            .iter()
            .map(|m| m.iter().map(|&(x, y)| (x - x0, y - y0)).collect())
            .collect();
        let fit = Fit {
            size: (f64::from(xr.end - xr.start), f64::from(yr.end - yr.start)),
            legend: self.size(sz),
            inset: INSET,
            cell: CELL,
            marks: &marks,
        };
        let position = match fit.corner() {
            Corner::TopLeft => SeriesLabelPosition::UpperLeft,
            Corner::TopRight => SeriesLabelPosition::UpperRight,
            Corner::BottomRight => SeriesLabelPosition::LowerRight,
            Corner::BottomLeft => SeriesLabelPosition::LowerLeft,
        };
        chart
            .configure_series_labels()
            .position(position)
            .label_font((FONT, sz.small))
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK.mix(0.4))
            .draw()
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::super::tests::one_run;
    use super::super::{render_panel_svg, ChartPanel, ChartSpec};

    /// A run whose latency is flat near its maximum and whose throughput rises from the
    /// bottom left: the two shapes a fixed corner hid (top left and bottom right).
    fn spec() -> ChartSpec {
        let levels = [
            (2, 3800.0, 135.0, 136.0),
            (4, 7300.0, 140.0, 142.0),
            (8, 13000.0, 153.0, 156.0),
        ];
        one_run(&levels, 20.0, 4)
    }

    /// Left, top, right, bottom.
    pub(in crate::report::chart) type Box = (f64, f64, f64, f64);
    /// Centre x, centre y, radius.
    pub(in crate::report::chart) type Dot = (f64, f64, f64);

    /// The first dot that reaches into the box.
    pub(in crate::report::chart) fn covered(b: Box, dots: &[Dot]) -> Option<Dot> {
        let (l, t, r, btm) = b;
        dots.iter()
            .copied()
            .find(|&(cx, cy, rad)| cx + rad > l && cx - rad < r && cy + rad > t && cy - rad < btm)
    }

    /// The legend's box and the data dots, from the SVG.
    pub(in crate::report::chart) fn legend_and_dots(svg: &str) -> (Box, Vec<Dot>) {
        let doc = roxmltree::Document::parse(svg).unwrap();
        let num = |n: roxmltree::Node, a: &str| -> f64 { n.attribute(a).unwrap().parse().unwrap() };
        let frames: Vec<_> = doc
            .descendants()
            .filter(|n| {
                n.has_tag_name("rect")
                    && n.attribute("fill") == Some("none")
                    && n.attribute("stroke") == Some("#000000")
            })
            .map(|n| {
                let (x, y) = (num(n, "x"), num(n, "y"));
                (x, y, x + num(n, "width"), y + num(n, "height"))
            })
            .collect();
        assert_eq!(frames.len(), 1, "one legend in {svg}");
        let dots = doc
            .descendants()
            .filter(|n| n.has_tag_name("circle"))
            .map(|n| (num(n, "cx"), num(n, "cy"), num(n, "r")))
            .collect();
        (frames[0], dots)
    }

    #[test]
    fn labels_at_the_tops_of_markers_stack_where_they_would_overlap() {
        let mut l = super::Legend::default();
        let size = (80, 10);
        // (marker top, plot's right end, offset wanted)
        let cases = [
            ((100, 50), 1000, (4, 2)),   // right of the line, first row
            ((120, 50), 1000, (4, 14)),  // overlaps the first: the next row
            ((140, 50), 1000, (4, 26)),  // overlaps both: the third
            ((990, 50), 1000, (-84, 2)), // no room on the right: left, first row free
            ((400, 50), 1000, (4, 2)),   // clear of all: first row
        ];
        for (top, right, want) in cases {
            assert_eq!(l.top_label(top, size, right), want, "{top:?}");
        }
        // every row taken: the first row, overlapping
        let mut full = super::Legend::default();
        for _ in 0..super::TOP_ROWS {
            full.top_label((100, 50), size, 1000);
        }
        assert_eq!(full.top_label((100, 50), size, 1000), (4, 2));
    }

    #[test]
    fn the_legend_covers_no_data_point_and_sits_where_the_curves_leave_room() {
        let (w, h) = (800.0, 450.0);
        // (panel, whether the legend is in the top half, in the left half): the TTFT legend
        // (three entries) fits above the flat curves at the top left, the latency one (four)
        // would reach them there and goes to the bottom right
        let cases = [
            (ChartPanel::Throughput, true, true),
            (ChartPanel::Latency, false, false),
            (ChartPanel::Ttft, true, true),
        ];
        for (panel, top, left) in cases {
            let svg = render_panel_svg(&spec(), panel, (w as u32, h as u32)).unwrap();
            let ((l, t, r, b), dots) = legend_and_dots(&svg);
            assert!(dots.len() >= 3, "{panel:?}: dots {dots:?}");
            let hidden = covered((l, t, r, b), &dots);
            assert_eq!(hidden, None, "{panel:?}: legend {l},{t}..{r},{b}");
            assert_eq!(
                (t + b) / 2.0 < h / 2.0,
                top,
                "{panel:?}: legend rows {t}..{b}"
            );
            assert_eq!(
                (l + r) / 2.0 < w / 2.0,
                left,
                "{panel:?}: legend columns {l}..{r}"
            );
        }
    }
}
