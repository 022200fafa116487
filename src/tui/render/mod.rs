//! Drawing: `render(frame, &App)` only reads the state. One function per screen or panel.

pub mod campaign;
mod charts;
mod legend;
mod panels;
mod results;
mod runs;
mod server_chart;
mod setup;
mod timeline;
mod workers;

use super::app::{App, Screen};
use ratatui::layout::{Constraint, Flex, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};
use ratatui::Frame;

/// Colours, or none at all when NO_COLOR is set.
#[derive(Debug, Clone, Copy)]
pub struct Theme {
    color: bool,
}

impl Theme {
    pub fn new(color: bool) -> Self {
        Theme { color }
    }
    pub fn fg(&self, c: Color) -> Style {
        if self.color {
            Style::default().fg(c)
        } else {
            Style::default()
        }
    }
    pub fn bold(&self) -> Style {
        Style::default().add_modifier(Modifier::BOLD)
    }
    pub fn selected(&self) -> Style {
        Style::default().add_modifier(Modifier::REVERSED)
    }
    pub fn error(&self) -> Style {
        self.fg(Color::Red).add_modifier(Modifier::BOLD)
    }
    pub fn dim(&self) -> Style {
        if self.color {
            Style::default().fg(Color::DarkGray)
        } else {
            Style::default()
        }
    }
    pub fn focused(&self, yes: bool) -> Style {
        if yes {
            self.fg(Color::Cyan).add_modifier(Modifier::BOLD)
        } else {
            Style::default()
        }
    }
}

/// Draws the whole dashboard.
pub fn render(frame: &mut Frame, app: &App) {
    let theme = Theme::new(app.color);
    let [header, body, footer] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(0),
        Constraint::Length(1),
    ])
    .areas(frame.area());
    render_header(frame, header, app, &theme);
    match app.screen {
        Screen::Setup => setup::render_setup(frame, body, app, &theme),
        Screen::Run => panels::render_run(frame, body, app, &theme),
        Screen::Runs => runs::render_runs(frame, body, app, &theme),
    }
    render_footer(frame, footer, app, &theme);
    if app.help {
        render_help(frame, &theme);
    }
    if app.confirm_quit {
        render_confirm_quit(frame, &theme);
    }
    if let Some((id, _)) = &app.confirm_delete {
        render_confirm_delete(frame, &theme, id);
    }
}

