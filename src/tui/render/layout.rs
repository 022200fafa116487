//! Where the run screen's panels go, computed once for drawing and for scrolling: the
//! renderer draws into these rectangles, and `scroll.rs` measures in the same ones how far
//! each panel can scroll. Pure functions of the state and the terminal's size.

use crate::tui::app::App;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::Line;
use ratatui::widgets::{Paragraph, Wrap};

/// The run screen's rectangles.
#[derive(Debug, Clone, Copy)]
pub struct RunAreas {
    /// The time view (an open-loop level) or the top row of curves.
    pub charts: Rect,
    /// The time view's one-line status, when it shows.
    pub time_status: Option<Rect>,
    /// The TTFT chart and, beside it, the results (or the running level), when the curves
    /// show.
    pub ttft: Option<Rect>,
    pub side: Option<Rect>,
    pub levels: Rect,
    /// A distributed run's workers, above the notes.
    pub workers: Option<Rect>,
    pub notes: Rect,
}

/// The screen's body: all but the header and footer lines.
pub fn body(app: &App) -> Rect {
    let (w, h) = app.size;
    Rect::new(0, 1, w, h.saturating_sub(2))
}

/// Lays out the run screen in `area`.
pub fn run_areas(area: Rect, app: &App) -> RunAreas {
    let (charts, time_status, ttft, side, bottom) = if app.shows_time_view() {
        let [charts, status, bottom] = Layout::vertical([
            Constraint::Percentage(70),
            Constraint::Length(1),
            Constraint::Min(4),
        ])
        .areas(area);
        (charts, Some(status), None, None, bottom)
    } else {
        let compact = area.height < 30;
        let [top, middle, bottom] = Layout::vertical([
            Constraint::Percentage(if compact { 40 } else { 42 }),
            Constraint::Percentage(28),
            Constraint::Min(4),
        ])
        .areas(area);
        let [ml, mr] = Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)])
            .areas(middle);
        (top, None, Some(ml), Some(mr), bottom)
    };
    let [levels, right] =
        Layout::horizontal([Constraint::Percentage(64), Constraint::Percentage(36)]).areas(bottom);
    let (workers, notes) = match &app.run.workers {
        // a distributed run: its workers above the notes, the notes keeping two lines
        Some(w) => {
            let h = super::workers::height(w)
                .min(right.height.saturating_sub(4))
                .max(3);
            let [top, rest] =
                Layout::vertical([Constraint::Length(h), Constraint::Min(0)]).areas(right);
            (Some(top), rest)
        }
        None => (None, right),
    };
    RunAreas {
        charts,
        time_status,
        ttft,
        side,
        levels,
        workers,
        notes,
    }
}

/// Whether the panel beside the TTFT chart shows the results (else the running level).
pub fn shows_results(app: &App) -> bool {
    !app.live && app.run.progress.is_none() && !app.run.levels.is_empty()
}

/// The levels table's rows: finished levels, and the running one.
pub fn level_rows(app: &App) -> usize {
    app.run.levels.len() + usize::from(app.run.running.is_some())
}

/// Rows inside a bordered box of `area`.
pub(super) fn inner_height(area: Rect) -> usize {
    usize::from(area.height.saturating_sub(2))
}

/// Lines `lines` take wrapped into a bordered box of `area`, less the box's height.
pub(super) fn overflow(lines: Vec<Line<'static>>, area: Rect) -> usize {
    let width = area.width.saturating_sub(2);
    if width == 0 {
        return 0;
    }
    let n = Paragraph::new(lines)
        .wrap(Wrap { trim: true })
        .line_count(width);
    n.saturating_sub(inner_height(area))
}

/// The first level row the table shows: the newest rows while it follows them, else where
/// the user scrolled (never past the last row).
pub fn first_level_row(app: &App, table: Rect) -> usize {
    let shown = inner_height(table).saturating_sub(1);
    let max = level_rows(app).saturating_sub(shown);
    if app.level_follow {
        max
    } else {
        app.level_scroll.min(max)
    }
}
