//! Text for the history commands: the `runs` list, one run's `show` (header, level table,
//! the server's own metrics per level when recorded, planning numbers) and `compare` (two
//! runs side by side, level by level).

use std::collections::BTreeSet;
use std::fmt::Write as _;

use serde_json::Value;

use super::history::{RunData, RunInfo};
use super::table::{fmt_ms, render_table};
use crate::metrics::LevelSummary;

fn or_dash(s: &str) -> String {
    if s.is_empty() {
        "-".into()
    } else {
        s.to_string()
    }
}

/// The `rightsize runs` table, in the order given.
pub fn render_runs(runs: &[RunInfo]) -> String {
    if runs.is_empty() {
        return "no runs yet: `rightsize sweep` makes one, `rightsize import \
                aiperf|guidellm|vllm|benchmark-report` brings one in\n"
            .into();
    }
    let rows: Vec<Vec<String>> = runs
        .iter()
        .map(|r| {
            vec![
                r.id.clone(),
                or_dash(&r.date()),
                or_dash(&r.endpoint),
                or_dash(&r.model),
                or_dash(&r.workload),
                or_dash(&r.kind),
                r.levels.to_string(),
                r.answer.clone(),
                r.status.label().to_string(),
            ]
        })
        .collect();
    let mut text = super::table::grid(
        &[
            "id", "date", "endpoint", "model", "workload", "kind", "levels", "answer", "status",
        ],
        &rows,
        6,
    );
    for r in runs {
        if let Some(p) = &r.problem {
            text += &format!("unreadable {}: {p}\n", r.id);
        }
    }
    text
}

/// One line describing the workload recorded in `run.json`.
pub fn workload_line(echo: &Value) -> String {
    let w = &echo["workload"];
    let name = w["name"].as_str().unwrap_or("");
    let stream = match w["stream"].as_bool() {
        Some(true) => ", streaming",
        Some(false) => ", not streaming",
        None => "",
    };
    match (w["input_tokens"].as_u64(), w["output_tokens"].as_u64()) {
        (Some(i), Some(o)) => format!("{}{i} in / {o} out{stream}", prefix(name)),
        _ => or_dash(name),
    }
}

/// How the run's closed-loop levels start (`run.json`'s `warmup`); `None` for an open-loop
/// run (its levels have no warmup) and for a file that does not say (an import).
pub fn warmup_line(echo: &Value) -> Option<String> {
    if echo["open_loop"].is_object() {
        return None;
    }
    match &echo["warmup"] {
        Value::String(s) if s == "round" => {
            Some("warm: a round (the level's concurrency) of warmup requests first".into())
        }
        v => match v.as_u64()? {
            0 => Some("cold: the level's streams sent at once (--warmup 0)".into()),
            n => Some(format!("warm: {n} warmup requests first")),
        },
    }
}

/// What the server's prefix cache held as the levels began, when the run asked for a reset
/// (the level files' `prefix_cache`); `None` when it was kept, the default, or the files do
/// not say (an import, a run from before).
pub fn prefix_cache_line(levels: &[LevelSummary]) -> Option<String> {
    use crate::record::PrefixCacheState as S;
    let count = |s| levels.iter().filter(|l| l.prefix_cache == Some(s)).count();
    let (reset, refused, none) = (
        count(S::Reset),
        count(S::ResetRefused),
        count(S::ResetUnsupported),
    );
    let line = match (reset, refused + none) {
        (0, 0) => return None,
        (_, 0) => "prefix cache emptied before each level and its warm-up (--prefix-cache reset)"
            .to_string(),
        (0, _) if none > 0 => "prefix cache kept: a reset was asked, the server has none \
             (reset_unsupported)"
            .to_string(),
        (0, _) => "prefix cache kept: a reset was asked, the server refused it (reset_refused)"
            .to_string(),
        (n, kept) => format!(
            "prefix cache emptied before {n} of {} levels; the server refused the reset \
             before the other {kept} (kept: reset_refused)",
            n + kept
        ),
    };
    Some(line)
}

fn prefix(name: &str) -> String {
    if name.is_empty() {
        String::new()
    } else {
        format!("{name}: ")
    }
}

