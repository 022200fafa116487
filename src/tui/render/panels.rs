//! The run screen: charts on top (the curves, with the server panel beside them when the
//! levels recorded the server's metrics, or an open-loop level's time view), the running
//! level and the level table below, warnings and the simulator note beside them.

use super::charts::{compact, render_latency, render_throughput, render_ttft};
use super::server_chart::render_server;
use super::Theme;
use crate::metrics::LevelSummary;
use crate::plan::analysis::{is_rate_level, Axis};
use crate::tui::app::{App, Panel};
use crate::values::fmt_rps;
use crate::workload::arrivals::LoadShape;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Color;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Gauge, Paragraph, Row, Sparkline, Table, Wrap};
use ratatui::Frame;

/// The narrowest screen (columns) with room for the server panel beside the two top charts.
const SERVER_PANEL_WIDTH: u16 = 100;

/// Draws the run screen.
pub fn render_run(frame: &mut Frame, area: Rect, app: &App, theme: &Theme) {
    if let Some(time) = app.time.as_ref().filter(|_| app.shows_time_view()) {
        let [charts, status, bottom] = Layout::vertical([
            Constraint::Percentage(70),
            Constraint::Length(1),
            Constraint::Min(4),
        ])
        .areas(area);
        super::timeline::render_time_view(frame, charts, time, app.focus == Panel::Charts, theme);
        super::timeline::render_time_status(frame, status, app, time, theme);
        render_table_and_notes(frame, bottom, app, theme);
        return;
    }
    let compact_layout = area.height < 30;
    let [top, middle, bottom] = Layout::vertical([
        Constraint::Percentage(if compact_layout { 40 } else { 42 }),
        Constraint::Percentage(28),
        Constraint::Min(4),
    ])
    .areas(area);
    let charts = app.focus == Panel::Charts;
    // the server panel joins the top row when a level recorded the server's metrics and the
    // screen is wide enough for three charts
    match app
        .view
        .server
        .as_ref()
        .filter(|_| area.width >= SERVER_PANEL_WIDTH)
    {
        Some(server) => {
            let [tl, tm, tr] = Layout::horizontal([Constraint::Ratio(1, 3); 3]).areas(top);
            render_throughput(frame, tl, &app.view, charts, theme);
            render_latency(frame, tm, &app.view, charts, theme);
            render_server(frame, tr, &app.view, server, charts, theme);
        }
        None => {
            let [tl, tr] =
                Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)])
                    .areas(top);
            render_throughput(frame, tl, &app.view, charts, theme);
            render_latency(frame, tr, &app.view, charts, theme);
        }
    }
    let [ml, mr] =
        Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)]).areas(middle);
    render_ttft(frame, ml, &app.view, charts, theme);
    if !app.live && app.run.progress.is_none() && !app.run.levels.is_empty() {
        super::results::render_results(frame, mr, app, theme);
    } else {
        render_level(frame, mr, app, theme);
    }
    render_table_and_notes(frame, bottom, app, theme);
}

fn render_table_and_notes(frame: &mut Frame, area: Rect, app: &App, theme: &Theme) {
    let [bl, br] =
        Layout::horizontal([Constraint::Percentage(64), Constraint::Percentage(36)]).areas(area);
    render_levels_table(frame, bl, app, theme);
    match &app.run.workers {
        // a distributed run: its workers above the notes, at most half the column
        Some(w) => {
            // the notes keep two lines
            let h = super::workers::height(w)
                .min(br.height.saturating_sub(4))
                .max(3);
            let [top, rest] =
                Layout::vertical([Constraint::Length(h), Constraint::Min(0)]).areas(br);
            super::workers::render_workers(frame, top, w, theme);
            render_notes(frame, rest, app, theme);
        }
        None => render_notes(frame, br, app, theme),
    }
}

