//! The headless consumer: a run without the dashboard, as CI gates and pipelines use it.
//! Progress goes to stderr ([`progress`], folding the engine's events through the same reducer
//! as the dashboard), the final table or JSON to stdout (a closed stdout, `| head`, is not an
//! error), and the exit code says how it ended ([`exit`]); SIGINT, SIGTERM and SIGHUP stop a
//! run keeping what it measured ([`signals`]). The campaign runner and the CLI use these as
//! siblings: nothing here imports either.

pub mod exit;
pub mod printer;
pub mod signals;

use crate::engine::{self, RunOutcome};
use crate::launch::{prepare, Launch, Prepared};
use crate::plan::{gate, RunAnalysis};
use crate::serve::Served;
use crate::state::RunState;
use exit::{EXIT_GATE, EXIT_INTERRUPTED};
use printer::print_progress;
use std::io::Write;
use std::process::ExitCode;
use tokio_util::sync::CancellationToken;

/// Prints the final table (or JSON) on stdout: the level table (unless the iteration rows
/// were printed as levels finished), then the answer, knee and planning numbers.
pub fn print_final(
    state: &RunState,
    outcome: &RunOutcome,
    analysis: &RunAnalysis,
    json: bool,
    rows_printed: bool,
) -> std::io::Result<()> {
    let text = if json {
        let mut v = serde_json::json!({
            "run_id": outcome.run_id,
            "dir": outcome.dir,
            "interrupted": outcome.interrupted,
            "endpoint": outcome.echo.endpoint,
            "workload": outcome.echo.workload,
            "levels": crate::report::export::levels_json(&state.levels),
        });
        if let (Some(o), Ok(serde_json::Value::Object(extra))) =
            (v.as_object_mut(), serde_json::to_value(analysis))
        {
            o.extend(extra);
        }
        serde_json::to_string_pretty(&v).map_err(std::io::Error::other)? + "\n"
    } else if rows_printed {
        format!(
            "{}\n{}",
            crate::report::open_text::render_open(&state.levels),
            crate::plan::analysis_text::render_analysis(analysis)
        )
    } else {
        format!(
            "{}{}\n{}",
            crate::report::render_table(
                &state.levels,
                &crate::report::history_text::level_verdicts(analysis)
            ),
            crate::report::open_text::render_open(&state.levels),
            crate::plan::analysis_text::render_analysis(analysis)
        )
    };
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        r => r,
    }
}

/// What the figures of the built-in simulator at time scale `f` mean, when they are not the
/// modelled GPU's own (`f` is not 1).
pub fn time_scale_note(f: f64) -> Option<String> {
    let f_text = crate::values::fmt_rps(f);
    if f > 1.0 {
        Some(format!(
            "note: the built-in simulator runs {f_text}x faster than real time: its token rates \
             are {f_text}x, and its latencies 1/{f_text}, of the GPU it models"
        ))
    } else if f < 1.0 {
        let slower = crate::values::fmt_rps(1.0 / f);
        Some(format!(
            "note: the built-in simulator runs {slower}x slower than real time: its token \
             rates are 1/{slower}, and its latencies {slower}x, of the GPU it models"
        ))
    } else {
        None
    }
}

/// The one line saying how many dataset records were left out and why (e.g. a Data
/// Capture's `text/csv` records); `None` when none were.
pub fn skipped_line(d: &crate::workload::DatasetSpec) -> Option<String> {
    let total: u64 = d.skipped.values().sum();
    if total == 0 {
        return None;
    }
    let kept = d.records.unwrap_or(0);
    let reasons: Vec<String> = d.skipped.iter().map(|(k, v)| format!("{v} {k}")).collect();
    Some(format!(
        "{}: {total} of {} records skipped, not sent ({})",
        d.path,
        kept + total,
        reasons.join("; ")
    ))
}