fn render_header(frame: &mut Frame, area: Rect, app: &App, theme: &Theme) {
    let tab = |s: Screen, key: &str, name: &str| {
        let style = if app.screen == s {
            theme.selected()
        } else {
            Style::default()
        };
        Span::styled(format!(" {key} {name} "), style)
    };
    let state = if app.live {
        Span::styled(
            " RUNNING ",
            theme.fg(Color::Green).add_modifier(Modifier::BOLD),
        )
    } else if app.run.finished {
        Span::styled(
            if app.run.interrupted {
                " STOPPED "
            } else {
                " DONE "
            },
            theme.bold(),
        )
    } else {
        Span::raw(" ")
    };
    let mut spans = vec![
        Span::styled("rightsize ", theme.bold()),
        tab(Screen::Setup, "1", "setup"),
        tab(Screen::Run, "2", "run"),
        tab(Screen::Runs, "3", "runs"),
        state,
    ];
    if let Some(id) = &app.run.run_id {
        spans.push(Span::styled(
            format!(
                " {id} {} {}",
                app.run.endpoint.as_deref().unwrap_or(""),
                app.run.model.as_deref().unwrap_or("")
            ),
            theme.dim(),
        ));
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

fn render_footer(frame: &mut Frame, area: Rect, app: &App, theme: &Theme) {
    // `t` switches the charts once an open-loop level has a time view
    let switch = app.time.as_ref().map(|_| {
        if app.shows_time_view() {
            "t curves"
        } else {
            "t time view"
        }
    });
    let keys = match (app.screen, switch) {
        _ if app.setup.editing.is_some() => "type, Enter keep, Esc cancel".into(),
        (Screen::Setup, _) => "↑↓ field  ←→ change  Enter edit  s start  ? help  q quit".into(),
        (Screen::Run, Some(t)) if app.live => format!("x stop  {t}  Tab panel  ? help  q quit"),
        (Screen::Run, None) if app.live => "x stop  Tab panel  ↑↓ scroll  ? help  q quit".into(),
        (Screen::Run, Some(t)) => {
            format!("s run again  {t}  p peak  $ price  e export  ? help  q quit")
        }
        (Screen::Run, None) => {
            "s run again  p peak  $ price  e export  3 runs  ? help  q quit".into()
        }
        (Screen::Runs, _) => "↑↓ pick  Enter open  c overlay  d delete  ? help  q quit".into(),
    };
    let line = match &app.status {
        Some(s) => Line::from(vec![
            Span::styled(s.clone(), theme.fg(Color::Yellow)),
            Span::styled(format!("  │ {keys}"), theme.dim()),
        ]),
        None => Line::from(Span::styled(keys, theme.dim())),
    };
    frame.render_widget(Paragraph::new(line), area);
}

/// Every key, in one overlay.
pub const HELP: &[(&str, &str)] = &[
    ("1 2 3", "setup, run, past runs"),
    ("↑ ↓ / j k", "move, scroll"),
    ("← → / h l", "change a choice (setup); next panel (run)"),
    ("Tab / S-Tab", "next / previous field or panel"),
    ("Enter / e", "edit a field; open a past run"),
    ("s", "start a run with the setup's settings"),
    ("x", "stop the run (finished levels are kept)"),
    ("t", "charts: curves or an open-loop level over time"),
    (
        "p / $",
        "edit peak concurrency / price per hour: planning numbers update",
    ),
    ("d", "delete the selected past run (asks first)"),
    (
        "c / C",
        "draw the selected past run over the charts / clear it",
    ),
    ("?", "this help (any key closes it)"),
    ("q / Ctrl-C", "quit (asks while a run is live)"),
];

fn centered(area: Rect, w: u16, h: u16) -> Rect {
    let [v] = Layout::vertical([Constraint::Length(h.min(area.height))])
        .flex(Flex::Center)
        .areas(area);
    let [c] = Layout::horizontal([Constraint::Length(w.min(area.width))])
        .flex(Flex::Center)
        .areas(v);
    c
}

/// The help box: as wide as its longest line when the screen allows, else as wide as the
/// screen, long lines wrapped (never cut).
fn render_help(frame: &mut Frame, theme: &Theme) {
    const KEY: usize = 14;
    let widest = HELP
        .iter()
        .map(|(_, v)| KEY + v.chars().count())
        .max()
        .unwrap_or(0);
    let screen = frame.area();
    let inner = widest
        .min(usize::from(screen.width.saturating_sub(4)))
        .max(1);
    let rows: usize = HELP
        .iter()
        .map(|(_, v)| (KEY + v.chars().count()).div_ceil(inner))
        .sum();
    let area = centered(screen, inner as u16 + 2, rows as u16 + 2);
    let lines: Vec<Line> = HELP
        .iter()
        .map(|(k, v)| {
            Line::from(vec![
                Span::styled(format!("{k:>12}  "), theme.bold()),
                Span::raw(*v),
            ])
        })
        .collect();
    frame.render_widget(Clear, area);
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .block(Block::default().borders(Borders::ALL).title(" keys ")),
        area,
    );
}

fn render_confirm_delete(frame: &mut Frame, theme: &Theme, id: &str) {
    let area = centered(frame.area(), 56, 5);
    frame.render_widget(Clear, area);
    frame.render_widget(
        Paragraph::new(format!(
            "Delete run {id} and every file in its folder?  y / n"
        ))
        .wrap(Wrap { trim: true })
        .style(theme.bold())
        .block(Block::default().borders(Borders::ALL).title(" delete? ")),
        area,
    );
}

fn render_confirm_quit(frame: &mut Frame, theme: &Theme) {
    let area = centered(frame.area(), 50, 4);
    frame.render_widget(Clear, area);
    frame.render_widget(
        Paragraph::new("A run is live. Quit and stop it? Finished levels are kept.  y / n")
            .wrap(Wrap { trim: true })
            .style(theme.bold())
            .block(Block::default().borders(Borders::ALL).title(" quit? ")),
        area,
    );
}
