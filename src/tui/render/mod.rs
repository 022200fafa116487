//! Drawing: `render(frame, &App)` only reads the state. One function per screen or panel.

pub mod campaign;
mod charts;
pub mod layout;
mod legend;
mod notes;
mod panels;
mod results;
mod running;
mod runs;
pub mod scroll;
mod server_chart;
mod setup;
mod timeline;
mod workers;

use super::app::{App, Screen};
use crate::report::history::RunStatus;
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
        render_help(frame, app, &theme);
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
    let state = match app.ended {
        _ if app.live => Span::styled(
            " RUNNING ",
            theme.fg(Color::Green).add_modifier(Modifier::BOLD),
        ),
        Some(RunStatus::Failed) => {
            Span::styled(" FAILED ", theme.error().add_modifier(Modifier::REVERSED))
        }
        Some(s) => Span::styled(format!(" {} ", s.label().to_uppercase()), theme.bold()),
        None => Span::raw(" "),
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
    let mut spans = Vec::new();
    // where the screen is too short for the results panel's planning numbers, the footer
    // carries the answer, instances and cost
    let short = area.width < 100 || app.size.1 < 30;
    if app.screen == Screen::Run && short {
        if let Some(s) = summary(app) {
            spans.push(Span::styled(s, theme.bold()));
            spans.push(Span::styled("  │ ", theme.dim()));
        }
    }
    if let Some(s) = &app.status {
        spans.push(Span::styled(s.clone(), theme.fg(Color::Yellow)));
        spans.push(Span::styled("  │ ", theme.dim()));
    }
    spans.push(Span::styled(keys(app), theme.dim()));
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

/// `answer 180 · 14 instances · 0.0159/M tok`: the run's answer (a search) or ideal balance
/// (a sweep), and the right-size when a peak is set.
fn summary(app: &App) -> Option<String> {
    let r = app.report.as_ref().filter(|_| !app.live)?;
    let ax = r.axis;
    let mut parts = vec![match (&r.search, &r.answer, &r.planning.ideal) {
        (Some(_), Some(a), _) => format!("answer {}", ax.load(a.concurrency)),
        (Some(_), None, _) => "no answer".to_string(),
        (None, _, Some(i)) => format!("ideal {}", ax.load(i.concurrency)),
        (None, _, None) => return None,
    }];
    if let Some(rs) = &r.planning.right_size {
        parts.push(format!("{} instances", rs.instances));
        if let Some(c) = rs.cost_per_million_output_tokens {
            parts.push(format!("{}/M tok", crate::values::sig3(c)));
        }
    }
    Some(parts.join(" · "))
}

/// The keys the screen takes now.
fn keys(app: &App) -> String {
    // `t` switches the charts once an open-loop level has a time view
    let switch = app.time.as_ref().map(|_| {
        if app.shows_time_view() {
            "t curves  "
        } else {
            "t time view  "
        }
    });
    let t = switch.unwrap_or("");
    match app.screen {
        _ if app.setup.editing.is_some() => "type  Enter keep  Esc cancel  Ctrl-S start".into(),
        Screen::Setup if app.setup.selected_takes_text() => {
            "type to edit  ↑↓ field  Ctrl-S start  F1 help  Ctrl-C quit".into()
        }
        Screen::Setup => "↑↓ field  ←→ change  Enter edit  s start  ? help  q quit".into(),
        Screen::Run if app.full_results => "↑↓ PgUp PgDn scroll  Esc back  ? help".into(),
        Screen::Run if app.live => {
            format!("x stop  {t}Tab panel  ↑↓ scroll  r results  ? help  q quit")
        }
        // a watched run is read-only, and its folder is where it ran
        Screen::Run if app.watching => {
            format!("{t}r results  Tab panel  p peak  $ price  ? help  q quit")
        }
        Screen::Run => {
            format!("s again  {t}r results  Tab panel  p peak  $ price  e export  ? help  q quit")
        }
        Screen::Runs => "↑↓ pick  Enter open  c overlay  C clear  d delete  ? help  q quit".into(),
    }
}

/// Every key of every screen, in one overlay: (key, what it does), a `None` key starting a
/// screen's section.
pub const HELP: &[(Option<&str>, &str)] = &[
    (None, "everywhere"),
    (
        Some("1 2 3"),
        "setup, run, past runs (not while typing in a field)",
    ),
    (Some("? / F1"), "this help (any key closes it)"),
    (Some("q / Ctrl-C"), "quit (asks while a run is live: y / n)"),
    (None, "setup"),
    (
        Some("↑ ↓"),
        "move between fields (stops at the first and last)",
    ),
    (Some("← →"), "change a choice"),
    (
        Some("typing"),
        "on a text field: replaces its value (keys are never commands there)",
    ),
    (Some("Enter / e"), "edit the field, keeping its value"),
    (
        Some("Enter / Tab"),
        "while editing: keep the value (checked at once)",
    ),
    (Some("Esc"), "while editing: cancel"),
    (
        Some("s / Ctrl-S"),
        "start a run (Ctrl-S from a text field too)",
    ),
    (None, "run"),
    (Some("Tab / S-Tab"), "next / previous panel (← → too)"),
    (Some("↑ ↓ / j k"), "scroll the panel in focus"),
    (
        Some("PgUp PgDn"),
        "scroll a page; Home / End: first / last row",
    ),
    (
        Some("r / Enter"),
        "every result whole, full screen (Esc back)",
    ),
    (Some("x"), "stop the run (finished levels are kept)"),
    (Some("t"), "charts: curves or an open-loop level over time"),
    (
        Some("p / $"),
        "edit peak / price per hour: planning numbers update",
    ),
    (
        Some("e"),
        "export charts (PNG, SVG), report (HTML) and data (CSV, JSON)",
    ),
    (Some("C"), "clear the past run drawn over the charts"),
    (Some("s"), "run the setup again"),
    (None, "past runs"),
    (Some("↑ ↓ / j k"), "pick a run"),
    (Some("Enter / o"), "open it on the run screen"),
    (
        Some("c / C"),
        "draw it over the run screen's charts / clear that",
    ),
    (Some("d / Del"), "delete it (asks first: y / n)"),
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
/// screen, long lines wrapped (never cut); taller than the screen, it shows what fits.
fn render_help(frame: &mut Frame, app: &App, theme: &Theme) {
    let screen = frame.area();
    let (inner, rows) = help_size(screen.width);
    let area = centered(screen, inner as u16 + 2, rows as u16 + 2);
    let scroll = app.help_scroll.min(help_max_scroll(app));
    let title = if help_max_scroll(app) > 0 {
        " keys (↑↓ scroll, any other key closes) "
    } else {
        " keys "
    };
    let lines: Vec<Line> = HELP
        .iter()
        .map(|(k, v)| match k {
            Some(k) => Line::from(vec![
                Span::styled(format!("{k:>12}  "), theme.bold()),
                Span::raw(*v),
            ]),
            None => Line::styled(format!("── {v}"), theme.dim()),
        })
        .collect();
    frame.render_widget(Clear, area);
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .scroll((scroll as u16, 0))
            .block(Block::default().borders(Borders::ALL).title(title)),
        area,
    );
}

/// Width of the key column in the help box.
const HELP_KEY: usize = 14;

/// The help box's inner width and rows (wrapped) on a screen `width` columns wide.
fn help_size(width: u16) -> (usize, usize) {
    let widest = HELP
        .iter()
        .map(|(_, v)| HELP_KEY + v.chars().count())
        .max()
        .unwrap_or(0);
    let inner = widest.min(usize::from(width.saturating_sub(4))).max(1);
    let rows = HELP
        .iter()
        .map(|(_, v)| (HELP_KEY + v.chars().count()).div_ceil(inner))
        .sum();
    (inner, rows)
}

/// How far the help box scrolls at the app's terminal size.
pub fn help_max_scroll(app: &App) -> usize {
    let (_, rows) = help_size(app.size.0);
    rows.saturating_sub(usize::from(app.size.1.saturating_sub(2)))
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
