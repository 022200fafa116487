//! The report's tables: every level with each SLA's verdict and its end-to-end p50/p90/p99,
//! every level with the other latency metrics' p50/p90/p99 (two tables, so each fits a
//! 1,280 px page), errors by kind, the
//! warnings (client lag, levels not held or never named), and the side-by-side table of
//! compared runs.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::esc;
use crate::metrics::LevelSummary;
use crate::plan::analysis::{Axis, IterationRow};
use crate::plan::analysis_text::row_verdict;
use crate::plan::RunAnalysis;
use crate::record::sla::{fmt_value, SlaCheck, SlaMetric, Verdict};
use crate::record::ErrorKind;
use crate::report::chart::si;

/// A distribution shown: its name in the level file, its column-group title and its unit.
type Metric = (&'static str, &'static str, &'static str);

/// The end-to-end latency, in the levels table after the verdict.
const E2E: [Metric; 1] = [("request_latency", "e2e", "ms")];

/// The distributions of the latency table.
const METRICS: [Metric; 4] = [
    ("time_to_first_token", "TTFT", "ms"),
    ("inter_token_latency", "TPOT", "ms"),
    ("inter_chunk_latency", "ITL", "ms"),
    ("output_token_throughput_per_user", "tok/s per user", ""),
];

const PERCENTILES: [f64; 3] = [50.0, 90.0, 99.0];

fn ms(v: f64) -> String {
    fmt_value(SlaMetric::E2e, v)
}

/// A level's place on the run's axis: `64`, `2.5 req/s`, or its shape off the axis.
pub fn load_cell(ax: Axis, l: &LevelSummary) -> String {
    match &l.open_loop.rate {
        None => l.concurrency.to_string(),
        Some(_) if crate::plan::analysis::is_rate_level(l) => ax.load(l.load()),
        Some(r) => r.shape.label(),
    }
}

/// `pass 174 ms [85 ms, 99 ms]`: a check's verdict, observed value and interval (the
/// interval on a line of its own, so the column stays narrow).
fn check_cell(c: &SlaCheck) -> String {
    let m = c.threshold.metric;
    let v = |x: Option<f64>| x.map_or("-".to_string(), |x| fmt_value(m, x));
    let ci =
        c.ci.map(|i| {
            format!(
                " <span class=\"ci\">[{}, {}]</span>",
                esc(&v(i.0)),
                esc(&v(i.1))
            )
        })
        .unwrap_or_default();
    format!(
        "<td class=\"{}\">{} {}{}</td>",
        c.verdict.label().to_lowercase(),
        c.verdict.label(),
        esc(&v(c.observed)),
        ci
    )
}

/// Whether a level is drawn hollow in the charts (not held, cut short, or its verdict
/// uncertain); its rows are greyed the same way.
fn hollow(l: &LevelSummary, row: Option<&&IterationRow>, a: &RunAnalysis) -> bool {
    let judged = !a.slas.is_empty() || a.search.is_some();
    let doubtful = judged && row.is_some_and(|r| r.verdict == Verdict::Uncertain);
    !l.held || l.partial || doubtful
}

/// Each level's analysis row, by the level's index.
fn rows_by_index<'a>(
    levels: &[LevelSummary],
    a: &'a RunAnalysis,
) -> BTreeMap<u32, &'a IterationRow> {
    levels
        .iter()
        .zip(&a.iterations)
        .map(|(l, r)| (l.index, r))
        .collect()
}

/// Those of `metrics` any level of the run recorded.
fn shown<'a>(levels: &[LevelSummary], metrics: &'a [Metric]) -> Vec<&'a Metric> {
    metrics
        .iter()
        .filter(|(name, _, _)| levels.iter().any(|l| l.distribution(name).is_some()))
        .collect()
}

/// The head cells of `shown` metrics: their titles over p50, p90, p99.
fn percentile_heads(shown: &[&Metric]) -> (String, String) {
    let mut top = String::new();
    let mut under = String::new();
    for (_, title, _) in shown {
        let _ = write!(top, "<th colspan=\"3\">{}</th>", esc(title));
        under += "<th>p50</th><th>p90</th><th>p99</th>";
    }
    (top, under)
}

