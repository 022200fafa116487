//! The one-file HTML report (`rightsize export RUN --html FILE`): a page that opens anywhere
//! with nothing fetched. Charts are inline SVG drawn by the same plotters code as the PNG and
//! SVG exports (one panel per figure), the stylesheet is inline, and there is no script.
//!
//! Sections, in order: the run's identity, the answer box, the right-size (only for a run
//! sized by a peak), the four charts, the levels and latency tables, errors by kind, server telemetry (with the server chart when a run recorded server
//! metrics), warnings, and the command that reproduces the run. With
//! several runs (`--compare`) the curves overlay, the answer boxes and identities stand side
//! by side, and a side-by-side table precedes each run's own levels table.
//!
//! The stylesheet is `assets/report.css`, built in ([`style::CSS`]): the page fits a 1,280 px
//! window without scrolling sideways (a table wider than its column scrolls in its own box)
//! and prints on A4.
//!
//! The markup is written here, not by a template engine: the page is a fixed handful of
//! elements filled from the run, and the only protocol detail, escaping text, is five
//! characters ([`esc`]); the SVG inside comes from plotters. A headless-browser test
//! (`tests/report/report_html.rs`) checks the result is well-formed and renders.

mod answer;
mod command;
mod identity;
mod levels;
mod rightsize;
mod style;

use std::fmt::Write as _;

use super::chart::{render_panel_svg, ChartError, ChartPanel, ChartSpec};
use super::history::RunData;
use super::run_chart::chart_spec;
pub use command::command_line;

/// Each panel's size in the page (pixels; the SVG scales to the column).
pub const PANEL_SIZE: (u32, u32) = (800, 450);

/// `s` with the HTML special characters escaped (text and attribute values).
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The caption of each panel's figure.
fn caption(p: ChartPanel) -> &'static str {
    match p {
        ChartPanel::Throughput => "Output throughput against the load",
        ChartPanel::Latency => {
            "End-to-end latency: p50 and p99, the SLA, the answer with its bracket, and the 95 % \
             interval of the SLA's statistic at each level"
        }
        ChartPanel::Ttft => "Time to first token: p50 and p95",
        ChartPanel::ThroughputVsLatency => "Output throughput against p99 latency, by load",
        ChartPanel::Server => {
            "What the server's own metrics said at each level: the requests it ran (its batch) \
             and kept waiting (its queue), its KV-cache use and, when recorded, its GPUs' power"
        }
    }
}

fn panel_id(p: ChartPanel) -> &'static str {
    match p {
        ChartPanel::Throughput => "throughput",
        ChartPanel::Latency => "latency",
        ChartPanel::Ttft => "ttft",
        ChartPanel::ThroughputVsLatency => "throughput-latency",
        ChartPanel::Server => "server",
    }
}

/// One panel as a figure: its SVG and caption.
fn figure(spec: &ChartSpec, p: ChartPanel) -> Result<String, ChartError> {
    let svg = render_panel_svg(spec, p, PANEL_SIZE)?;
    Ok(format!(
        "<figure class=\"chart\" id=\"chart-{}\">{}<figcaption>{}</figcaption></figure>",
        panel_id(p),
        svg,
        esc(caption(p))
    ))
}

/// The run's label when comparing: `A`, `B`, ... (empty for one run).
fn label(i: usize, n: usize) -> String {
    if n == 1 {
        String::new()
    } else {
        char::from(b'A' + (i % 26) as u8).to_string()
    }
}

