//! Progress on stderr while a run goes on: each event folded into [`RunState`] (the reducer the
//! dashboard uses too), a line per level start and end, a live line on a terminal, and with a
//! search the iteration table's rows on stdout as levels finish.

use crate::engine::EngineEvent;
use crate::plan::analysis::{Axis, IterationRow};
use crate::plan::judge::SlaSet;
use crate::plan::{analyse, Analysis};
use crate::record::sla::fmt_value;
use crate::state::RunState;
use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

/// How often a non-terminal stderr gets a progress line.
const PLAIN_PROGRESS_EVERY: Duration = Duration::from_secs(2);

/// Prints progress until the engine closes the channel; returns the folded state. With
/// `rows`, each finished level also prints its iteration-table row on stdout.
pub async fn print_progress(
    mut rx: mpsc::Receiver<EngineEvent>,
    rows: Option<Analysis>,
) -> RunState {
    let mut state = RunState::default();
    let mut lines = ProgressLines {
        tty: std::io::stderr().is_terminal(),
        last_plain: Instant::now(),
        err: std::io::stderr(),
    };
    let mut table = rows.map(|analysis| IterationRows {
        analysis,
        header_said: false,
        out: std::io::stdout(),
    });
    while let Some(ev) = rx.recv().await {
        state.apply(&ev);
        if let Some(l) = lines.line(&ev, &state) {
            let _ = writeln!(lines.err, "{l}");
        }
        if let (Some(table), EngineEvent::LevelFinished(done)) = (&mut table, &ev) {
            table.print_row(&state, done.index);
        }
    }
    state
}

/// The progress lines on stderr: on a terminal a live line rewritten in place, elsewhere a
/// plain line every [`PLAIN_PROGRESS_EVERY`].
struct ProgressLines {
    tty: bool,
    last_plain: Instant,
    err: std::io::Stderr,
}

impl ProgressLines {
    /// The line an event prints, if any (the live line is written here).
    fn line(&mut self, ev: &EngineEvent, state: &RunState) -> Option<String> {
        // a line that replaces the live line on a terminal
        let clear = if self.tty { "\r\x1b[2K" } else { "" };
        match ev {
            EngineEvent::RunStarted {
                run_id,
                dir,
                endpoint,
                model,
                ..
            } => Some(format!(
                "run {run_id}: endpoint {endpoint}, model {model}\n  saving to {}",
                dir.display()
            )),
            EngineEvent::LevelStarted { .. } => level_started_line(ev),
            EngineEvent::Progress(p) => self.progress(progress_text(p, state)),
            EngineEvent::LevelFinished(s) => Some(format!(
                "{clear}  done: {}{}",
                level_line(s),
                crate::report::turns_text::turns_line(s)
                    .map(|t| format!("\n        {t}"))
                    .unwrap_or_default()
            )),
            EngineEvent::Telemetry(_) | EngineEvent::Workers(_) | EngineEvent::LevelsLeft(_) => {
                None
            }
            EngineEvent::Warning(w) => Some(format!("{clear}warning: {w}")),
            EngineEvent::RunFinished { interrupted } => interrupted.then(|| {
                "interrupted: finished levels are saved, the cut level is marked partial"
                    .to_string()
            }),
        }
    }

    /// The live line: rewritten in place on a terminal, else a plain line now and then.
    fn progress(&mut self, text: String) -> Option<String> {
        if self.tty {
            let _ = write!(self.err, "\r\x1b[2K{text}");
            let _ = self.err.flush();
            None
        } else if self.last_plain.elapsed() >= PLAIN_PROGRESS_EVERY {
            self.last_plain = Instant::now();
            Some(text)
        } else {
            None
        }
    }
}