/// Starts the simulator if asked, runs the plan (printing progress, and with `rows` the
/// iteration table as levels finish), prints the result, applies the gate. SIGINT, SIGTERM
/// and SIGHUP stop the run at once: finished levels are kept, the cut one is marked partial,
/// and the exit code says which signal ([`signals`]).
pub async fn launch(
    l: Launch,
    json: bool,
    rows: bool,
    serve: Option<crate::serve::ServeOptions>,
) -> anyhow::Result<ExitCode> {
    if let Some(line) = l.run.workload.dataset.as_ref().and_then(skipped_line) {
        eprintln!("{line}");
    }
    let cancel = CancellationToken::new();
    let signals = signals::watch(cancel.clone());
    let Prepared {
        req,
        planner,
        analysis,
        gate,
        sim,
        sim_time_scale,
        fleet_note,
    } = prepare(l).await?;
    if let Some(note) = fleet_note {
        eprintln!("{note}");
    }
    if let Some(note) = sim_time_scale.and_then(time_scale_note) {
        eprintln!("{note}");
    }
    let (tx, rx) = tokio::sync::mpsc::channel(256);
    let served = match &serve {
        Some(o) => {
            let plan = (req.kind.as_str(), planner.describe());
            Some(Served::start(o, cancel.clone(), plan, analysis.clone()).await?)
        }
        None => None,
    };
    let rx = Served::announce_and_tee(served.as_ref(), rx);
    let row_analysis = (rows && !json).then(|| analysis.clone());
    let printer = tokio::spawn(print_progress(rx, row_analysis));
    let kind = req.kind.clone();
    let result = engine::run(req, planner, tx, cancel.clone()).await;
    let state = printer.await.unwrap_or_default();
    if let Some(s) = served {
        s.finish().await;
    }
    if let Some(server) = sim {
        server.shutdown();
    }
    let caught = signals.caught();
    let outcome = match result {
        Ok(o) => o,
        // stopped (by a signal, or a watcher's `POST /stop`) before the run began (during
        // pre-flight): nothing was measured. Any other error (a results file that cannot be
        // written) is said as it is, even when a signal came after it: it is why the run ended
        Err(engine::RunError::Cancelled) if caught.is_some() || cancel.is_cancelled() => {
            eprintln!("interrupted before any load was sent");
            return Ok(ExitCode::from(
                caught.map_or(EXIT_INTERRUPTED, |s| s.exit_code()),
            ));
        }
        Err(e @ engine::RunError::Results(_)) => {
            // the levels that finished are kept in a summary, where one can still be written
            if let Some(note) = keep_summary(&state, &kind, &analysis) {
                eprintln!("{note}");
            }
            return Err(e.into());
        }
        Err(e) => return Err(e.into()),
    };
    let analysis = crate::plan::analyse(&analysis, &outcome.levels);
    print_final(&state, &outcome, &analysis, json, rows)?;
    if outcome.interrupted {
        return Ok(ExitCode::from(
            caught.map_or(EXIT_INTERRUPTED, |s| s.exit_code()),
        ));
    }
    let (code, lines) = finished_code(&outcome.levels, analysis.answer.as_ref(), &gate);
    for line in lines {
        eprintln!("{line}");
    }
    Ok(ExitCode::from(code))
}

/// How a run that was not interrupted ends, headless or on the dashboard: the lines to say
/// on stderr and the exit code. A run that measured nothing but failures did not measure the
/// endpoint (1); an answer below the gate fails it (3); else 0.
pub fn finished_code(
    levels: &[crate::metrics::LevelSummary],
    answer: Option<&crate::plan::gate::Answer>,
    gate: &crate::plan::gate::Gate,
) -> (u8, Vec<String>) {
    if let Some(line) = every_request_failed(levels) {
        return (exit::EXIT_RUN_FAILED, vec![line]);
    }
    let failures: Vec<String> = gate::check(answer, gate)
        .into_iter()
        .map(|f| format!("gate failed: {f}"))
        .collect();
    let code = if failures.is_empty() { 0 } else { EXIT_GATE };
    (code, failures)
}

