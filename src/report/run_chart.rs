//! The chart of a finished run, or of several overlaid ([`chart_spec`]): its title and
//! subtitle from the runs' identities, each run's curves, knee, answer and bracket, and the
//! SLA lines; the PNG, SVG and HTML exports and the campaign's chart draw it.

use super::chart::{ChartRun, ChartSpec, SlaLine};
use super::history::RunData;
use super::history_text::workload_line;

fn date(run: &RunData) -> String {
    run.info
        .started_at
        .get(..16)
        .unwrap_or(&run.info.started_at)
        .replace('T', " ")
}

fn describe(run: &RunData) -> String {
    let mut parts = vec![run.info.endpoint.clone(), run.info.model.clone()];
    parts.push(workload_line(&run.echo));
    parts.retain(|p| !p.is_empty() && p != "-");
    parts.join(" | ")
}

/// The chart of one run, or of several overlaid (labelled `A`, `B`, ...). The axis is the
/// first run's (a run measured on the other axis draws no points); the SLA lines are the
/// first run's that recorded latency SLAs; each run brings its own knee, answer and bracket.
pub fn chart_spec(runs: &[&RunData]) -> ChartSpec {
    let single = runs.len() == 1;
    let label = |i: usize| {
        if single {
            String::new()
        } else {
            char::from(b'A' + (i % 26) as u8).to_string()
        }
    };
    let mut titles: Vec<String> = Vec::new();
    for r in runs {
        let d = describe(r);
        if !titles.contains(&d) {
            titles.push(d);
        }
    }
    let subtitle = runs
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let tag = if single {
                String::new()
            } else {
                format!("{}: ", label(i))
            };
            format!("{tag}run {} ({} UTC)", r.info.id, date(r))
        })
        .collect::<Vec<_>>()
        .join("   vs   ");
    let reports: Vec<_> = runs.iter().map(|r| r.report()).collect();
    let axis = reports.first().map(|a| a.axis).unwrap_or_default();
    ChartSpec {
        title: titles.join("  vs  "),
        subtitle,
        axis,
        runs: runs
            .iter()
            .zip(&reports)
            .enumerate()
            .map(|(i, (r, report))| {
                let limits = r.analysis().limits();
                let mut run = ChartRun::from_analysis(&label(i), &r.levels, report, &limits);
                if report.axis != axis {
                    run.points.clear();
                }
                run
            })
            .collect(),
        slas: runs
            .iter()
            .map(|r| SlaLine::of(&r.analysis().slas))
            .find(|l| !l.is_empty())
            .unwrap_or_default(),
    }
}
