//! The open-loop part of the final report (`docs/open-loop.md`): per rate level the offered,
//! sent and finished rates, the schedule lag, latencies from the intended send, and the
//! saturation evidence; per schedule or replay level its time windows.

use super::table::{fmt_ms, grid};
use crate::metrics::rate::WindowStats;
use crate::metrics::summary::load_label;
use crate::metrics::LevelSummary;

const HEADERS: [&str; 9] = [
    "load",
    "offered req/s",
    "sent req/s",
    "done req/s",
    "lag p50 ms",
    "lag p99 ms",
    "ttft p99 from intended",
    "e2e p99 from intended",
    "saturated",
];

/// The open-loop tables, or nothing when no level ran open-loop. Starts with a blank line.
pub fn render_open(levels: &[LevelSummary]) -> String {
    let open: Vec<&LevelSummary> = levels
        .iter()
        .filter(|l| l.open_loop.rate.is_some())
        .collect();
    if open.is_empty() {
        return String::new();
    }
    let rows: Vec<Vec<String>> = open.iter().map(|l| rate_row(l)).collect();
    let mut out = format!("\nopen loop:\n{}", grid(&HEADERS, &rows, 0));
    for l in &open {
        let Some(s) = l.open_loop.rate.as_ref().and_then(|r| r.saturated.as_ref()) else {
            continue;
        };
        let wait = match (s.wait_first_ms, s.wait_last_ms) {
            (Some(a), Some(b)) => format!("; wait (lag + TTFT) {a:.0} ms -> {b:.0} ms"),
            _ => String::new(),
        };
        let cap = match l.open_loop.rate.as_ref().and_then(|r| r.max_in_flight) {
            Some(n) if s.at_cap => format!(
                " (all {n} --max-in-flight slots were taken: the client held the rate back; \
                 raise --max-in-flight, or `none`, if the endpoint should hold more)"
            ),
            _ => String::new(),
        };
        out += &format!(
            "{}: stopped at {:.1} s: excess requests waiting grew from {:.0} to {:.0} ({:.1}/s){wait}{cap}\n",
            load_label(l),
            s.at_s,
            s.pending_first,
            s.pending_last,
            s.pending_slope_per_s
        );
    }
    for l in open
        .iter()
        .filter(|l| !super::super::plan::analysis::is_rate_level(l))
    {
        if l.open_loop.windows.is_empty() {
            continue;
        }
        out += &format!("\n{} by window:\n", load_label(l));
        out += &windows_table(l);
    }
    out
}

fn rate_row(l: &LevelSummary) -> Vec<String> {
    let r = l.open_loop.rate.as_ref();
    let p =
        |s: Option<&crate::metrics::Stats>, q: fn(&crate::metrics::Stats) -> f64| fmt_ms(s.map(q));
    vec![
        load_label(l),
        format!("{:.2}", r.map_or(0.0, |r| r.offered_rps)),
        format!("{:.2}", r.map_or(0.0, |r| r.achieved_rps)),
        format!("{:.2}", l.requests_per_sec()),
        p(l.open_loop.schedule_lag.as_ref(), |s| s.p50),
        p(l.open_loop.schedule_lag.as_ref(), |s| s.p99),
        p(
            l.open_loop.time_to_first_token_from_intended.as_ref(),
            |s| s.p99,
        ),
        p(l.open_loop.request_latency_from_intended.as_ref(), |s| {
            s.p99
        }),
        match r.and_then(|r| r.saturated.as_ref()) {
            Some(s) => format!("at {:.1} s", s.at_s),
            None => "no".into(),
        },
    ]
}

/// One row per time window: offered rate, outcomes, p50/p99 of TTFT and e2e (from the
/// intended send), schedule lag p99.
pub fn windows_table(l: &LevelSummary) -> String {
    let pair = |w: Option<WindowStats>| match w {
        Some(w) => format!("{} / {}", fmt_ms(Some(w.p50)), fmt_ms(Some(w.p99))),
        None => "-".into(),
    };
    let rows: Vec<Vec<String>> = l
        .open_loop
        .windows
        .iter()
        .map(|w| {
            vec![
                format!("{:.0}-{:.0}", w.start_s, w.end_s),
                format!("{:.2}", w.offered_rps),
                w.ok.to_string(),
                w.errors.to_string(),
                pair(w.time_to_first_token),
                pair(w.request_latency),
                fmt_ms(w.schedule_lag.map(|s| s.p99)),
            ]
        })
        .collect();
    grid(
        &[
            "window s",
            "offered req/s",
            "ok",
            "errors",
            "ttft p50/p99 ms",
            "e2e p50/p99 ms",
            "lag p99 ms",
        ],
        &rows,
        0,
    )
}