/// After a results write failed: `summary.json` of the levels that finished (as the progress
/// printer folded them), in the run folder if it still takes one, else in the system's
/// temporary folder; the line that says where (`None` before the run folder was made, or
/// when nothing could be written).
pub fn keep_summary(
    state: &RunState,
    kind: &str,
    analysis: &crate::plan::Analysis,
) -> Option<String> {
    let (run_id, dir) = (state.run_id.as_ref()?, state.dir.as_ref()?);
    let mut summary = serde_json::json!({
        "run_id": run_id,
        "kind": kind,
        "interrupted": true,
        "levels": state.levels,
    });
    if let (Some(s), Ok(serde_json::Value::Object(extra))) = (
        summary.as_object_mut(),
        serde_json::to_value(crate::plan::analyse(analysis, &state.levels)),
    ) {
        s.extend(extra);
    }
    let n = state.levels.len();
    let here = dir.join(crate::report::folder::SUMMARY_FILE);
    if crate::report::folder::write_json_atomic(&here, &summary).is_ok() {
        return Some(format!("kept: {} ({n} finished level(s))", here.display()));
    }
    let elsewhere = std::env::temp_dir().join(format!("rightsize-{run_id}-summary.json"));
    crate::report::folder::write_json_atomic(&elsewhere, &summary)
        .ok()
        .map(|()| {
            format!(
                "kept elsewhere: the run folder takes no more, so its summary ({n} finished \
                 level(s)) is in {}",
                elsewhere.display()
            )
        })
}

/// `every request failed: 400 of 400 (http_status 400)`, when no level had a success and
/// some had failures (cancelled requests are the run's own stop, not the endpoint's).
fn every_request_failed(levels: &[crate::metrics::LevelSummary]) -> Option<String> {
    let (ok, failed) = levels
        .iter()
        .fold((0, 0), |(o, f), l| (o + l.ok_count(), f + l.error_count()));
    if ok > 0 || failed == 0 {
        return None;
    }
    let mut kinds = std::collections::BTreeMap::new();
    for l in levels {
        for (k, n) in &l.errors_by_kind {
            if *k != crate::record::ErrorKind::Cancelled {
                *kinds.entry(*k).or_insert(0u64) += n;
            }
        }
    }
    let kinds: Vec<String> = kinds.iter().map(|(k, n)| format!("{k} {n}")).collect();
    Some(format!(
        "every request failed: {failed} of {failed} ({}); the level files' error_summary \
         and requests.jsonl hold each message",
        kinds.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::{every_request_failed, time_scale_note};
    use crate::metrics::fixtures::level;
    use crate::record::ErrorKind;

    #[test]
    fn a_run_of_failures_only_is_a_failed_run() {
        // every request of both levels failed
        let all = [
            level(0, 4, 8, 10, 20, 4, Some((ErrorKind::HttpStatus, 1))),
            level(1, 8, 8, 10, 20, 4, Some((ErrorKind::Timeout, 1))),
        ];
        assert_eq!(
            every_request_failed(&all).as_deref(),
            Some(
                "every request failed: 16 of 16 (timeout 8, http_status 8); the level files' \
                 error_summary and requests.jsonl hold each message"
            )
        );
        // one success anywhere: the run measured the endpoint
        let some = [
            level(0, 4, 8, 10, 20, 4, Some((ErrorKind::HttpStatus, 1))),
            level(1, 8, 8, 10, 20, 4, Some((ErrorKind::Timeout, 2))),
        ];
        assert_eq!(every_request_failed(&some), None);
        assert_eq!(every_request_failed(&[]), None);
        assert_eq!(
            every_request_failed(&[level(0, 4, 8, 10, 20, 4, None)]),
            None
        );
    }

    #[test]
    fn the_time_scale_note_says_faster_slower_or_nothing() {
        assert_eq!(
            time_scale_note(20.0).as_deref(),
            Some(
                "note: the built-in simulator runs 20x faster than real time: its token rates \
                 are 20x, and its latencies 1/20, of the GPU it models"
            )
        );
        assert_eq!(time_scale_note(1.0), None);
        assert_eq!(
            time_scale_note(0.5).as_deref(),
            Some(
                "note: the built-in simulator runs 2x slower than real time: its token rates \
                 are 1/2, and its latencies 2x, of the GPU it models"
            )
        );
    }
}