fn render_level(frame: &mut Frame, area: Rect, app: &App, theme: &Theme) {
    let title = match (app.run.running, &app.run.running_shape) {
        (Some((i, _, _)), Some(shape)) => format!(" level {} · {} ", i + 1, shape.label()),
        (Some((i, c, _)), None) => format!(" level {} · concurrency {c} ", i + 1),
        (None, _) if app.live => " waiting for the next level ".into(),
        (None, _) => " current level: none ".into(),
    };
    let block = Block::default().borders(Borders::ALL).title(title);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let Some(p) = &app.run.progress else {
        let text = if app.live {
            "pre-flight and warmup..."
        } else {
            "no level running"
        };
        frame.render_widget(Paragraph::new(Span::styled(text, theme.dim())), inner);
        return;
    };
    let rows = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(1),
        Constraint::Length(1),
        Constraint::Min(0),
    ])
    .split(inner);
    let ratio = if p.total > 0 {
        (p.done as f64 / p.total as f64).clamp(0.0, 1.0)
    } else {
        0.0
    };
    frame.render_widget(
        Gauge::default()
            .ratio(ratio)
            .label(match app.run.batch_note() {
                Some(b) => format!("{}/{} · {b}", p.done, p.total),
                None => format!("{}/{}", p.done, p.total),
            })
            .gauge_style(theme.fg(Color::Green)),
        rows[0],
    );
    let endpoint_errors = p
        .errors_by_kind
        .iter()
        .filter(|(k, _)| **k != crate::record::ErrorKind::Cancelled)
        .map(|(_, n)| *n)
        .sum::<u64>();
    frame.render_widget(
        Paragraph::new(Line::from(vec![
            Span::raw(format!("in flight {}  ", p.in_flight)),
            Span::styled(
                format!("{} tok/s", compact(p.output_tokens_per_sec)),
                theme.bold(),
            ),
            Span::raw(format!("  {:.1}s", p.elapsed_s)),
        ])),
        rows[1],
    );
    let errors = if endpoint_errors == 0 {
        Line::from(Span::styled("errors 0", theme.dim()))
    } else {
        Line::from(Span::styled(
            format!(
                "errors {endpoint_errors}: {}",
                p.errors_by_kind
                    .iter()
                    .map(|(k, n)| format!("{k} {n}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            theme.error(),
        ))
    };
    frame.render_widget(Paragraph::new(errors), rows[2]);
    let spark: Vec<u64> = p.output_tps_series.iter().map(|v| *v as u64).collect();
    frame.render_widget(
        Sparkline::default()
            .data(&spark)
            .style(theme.fg(Color::Green)),
        rows[3],
    );
}

/// The run's load axis (concurrency when nothing was analysed yet).
fn axis_of(app: &App) -> Axis {
    app.report.as_ref().map_or(Axis::Concurrency, |r| r.axis)
}

/// Whether a level lies on the run's load axis (its load can be the knee).
fn on_the_axis(l: &LevelSummary, axis: Axis) -> bool {
    match axis {
        Axis::Concurrency => l.open_loop.rate.is_none(),
        Axis::Rate => is_rate_level(l),
    }
}

/// A level's load, as the table's load column shows it: `64`, a rate in requests/s
/// (`2.5`), `c=1` (a closed-loop probe in a rate run), or a schedule's kind.
fn load_cell(l: &LevelSummary, axis: Axis) -> String {
    match l.open_loop.rate.as_ref().map(|r| &r.shape) {
        None if axis == Axis::Rate => format!("c={}", l.concurrency),
        None => l.concurrency.to_string(),
        Some(LoadShape::Rate { rps }) => fmt_rps(*rps),
        Some(LoadShape::Steps { .. }) => "steps".into(),
        Some(LoadShape::Ramp { .. }) => "ramp".into(),
        Some(LoadShape::Replay { .. }) => "replay".into(),
    }
}

/// The load column's header: `conc`, `req/s` (rate runs), or `load` (schedules, replays).
fn load_header(app: &App, axis: Axis) -> &'static str {
    let running = app.run.running.and(app.run.running_shape.as_ref());
    if axis == Axis::Rate || matches!(running, Some(LoadShape::Rate { .. })) {
        "req/s"
    } else if running.is_some() || app.run.levels.iter().any(|l| l.open_loop.rate.is_some()) {
        "load"
    } else {
        "conc"
    }
}

fn ms(v: Option<f64>) -> String {
    v.map_or("-".into(), compact)
}

/// Columns kept when the table is narrow: #, conc, output tok/s, ttft95, e2e99, err, verdict
/// (not ttft50, e2e50).
fn pick<T>(cells: Vec<T>, narrow: bool) -> Vec<T> {
    cells
        .into_iter()
        .enumerate()
        .filter(|(i, _)| !narrow || ![3, 5].contains(i))
        .map(|(_, c)| c)
        .collect()
}

fn render_levels_table(frame: &mut Frame, area: Rect, app: &App, theme: &Theme) {
    let narrow = area.width < 64;
    let axis = axis_of(app);
    let rows = app
        .run
        .levels
        .iter()
        .skip(app.level_scroll)
        .enumerate()
        .map(|(i, l)| {
            let p99 = l.e2e_p(99.0);
            let row = app
                .report
                .as_ref()
                .and_then(|r| r.iterations.get(app.level_scroll + i));
            let user_slas = app.report.as_ref().is_some_and(|r| !r.slas.is_empty());
            let verdict = row.map_or(String::new(), |r| {
                let v = crate::plan::analysis_text::row_verdict(r, user_slas).to_lowercase();
                // a level measured again: one verdict on all its measurements' requests
                if r.measurements > 1 {
                    format!("{v} ×{}", r.measurements)
                } else {
                    v
                }
            });
            let cells = vec![
                (app.level_scroll + i + 1).to_string(),
                format!(
                    "{}{}",
                    load_cell(l, axis),
                    if app.view.knee == Some(l.load()) && on_the_axis(l, axis) {
                        " ◆"
                    } else {
                        ""
                    }
                ),
                // the level's throughput, as every surface shows it
                crate::values::sig3(l.sustained_tps()),
                ms(l.ttft_p(50.0)),
                ms(l.ttft_p(95.0)),
                ms(l.e2e_p(50.0)),
                ms(p99),
                l.error_count().to_string(),
                verdict.clone(),
            ];
            let mut row = Row::new(pick(cells, narrow));
            if verdict.starts_with("fail") || verdict == "not held" || l.error_count() > 0 {
                row = row.style(theme.fg(Color::Red));
            }
            row
        });
    let widths = pick(
        vec![
            Constraint::Length(3),
            Constraint::Length(7),
            Constraint::Length(12),
            Constraint::Length(6),
            Constraint::Length(6),
            Constraint::Length(6),
            Constraint::Length(6),
            Constraint::Length(5),
            Constraint::Min(4),
        ],
        narrow,
    );
    let header = pick(
        vec![
            "#",
            load_header(app, axis),
            "output tok/s",
            "ttft50",
            "ttft95",
            "e2e50",
            "e2e99",
            "err",
            "",
        ],
        narrow,
    );
    let table = Table::new(rows, widths)
        .header(Row::new(header).style(theme.bold()))
        .block(
            Block::default()
                .borders(Borders::ALL)
                .border_style(theme.focused(app.focus == Panel::Levels))
                .title(" levels (ms) "),
        );
    frame.render_widget(table, area);
}

fn render_notes(frame: &mut Frame, area: Rect, app: &App, theme: &Theme) {
    let mut lines = Vec::new();
    if let Some(k) = app.view.knee {
        lines.push(Line::from(Span::styled(
            match axis_of(app) {
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
                axis_of(app).load(from)
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
    frame.render_widget(
        Paragraph::new(lines).wrap(Wrap { trim: true }).block(
            Block::default()
                .borders(Borders::ALL)
                .border_style(theme.focused(app.focus == Panel::Warnings))
                .title(" notes "),
        ),
        area,
    );
}
