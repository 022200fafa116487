//! Which corner of a plot a legend goes in: the one where its box covers the fewest grid cells
//! the drawn marks pass through. Chart libraries draw a legend over the data in whatever
//! corner they are told; a curve that runs along the top (a flat latency near the axis
//! maximum) or rises from the bottom left (throughput) would otherwise disappear under it.
//! Shared by the exported charts (pixels) and the dashboard's (terminal cells).

use std::collections::HashSet;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Corner {
    TopLeft,
    TopRight,
    BottomRight,
    BottomLeft,
}

/// In order of preference on a tie: top left first, where curves that rise to the right leave
/// room.
const CORNERS: [Corner; 4] = [
    Corner::TopLeft,
    Corner::TopRight,
    Corner::BottomRight,
    Corner::BottomLeft,
];

/// A plot of `size` units (x to the right, y down from the top left), a legend box of
/// `legend` units placed `inset` units in from the plot's edges, and the marks drawn on the
/// plot as polylines in the same units, rasterised on a grid of `cell`-unit squares.
pub struct Fit<'a> {
    pub size: (f64, f64),
    pub legend: (f64, f64),
    pub inset: f64,
    pub cell: f64,
    pub marks: &'a [Vec<(f64, f64)>],
}

impl Fit<'_> {
    /// The grid cells (column, row) the marks pass through.
    fn covered(&self) -> HashSet<(i64, i64)> {
        let mut cells = HashSet::new();
        let (w, h) = self.size;
        // a mark on the far edge belongs to the last cell
        let last = (
            (w / self.cell).ceil() as i64 - 1,
            (h / self.cell).ceil() as i64 - 1,
        );
        let mut mark = |(x, y): (f64, f64)| {
            if (0.0..=w).contains(&x) && (0.0..=h).contains(&y) {
                let col = ((x / self.cell) as i64).min(last.0);
                let row = ((y / self.cell) as i64).min(last.1);
                cells.insert((col, row));
            }
        };
        for line in self.marks {
            let mut prev: Option<(f64, f64)> = None;
            for &p in line {
                if !p.0.is_finite() || !p.1.is_finite() {
                    prev = None;
                    continue;
                }
                if let Some(a) = prev {
                    // a quarter cell apart along the segment, so no cell it crosses is skipped
                    let span = (p.0 - a.0).abs().max((p.1 - a.1).abs()) / self.cell;
                    let steps = (span * 4.0).ceil().min(1e6) as usize;
                    for i in 1..steps {
                        let t = i as f64 / steps as f64;
                        mark((a.0 + (p.0 - a.0) * t, a.1 + (p.1 - a.1) * t));
                    }
                }
                mark(p);
                prev = Some(p);
            }
        }
        cells
    }

    /// The corner whose legend box covers the fewest mark cells (top left on a tie, and when
    /// the legend does not fit at all).
    pub fn corner(&self) -> Corner {
        let (w, h) = self.size;
        let (lw, lh) = self.legend;
        if self.cell <= 0.0 || lw + 2.0 * self.inset > w || lh + 2.0 * self.inset > h {
            return CORNERS[0];
        }
        let cells = self.covered();
        let hidden = |corner: Corner| -> usize {
            let x0 = match corner {
                Corner::TopLeft | Corner::BottomLeft => self.inset,
                Corner::TopRight | Corner::BottomRight => w - self.inset - lw,
            };
            let y0 = match corner {
                Corner::TopLeft | Corner::TopRight => self.inset,
                Corner::BottomLeft | Corner::BottomRight => h - self.inset - lh,
            };
            // the cells the box overlaps
            let span = |from: f64, len: f64| {
                let first = (from / self.cell).floor() as i64;
                (
                    first,
                    (((from + len) / self.cell).ceil() as i64 - 1).max(first),
                )
            };
            let ((c0, c1), (r0, r1)) = (span(x0, lw), span(y0, lh));
            cells
                .iter()
                .filter(|(c, r)| (c0..=c1).contains(c) && (r0..=r1).contains(r))
                .count()
        };
        let mut best = CORNERS[0];
        let mut least = hidden(best);
        for &corner in &CORNERS[1..] {
            let n = hidden(corner);
            if n < least {
                best = corner;
                least = n;
            }
        }
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 100x50 plot with a 30x10 legend inset 2, on a grid of 1-unit cells.
    fn corner_of(marks: &[Vec<(f64, f64)>]) -> Corner {
        Fit {
            size: (100.0, 50.0),
            legend: (30.0, 10.0),
            inset: 2.0,
            cell: 1.0,
            marks,
        }
        .corner()
    }

    #[test]
    fn the_emptiest_corner_takes_the_legend() {
        // y grows downwards: (0, 50) is the bottom left
        let rising = vec![(0.0, 50.0), (100.0, 0.0)];
        let falling = vec![(0.0, 0.0), (100.0, 50.0)];
        let along_top = vec![(0.0, 5.0), (100.0, 5.0)];
        let along_bottom = vec![(0.0, 45.0), (100.0, 45.0)];
        let dot_top_left = vec![(10.0, 5.0)];
        let cases = [
            ("rising to the right", vec![rising.clone()], Corner::TopLeft),
            ("falling to the right", vec![falling], Corner::TopRight),
            (
                "flat along the top",
                vec![along_top.clone()],
                Corner::BottomRight,
            ),
            ("flat along the bottom", vec![along_bottom], Corner::TopLeft),
            (
                "a lone point top left",
                vec![dot_top_left],
                Corner::TopRight,
            ),
            (
                "along the top and rising",
                vec![along_top, rising],
                Corner::BottomRight,
            ),
        ];
        for (what, marks, want) in cases {
            assert_eq!(corner_of(&marks), want, "{what}");
        }
    }

    #[test]
    fn fewer_hidden_cells_win_when_every_corner_hides_some() {
        // a frame just inside the legend boxes shows in every corner; a line across the top
        // adds to both top corners, one down the left to both left ones
        let frame = vec![
            (3.0, 3.0),
            (97.0, 3.0),
            (97.0, 47.0),
            (3.0, 47.0),
            (3.0, 3.0),
        ];
        let cross = vec![(0.0, 8.0), (100.0, 8.0)];
        let left = vec![(8.0, 0.0), (8.0, 50.0)];
        assert_eq!(corner_of(&[frame, cross, left]), Corner::BottomRight);
    }

    #[test]
    fn no_room_keeps_the_top_left() {
        let falling = vec![(0.0, 0.0), (100.0, 50.0)];
        let big = Fit {
            size: (100.0, 50.0),
            legend: (97.0, 10.0),
            inset: 2.0,
            cell: 1.0,
            marks: &[falling],
        };
        assert_eq!(big.corner(), Corner::TopLeft);
    }

    #[test]
    fn a_non_finite_point_breaks_the_line() {
        // two cells in each left corner; on the right one cell each when the line is broken
        // (the top right wins), eight each when it were drawn through (the top left would)
        let tl = vec![(10.0, 5.0), (11.0, 5.0)];
        let bl = vec![(10.0, 45.0), (11.0, 45.0)];
        let broken = vec![(90.0, 5.0), (f64::NAN, 25.0), (90.0, 45.0)];
        assert_eq!(
            corner_of(&[tl.clone(), bl.clone(), broken]),
            Corner::TopRight
        );
        let drawn = vec![(90.0, 5.0), (90.0, 45.0)];
        assert_eq!(corner_of(&[tl, bl, drawn]), Corner::TopLeft);
    }
}
