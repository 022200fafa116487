//! How far each run-screen panel can scroll at the app's terminal size (its lines, wrapped
//! into its rectangle, less the rows it shows): the keys stop a scroll at the last row, and
//! the results panel says when it has more below.

use super::layout::{body, inner_height, level_rows, overflow, run_areas, shows_results};
use super::notes::notes_lines;
use super::results::{full_lines, results_lines};
use super::Theme;
use crate::tui::app::App;

/// How far each run-screen panel can scroll: its rows less those it shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScrollLimits {
    pub levels: usize,
    pub results: usize,
    pub notes: usize,
}

/// The scroll limits at the app's terminal size.
pub fn scroll_limits(app: &App) -> ScrollLimits {
    let areas = run_areas(body(app), app);
    let theme = Theme::new(false);
    // the table's header takes a row
    let shown = inner_height(areas.levels).saturating_sub(1);
    ScrollLimits {
        levels: level_rows(app).saturating_sub(shown),
        results: areas
            .side
            .filter(|_| shows_results(app))
            .map_or(0, |a| overflow(results_lines(app, &theme), a)),
        notes: overflow(notes_lines(app, &theme), areas.notes),
    }
}

/// How far the full-screen results view can scroll.
pub fn full_results_max_scroll(app: &App) -> usize {
    let theme = Theme::new(false);
    overflow(full_lines(app, &theme), body(app))
}