/// The whole page for one run, or for several compared (the first is the reference).
/// `written_at` is the time the report was made (RFC 3339), printed in the footer.
pub fn report_html(runs: &[&RunData], written_at: &str) -> Result<String, ChartError> {
    let n = runs.len();
    let reports: Vec<_> = runs.iter().map(|r| r.report()).collect();
    let spec = chart_spec(runs);
    let ids: Vec<&str> = runs.iter().map(|r| r.info.id.as_str()).collect();
    let mut h = String::from("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"/>");
    h += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>";
    let _ = write!(
        h,
        "<title>rightsize report: {}</title><style>{}</style></head><body>",
        esc(&ids.join(" vs ")),
        style::CSS
    );
    let _ = write!(
        h,
        "<header><h1>{}</h1><p class=\"sub\">{}</p></header>",
        esc(&spec.title),
        esc(&spec.subtitle)
    );
    // each run's heading when compared: `A: <id>`
    let heads: Vec<String> = (0..n)
        .map(|i| match label(i, n) {
            l if l.is_empty() => l,
            l => format!("{l}: {}", ids[i]),
        })
        .collect();
    h += "<section id=\"answer\"><h2>Answer</h2><div class=\"answers\">";
    for (head, a) in heads.iter().zip(&reports) {
        h += &answer::answer_box(head, a);
    }
    h += "</div></section>";
    let labelled: Vec<(&str, &crate::plan::RunAnalysis)> =
        heads.iter().map(String::as_str).zip(&reports).collect();
    h += &rightsize::section(&labelled);
    h += "<section id=\"charts\"><h2>Charts</h2><div class=\"charts\">";
    for p in ChartPanel::CLIENT {
        h += &figure(&spec, p)?;
    }
    h += "</div><p>Hollow dots: levels not held, cut short, or whose verdict is uncertain.</p>";
    h += "</section><section id=\"levels\"><h2>Levels</h2>";
    if n > 1 {
        let rows: Vec<_> = runs
            .iter()
            .zip(&reports)
            .enumerate()
            .map(|(i, (r, a))| (format!("{}: {}", label(i, n), ids[i]), &r.levels[..], a))
            .collect();
        h += "<h3>Side by side</h3>";
        h += &levels::side_by_side(&rows);
    }
    for (i, (r, a)) in runs.iter().zip(&reports).enumerate() {
        if n > 1 {
            let _ = write!(h, "<h3>{}: {}</h3>", label(i, n), esc(ids[i]));
        }
        h += &levels::levels_table(&r.levels, a);
        h += &levels::latency_table(&r.levels, a);
    }
    h += "</section><section id=\"errors\"><h2>Errors by kind</h2>";
    for (i, (r, a)) in runs.iter().zip(&reports).enumerate() {
        if n > 1 {
            let _ = write!(h, "<h3>{}: {}</h3>", label(i, n), esc(ids[i]));
        }
        h += &levels::errors_table(&r.levels, a.axis);
    }
    h += "</section><section id=\"telemetry\"><h2>Server telemetry</h2>";
    if spec.has_server() {
        // one figure, as wide as one of the charts above
        h += "<div class=\"charts single\">";
        h += &figure(&spec, ChartPanel::Server)?;
        h += "</div>";
    }
    h += &identity::telemetry(runs, &reports);
    h += "</section><section id=\"warnings\"><h2>Warnings</h2>";
    for (i, (r, a)) in runs.iter().zip(&reports).enumerate() {
        if n > 1 {
            let _ = write!(h, "<h3>{}: {}</h3>", label(i, n), esc(ids[i]));
        }
        h += &levels::warnings_list(&levels::warnings(&r.levels, a));
    }
    h += "</section><section id=\"identity\"><h2>Run</h2>";
    h += &identity::identity_table(runs, &reports);
    h += "</section><section id=\"reproduce\"><h2>Reproduce</h2>";
    for (i, r) in runs.iter().enumerate() {
        let line = command_line(&r.echo).unwrap_or_else(|| {
            "(imported: no rightsize command made this run; see docs/export.md)".into()
        });
        let tag = if n > 1 {
            format!("{}: ", label(i, n))
        } else {
            String::new()
        };
        let _ = write!(h, "<pre><code>{}{}</code></pre>", esc(&tag), esc(&line));
    }
    let _ = writeln!(
        h,
        "</section><footer>Written by rightsize {} on {} UTC.</footer></body></html>",
        env!("CARGO_PKG_VERSION"),
        esc(&written_at.replace('T', " "))
    );
    Ok(h)
}
