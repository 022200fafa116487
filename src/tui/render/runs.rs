//! The past-runs screen: the results folder's runs, newest first.

use super::Theme;
use crate::tui::app::App;
use ratatui::layout::{Constraint, Rect};
use ratatui::widgets::{Block, Borders, Row, Table};
use ratatui::Frame;

/// Draws the list of past runs.
pub fn render_runs(frame: &mut Frame, area: Rect, app: &App, theme: &Theme) {
    let rows = app.runs.iter().enumerate().map(|(i, r)| {
        let row = Row::new(vec![
            r.id.clone(),
            if r.problem.is_some() {
                "unreadable".into()
            } else {
                r.endpoint.clone()
            },
            r.model.clone(),
            r.workload.clone(),
            r.levels.to_string(),
        ]);
        if i == app.runs_selected {
            row.style(theme.selected())
        } else {
            row
        }
    });
    let title = if app.runs.is_empty() {
        " past runs: none yet ".to_string()
    } else {
        format!(" past runs ({}) ", app.runs.len())
    };
    let table = Table::new(
        rows,
        [
            Constraint::Length(24),
            Constraint::Length(10),
            Constraint::Min(12),
            Constraint::Length(10),
            Constraint::Length(6),
        ],
    )
    .header(Row::new(vec!["run", "endpoint", "model", "workload", "levels"]).style(theme.bold()))
    .block(Block::default().borders(Borders::ALL).title(title));
    frame.render_widget(table, area);
}
