//! The final text table printed to stdout: one row per level, right-aligned columns, header
//! underlined, `-` where a metric does not exist (no TTFT without streaming). `output tok/s`
//! is the level's throughput ([`LevelSummary::sustained_tps`]), the figure every surface
//! shows under that name, to three significant digits ([`crate::values::sig3`]).

use crate::metrics::LevelSummary;
use crate::values::sig3;

const HEADERS: [&str; 9] = [
    "concurrency",
    "req/s",
    "output tok/s",
    "ttft p50 ms",
    "ttft p95 ms",
    "itl p95 ms",
    "e2e p50 ms",
    "e2e p99 ms",
    "errors",
];

/// A latency in ms with precision that suits its size: two decimals below 10 ms,
/// one decimal below 1000 ms, whole milliseconds above.
pub fn fmt_ms(ms: Option<f64>) -> String {
    match ms {
        None => "-".to_string(),
        Some(v) if v < 10.0 => format!("{v:.2}"),
        Some(v) if v < 1000.0 => format!("{v:.1}"),
        Some(v) => format!("{v:.0}"),
    }
}

fn fmt_errors(level: &LevelSummary) -> String {
    let errors = level.error_count();
    if errors == 0 {
        "0".to_string()
    } else {
        format!("{errors} ({:.1}%)", level.error_rate * 100.0)
    }
}

fn row(level: &LevelSummary, open: bool) -> Vec<String> {
    let partial = if level.partial { "*" } else { "" };
    let load = if open {
        crate::metrics::summary::load_label(level)
    } else {
        level.concurrency.to_string()
    };
    vec![
        format!("{load}{partial}"),
        format!("{:.2}", level.requests_per_sec()),
        // the level's throughput: what the knee, the search and every surface read
        sig3(level.sustained_tps()),
        fmt_ms(level.ttft_p(50.0)),
        fmt_ms(level.ttft_p(95.0)),
        fmt_ms(level.itl_p(95.0)),
        fmt_ms(level.e2e_p50_ms()),
        fmt_ms(level.e2e_p99_ms()),
        fmt_errors(level),
    ]
}

/// Renders the levels as a text table ending in a newline. Partial (interrupted) levels are
/// marked `*` with a footnote.
/// Levels run open-loop (rates, schedules, replays) are named by their load (`c=1`,
/// `2 req/s`, the schedule) in a `load` column.
/// `verdicts`, one per level in order (as [`crate::plan::analysis_text::row_verdict`] words
/// them), add a `verdict` column, left out when every one is empty.
pub fn render_table(levels: &[LevelSummary], verdicts: &[String]) -> String {
    let open = levels.iter().any(|l| l.open_loop.rate.is_some());
    let judged = verdicts.iter().any(|v| !v.is_empty());
    let rows: Vec<Vec<String>> = levels
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let mut r = row(l, open);
            if judged {
                r.push(verdicts.get(i).cloned().unwrap_or_default());
            }
            r
        })
        .collect();
    let mut headers: Vec<&str> = HEADERS.to_vec();
    if open {
        headers[0] = "load";
    }
    if judged {
        headers.push("verdict");
    }
    let mut out = grid(&headers, &rows, 0);
    if levels.iter().any(|l| l.partial) {
        out += "* partial level: interrupted before all its requests finished\n";
    }
    out
}

/// Columns two spaces apart, the header underlined: the first `left` columns aligned left,
/// the others right; no trailing spaces.
pub fn grid(headers: &[&str], rows: &[Vec<String>], left: usize) -> String {
    let mut widths: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    for r in rows {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |cells: &[String]| -> String {
        let parts: Vec<String> = cells
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(i, (c, w))| {
                if i < left {
                    format!("{c:<w$}")
                } else {
                    format!("{c:>w$}")
                }
            })
            .collect();
        parts.join("  ").trim_end().to_string() + "\n"
    };
    let mut out = line(&headers.iter().map(|h| h.to_string()).collect::<Vec<_>>());
    out += &line(&widths.iter().map(|w| "-".repeat(*w)).collect::<Vec<_>>());
    for r in rows {
        out += &line(r);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::{LevelAccumulator, LevelMeta, Scalar, Stats};

    fn ms(p50: f64, p95: f64, p99: f64) -> Option<Stats> {
        Some(Stats {
            unit: "ms".into(),
            avg: p50,
            min: p50,
            max: p99,
            p1: p50,
            p5: p50,
            p10: p50,
            p25: p50,
            p50,
            p75: p95,
            p90: p95,
            p95,
            p99,
            std: 0.0,
            count: 1,
            ci95: None,
            past_limit: None,
        })
    }

    fn level(concurrency: u32, rps: f64, tps: f64) -> LevelSummary {
        let mut l = LevelAccumulator::new(concurrency, 1024).finish(LevelMeta::default());
        l.request_throughput = Scalar::new("requests/sec", rps);
        l.output_token_throughput = Scalar::new("tokens/sec", tps);
        l
    }

    #[test]
    fn two_levels_exact_text() {
        let mut streamed = level(64, 12.3456, 2823.44);
        streamed.time_to_first_token = ms(152.34, 1480.7, 2000.0);
        streamed.inter_token_latency = ms(20.0, 22.456, 30.0);
        streamed.request_latency = ms(8123.4, 11000.0, 12001.2);
        // a held level shows its sustained rate; the other falls back to its whole-level one
        streamed.held = true;
        streamed.output_token_throughput_sustained = Some(Scalar::new("tokens/sec", 2901.25));
        let mut body = level(256, 40.5, 2782.3);
        body.request_latency = ms(45000.4, 50000.0, 51234.9);
        body.error_request_count = Scalar::new("requests", 3.0);
        body.error_rate = 3.0 / 1024.0;
        body.partial = true;
        let want = "\
concurrency  req/s  output tok/s  ttft p50 ms  ttft p95 ms  itl p95 ms  e2e p50 ms  e2e p99 ms    errors  verdict
-----------  -----  ------------  -----------  -----------  ----------  ----------  ----------  --------  -------
         64  12.35         2.90k        152.3         1481        22.5        8123       12001         0     pass
       256*  40.50         2.78k            -            -           -       45000       51235  3 (0.3%)  partial
* partial level: interrupted before all its requests finished
";
        let verdicts = ["pass".to_string(), "partial".to_string()];
        assert_eq!(
            render_table(&[streamed.clone(), body.clone()], &verdicts),
            want
        );
        // no verdicts (a sweep without limits): no column
        let bare = render_table(&[streamed, body], &[]);
        assert!(
            bare.starts_with("concurrency  req/s  output tok/s  ttft p50 ms"),
            "{bare}"
        );
        assert!(!bare.contains("verdict"), "{bare}");
    }

    #[test]
    fn ms_precision() {
        assert_eq!(fmt_ms(Some(1.2345)), "1.23");
        assert_eq!(fmt_ms(Some(99.96)), "100.0");
        assert_eq!(fmt_ms(Some(1234.5)), "1234");
        assert_eq!(fmt_ms(None), "-");
    }
}