/// A level's p50, p90 and p99 of each of `shown` metrics, as cells.
fn percentile_cells(l: &LevelSummary, shown: &[&Metric]) -> String {
    let mut h = String::new();
    for (name, _, unit) in shown {
        let s = l.distribution(name);
        for q in PERCENTILES {
            let cell = s
                .and_then(|s| s.percentile(q))
                .map_or(
                    "-".to_string(),
                    |v| if unit.is_empty() { si(v) } else { ms(v) },
                );
            let _ = write!(h, "<td>{}</td>", esc(&cell));
        }
    }
    h
}

/// The levels table of one run: what each level carried, each SLA's verdict there, and its
/// end-to-end p50, p90 and p99.
pub fn levels_table(levels: &[LevelSummary], a: &RunAnalysis) -> String {
    let ax = a.axis;
    let limits: Vec<String> = a
        .iterations
        .first()
        .map(|r| r.slas.iter().map(|c| c.threshold.describe()).collect())
        .unwrap_or_default();
    let e2e = shown(levels, &E2E);
    let (top, under) = percentile_heads(&e2e);
    let mut h = String::from("<div class=\"scroll\"><table class=\"levels\"><thead><tr>");
    for t in ["#", "load", "requests", "failed", "held", "output tok/s"] {
        let _ = write!(h, "<th rowspan=\"2\">{t}</th>");
    }
    for d in &limits {
        let _ = write!(h, "<th rowspan=\"2\">{}</th>", esc(d));
    }
    let _ = write!(
        h,
        "<th rowspan=\"2\" class=\"l\">verdict</th>{top}</tr><tr>{under}</tr></thead><tbody>"
    );
    let rows = rows_by_index(levels, a);
    for l in levels {
        let row = rows.get(&l.index);
        let _ = write!(
            h,
            "<tr class=\"level{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>",
            if hollow(l, row, a) { " hollow" } else { "" },
            l.index + 1,
            esc(&load_cell(ax, l)),
            l.ok_count(),
            l.error_count(),
            if l.held { "yes" } else { "no" },
            crate::values::sig3(l.sustained_tps())
        );
        match row {
            Some(r) => {
                for c in &r.slas {
                    h += &check_cell(c);
                }
                let _ = write!(
                    h,
                    "<td class=\"l\">{}</td>",
                    esc(&row_verdict(r, !a.slas.is_empty()))
                );
            }
            None => h += &"<td></td>".repeat(limits.len() + 1),
        }
        h += &percentile_cells(l, &e2e);
        h += "</tr>";
    }
    h += "</tbody></table></div>";
    h
}

/// The latency table of one run: each level's p50, p90 and p99 of the other distributions it
/// recorded (TTFT, TPOT, ITL, tokens per second per user); empty when it recorded none.
pub fn latency_table(levels: &[LevelSummary], a: &RunAnalysis) -> String {
    let shown = shown(levels, &METRICS);
    if shown.is_empty() {
        return String::new();
    }
    let (top, under) = percentile_heads(&shown);
    let mut h = format!(
        "<div class=\"scroll\"><table class=\"latency\"><caption>Latency at each level: \
         p50, p90 and p99</caption><thead><tr><th rowspan=\"2\">#</th>\
         <th rowspan=\"2\">load</th>{top}</tr><tr>{under}</tr></thead><tbody>"
    );
    let rows = rows_by_index(levels, a);
    for l in levels {
        let _ = write!(
            h,
            "<tr class=\"level{}\"><td>{}</td><td>{}</td>{}</tr>",
            if hollow(l, rows.get(&l.index), a) {
                " hollow"
            } else {
                ""
            },
            l.index + 1,
            esc(&load_cell(a.axis, l)),
            percentile_cells(l, &shown)
        );
    }
    h += "</tbody></table></div>";
    h
}