/// The line a level's start prints: a closed loop's concurrency, requests, warmup and
/// batches, or an open loop's shape.
fn level_started_line(ev: &EngineEvent) -> Option<String> {
    match ev {
        EngineEvent::LevelStarted {
            index,
            concurrency,
            request_count,
            request_cap,
            earlier,
            warmup,
            shape: None,
        } => Some(format!(
            "level {}{}: concurrency {concurrency}, {}{request_count} {}requests{}{}",
            index + 1,
            if *earlier > 0 { " again" } else { "" },
            // how the level starts: on the load of its warmup, or cold (`--warmup 0`)
            if *warmup > 0 {
                format!("{warmup} warmup then ")
            } else {
                "cold start, ".to_string()
            },
            if *earlier > 0 { "more " } else { "" },
            if request_cap > request_count {
                format!(" a batch, up to {request_cap} until its verdict is decided")
            } else {
                String::new()
            },
            if *earlier > 0 {
                format!("; they join its {earlier} earlier requests: one level, one verdict on all")
            } else {
                String::new()
            }
        )),
        EngineEvent::LevelStarted {
            index,
            concurrency,
            request_count,
            shape: Some(shape),
            ..
        } => Some(format!(
            "level {}: {}, {} requests{}",
            index + 1,
            shape.label(),
            request_count,
            if *concurrency > 0 {
                format!(", at most {concurrency} in flight")
            } else {
                String::new()
            }
        )),
        _ => None,
    }
}

/// The live line's text: requests done, in flight, throughput, errors, time, and an open
/// loop's rates.
fn progress_text(p: &crate::metrics::LevelProgress, state: &RunState) -> String {
    let mut text = format!(
        "  {}/{} done, {} in flight, {:.0} tok/s, {} errors, {:.1}s",
        p.done,
        p.total,
        p.in_flight,
        p.output_tokens_per_sec,
        p.errors_by_kind
            .iter()
            .filter(|(k, _)| **k != crate::record::ErrorKind::Cancelled)
            .map(|(_, n)| n)
            .sum::<u64>(),
        p.elapsed_s
    );
    if let Some(b) = state.batch_note() {
        text += &format!(" ({b})");
    }
    if let Some(o) = &p.open {
        text += &format!(
            ", sent {:.1}/s of {:.1}/s offered, {} waiting",
            o.sent_rps, o.offered_rps, o.pending
        );
    }
    text
}

/// A search's iteration table on stdout, a row as each level finishes.
struct IterationRows {
    analysis: Analysis,
    header_said: bool,
    out: std::io::Stdout,
}

impl IterationRows {
    /// The row of the level that finished (the header before the first).
    fn print_row(&mut self, state: &RunState, index: u32) {
        let report = analyse(&self.analysis, &state.levels);
        let table = report.iterations;
        let mut text = String::new();
        if !self.header_said {
            self.header_said = true;
            text += &row_header(&self.analysis.limits(), report.axis);
        }
        // the level that finished: a level measured again prints its row again, pooled
        if let Some(r) = table.iter().find(|r| r.iteration == index + 1) {
            text += &row_text(r, report.axis);
        }
        let _ = self
            .out
            .write_all(text.as_bytes())
            .and_then(|_| self.out.flush());
    }
}

/// The iteration table's header line: one column per limit the rows check (the SLAs and the
/// error-rate limit).
pub fn row_header(slas: &SlaSet, axis: Axis) -> String {
    let load = match axis {
        Axis::Concurrency => "concurrency",
        Axis::Rate => "rate",
    };
    let mut h = format!("{:>4}  {:>11}  {:>12}", "iter", load, "output tok/s");
    for t in &slas.0 {
        h += &format!("  {:>22}", t.describe());
    }
    h + &format!("  {:>8}  {:>9}  step\n", "requests", "result")
}

