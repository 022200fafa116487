//! A panel's head: the band above its plot that holds its caption, its legend and the names
//! of its vertical markers (`answer c=128`, `knee c=256`). Nothing of it is drawn over the
//! plot, so no legend or marker name ever covers a point, a line or another label.
//!
//! A panel is drawn twice ([`super::draw`]): once on a backend that draws nothing, to learn
//! how tall its head must be (how many rows its legend wraps to, how many rows the marker
//! names stack to), then for real with that height.

use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::parts::{line_box, Fallible, Sizes};
use super::FONT;

/// A marker's shape: series sharing a colour are told apart by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Shape {
    Circle,
    Square,
    Triangle,
    Diamond,
}

/// What a legend entry's swatch shows.
#[derive(Debug, Clone, Copy)]
pub(super) enum Swatch {
    /// A line, dashed when `dash` is (dash, gap) pixels, with a marker of `shape`.
    Line {
        color: RGBColor,
        width: u32,
        dash: Option<(u32, u32)>,
        shape: Option<Shape>,
    },
    /// A shaded area.
    Fill(RGBAColor),
    /// An interval: a vertical bar with caps and a diamond at the value.
    Whisker(RGBColor),
    /// A marker alone, filled or hollow.
    Dot { color: RGBColor, hollow: bool },
}

/// A name at the top of a vertical marker: its line's x in backend pixels.
struct Top {
    x: i32,
    text: String,
    color: RGBColor,
}

/// How tall a panel's head is: `height` is what this drawing uses, `needed` what the drawing
/// found it needs (the largest over the panel's parts, when it is split).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Head {
    pub height: u32,
    pub needed: u32,
}

impl Head {
    /// A first guess before measuring: the caption alone.
    pub fn guess(sz: &Sizes) -> Head {
        Head {
            height: caption_height(sz) as u32,
            needed: 0,
        }
    }
}

fn caption_height(sz: &Sizes) -> f64 {
    sz.text * 1.5
}

fn row_height(sz: &Sizes) -> f64 {
    (sz.small * 1.45).ceil()
}

/// The gap between two entries in a row, pixels.
fn entry_gap(sz: &Sizes) -> i32 {
    (sz.small * 1.2) as i32
}

/// The swatch's width in pixels.
fn swatch_width(sz: &Sizes) -> i32 {
    (sz.small * 1.8).round() as i32
}

#[derive(Default)]
pub(super) struct Legend {
    entries: Vec<(String, Swatch)>,
    tops: Vec<Top>,
}

/// Where each legend entry goes in rows `width` pixels wide starting at `left`: (row, x)
/// of each entry, and the number of rows.
fn flow(widths: &[i32], left: i32, width: i32, gap: i32) -> (Vec<(i32, i32)>, i32) {
    let mut at = Vec::new();
    let (mut row, mut x) = (0, left);
    for &w in widths {
        if x > left && x + w > width {
            row += 1;
            x = left;
        }
        at.push((row, x));
        x += w + gap;
    }
    (at, if widths.is_empty() { 0 } else { row + 1 })
}

/// Rows for labels of `(left, right)` pixel spans: each in the first row where it overlaps
/// none placed before (spans a `gap` apart), and the number of rows.
pub(super) fn stack(spans: &[(i32, i32)], gap: i32) -> (Vec<i32>, i32) {
    let mut placed: Vec<(i32, i32, i32)> = Vec::new();
    let rows: Vec<i32> = spans
        .iter()
        .map(|&(l, r)| {
            let row = (0..)
                .find(|row| {
                    !placed
                        .iter()
                        .any(|&(pr, pl, pp)| pr == *row && l < pp + gap && pl < r + gap)
                })
                .unwrap_or(0);
            placed.push((row, l, r));
            row
        })
        .collect();
    let n = rows.iter().max().map_or(0, |m| m + 1);
    (rows, n)
}

