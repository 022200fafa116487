//! The setup screen: the form, one row per field, with beside it what is wrong with the value
//! or how it was read (`p99 <= 1.50 s`), else the field's hint; the last line says which keys
//! act on the selected row.

use super::Theme;
use crate::tui::app::App;
use crate::tui::setup::{FieldId, FieldKind};
use ratatui::layout::Rect;
use ratatui::style::Color;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};
use ratatui::Frame;

/// Draws the form.
pub fn render_setup(frame: &mut Frame, area: Rect, app: &App, theme: &Theme) {
    let form = &app.setup;
    let mut lines = Vec::new();
    // the selected row's last line, to keep it in view on a short terminal
    let mut selected_line = 0;
    let width = area.width.saturating_sub(2) as usize;
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
        let editing = selected && form.editing.is_some();
        match (&f.error, editing) {
            // a message is read whole: it wraps under itself rather than being cut
            (Some(e), _) => {
                let indent = Line::from(spans.clone()).width() + 3;
                let mut parts = wrap(e, width.saturating_sub(indent)).into_iter();
                let first = parts.next().unwrap_or_default();
                spans.push(Span::styled(format!(" ✗ {first}"), theme.error()));
                lines.push(Line::from(spans));
                for part in parts {
                    lines.push(Line::from(Span::styled(
                        format!("{:indent$}{part}", ""),
                        theme.error(),
                    )));
                }
                if selected {
                    selected_line = lines.len() - 1;
                }
                continue;
            }
            (None, false) if !f.value.is_empty() => match form.reading(i) {
                Some(r) => spans.push(Span::raw(format!(" = {r}"))),
                None => spans.push(Span::styled(format!(" {}", f.hint), theme.dim())),
            },
            (None, _) => spans.push(Span::styled(format!(" {}", f.hint), theme.dim())),
        }
        lines.push(Line::from(spans));
    }
    lines.push(Line::raw(""));
    lines.push(Line::from(Span::styled(
        keys_line(app),
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

/// The keys that act on the selected row now, and what starting runs (each fits 78 columns).
fn keys_line(app: &App) -> String {
    let form = &app.setup;
    let search = form.get(FieldId::Mode) == "search";
    if form.editing.is_some() {
        "Enter or Tab keeps it, Esc puts the old value back, Ctrl-S keeps and starts."
    } else if form.selected_takes_text() && search {
        "Type to replace, Enter to edit; Ctrl-S starts the search in the background."
    } else if form.selected_takes_text() {
        "Type to replace, Enter to edit; Ctrl-S starts: levels run one after another."
    } else if search {
        "s or Ctrl-S starts the search in the background."
    } else {
        "s or Ctrl-S starts: levels run one after another in the background."
    }
    .into()
}

/// `text` in lines of at most `width` columns, broken between words (a word longer than a
/// line is cut); too narrow a space (under 20 columns) leaves it on one line.
fn wrap(text: &str, width: usize) -> Vec<String> {
    if width < 20 {
        return vec![text.to_string()];
    }
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split(' ') {
        let (used, more) = (line.chars().count(), word.chars().count());
        if used > 0 && used + 1 + more > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
        while line.chars().count() > width {
            let cut: String = line.chars().take(width).collect();
            line = line.chars().skip(width).collect();
            lines.push(cut);
        }
    }
    lines.push(line);
    lines
}
