//! The setup screen: the form, one row per field, with its validation message beside it.

use super::Theme;
use crate::tui::app::App;
use crate::tui::setup::FieldKind;
use ratatui::layout::Rect;
use ratatui::style::Color;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};
use ratatui::Frame;

/// Draws the form.
pub fn render_setup(frame: &mut Frame, area: Rect, app: &App, theme: &Theme) {
    let form = &app.setup;
    let mut lines = Vec::new();
    // the selected row's line, to keep it in view on a short terminal
    let mut selected_line = 0;
    for (i, f) in form.fields.iter().enumerate() {
        if !form.shown(i) {
            continue;
        }
        let selected = i == form.selected;
        if selected {
            selected_line = lines.len();
        }
        let value = match (&form.editing, selected) {
            (Some(text), true) => format!("{text}▏"),
            _ => match &f.kind {
                // a URL from the command line may carry a password: shown masked
                FieldKind::Choice(_) | FieldKind::Open(_) if f.value.is_empty() => "‹ - ›".into(),
                FieldKind::Choice(_) | FieldKind::Open(_) => {
                    format!("‹ {} ›", crate::secrets::redact_url(&f.value))
                }
                FieldKind::Toggle => format!("[{}]", f.value),
                FieldKind::Text if f.value.is_empty() => "-".to_string(),
                FieldKind::Text => f.value.clone(),
            },
        };
        let mut spans = vec![
            Span::styled(
                format!("{} {:<17}", if selected { "›" } else { " " }, f.label),
                if selected { theme.bold() } else { theme.dim() },
            ),
            Span::styled(
                format!("{value:<22}"),
                if selected {
                    theme.selected()
                } else {
                    ratatui::style::Style::default()
                },
            ),
        ];
        match &f.error {
            Some(e) => spans.push(Span::styled(format!(" ✗ {e}"), theme.error())),
            None => spans.push(Span::styled(format!(" {}", f.hint), theme.dim())),
        }
        lines.push(Line::from(spans));
    }
    lines.push(Line::raw(""));
    lines.push(Line::from(Span::styled(
        "Press s to start: levels run one after another in the background.",
        theme.fg(Color::Green),
    )));
    // rows past the bottom scroll up just enough to show the selected one
    let inner = area.height.saturating_sub(2) as usize;
    let scroll = (selected_line + 1).saturating_sub(inner);
    frame.render_widget(
        Paragraph::new(lines).scroll((scroll as u16, 0)).block(
            Block::default()
                .borders(Borders::ALL)
                .title(" endpoint, workload and plan "),
        ),
        area,
    );
}
