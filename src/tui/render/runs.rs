//! The past-runs screen: the results folder's runs, newest first, with the columns of
//! `rightsize runs` (date, kind, endpoint, model, answer, how the run ended).

use super::Theme;
use crate::report::history::RunStatus;
use crate::tui::app::{App, RunEntry};
use ratatui::layout::{Constraint, Rect};
use ratatui::style::Color;
use ratatui::widgets::{Block, Borders, Row, Table, TableState};
use ratatui::Frame;

/// The narrowest screen that shows the run id, workload and level count as well.
const WIDE: u16 = 110;

/// Draws the list of past runs.
pub fn render_runs(frame: &mut Frame, area: Rect, app: &App, theme: &Theme) {
    let wide = area.width >= WIDE;
    let rows = app.runs.iter().map(|r| {
        let mut row = Row::new(cells(r, wide));
        if r.problem.is_some() || r.status == RunStatus::Failed {
            row = row.style(theme.fg(Color::Red));
        }
        row
    });
    let title = if app.runs.is_empty() {
        " past runs: none yet ".to_string()
    } else {
        format!(" past runs ({}), newest first ", app.runs.len())
    };
    let (header, widths): (Vec<&str>, Vec<Constraint>) = if wide {
        (
            vec![
                "run", "date", "kind", "endpoint", "model", "workload", "levels", "answer",
                "status",
            ],
            vec![
                Constraint::Length(24),
                Constraint::Length(16),
                Constraint::Length(7),
                Constraint::Length(12),
                Constraint::Min(12),
                Constraint::Length(10),
                Constraint::Length(6),
                Constraint::Length(12),
                Constraint::Length(11),
            ],
        )
    } else {
        (
            vec!["date", "kind", "endpoint", "model", "answer", "status"],
            vec![
                Constraint::Length(16),
                Constraint::Length(7),
                Constraint::Length(10),
                Constraint::Min(8),
                Constraint::Length(12),
                Constraint::Length(11),
            ],
        )
    };
    let table = Table::new(rows, widths)
        .header(Row::new(header).style(theme.bold()))
        .row_highlight_style(theme.selected())
        .block(Block::default().borders(Borders::ALL).title(title));
    // a state made for this frame: the table scrolls to keep the selected run in view
    let mut state = TableState::default().with_selected(Some(app.runs_selected));
    frame.render_stateful_widget(table, area, &mut state);
}

/// One run's cells: every column when `wide`, else those that tell runs apart at a glance.
fn cells(r: &RunEntry, wide: bool) -> Vec<String> {
    let dash = |s: &str| {
        if s.is_empty() {
            "-".to_string()
        } else {
            s.to_string()
        }
    };
    let (endpoint, status) = match &r.problem {
        Some(_) => ("unreadable".to_string(), "unreadable".to_string()),
        None => (dash(&r.endpoint), r.status.label().to_string()),
    };
    if wide {
        vec![
            r.id.clone(),
            dash(&r.date),
            dash(&r.kind),
            endpoint,
            dash(&r.model),
            dash(&r.workload),
            r.levels.to_string(),
            r.answer.clone(),
            status,
        ]
    } else {
        vec![
            dash(&r.date),
            dash(&r.kind),
            endpoint,
            dash(&r.model),
            r.answer.clone(),
            status,
        ]
    }
}
