//! Past runs for the dashboard's runs screen, read from the results folder by the same rule
//! as `rightsize runs` (`report::history::list_run_infos`): a run whose files do not parse
//! is listed with its problem, and cannot be opened.

use super::app::RunEntry;
use std::path::Path;

/// The runs under `root`, newest first. Folders that are not runs are skipped.
pub fn load_runs(root: &Path) -> std::io::Result<Vec<RunEntry>> {
    Ok(crate::report::list_run_infos(root)?
        .into_iter()
        .rev()
        .map(|r| RunEntry {
            date: r.date(),
            kind: r.kind,
            answer: r.answer,
            status: r.status,
            id: r.id,
            levels: r.levels,
            endpoint: r.endpoint,
            model: r.model,
            workload: r.workload,
            path: r.path,
            problem: r.problem,
        })
        .collect())
}
