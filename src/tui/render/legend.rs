//! Where a dashboard chart's legend goes: the plot measured in terminal cells as ratatui lays
//! it out, the datasets mapped onto it, and the corner chosen by the exported charts' rule
//! (the one whose box hides the fewest cells the curves pass through).

use crate::report::chart::corner::{Corner, Fit};
use ratatui::layout::Rect;
use ratatui::widgets::LegendPosition;

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

    /// The corner whose legend box hides the fewest curve cells (top left on a tie).
    pub fn legend_corner(&self) -> LegendPosition {
        let (w, h) = self.graph_size();
        let (lw, lh) = self.legend_size();
        let [x0, x1] = self.x_bounds;
        let [y0, y1] = self.y_bounds;
        let (dx, dy) = (x1 - x0, y1 - y0);
        if lw <= 2 || dx <= 0.0 || dy <= 0.0 {
            return LegendPosition::TopLeft;
        }
        let (wf, hf) = (f64::from(w), f64::from(h));
        let marks: Vec<Vec<(f64, f64)>> = self
            .sets
            .iter()
            .map(|(_, points)| {
                points
                    .iter()
                    .map(|&(x, y)| ((x - x0) / dx * wf, (1.0 - (y - y0) / dy) * hf))
                    .collect()
            })
            .collect();
        let fit = Fit {
            size: (wf, hf),
            legend: (f64::from(lw), f64::from(lh)),
            inset: 0.0,
            cell: 1.0,
            marks: &marks,
        };
        match fit.corner() {
            Corner::TopLeft => LegendPosition::TopLeft,
            Corner::TopRight => LegendPosition::TopRight,
            Corner::BottomRight => LegendPosition::BottomRight,
            Corner::BottomLeft => LegendPosition::BottomLeft,
        }
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
    fn data_coordinates_map_onto_cells_with_y_up() {
        // (the rule itself is tested in report::chart::corner; here, that y grows upwards and
        // each corner maps to ratatui's)
        let rising: Points = &[(0.0, 0.0), (10.0, 10.0)];
        let falling: Points = &[(0.0, 10.0), (10.0, 0.0)];
        let flat_top: Points = &[(0.0, 9.5), (10.0, 9.5)];
        let flat_top_and_right: Points = &[(0.0, 9.5), (9.5, 9.5), (9.5, 0.0)];
        let cases = [
            (rising, LegendPosition::TopLeft),
            (falling, LegendPosition::TopRight),
            (flat_top, LegendPosition::BottomRight),
            (flat_top_and_right, LegendPosition::BottomLeft),
        ];
        for (line, want) in cases {
            assert_eq!(
                plot(vec![(Some("p50"), line)]).legend_corner(),
                want,
                "{line:?}"
            );
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