/// One iteration-table line.
pub fn row_text(r: &IterationRow, axis: Axis) -> String {
    let load = match axis {
        Axis::Concurrency => r.concurrency.to_string(),
        Axis::Rate => axis.load(r.concurrency),
    };
    let mut l = format!(
        "{:>4}  {:>11}  {:>12}",
        r.iteration,
        load,
        crate::values::sig3(r.output_tps)
    );
    for c in &r.slas {
        let v = c
            .observed
            .map_or("-".to_string(), |o| fmt_value(c.threshold.metric, o));
        l += &format!("  {v:>22}");
    }
    let result = if r.partial {
        "partial"
    } else if !r.held {
        "not held"
    } else {
        // a screen: one batch, not decided; it leans by what it observed
        crate::plan::analysis_text::screen_label(r).unwrap_or(r.verdict.label())
    };
    let mut why = r
        .why
        .map_or("-".to_string(), |w| format!("{w:?}").to_lowercase());
    if r.measurements > 1 {
        why += &format!(", measured {} times, pooled", r.measurements);
    }
    l + &format!("  {:>8}  {result:>9}  {why}\n", r.requests)
}

/// One line for a finished level: throughput, latency, errors, achieved concurrency (or
/// for an open loop the rates, the schedule lag and saturation).
fn level_line(s: &crate::metrics::LevelSummary) -> String {
    let ms = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.0} ms"));
    if let Some(r) = &s.open_loop.rate {
        return format!(
            "sent {:.2} of {:.2} req/s offered, {:.2} req/s done, {} output tok/s, TTFT p50 {}, \
             e2e p99 {} (from the intended send {}), schedule lag p99 {}, {} errors{}{}",
            r.achieved_rps,
            r.offered_rps,
            s.requests_per_sec(),
            crate::values::sig3(s.sustained_tps()),
            ms(s.ttft_p(50.0)),
            ms(s.e2e_p99_ms()),
            ms(s.open_loop
                .request_latency_from_intended
                .as_ref()
                .map(|x| x.p99)),
            s.open_loop
                .schedule_lag
                .as_ref()
                .map_or("-".into(), |x| format!("{:.1} ms", x.p99)),
            s.error_count(),
            if r.saturated.is_some() {
                ", SATURATED (stopped early)"
            } else {
                ""
            },
            if s.partial { " (partial)" } else { "" }
        );
    }
    format!(
        "{:.1} req/s, {} output tok/s, TTFT p50 {}, e2e p99 {}, {} errors, achieved concurrency {}{}{}",
        s.requests_per_sec(),
        crate::values::sig3(s.sustained_tps()),
        ms(s.ttft_p(50.0)),
        ms(s.e2e_p99_ms()),
        s.error_count(),
        s.achieved_concurrency
            .map_or("-".to_string(), |c| format!("{c:.1}")),
        tool_calls_part(&s.workload.tools),
        if s.partial { " (partial)" } else { "" }
    )
}

/// `, tool calls in 97 % of answers (212 calls, 3 broken)`, or nothing when no answer carried
/// a tool call: the level file's `tool_call_answer_share`, `tool_calls`, `tool_call_errors`.
fn tool_calls_part(t: &crate::metrics::tool_tally::ToolCallMetrics) -> String {
    match (t.tool_call_answer_share, t.tool_calls) {
        (Some(share), Some(calls)) => format!(
            ", tool calls in {:.0} % of answers ({calls} calls, {} broken)",
            share * 100.0,
            t.tool_call_errors.unwrap_or(0)
        ),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::tool_calls_part;
    use crate::metrics::tool_tally::ToolCallMetrics;

    #[test]
    fn a_level_with_tool_calls_says_their_share_count_and_broken_ones() {
        let with = |share, calls, errors| ToolCallMetrics {
            tool_call_answers: Some(1),
            tool_call_answer_share: Some(share),
            tool_calls: Some(calls),
            tool_call_errors: errors,
        };
        let cases = [
            (ToolCallMetrics::default(), ""),
            (
                with(0.975, 212, Some(3)),
                ", tool calls in 98 % of answers (212 calls, 3 broken)",
            ),
            (
                with(1.0, 20, None),
                ", tool calls in 100 % of answers (20 calls, 0 broken)",
            ),
        ];
        for (t, want) in cases {
            assert_eq!(tool_calls_part(&t), want);
        }
    }
}
