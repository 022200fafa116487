//! The time view of an open-loop level (a rate, a schedule, a replay): four charts against
//! seconds since the level started (offered, sent and finished requests/s; requests pending
//! and in flight; e2e and TTFT p50 and p99 with their SLA lines) and one status line. Each
//! chart's title names its lines in their colours with the latest values, so it reads without
//! a legend box at 80x24 too.

use super::charts::compact;
use super::Theme;
use crate::tui::app::App;
use crate::tui::timeline::{Spread, TimeView};
use crate::values::fmt_rps;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Color;
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Axis, Block, Borders, Chart, Dataset, GraphType, Paragraph};
use ratatui::Frame;

const OFFERED: Color = Color::Gray;
const SENT: Color = Color::Green;
const DONE: Color = Color::Cyan;
const PENDING: Color = Color::Magenta;
const IN_FLIGHT: Color = Color::Blue;
const P50: Color = Color::Cyan;
const P99: Color = Color::Yellow;
const SLA: Color = Color::Red;

/// `7.5s`, `12.5s`, `12m`: a time-axis label, to a tenth.
fn secs(v: f64) -> String {
    let tenth = |v: f64| fmt_rps((v * 10.0).round() / 10.0);
    if v >= 120.0 {
        format!("{}m", tenth(v / 60.0))
    } else {
        format!("{}s", tenth(v))
    }
}

/// `6`, `4.4`, `12`: a rate in a title, to a tenth below 10 requests/s.
fn per_s(v: f64) -> String {
    if v >= 10.0 {
        format!("{v:.0}")
    } else {
        fmt_rps((v * 10.0).round() / 10.0)
    }
}

fn time_axis<'a>(view: &TimeView, theme: &Theme) -> Axis<'a> {
    let [a, b] = view.x_bounds;
    Axis::default()
        .bounds(view.x_bounds)
        .labels(vec![
            Span::raw(secs(a)),
            Span::raw(secs((a + b) / 2.0)),
            Span::raw(secs(b)),
        ])
        .style(theme.dim())
}

fn y_axis<'a>(max: f64, theme: &Theme) -> Axis<'a> {
    Axis::default()
        .bounds([0.0, max])
        .labels(vec![
            Span::raw("0"),
            Span::raw(compact(max / 2.0)),
            Span::raw(compact(max)),
        ])
        .style(theme.dim())
}

fn line<'a>(data: &'a [(f64, f64)], color: Color, theme: &Theme) -> Dataset<'a> {
    Dataset::default()
        .marker(Marker::Braille)
        .graph_type(GraphType::Line)
        .style(theme.fg(color))
        .data(data)
}

/// A title: `name` then each (label, colour, value) in its line's colour.
fn title<'a>(name: &str, parts: &[(&str, Color, String)], theme: &Theme) -> Line<'a> {
    let mut spans = vec![Span::raw(format!(" {name}"))];
    for (label, color, value) in parts {
        spans.push(Span::styled(format!(" {label}"), theme.fg(*color)));
        spans.push(Span::raw(format!(" {value}")));
    }
    spans.push(Span::raw(" "));
    Line::from(spans)
}

fn block<'a>(title: Line<'a>, focused: bool, theme: &Theme) -> Block<'a> {
    Block::default()
        .borders(Borders::ALL)
        .border_style(theme.focused(focused))
        .title(title)
}

/// Draws the four charts in `area`: rates and latency on top, queue and TTFT below.
pub fn render_time_view(
    frame: &mut Frame,
    area: Rect,
    view: &TimeView,
    focused: bool,
    theme: &Theme,
) {
    let [top, bottom] =
        Layout::vertical([Constraint::Percentage(55), Constraint::Percentage(45)]).areas(area);
    let halves = |r: Rect| -> [Rect; 2] {
        Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)]).areas(r)
    };
    let [tl, tr] = halves(top);
    let [bl, br] = halves(bottom);
    render_rates(frame, tl, view, focused, theme);
    render_latency(frame, tr, view, "e2e (ms)", &view.e2e, focused, theme);
    render_queue(frame, bl, view, focused, theme);
    if view.ttft.p50.is_empty() && !view.e2e.p50.is_empty() {
        frame.render_widget(
            Paragraph::new(Span::styled(
                "no TTFT: the workload does not stream",
                theme.dim(),
            ))
            .block(block(Line::raw(" TTFT (ms) "), focused, theme)),
            br,
        );
    } else {
        render_latency(frame, br, view, "TTFT (ms)", &view.ttft, focused, theme);
    }
}

