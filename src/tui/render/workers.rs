//! The workers panel of a distributed run (`--workers`, docs/distributed.md): each worker's
//! streams, requests in flight, requests done, errors and timer lag, and how far apart the
//! shares started. Shown beside the level table, above the notes, only when the run has
//! workers. Lost workers come first; when the panel cannot hold every worker, its last row
//! says how many are not shown.

use super::Theme;
use crate::metrics::fleet::{FleetLevel, WorkerShare};
use ratatui::layout::{Constraint, Rect};
use ratatui::style::Color;
use ratatui::widgets::{Block, Borders, Row, Table};
use ratatui::Frame;

/// The fixed columns' widths (all but the host) and the spaces between the seven columns.
const FIXED: [u16; 6] = [2, 5, 6, 6, 4, 5];
const GAPS: u16 = 6;

/// Rows the panel wants: one a worker, the header and the borders.
pub fn height(w: &FleetLevel) -> u16 {
    w.shares.len() as u16 + 3
}

/// `text` cut from the left to `width` characters, `…` marking the cut (a pod's name ends
/// in what tells it apart).
fn tail(text: &str, width: usize) -> String {
    let n = text.chars().count();
    if n <= width || width == 0 {
        return text.to_string();
    }
    let keep: String = text.chars().skip(n - (width - 1)).collect();
    format!("…{keep}")
}

fn row<'a>(s: &WorkerShare, host_width: usize, theme: &Theme) -> Row<'a> {
    let row = Row::new(vec![
        s.worker.to_string(),
        // an open-loop share without an in-flight cap holds no fixed number of streams
        if s.concurrency > 0 {
            s.concurrency.to_string()
        } else {
            "-".into()
        },
        match &s.lost {
            Some(_) => "lost".to_string(),
            None => s.in_flight.to_string(),
        },
        s.requests.to_string(),
        s.errors.to_string(),
        if s.timer_late_p99_ms > 0.0 {
            format!("{:.1}", s.timer_late_p99_ms)
        } else {
            "-".into()
        },
        tail(&s.host, host_width),
    ]);
    if s.lost.is_some() || s.errors > 0 {
        row.style(theme.fg(Color::Red))
    } else {
        row
    }
}

/// Draws the panel.
pub fn render_workers(frame: &mut Frame, area: Rect, w: &FleetLevel, theme: &Theme) {
    let host_width = area
        .width
        .saturating_sub(2 + GAPS + FIXED.iter().sum::<u16>()) as usize;
    let mut order: Vec<&WorkerShare> = w.shares.iter().collect();
    order.sort_by_key(|s| (s.lost.is_none(), s.worker));
    let room = area.height.saturating_sub(3) as usize;
    let mut rows: Vec<Row> = Vec::new();
    if order.len() > room && room > 0 {
        rows.extend(order[..room - 1].iter().map(|s| row(s, host_width, theme)));
        let hidden = order.len() - (room - 1);
        let more = vec![String::new(); 6]
            .into_iter()
            .chain([format!("+{hidden} more")]);
        rows.push(Row::new(more.collect::<Vec<_>>()).style(theme.dim()));
    } else {
        rows.extend(order.iter().map(|s| row(s, host_width, theme)));
    }
    let mut widths: Vec<Constraint> = FIXED.iter().map(|w| Constraint::Length(*w)).collect();
    widths.push(Constraint::Min(4));
    // conc: the worker's streams; flight: its requests in flight; lag: its timer's p99 (ms)
    let header =
        Row::new(vec!["#", "conc", "flight", "done", "err", "lag", "host"]).style(theme.bold());
    let title = format!(
        " {} workers · started {} ms apart ",
        w.workers,
        spread(w.start_spread_ms)
    );
    let border = if w.warning.is_some() {
        theme.fg(Color::Yellow)
    } else {
        theme.dim()
    };
    let table = Table::new(rows, widths).header(header).block(
        Block::default()
            .borders(Borders::ALL)
            .border_style(border)
            .title(title),
    );
    frame.render_widget(table, area);
}

/// `0.42`, `3.1`, `250`: the spread to a sensible precision.
fn spread(ms: f64) -> String {
    if ms < 1.0 {
        format!("{ms:.2}")
    } else if ms < 100.0 {
        format!("{ms:.1}")
    } else {
        format!("{ms:.0}")
    }
}

#[cfg(test)]
mod tests {
    use super::tail;

    #[test]
    fn hosts_keep_their_end() {
        assert_eq!(tail("rightsize-workers-2-x7k2q:41", 10), "…-x7k2q:41");
        assert_eq!(tail("vm:1385", 10), "vm:1385");
        assert_eq!(tail("abc", 0), "abc");
    }
}
