//! The run screen's notes panel: the run's failure, whole; the running level's latest error;
//! the knee (or where it is not decided); the simulator's time scale; the server's latest
//! figures; the warnings, newest first.

use super::running::endpoint_errors;
use super::Theme;
use crate::plan::analysis::Axis;
use crate::tui::app::{App, Panel};
use ratatui::layout::Rect;
use ratatui::style::Color;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Wrap};
use ratatui::Frame;

pub(super) fn render_notes(frame: &mut Frame, area: Rect, app: &App, theme: &Theme) {
    frame.render_widget(
        Paragraph::new(notes_lines(app, theme))
            .wrap(Wrap { trim: true })
            .scroll((app.notes_scroll.min(usize::from(u16::MAX)) as u16, 0))
            .block(
                Block::default()
                    .borders(Borders::ALL)
                    .border_style(theme.focused(app.focus == Panel::Warnings))
                    .title(" notes "),
            ),
        area,
    );
}

/// The notes panel's lines: the run's failure first, whole; the knee; the simulator's time
/// scale; the server's latest figures; the warnings, newest first.
pub fn notes_lines(app: &App, theme: &Theme) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    if let Some(f) = &app.failure {
        lines.push(Line::from(Span::styled(format!("✗ {f}"), theme.error())));
    }
    // the running level's latest error, whole
    if let Some((p, e)) = app
        .run
        .progress
        .as_ref()
        .and_then(|p| p.live.last_error.as_ref().map(|e| (p, e)))
    {
        let status = e.status.map_or(String::new(), |s| format!(" {s}"));
        lines.push(Line::from(Span::styled(
            format!(
                "✗ latest error, level {} at {:.1} s ({}{status}; {} so far): {}",
                p.index + 1,
                e.at_s,
                e.kind,
                endpoint_errors(p),
                e.message
            ),
            theme.fg(Color::Red),
        )));
    }
    if let Some(k) = app.view.knee {
        lines.push(Line::from(Span::styled(
            match app.axis() {
                Axis::Concurrency => format!("◆ knee at concurrency {k}"),
                axis => format!("◆ knee at {}", axis.load(k)),
            },
            theme.fg(Color::Magenta),
        )));
    }
    if let Some(from) = app.view.knee_undecided {
        lines.push(Line::from(Span::styled(
            format!(
                "◇ knee not decided from {} on: each doubling's gain interval reaches 10 %",
                app.axis().load(from)
            ),
            theme.fg(Color::Magenta),
        )));
    }
    if let Some(f) = app.sim_time_scale {
        lines.push(Line::from(Span::styled(
            format!("simulator at {f}x real time: rates {f}x, latencies 1/{f}"),
            theme.dim(),
        )));
    }
    if let Some(srv) = &app.run.server {
        let pct = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{:.0}%", v * 100.0));
        let num = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.0}"));
        lines.push(Line::from(Span::styled(
            format!(
                "server ({}): running {} waiting {} KV {} prefix hits {}",
                srv.server.unwrap_or("?"),
                num(srv.running),
                num(srv.waiting),
                pct(srv.kv_cache_usage),
                pct(srv.prefix_hit_rate(app.run.server_first.as_ref())),
            ),
            theme.fg(Color::Cyan),
        )));
    }
    for w in app.run.warnings.iter().rev() {
        lines.push(Line::from(Span::styled(
            format!("⚠ {w}"),
            theme.fg(Color::Yellow),
        )));
    }
    if lines.is_empty() {
        lines.push(Line::from(Span::styled("no warnings", theme.dim())));
    }
    lines
}