fn render_rates(frame: &mut Frame, area: Rect, view: &TimeView, focused: bool, theme: &Theme) {
    let now = view.latest.map(|p| p.open);
    let v = |f: fn(&crate::metrics::progress::OpenProgress) -> f64| {
        now.as_ref().map_or("-".into(), |o| per_s(f(o)))
    };
    let data = vec![
        line(&view.offered, OFFERED, theme),
        line(&view.sent, SENT, theme),
        line(&view.done, DONE, theme),
    ];
    let name = title(
        "req/s:",
        &[
            ("offered", OFFERED, v(|o| o.offered_rps)),
            ("sent", SENT, v(|o| o.sent_rps)),
            ("done", DONE, v(|o| o.done_rps)),
        ],
        theme,
    );
    let chart = Chart::new(data)
        .block(block(name, focused, theme))
        .x_axis(time_axis(view, theme))
        .y_axis(y_axis(view.rate_max, theme));
    frame.render_widget(chart, area);
}

fn render_queue(frame: &mut Frame, area: Rect, view: &TimeView, focused: bool, theme: &Theme) {
    let now = |f: fn(&crate::state::TimelinePoint) -> u64| {
        view.latest.map_or("-".into(), |p| f(&p).to_string())
    };
    let data = vec![
        line(&view.in_flight, IN_FLIGHT, theme),
        line(&view.pending, PENDING, theme),
    ];
    let name = title(
        "requests",
        &[
            ("pending", PENDING, now(|p| p.open.pending)),
            ("in flight", IN_FLIGHT, now(|p| p.in_flight)),
        ],
        theme,
    );
    let chart = Chart::new(data)
        .block(block(name, focused, theme))
        .x_axis(time_axis(view, theme))
        .y_axis(y_axis(view.queue_max, theme));
    frame.render_widget(chart, area);
}

/// p50 and p99 over time with the SLA line.
fn render_latency(
    frame: &mut Frame,
    area: Rect,
    view: &TimeView,
    name: &str,
    spread: &Spread,
    focused: bool,
    theme: &Theme,
) {
    let [a, b] = view.x_bounds;
    let sla: Vec<(f64, f64)> = spread.sla_ms.map_or(vec![], |s| vec![(a, s), (b, s)]);
    let now = |v: &[(f64, f64)]| v.last().map_or("-".into(), |p| compact(p.1));
    let mut parts = vec![
        ("p50", P50, now(&spread.p50)),
        ("p99", P99, now(&spread.p99)),
    ];
    if let Some(s) = spread.sla_ms {
        parts.push(("SLA", SLA, compact(s)));
    }
    let mut data = vec![line(&spread.p50, P50, theme), line(&spread.p99, P99, theme)];
    if !sla.is_empty() {
        data.push(line(&sla, SLA, theme));
    }
    let chart = Chart::new(data)
        .block(block(title(name, &parts, theme), focused, theme))
        .x_axis(time_axis(view, theme))
        .y_axis(y_axis(spread.max_ms, theme));
    frame.render_widget(chart, area);
}

/// One line under the charts: the level, its shape, how far along it is, its errors.
pub fn render_time_status(
    frame: &mut Frame,
    area: Rect,
    app: &App,
    view: &TimeView,
    theme: &Theme,
) {
    let mut spans = vec![Span::styled(
        format!("level {} · {}", view.level + 1, view.label),
        theme.bold(),
    )];
    let elapsed = match view.planned_s {
        Some(p) => format!(" · {:.1} of {} s", view.elapsed_s(), fmt_rps(p)),
        None => format!(" · {:.1} s", view.elapsed_s()),
    };
    spans.push(Span::raw(elapsed));
    match (&app.run.progress, app.run.levels.last()) {
        (Some(p), _) => {
            spans.push(Span::raw(format!(" · {}/{} done", p.done, p.total)));
            let errors = p
                .errors_by_kind
                .iter()
                .filter(|(k, _)| **k != crate::record::ErrorKind::Cancelled)
                .map(|(_, n)| *n)
                .sum::<u64>();
            spans.push(if errors == 0 {
                Span::styled(" · errors 0", theme.dim())
            } else {
                Span::styled(format!(" · errors {errors}"), theme.error())
            });
        }
        (None, Some(l)) if l.index == view.level => {
            spans.push(Span::raw(format!(
                " · finished: {} requests",
                l.ok_count() + l.error_count()
            )));
            let errors = l.error_count();
            spans.push(if errors == 0 {
                Span::styled(" · errors 0", theme.dim())
            } else {
                Span::styled(format!(" · errors {errors}"), theme.error())
            });
            if let Some(sat) = l.open_loop.rate.as_ref().and_then(|r| r.saturated.as_ref()) {
                spans.push(Span::styled(
                    format!(" · stopped at {:.1} s: saturated", sat.at_s),
                    theme.error(),
                ));
            }
        }
        _ => {}
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}
