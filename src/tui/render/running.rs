//! The running level's panel: its progress, pace and time left, its errors (the latest one's
//! message), its live TTFT, ITL and e2e percentiles, and, where there is room, its output
//! tokens/s over the last seconds beside a small histogram of its e2e latency. What does not
//! fit at 80x24 is also in the levels table's running row and the notes.

use super::charts::compact;
use super::Theme;
use crate::metrics::live_figures::{LiveFigures, Percentiles};
use crate::metrics::LevelProgress;
use crate::state::time_left::fmt_range;
use crate::tui::app::App;
use crate::values::sig3;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Color;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Gauge, Paragraph, Sparkline};
use ratatui::Frame;

/// Draws the running level (or what the run waits for).
pub fn render_running(frame: &mut Frame, area: Rect, app: &App, theme: &Theme) {
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
    let lines = text_lines(app, p, theme);
    let text_rows = (lines.len() as u16).min(inner.height.saturating_sub(1));
    let [gauge, text, charts] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(text_rows),
        Constraint::Min(0),
    ])
    .areas(inner);
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
        gauge,
    );
    frame.render_widget(Paragraph::new(lines), text);
    if charts.height > 0 {
        render_charts(frame, charts, p, theme);
    }
}

/// The panel's text, most needed first (a short panel shows the first few).
fn text_lines(app: &App, p: &LevelProgress, theme: &Theme) -> Vec<Line<'static>> {
    let live: &LiveFigures = &p.live;
    let mut lines = vec![Line::from(vec![
        Span::raw(format!("in flight {}  ", p.in_flight)),
        Span::styled(
            format!("{} output tok/s", sig3(p.output_tokens_per_sec)),
            theme.bold(),
        ),
        Span::raw(format!(
            "  {} req/s  {:.1} s",
            sig3(live.requests_per_sec),
            p.elapsed_s
        )),
    ])];
    lines.push(Line::styled(
        match app.run.time_left() {
            Some(t) => format!(
                "left: level {}, run {}",
                fmt_range(t.level_s),
                fmt_range(t.run_s)
            ),
            None => "left: known once a request ends".into(),
        },
        theme.dim(),
    ));
    let errors = endpoint_errors(p);
    lines.push(if errors == 0 {
        Line::styled("errors 0", theme.dim())
    } else {
        let kinds: Vec<String> = p
            .errors_by_kind
            .iter()
            .filter(|(k, _)| **k != crate::record::ErrorKind::Cancelled)
            .map(|(k, n)| format!("{k} {n}"))
            .collect();
        let latest = live
            .last_error
            .as_ref()
            .map_or(String::new(), |e| format!(" · latest: {}", e.message));
        Line::styled(
            format!("errors {errors}: {}{latest}", kinds.join(", ")),
            theme.error(),
        )
    });
    let pct = |name: &str, v: &Option<Percentiles>| {
        v.map(|v| {
            format!(
                "{name} {}/{}/{}",
                compact(v.p50),
                compact(v.p95),
                compact(v.p99)
            )
        })
    };
    let first: Vec<String> = [pct("TTFT", &live.ttft_ms), pct("ITL", &live.itl_ms)]
        .into_iter()
        .flatten()
        .collect();
    if !first.is_empty() {
        lines.push(Line::raw(format!("p50/95/99 ms: {}", first.join("  "))));
    }
    if let Some(e2e) = pct("e2e", &live.e2e_ms) {
        lines.push(Line::raw(format!("p50/95/99 ms: {e2e}")));
    }
    lines
}

/// Output tokens/s over the rolling window, beside the e2e latency histogram with its range.
fn render_charts(frame: &mut Frame, area: Rect, p: &LevelProgress, theme: &Theme) {
    let [left, right] =
        Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)]).areas(area);
    let captioned = area.height >= 2;
    let split = |r: Rect| -> (Rect, Option<Rect>) {
        if captioned {
            let [bars, caption] =
                Layout::vertical([Constraint::Min(1), Constraint::Length(1)]).areas(r);
            (bars, Some(caption))
        } else {
            (r, None)
        }
    };
    let (tps, tps_caption) = split(left);
    let spark = stretch(&p.output_tps_series, usize::from(tps.width));
    frame.render_widget(
        Sparkline::default()
            .data(&spark)
            .style(theme.fg(Color::Green)),
        tps,
    );
    if let Some(c) = tps_caption {
        frame.render_widget(Paragraph::new(Span::styled("output tok/s", theme.dim())), c);
    }
    let (hist, hist_caption) = split(right);
    let bars = &p.live.e2e_histogram;
    let counts: Vec<f64> = bars.iter().map(|b| b.count as f64).collect();
    frame.render_widget(
        Sparkline::default()
            .data(stretch(&counts, usize::from(hist.width.saturating_sub(1))))
            .style(theme.fg(Color::Cyan)),
        hist,
    );
    if let (Some(c), Some(last)) = (hist_caption, bars.last()) {
        let min = p.live.e2e_min_ms.unwrap_or(0.0);
        frame.render_widget(
            Paragraph::new(Span::styled(
                format!("e2e ms {}…{}", compact(min), compact(last.upper_ms)),
                theme.dim(),
            )),
            c,
        );
    }
}

/// `series` stretched (or thinned) to `width` columns, so a sparkline fills its box.
fn stretch(series: &[f64], width: usize) -> Vec<u64> {
    if series.is_empty() {
        return Vec::new();
    }
    (0..width)
        .map(|i| series[i * series.len() / width.max(1)].round() as u64)
        .collect()
}

/// Failed requests of the running level, not counting cancelled ones (as a level's `err`).
pub fn endpoint_errors(p: &crate::metrics::LevelProgress) -> u64 {
    p.errors_by_kind
        .iter()
        .filter(|(k, _)| **k != crate::record::ErrorKind::Cancelled)
        .map(|(_, n)| *n)
        .sum()
}

#[cfg(test)]
mod tests {
    use super::stretch;

    #[test]
    fn a_series_fills_its_width() {
        assert_eq!(stretch(&[1.0, 2.0], 6), [1, 1, 1, 2, 2, 2]);
        assert_eq!(stretch(&[1.0, 2.0, 3.0, 4.0], 2), [1, 3]);
        assert!(stretch(&[], 5).is_empty());
    }
}