impl Legend {
    /// Records a legend entry; returns its text.
    pub fn entry(&mut self, label: impl Into<String>, swatch: Swatch) -> String {
        let label = label.into();
        self.entries.push((label.clone(), swatch));
        label
    }

    /// Drops the last entry.
    pub fn pop(&mut self) {
        self.entries.pop();
    }

    /// Records a name for the top of a vertical marker whose line is at pixel column `x`.
    pub fn top(&mut self, x: i32, text: String, color: RGBColor) {
        self.tops.push(Top { x, text, color });
    }

    /// The marker names' spans (relative to `base`) and their rows; the panel ends at `right`.
    fn top_spans(&self, base: i32, right: i32, sz: &Sizes) -> (Vec<(i32, i32)>, Vec<i32>, i32) {
        let spans: Vec<(i32, i32)> = self
            .tops
            .iter()
            .map(|t| {
                let w = line_box(&t.text, sz.small).0;
                let x = t.x - base;
                if x + 4 + w > right {
                    (x - 4 - w, x - 4)
                } else {
                    (x + 4, x + 4 + w)
                }
            })
            .collect();
        let (rows, n) = stack(&spans, (sz.small * 0.6) as i32);
        (spans, rows, n)
    }

    /// The entries' widths in pixels, swatch and text.
    fn widths(&self, sz: &Sizes) -> Vec<i32> {
        self.entries
            .iter()
            .map(|(t, _)| swatch_width(sz) + 6 + line_box(t, sz.small).0)
            .collect()
    }

    /// How many rows the entries take in `width` pixels.
    pub fn rows(&self, width: i32, sz: &Sizes) -> i32 {
        flow(&self.widths(sz), 4, width, entry_gap(sz)).1
    }

    /// Draws the entries in rows on `area` from `left`, the first row at its top.
    pub fn draw_rows<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        left: i32,
        sz: &Sizes,
    ) -> Fallible<DB> {
        self.draw_entries(area, left, 0, sz).map(|_| ())
    }

    /// Draws the entries in rows from `left` (pixels in `area`), the first row `y0` down;
    /// returns how many rows they took.
    fn draw_entries<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        left: i32,
        y0: i32,
        sz: &Sizes,
    ) -> Result<i32, DrawingAreaErrorKind<DB::ErrorType>> {
        let w = area.dim_in_pixel().0 as i32;
        let (row, sw) = (row_height(sz) as i32, swatch_width(sz));
        let (at, rows) = flow(&self.widths(sz), left, w - 4, entry_gap(sz));
        let text_style = TextStyle::from((FONT, sz.small).into_font())
            .color(&BLACK)
            .pos(Pos::new(HPos::Left, VPos::Center));
        for ((text, swatch), (r, x)) in self.entries.iter().zip(at) {
            let y = y0 + r * row + row / 2;
            draw_swatch(area, *swatch, (x, y), sw, sz)?;
            area.draw(&Text::new(
                text.clone(),
                (x + sw + 6, y),
                text_style.clone(),
            ))?;
        }
        Ok(rows)
    }

    /// Draws the head on `head` (the band above the plot, as wide as the panel): `caption`
    /// centred on top, the entries in rows from the plot's left edge `plot_left` (backend
    /// pixels), the marker names stacked just above the plot. Records in `out` the height the
    /// head needs.
    pub fn draw_head<DB: DrawingBackend>(
        self,
        head: &DrawingArea<DB, Shift>,
        caption: &str,
        plot_left: i32,
        sz: &Sizes,
        out: &mut Head,
    ) -> Fallible<DB> {
        let (w, h) = head.dim_in_pixel();
        let (w, h) = (w as i32, h as i32);
        let base = head.get_base_pixel().0;
        let row = row_height(sz) as i32;
        let cap = caption_height(sz) as i32;
        let widths = self.widths(sz);
        let mut left = (plot_left - base).clamp(4, (w / 3).max(4));
        let mut legend_rows = flow(&widths, left, w - 4, entry_gap(sz)).1;
        let from_edge = flow(&widths, 4, w - 4, entry_gap(sz)).1;
        if from_edge < legend_rows {
            (left, legend_rows) = (4, from_edge);
        }
        let (spans, top_rows, n_tops) = self.top_spans(base, w - 2, sz);
        // a dot at the plot's top edge reaches above it by its radius
        let gap = sz.dot + 3;
        let needed = cap + legend_rows * row + n_tops * row + gap;
        out.needed = out.needed.max(needed as u32);
        if !caption.is_empty() {
            head.draw(&Text::new(
                caption.to_string(),
                (w / 2, 2),
                TextStyle::from((FONT, sz.text).into_font())
                    .color(&BLACK)
                    .pos(Pos::new(HPos::Center, VPos::Top)),
            ))?;
        }
        self.draw_entries(head, left, cap, sz)?;
        for ((t, (l, _)), r) in self.tops.iter().zip(spans).zip(top_rows) {
            // row 0 just above the plot
            let y = h - gap - (r + 1) * row;
            let style = TextStyle::from((FONT, sz.small).into_font())
                .color(&t.color)
                .pos(Pos::new(HPos::Left, VPos::Top));
            head.draw(&Text::new(t.text.clone(), (l, y + 2), style))?;
        }
        Ok(())
    }
}

