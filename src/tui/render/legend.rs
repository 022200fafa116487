//! Where a chart's legend goes: the corner of the plot where its box hides the fewest cells the
//! curves pass through. ratatui draws the legend over the data wherever it is told to, and a
//! curve that runs along the top (a flat latency, every level near the axis maximum) or rises
//! from the bottom left (throughput) would otherwise disappear under it.

use ratatui::layout::Rect;
use ratatui::widgets::LegendPosition;
use std::collections::HashSet;

/// Corners in order of preference on a tie: top left first, where curves that rise to the right
/// leave room.
const CORNERS: [LegendPosition; 4] = [
    LegendPosition::TopLeft,
    LegendPosition::TopRight,
    LegendPosition::BottomRight,
    LegendPosition::BottomLeft,
];

/// A dataset's points, in the chart's coordinates.
pub type Points<'a> = &'a [(f64, f64)];

/// One chart as the legend placement sees it.
pub struct Plot<'a> {
    /// The chart's whole area, block borders included.
    pub area: Rect,
    pub x_bounds: [f64; 2],
    pub y_bounds: [f64; 2],
    /// The widest y-axis label, in cells.
    pub y_label_width: u16,
    /// Every dataset drawn, named or not: (name, points). Consecutive points are joined.
    pub sets: Vec<(Option<&'a str>, Points<'a>)>,
}

