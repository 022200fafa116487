//! The results panel: the search answer with its bracket and confidence, the binding SLA, the
//! knee, and the planning numbers with the peak and price the user can edit in place.

use super::Theme;
use crate::metrics::summary::load_label as level_label;
use crate::metrics::summary::LOAD_PER_RPS;
use crate::plan::analysis::Axis;
use crate::plan::analysis_text::{
    answer_line, bracket_line, breaking_line, crossing_line, render_analysis, row_verdict,
};
use crate::plan::bound::BoundKind;
use crate::record::sla::fmt_value;
use crate::tui::app::{App, Panel};
use crate::tui::setup::FieldId;
use crate::values::fmt_rps;
use crate::values::sig3;
use ratatui::layout::Rect;
use ratatui::style::Color;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Wrap};
use ratatui::Frame;

/// The text being typed for `id`, or its value.
fn input(app: &App, id: FieldId) -> String {
    let f = &app.setup.fields[app.setup.selected];
    match &app.setup.editing {
        Some(text) if f.id == id => format!("{text}▏"),
        _ => {
            let v = app.setup.get(id);
            if v.is_empty() {
                "-".into()
            } else {
                v.to_string()
            }
        }
    }
}

/// Draws what the finished levels mean.
/// `overflows`: its lines are more than it shows (the title says so).
pub fn render_results(frame: &mut Frame, area: Rect, app: &App, theme: &Theme, overflows: bool) {
    let title = if overflows {
        " results ↓ (r: all) "
    } else {
        " results "
    };
    frame.render_widget(
        Paragraph::new(results_lines(app, theme))
            .wrap(Wrap { trim: true })
            .scroll((app.results_scroll.min(usize::from(u16::MAX)) as u16, 0))
            .block(
                Block::default()
                    .borders(Borders::ALL)
                    .border_style(theme.focused(app.focus == Panel::Results))
                    .title(title),
            ),
        area,
    );
}

/// The results panel's lines.
pub fn results_lines(app: &App, theme: &Theme) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    let Some(r) = &app.report else {
        return lines;
    };
    let ax = r.axis;
    // the answer, its bracket and the estimated crossing, in the words of `rightsize show`
    // (docs/search.md, "Words")
    if let Some(answer) = answer_line(r) {
        let mut spans = vec![Span::styled(
            answer,
            theme.bold().patch(theme.fg(Color::Green)),
        )];
        for more in [bracket_line(r), crossing_line(r)].into_iter().flatten() {
            spans.push(Span::raw(format!("  {more}")));
        }
        lines.push(Line::from(spans));
    }
    if let Some(s) = &r.search {
        if let Some(b) = &s.binding_sla {
            // its value at the bracket's top is in `show` and the report: the panel is short
            let seen = |v: Option<f64>| v.map_or("-".into(), |v| fmt_value(b.threshold.metric, v));
            lines.push(Line::raw(format!(
                "binding: {} ({} at the answer)",
                b.threshold.describe(),
                seen(b.observed_at_answer),
            )));
        }
    }
    let p = &r.planning;
    let ideal =
        match &p.ideal {
            Some(i) => format!(
                "ideal balance {} ({} output tok/s{}, by {}{})",
                ax.load(i.concurrency),
                sig3(i.output_tps),
                // the GPUs there, when their exporter was read
                i.energy.map_or(String::new(), |e| {
                    let watts = e.power_w.map_or(String::new(), |w| format!(", {w:.0} W"));
                    let kwh = e
                        .kwh_per_million_output_tokens
                        .map_or(String::new(), |k| format!(", {k:.3} kWh/M tok"));
                    watts + &kwh
                }),
                p.ideal_basis,
                // by SLA its range is the boundary's, on the answer's line
                i.range.filter(|_| p.ideal_basis == "knee").map_or(
                    String::new(),
                    |[lo, hi]| format!(", {}", range_text(ax, lo, hi))
                )
            ),
            None => "ideal balance: none qualifies".into(),
        };
    let breaking = breaking_line(r).map_or(String::new(), |b| format!("  {b}"));
    lines.push(Line::raw(format!("{ideal}{breaking}")));
    if let Some(rs) = &p.right_size {
        let money = |v: Option<f64>, unit: &str| {
            v.map_or(String::new(), |v| format!("  {}{unit}", sig3(v)))
        };
        lines.push(Line::from(Span::styled(
            format!(
                "right-size {} instances{} (+{:.0}%){}{}{}",
                rs.instances,
                rs.instances_range
                    .filter(|[lo, hi]| lo != hi)
                    .map_or(String::new(), |[lo, hi]| format!(" ({lo}-{hi})")),
                rs.headroom * 100.0,
                money(rs.cost_per_hour, "/h"),
                money(rs.cost_per_million_output_tokens, "/M tok"),
                rs.fleet_power_kw
                    .map_or(String::new(), |kw| format!("  GPUs {kw:.1} kW")),
            ),
            theme.bold(),
        )));
    }
    for w in &p.warnings {
        lines.push(Line::from(Span::styled(
            format!("⚠ {w}"),
            theme.fg(Color::Yellow),
        )));
    }
    // what bounds the server, when its telemetry says (the evidence, and "not known", are in
    // the printed output, `show` and the report): after the planning numbers, which it must
    // not push out of the panel
    if let Some(b) = r.bound.as_ref().filter(|b| b.kind != BoundKind::NotKnown) {
        let at =
            b.at.map_or(String::new(), |c| format!(" at {}", ax.load(c)));
        let why = b.hint.as_ref().unwrap_or(&b.evidence);
        lines.push(Line::raw(format!("bound: {}{at}: {why}", b.kind.label())));
    }
    if !r.skipped.is_empty() {
        let list: Vec<String> = r
            .skipped
            .iter()
            .map(|k| format!("{} ({})", ax.load(k.concurrency), k.reason))
            .collect();
        lines.push(Line::from(Span::styled(
            format!("never named: {}", list.join("; ")),
            theme.fg(Color::Yellow),
        )));
    }
    lines.push(Line::from(vec![
        Span::styled("p", theme.bold()),
        Span::raw(format!(
            " peak{} {}  ",
            if ax == Axis::Rate { " req/s" } else { "" },
            input(app, FieldId::PeakConcurrency)
        )),
        Span::styled("$", theme.bold()),
        Span::raw(format!(" price/h {}", input(app, FieldId::PricePerHour))),
    ]));
    lines
}