/// A marker of `shape` centred on `at` (in the area's coordinates), `r` pixels its radius,
/// filled in `color`, or white and outlined in it when `hollow`.
pub(super) fn marker<DB: DrawingBackend, CT: CoordTranslate>(
    area: &DrawingArea<DB, CT>,
    shape: Shape,
    at: CT::From,
    r: i32,
    color: RGBColor,
    hollow: bool,
) -> Fallible<DB>
where
    CT::From: Clone,
{
    let fill = if hollow {
        WHITE.filled()
    } else {
        color.filled()
    };
    let outline = color.stroke_width(2);
    let here = || EmptyElement::at(at.clone());
    match shape {
        Shape::Circle => {
            area.draw(&(here() + Circle::new((0, 0), r, fill)))?;
            if hollow {
                area.draw(&(here() + Circle::new((0, 0), r, outline)))?;
            }
        }
        _ => {
            let pts = polygon(shape, (0, 0), r);
            area.draw(&(here() + Polygon::new(pts.clone(), fill)))?;
            if hollow {
                let mut ring = pts.clone();
                ring.push(pts[0]);
                area.draw(&(here() + PathElement::new(ring, outline)))?;
            }
        }
    }
    Ok(())
}

/// The corners of a square, triangle or diamond of radius `r` around `(x, y)`.
pub(super) fn polygon(shape: Shape, (x, y): (i32, i32), r: i32) -> Vec<(i32, i32)> {
    match shape {
        Shape::Square => {
            let s = (f64::from(r) * 0.85).round() as i32;
            vec![
                (x - s, y - s),
                (x + s, y - s),
                (x + s, y + s),
                (x - s, y + s),
            ]
        }
        Shape::Triangle => {
            let s = r + 1;
            vec![(x, y - s), (x + s, y + s * 3 / 4), (x - s, y + s * 3 / 4)]
        }
        Shape::Diamond | Shape::Circle => {
            let s = r + 1;
            vec![(x, y - s), (x + s, y), (x, y + s), (x - s, y)]
        }
    }
}