/// Failed requests by kind: the total and where they happened.
pub fn errors_table(levels: &[LevelSummary], ax: Axis) -> String {
    let mut h = String::new();
    for kind in ErrorKind::ALL {
        let at: Vec<(String, u64)> = levels
            .iter()
            .filter_map(|l| {
                let n = l.errors_by_kind.get(&kind).copied().unwrap_or(0);
                (n > 0).then(|| (load_cell(ax, l), n))
            })
            .collect();
        if at.is_empty() {
            continue;
        }
        let total: u64 = at.iter().map(|x| x.1).sum();
        let list: Vec<String> = at.iter().map(|(c, n)| format!("{c}: {n}")).collect();
        let _ = write!(
            h,
            "<tr><td class=\"l\">{}</td><td>{total}</td><td class=\"l\">{}</td></tr>",
            kind.as_str(),
            esc(&list.join(", "))
        );
    }
    if h.is_empty() {
        return "<p>No request failed.</p>".into();
    }
    format!(
        "<table class=\"errors\"><thead><tr><th class=\"l\">kind</th><th>requests</th>\
         <th class=\"l\">at load: count</th></tr></thead><tbody>{h}</tbody></table>"
    )
}

/// Everything that says the numbers need care: the analysis' warnings, levels never named
/// (not held, failing), and client lag.
pub fn warnings(levels: &[LevelSummary], a: &RunAnalysis) -> Vec<String> {
    let mut out: Vec<String> = a.planning.warnings.clone();
    for s in &a.skipped {
        out.push(format!(
            "{} is never named: {}",
            a.axis.load(s.concurrency),
            s.reason
        ));
    }
    for l in levels {
        if let Some(w) = l.client_lag.as_ref().and_then(|c| c.warning.as_ref()) {
            out.push(format!(
                "level {} ({}): {w}",
                l.index + 1,
                load_cell(a.axis, l)
            ));
        }
        if l.partial {
            out.push(format!(
                "level {} ({}) was cut short: its numbers cover what finished",
                l.index + 1,
                load_cell(a.axis, l)
            ));
        }
    }
    out
}

/// The warnings as a list, or a line saying there are none.
pub fn warnings_list(w: &[String]) -> String {
    if w.is_empty() {
        return "<p>None: every level held its load and the client kept up.</p>".into();
    }
    let mut h = String::from("<ul class=\"warn\">");
    for x in w {
        let _ = write!(h, "<li>{}</li>", esc(x));
    }
    h + "</ul>"
}

/// Compared runs side by side: one row per load, per run its output tok/s, e2e p99, TTFT
/// p95 and verdict.
pub fn side_by_side(runs: &[(String, &[LevelSummary], &RunAnalysis)]) -> String {
    let mut loads: Vec<u32> = runs
        .iter()
        .flat_map(|(_, ls, _)| ls.iter().map(|l| l.load()))
        .collect();
    loads.sort_unstable();
    loads.dedup();
    let ax = runs.first().map_or(Axis::Concurrency, |r| r.2.axis);
    let mut h = String::from(
        "<div class=\"scroll\"><table class=\"compare\"><thead><tr><th rowspan=\"2\">load</th>",
    );
    for (label, _, _) in runs {
        let _ = write!(h, "<th colspan=\"4\">{}</th>", esc(label));
    }
    h += "</tr><tr>";
    for _ in runs {
        h += "<th>output tok/s</th><th>e2e p99</th><th>TTFT p95</th><th>verdict</th>";
    }
    h += "</tr></thead><tbody>";
    for load in loads {
        let _ = write!(h, "<tr class=\"level\"><td>{}</td>", esc(&ax.load(load)));
        for (_, levels, a) in runs {
            // a re-measured load shows its latest measurement, as the charts do
            let found = levels
                .iter()
                .zip(&a.iterations)
                .rfind(|(l, _)| l.load() == load);
            match found {
                Some((l, r)) => {
                    let opt = |v: Option<f64>| v.map_or("-".into(), ms);
                    let _ = write!(
                        h,
                        "<td>{}</td><td>{}</td><td>{}</td><td class=\"l\">{}</td>",
                        crate::values::sig3(l.sustained_tps()),
                        esc(&opt(l.e2e_p99_ms())),
                        esc(&opt(l.ttft_p95_ms())),
                        esc(&row_verdict(r, !a.slas.is_empty()))
                    );
                }
                None => h += "<td>-</td><td>-</td><td>-</td><td></td>",
            }
        }
        h += "</tr>";
    }
    h + "</tbody></table></div>"
}