/// The full-screen results view: what `rightsize show` says of the run (answer, bracket,
/// binding SLA, knee, every planning number), then each level's verdict whole, then the
/// notes, all wrapped to the screen.
pub fn render_full_results(frame: &mut Frame, area: Rect, app: &App, theme: &Theme) {
    frame.render_widget(
        Paragraph::new(full_lines(app, theme))
            .wrap(Wrap { trim: false })
            .scroll((app.full_scroll.min(usize::from(u16::MAX)) as u16, 0))
            .block(
                Block::default()
                    .borders(Borders::ALL)
                    .border_style(theme.focused(true))
                    .title(" results, whole (↑↓ PgUp PgDn scroll · Esc back) "),
            ),
        area,
    );
}

/// The full view's lines.
pub fn full_lines(app: &App, theme: &Theme) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    let Some(r) = &app.report else {
        lines.push(Line::styled("no finished level yet", theme.dim()));
        return lines;
    };
    let heading = |t: &str| Line::styled(t.to_string(), theme.bold());
    lines.push(heading("results"));
    for l in render_analysis(r).lines() {
        lines.push(Line::raw(l.to_string()));
    }
    lines.push(Line::from(vec![
        Span::styled("p", theme.bold()),
        Span::raw(format!(" peak {}  ", input(app, FieldId::PeakConcurrency))),
        Span::styled("$", theme.bold()),
        Span::raw(format!(" price/h {}", input(app, FieldId::PricePerHour))),
    ]));
    if !r.iterations.is_empty() {
        lines.push(Line::raw(""));
        lines.push(heading("levels"));
        let user_slas = !r.slas.is_empty();
        for (i, (row, level)) in r.iterations.iter().zip(&app.run.levels).enumerate() {
            let verdict = row_verdict(row, user_slas);
            let again = if row.measurements > 1 {
                format!(", measured {} times", row.measurements)
            } else {
                String::new()
            };
            lines.push(Line::raw(format!(
                "{} {}: {} output tok/s, {} requests{again}{}",
                i + 1,
                level_label(level),
                sig3(level.sustained_tps()),
                level.ok_count() + level.error_count(),
                if verdict.is_empty() {
                    String::new()
                } else {
                    format!(": {verdict}")
                },
            )));
        }
    }
    lines.push(Line::raw(""));
    lines.push(heading("notes"));
    lines.extend(super::notes::notes_lines(app, theme));
    lines
}

/// `74-81`, `78`, `at least 74`, or `above the levels`: where a concurrency may lie; on a
/// rate axis `2.5-3.1 req/s` (the range is in load units).
fn range_text(ax: Axis, lo: f64, hi: f64) -> String {
    let (num, unit): (&dyn Fn(f64) -> String, &str) = match ax {
        Axis::Concurrency => (&|v| format!("{v:.0}"), ""),
        Axis::Rate => (&|v| fmt_rps(v / LOAD_PER_RPS), " req/s"),
    };
    match (lo.is_finite(), hi.is_finite()) {
        (true, true) if lo.round() == hi.round() => format!("{}{unit}", num(lo)),
        (true, true) => format!("{}-{}{unit}", num(lo), num(hi)),
        (true, false) => format!("at least {}{unit}", num(lo)),
        _ => "above the levels".into(),
    }
}