fn header(run: &RunData, tag: &str) -> String {
    let i = &run.info;
    let url = run.echo["endpoint"]["base_url"].as_str().unwrap_or("");
    let endpoint = if url.is_empty() || url == i.endpoint {
        or_dash(&i.endpoint)
    } else {
        format!("{} ({url})", or_dash(&i.endpoint))
    };
    let mut out = String::new();
    let _ = writeln!(out, "{tag}run {} ({})", i.id, or_dash(&i.kind));
    let _ = writeln!(out, "  date      {}", or_dash(&i.started_at));
    let _ = writeln!(out, "  endpoint  {endpoint}");
    let _ = writeln!(out, "  model     {}", or_dash(&i.model));
    let _ = writeln!(out, "  workload  {}", workload_line(&run.echo));
    if let Some(w) = warmup_line(&run.echo) {
        let _ = writeln!(out, "  levels    {w}");
    }
    if let Some(c) = prefix_cache_line(&run.levels) {
        let _ = writeln!(out, "  cache     {c}");
    }
    out += &super::workload_text::workload_details(&run.echo);
    out += &super::turns_text::sessions_line(&run.echo);
    let _ = writeln!(out, "  folder    {}", i.path.display());
    if i.interrupted {
        let _ = writeln!(
            out,
            "  interrupted: the levels shown are the ones that finished"
        );
    }
    out
}

/// The answer, knee and planning numbers, computed from the levels with the run's own SLAs
/// and search bounds, exactly as the live run printed them.
fn planning(run: &RunData) -> String {
    let mut out = String::from("planning\n");
    for line in crate::plan::analysis_text::render_analysis(&run.report()).lines() {
        out += "  ";
        out += line;
        out.push('\n');
    }
    out
}

/// Each level's verdict as the tables word it (`pass`, `FAIL e2e 1.61 s`, `uncertain ...`),
/// in level order; empty where nothing was judged.
pub fn level_verdicts(a: &crate::plan::RunAnalysis) -> Vec<String> {
    let user_slas = !a.slas.is_empty();
    a.iterations
        .iter()
        .map(|r| crate::plan::analysis_text::row_verdict(r, user_slas))
        .collect()
}

/// `rightsize show`: the run's header, its level table (with the lengths, turns and server
/// tables when the run has them) and its planning numbers.
pub fn render_show(run: &RunData) -> String {
    let mut out = header(run, "");
    out.push('\n');
    if run.levels.is_empty() {
        out += "no finished levels\n";
    } else {
        out += &render_table(&run.levels, &level_verdicts(&run.report()));
        out += &super::open_text::render_open(&run.levels);
        let lengths = super::workload_text::lengths_table(&run.levels);
        if !lengths.is_empty() {
            out.push('\n');
            out += &lengths;
        }
        let turns = super::turns_text::turns_table(&run.levels);
        if !turns.is_empty() {
            out.push('\n');
            out += &turns;
        }
        let server = super::server_text::server_table(&run.levels);
        if !server.is_empty() {
            out.push('\n');
            out += &server;
        }
    }
    out.push('\n');
    out += &planning(run);
    out
}

fn level_at(levels: &[LevelSummary], c: u32) -> Option<&LevelSummary> {
    // the last level at a concurrency wins (a re-measured point replaces the first)
    levels.iter().rev().find(|l| l.load() == c)
}

fn change(a: Option<f64>, b: Option<f64>) -> String {
    match (a, b) {
        (Some(a), Some(b)) if a.abs() > f64::EPSILON => format!("{:+.1}%", (b - a) / a * 100.0),
        _ => "-".into(),
    }
}