impl Plot<'_> {
    /// The plot's size in cells inside the block and the axes (as ratatui lays it out: one row of
    /// x labels and one of the x axis below, the y labels and the y axis to the left).
    fn graph_size(&self) -> (u16, u16) {
        let w = self.area.width.saturating_sub(2);
        let h = self.area.height.saturating_sub(2);
        (
            w.saturating_sub(self.y_label_width + 1),
            h.saturating_sub(2),
        )
    }

    /// The legend's box: the widest name plus its border, one row per name plus the border.
    fn legend_size(&self) -> (u16, u16) {
        let names: Vec<usize> = self
            .sets
            .iter()
            .filter_map(|(n, _)| n.map(|n| n.chars().count()))
            .collect();
        let widest = names.iter().copied().max().unwrap_or(0);
        (widest as u16 + 2, names.len() as u16 + 2)
    }

    /// The cells (column, row from the top) the curves pass through.
    fn covered(&self, w: u16, h: u16) -> HashSet<(u16, u16)> {
        let [x0, x1] = self.x_bounds;
        let [y0, y1] = self.y_bounds;
        let (dx, dy) = (x1 - x0, y1 - y0);
        let mut cells = HashSet::new();
        if w == 0 || h == 0 || dx <= 0.0 || dy <= 0.0 {
            return cells;
        }
        let (wf, hf) = (f64::from(w), f64::from(h));
        let to_cell =
            |(x, y): (f64, f64)| -> (f64, f64) { ((x - x0) / dx * wf, (1.0 - (y - y0) / dy) * hf) };
        let mut mark = |(c, r): (f64, f64)| {
            if (0.0..=wf).contains(&c) && (0.0..=hf).contains(&r) {
                let col = (c as u16).min(w - 1);
                let row = (r as u16).min(h - 1);
                cells.insert((col, row));
            }
        };
        for (_, points) in &self.sets {
            let mut prev: Option<(f64, f64)> = None;
            for &p in points.iter() {
                if !p.0.is_finite() || !p.1.is_finite() {
                    prev = None;
                    continue;
                }
                let q = to_cell(p);
                if let Some(a) = prev {
                    // a quarter cell apart along the segment, so no cell it crosses is skipped
                    let steps = ((q.0 - a.0).abs().max((q.1 - a.1).abs()) * 4.0).ceil() as usize;
                    for i in 1..steps.max(1) {
                        let t = i as f64 / steps as f64;
                        mark((a.0 + (q.0 - a.0) * t, a.1 + (q.1 - a.1) * t));
                    }
                }
                mark(q);
                prev = Some(q);
            }
        }
        cells
    }

    /// The corner whose legend box covers the fewest curve cells (top left on a tie).
    pub fn legend_corner(&self) -> LegendPosition {
        let (w, h) = self.graph_size();
        let (lw, lh) = self.legend_size();
        if lw <= 2 || lw > w || lh > h {
            return CORNERS[0];
        }
        let cells = self.covered(w, h);
        let hidden = |corner: &LegendPosition| -> usize {
            let (c0, r0) = match corner {
                LegendPosition::TopRight => (w - lw, 0),
                LegendPosition::BottomRight => (w - lw, h - lh),
                LegendPosition::BottomLeft => (0, h - lh),
                _ => (0, 0),
            };
            cells
                .iter()
                .filter(|(c, r)| (c0..c0 + lw).contains(c) && (r0..r0 + lh).contains(r))
                .count()
        };
        let mut best = CORNERS[0];
        let mut least = hidden(&best);
        for corner in &CORNERS[1..] {
            let n = hidden(corner);
            if n < least {
                best = *corner;
                least = n;
            }
        }
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 40x20 chart (graph 33x16 with a 4-cell y label), x and y from 0 to 10.
    fn plot<'a>(sets: Vec<(Option<&'a str>, Points<'a>)>) -> Plot<'a> {
        Plot {
            area: Rect::new(0, 0, 40, 20),
            x_bounds: [0.0, 10.0],
            y_bounds: [0.0, 10.0],
            y_label_width: 4,
            sets,
        }
    }

    #[test]
    fn the_graph_and_legend_sizes_follow_ratatuis_layout() {
        let line = [(0.0, 0.0), (10.0, 10.0)];
        let p = plot(vec![
            (Some("p50"), &line),
            (Some("p50-p99"), &line),
            (None, &line),
        ]);
        assert_eq!(p.graph_size(), (33, 16));
        assert_eq!(p.legend_size(), (9, 4));
    }

    #[test]
    fn the_emptiest_corner_takes_the_legend() {
        let rising: &[(f64, f64)] = &[(0.0, 0.0), (10.0, 10.0)];
        let falling: &[(f64, f64)] = &[(0.0, 10.0), (10.0, 0.0)];
        let flat_top: &[(f64, f64)] = &[(0.0, 9.5), (10.0, 9.5)];
        let flat_bottom: &[(f64, f64)] = &[(0.0, 0.5), (10.0, 0.5)];
        let top_left_dot: &[(f64, f64)] = &[(0.5, 9.5)];
        let cases: [(&str, Vec<Points>, LegendPosition); 6] = [
            ("rising to the right", vec![rising], LegendPosition::TopLeft),
            (
                "falling to the right",
                vec![falling],
                LegendPosition::TopRight,
            ),
            (
                "flat along the top",
                vec![flat_top],
                LegendPosition::BottomRight,
            ),
            (
                "flat along the bottom",
                vec![flat_bottom],
                LegendPosition::TopLeft,
            ),
            (
                "a lone point top left",
                vec![top_left_dot],
                LegendPosition::TopRight,
            ),
            (
                "along the top and rising",
                vec![flat_top, rising],
                LegendPosition::BottomRight,
            ),
        ];
        for (what, lines, want) in cases {
            let sets = lines.into_iter().map(|l| (Some("p50"), l)).collect();
            assert_eq!(plot(sets).legend_corner(), want, "{what}");
        }
    }

    #[test]
    fn no_room_or_no_names_keeps_the_top_left() {
        let line: &[(f64, f64)] = &[(0.0, 10.0), (10.0, 0.0)];
        assert_eq!(
            plot(vec![(None, line)]).legend_corner(),
            LegendPosition::TopLeft
        );
        let mut tiny = plot(vec![(Some("a long legend name"), line)]);
        tiny.area = Rect::new(0, 0, 12, 6);
        assert_eq!(tiny.legend_corner(), LegendPosition::TopLeft);
        let mut flat = plot(vec![(Some("p50"), line)]);
        flat.y_bounds = [5.0, 5.0];
        assert_eq!(flat.legend_corner(), LegendPosition::TopLeft);
    }
}