fn draw_swatch<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    swatch: Swatch,
    (x, y): (i32, i32),
    sw: i32,
    sz: &Sizes,
) -> Fallible<DB> {
    let half = (sz.small * 0.4) as i32;
    match swatch {
        Swatch::Line {
            color,
            width,
            dash,
            shape,
        } => {
            let style = color.stroke_width(width);
            let ends = vec![(x, y), (x + sw, y)];
            match dash {
                Some((d, g)) => area.draw(&DashedPathElement::new(ends, d, g, style))?,
                None => area.draw(&PathElement::new(ends, style))?,
            }
            if let Some(s) = shape {
                marker(area, s, (x + sw / 2, y), sz.dot, color, false)?;
            }
            Ok(())
        }
        Swatch::Fill(c) => area.draw(&Rectangle::new(
            [(x, y - half), (x + sw, y + half)],
            c.filled(),
        )),
        Swatch::Whisker(c) => {
            let (cx, style) = (x + sw / 2, c.stroke_width(2));
            let t = half + 2;
            area.draw(&PathElement::new(vec![(cx, y - t), (cx, y + t)], style))?;
            for yy in [y - t, y + t] {
                area.draw(&PathElement::new(vec![(cx - 4, yy), (cx + 4, yy)], style))?;
            }
            marker(area, Shape::Diamond, (cx, y), sz.dot - 1, c, false)
        }
        Swatch::Dot { color, hollow } => {
            marker(area, Shape::Circle, (x + sw / 2, y), sz.dot, color, hollow)
        }
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::super::tests::one_run;
    use super::super::{render_panel_svg, ChartPanel, ChartSpec};

    /// A run whose latency is flat near its maximum and whose throughput rises from the
    /// bottom left: the two shapes a legend in a corner of the plot hid.
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

    /// The boxes of the texts (a line box: 0.602 em a character, one em high, by anchor)
    /// and the data dots, from the SVG.
    pub(in crate::report::chart) fn texts_and_dots(svg: &str) -> (Vec<(String, Box)>, Vec<Dot>) {
        let doc = roxmltree::Document::parse(svg).unwrap();
        let num = |n: roxmltree::Node, a: &str| -> f64 { n.attribute(a).unwrap().parse().unwrap() };
        let texts = doc
            .descendants()
            .filter(|n| n.has_tag_name("text") && n.attribute("transform").is_none())
            .filter_map(|n| {
                let t: String = n
                    .descendants()
                    .filter_map(|c| c.text().filter(|_| c.is_text()))
                    .collect();
                let t = t.trim().to_string();
                if t.is_empty() {
                    return None;
                }
                let w = t.chars().count() as f64 * 0.602 * num(n, "font-size");
                let x = num(n, "x");
                let l = match n.attribute("text-anchor") {
                    Some("middle") => x - w / 2.0,
                    Some("end") => x - w,
                    _ => x,
                };
                let y = num(n, "y");
                let h = num(n, "font-size");
                let top = match n.attribute("dy") {
                    Some("0.5ex") => y - h / 2.0,
                    Some("-0.5ex") => y - h,
                    _ => y,
                };
                Some((t, (l, top, l + w, top + h)))
            })
            .collect();
        let dots = doc
            .descendants()
            .filter(|n| n.has_tag_name("circle"))
            .map(|n| (num(n, "cx"), num(n, "cy"), num(n, "r")))
            .collect();
        (texts, dots)
    }

    #[test]
    fn rows_flow_and_labels_stack_apart() {
        // three entries of 40 in a row of 100 from 10: two fit, the third wraps
        assert_eq!(
            super::flow(&[40, 40, 40], 10, 100, 5),
            (vec![(0, 10), (0, 55), (1, 10)], 2)
        );
        let (rows, n) = super::stack(&[(0, 50), (40, 90), (100, 150), (45, 60)], 4);
        assert_eq!((rows, n), (vec![0, 1, 0, 2], 3));
    }

    #[test]
    fn the_legend_and_marker_names_sit_above_the_plot_and_cover_no_point() {
        for panel in [
            ChartPanel::Throughput,
            ChartPanel::Latency,
            ChartPanel::Ttft,
        ] {
            let mut s = spec();
            s.runs[0].answer = Some(4);
            s.runs[0].answer_name = "answer";
            let svg = render_panel_svg(&s, panel, (800, 450)).unwrap();
            let (texts, dots) = texts_and_dots(&svg);
            assert!(dots.len() >= 3, "{panel:?}: dots {dots:?}");
            for (t, b) in &texts {
                assert_eq!(covered(*b, &dots), None, "{panel:?}: {t} at {b:?}");
            }
        }
    }
}