/// `rightsize compare`: both runs' headers, then one row per concurrency either run measured,
/// with B's change against A for throughput and p99 latency.
pub fn render_compare(a: &RunData, b: &RunData) -> String {
    let mut out = header(a, "A: ");
    out += &header(b, "B: ");
    out.push('\n');
    // rate runs line up by rate; schedules and replays (no place on an axis) by order
    let levels: BTreeSet<u32> = a
        .levels
        .iter()
        .chain(&b.levels)
        .map(LevelSummary::load)
        .collect();
    let axis = a.report().axis;
    let tps = |l: Option<&LevelSummary>| l.map(LevelSummary::sustained_tps);
    let p99 = |l: Option<&LevelSummary>| l.and_then(LevelSummary::e2e_p99_ms);
    let ttft = |l: Option<&LevelSummary>| l.and_then(LevelSummary::ttft_p95_ms);
    let sig3 = |v: Option<f64>| v.map_or("-".into(), crate::values::sig3);
    let errs = |l: Option<&LevelSummary>| l.map_or("-".into(), |l| l.error_count().to_string());
    let rows: Vec<Vec<String>> = levels
        .iter()
        .map(|&c| {
            let (la, lb) = (level_at(&a.levels, c), level_at(&b.levels, c));
            vec![
                axis.load(c),
                sig3(tps(la)),
                sig3(tps(lb)),
                change(tps(la), tps(lb)),
                fmt_ms(p99(la)),
                fmt_ms(p99(lb)),
                change(p99(la), p99(lb)),
                fmt_ms(ttft(la)),
                fmt_ms(ttft(lb)),
                errs(la),
                errs(lb),
            ]
        })
        .collect();
    out += &super::table::grid(
        &[
            match axis {
                crate::plan::analysis::Axis::Concurrency => "concurrency",
                crate::plan::analysis::Axis::Rate => "rate",
            },
            "A output tok/s",
            "B output tok/s",
            "change",
            "A e2e p99 ms",
            "B e2e p99 ms",
            "change",
            "A ttft p95 ms",
            "B ttft p95 ms",
            "A errors",
            "B errors",
        ],
        &rows,
        0,
    );
    let knee = |r: &RunData| match (r.knee(), axis) {
        (None, _) => "-".into(),
        (Some(k), crate::plan::analysis::Axis::Rate) => axis.load(k),
        (Some(k), _) => format!("c={k}"),
    };
    let _ = writeln!(out, "\nknee: A {}, B {}", knee(a), knee(b));
    let _ = writeln!(out, "answer: A {}, B {}", a.info.answer, b.info.answer);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prefix_cache_line_says_a_reset_asked() {
        use crate::record::PrefixCacheState::{Keep, Reset, ResetRefused, ResetUnsupported};
        let run = |states: &[Option<crate::record::PrefixCacheState>]| -> Vec<LevelSummary> {
            states
                .iter()
                .map(|s| LevelSummary {
                    prefix_cache: *s,
                    ..crate::report::import_run::imported_level(8, 10.0, 0.0)
                })
                .collect()
        };
        let cases: [(&[Option<_>], Option<&str>); 6] = [
            (&[None, None], None),
            (&[Some(Keep), Some(Keep)], None),
            (
                &[Some(Reset), Some(Reset)],
                Some(
                    "prefix cache emptied before each level and its warm-up (--prefix-cache reset)",
                ),
            ),
            (
                &[Some(ResetRefused), Some(ResetRefused)],
                Some("prefix cache kept: a reset was asked, the server refused it (reset_refused)"),
            ),
            (
                &[Some(ResetUnsupported)],
                Some(
                    "prefix cache kept: a reset was asked, the server has none (reset_unsupported)",
                ),
            ),
            (
                &[Some(Reset), Some(Reset), Some(ResetRefused)],
                Some(
                    "prefix cache emptied before 2 of 3 levels; the server refused the reset \
                     before the other 1 (kept: reset_refused)",
                ),
            ),
        ];
        for (states, want) in cases {
            assert_eq!(
                prefix_cache_line(&run(states)).as_deref(),
                want,
                "{states:?}"
            );
        }
    }

    #[test]
    fn change_is_relative_to_a() {
        assert_eq!(change(Some(100.0), Some(110.0)), "+10.0%");
        assert_eq!(change(Some(100.0), Some(50.0)), "-50.0%");
        assert_eq!(change(None, Some(1.0)), "-");
    }

    #[test]
    fn workload_lines() {
        let echo = serde_json::json!({"workload": {"name": "rag", "input_tokens": 1024,
            "output_tokens": 256, "stream": true}});
        assert_eq!(workload_line(&echo), "rag: 1024 in / 256 out, streaming");
        assert_eq!(workload_line(&Value::Null), "-");
    }

    #[test]
    fn empty_runs_list_says_how_to_make_one() {
        assert!(render_runs(&[]).contains("rightsize sweep"));
    }
}
