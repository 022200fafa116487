//! The run screen: charts on top (the curves, with the server panel beside them when the
//! levels recorded the server's metrics, or an open-loop level's time view), the running
//! level and the level table below, warnings and the simulator note beside them.

use super::charts::{compact, render_latency, render_throughput, render_ttft};
use super::layout::{first_level_row, level_rows, run_areas, shows_results};
use super::notes::render_notes;
use super::running::endpoint_errors;
use super::scroll::scroll_limits;
use super::server_chart::render_server;
use super::Theme;
use crate::metrics::live_figures::{LiveFigures, Percentiles};
use crate::metrics::LevelSummary;
use crate::plan::analysis::{is_rate_level, Axis};
use crate::tui::app::{App, Panel};
use crate::values::{fmt_rps, sig3};
use crate::workload::arrivals::LoadShape;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Color;
use ratatui::widgets::{Block, Borders, Row, Table};
use ratatui::Frame;

/// The narrowest screen (columns) with room for the server panel beside the two top charts.
const SERVER_PANEL_WIDTH: u16 = 100;

/// Draws the run screen.
pub fn render_run(frame: &mut Frame, area: Rect, app: &App, theme: &Theme) {
    if app.full_results {
        super::results::render_full_results(frame, area, app, theme);
        return;
    }
    let areas = run_areas(area, app);
    let charts = app.focus == Panel::Charts;
    match (&app.time, areas.time_status) {
        (Some(time), Some(status)) => {
            super::timeline::render_time_view(frame, areas.charts, time, charts, theme);
            super::timeline::render_time_status(frame, status, app, time, theme);
        }
        _ => render_curves(frame, areas.charts, app, theme),
    }
    if let Some(ttft) = areas.ttft {
        render_ttft(frame, ttft, &app.view, charts, theme);
    }
    if let Some(side) = areas.side {
        if shows_results(app) {
            let overflows = scroll_limits(app).results > 0;
            super::results::render_results(frame, side, app, theme, overflows);
        } else {
            super::running::render_running(frame, side, app, theme);
        }
    }
    render_levels_table(frame, areas.levels, app, theme);
    if let (Some(w), Some(top)) = (&app.run.workers, areas.workers) {
        super::workers::render_workers(frame, top, w, theme);
    }
    render_notes(frame, areas.notes, app, theme);
}

/// The top row of curves: throughput and e2e latency, and the server panel beside them
/// when a level recorded the server's metrics and the screen is wide enough for three.
fn render_curves(frame: &mut Frame, top: Rect, app: &App, theme: &Theme) {
    let charts = app.focus == Panel::Charts;
    match app
        .view
        .server
        .as_ref()
        .filter(|_| top.width >= SERVER_PANEL_WIDTH)
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

/// The level table's columns: header, width, and the narrowest table (inner columns) that
/// shows it. The verdict takes what is left.
const COLUMNS: [(&str, u16, u16); 11] = [
    ("#", 3, 0),
    ("load", 6, 0),
    ("output tok/s", 12, 0),
    ("req/s", 6, 64),
    ("ttft50", 6, 90),
    ("ttft95", 6, 0),
    ("itl50", 6, 64),
    ("e2e50", 6, 90),
    ("e2e99", 6, 0),
    ("err", 4, 64),
    ("", 4, 0),
];

/// The cells shown in a table `width` columns wide.
fn pick<T>(cells: Vec<T>, width: u16) -> Vec<T> {
    cells
        .into_iter()
        .zip(COLUMNS)
        .filter(|(_, (_, _, from))| width >= *from)
        .map(|(c, _)| c)
        .collect()
}

fn render_levels_table(frame: &mut Frame, area: Rect, app: &App, theme: &Theme) {
    let width = area.width.saturating_sub(2);
    let axis = app.axis();
    let first = first_level_row(app, area);
    let mut rows: Vec<Row> = app
        .run
        .levels
        .iter()
        .enumerate()
        .skip(first)
        .map(|(i, l)| {
            let row = app.report.as_ref().and_then(|r| r.iterations.get(i));
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
                (i + 1).to_string(),
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
                crate::values::sig3(l.requests_per_sec()),
                ms(l.ttft_p(50.0)),
                ms(l.ttft_p(95.0)),
                ms(l.itl_p(50.0)),
                ms(l.e2e_p(50.0)),
                ms(l.e2e_p(99.0)),
                l.error_count().to_string(),
                verdict.clone(),
            ];
            let mut row = Row::new(pick(cells, width));
            if verdict.starts_with("fail") || verdict == "not held" || l.error_count() > 0 {
                row = row.style(theme.fg(Color::Red));
            }
            row
        })
        .collect();
    if let Some(row) = running_row(app, width, theme) {
        rows.push(row);
    }
    let widths = pick(
        COLUMNS
            .iter()
            .map(|(_, w, _)| Constraint::Length(*w))
            .collect(),
        width,
    );
    let mut widths = widths;
    if let Some(last) = widths.last_mut() {
        *last = Constraint::Min(4);
    }
    let header = pick(
        COLUMNS
            .iter()
            .map(|(h, _, _)| match *h {
                "load" => load_header(app, axis),
                h => h,
            })
            .collect(),
        width,
    );
    let total = level_rows(app);
    let shown = usize::from(area.height.saturating_sub(3));
    let title = if total > shown {
        format!(
            " levels (ms) {}-{} of {total} ",
            first + 1,
            (first + shown).min(total)
        )
    } else {
        " levels (ms) ".to_string()
    };
    let table = Table::new(rows, widths)
        .header(Row::new(header).style(theme.bold()))
        .block(
            Block::default()
                .borders(Borders::ALL)
                .border_style(theme.focused(app.focus == Panel::Levels))
                .title(title),
        );
    frame.render_widget(table, area);
}

/// The running level's row: its load, its figures so far, and `running 312/1024` where its
/// verdict will be.
fn running_row(app: &App, width: u16, theme: &Theme) -> Option<Row<'static>> {
    let (index, concurrency, _) = app.run.running?;
    let load = match &app.run.running_shape {
        Some(shape) => shape.label(),
        None => concurrency.to_string(),
    };
    let p = app.run.progress.as_ref();
    let done = p.map_or(String::from("starting"), |p| {
        format!("▶ {}/{}", p.done, p.total)
    });
    // its figures so far, live (the level's own once it ends)
    let live: Option<&LiveFigures> = p.map(|p| &*p.live);
    let pct = |f: fn(&LiveFigures) -> Option<Percentiles>, q: fn(&Percentiles) -> f64| {
        live.and_then(f).map_or(String::new(), |v| compact(q(&v)))
    };
    let cells = vec![
        (index as usize + 1).to_string(),
        load,
        p.map_or(String::new(), |p| sig3(p.output_tokens_per_sec)),
        live.map_or(String::new(), |l| sig3(l.requests_per_sec)),
        pct(|l| l.ttft_ms, |v| v.p50),
        pct(|l| l.ttft_ms, |v| v.p95),
        pct(|l| l.itl_ms, |v| v.p50),
        pct(|l| l.e2e_ms, |v| v.p50),
        pct(|l| l.e2e_ms, |v| v.p99),
        p.map_or(String::new(), |p| endpoint_errors(p).to_string()),
        done,
    ];
    Some(Row::new(pick(cells, width)).style(theme.dim()))
}
