//! Past runs for the dashboard's runs screen, read from the results folder.

use super::app::RunEntry;
use std::path::Path;

/// The runs under `root`, newest first. Folders that are not runs are skipped.
pub fn load_runs(root: &Path) -> std::io::Result<Vec<RunEntry>> {
    let mut out = Vec::new();
    for dir in crate::report::list_runs(root)?.into_iter().rev() {
        let Ok(echo) = crate::report::read_json::<serde_json::Value>(&dir.join("run.json")) else {
            continue;
        };
        let levels = std::fs::read_dir(&dir)
            .map(|it| {
                it.filter_map(|e| e.ok())
                    .filter(|e| {
                        let n = e.file_name();
                        let n = n.to_string_lossy();
                        n.starts_with("level-") && n.ends_with(".json")
                    })
                    .count()
            })
            .unwrap_or(0);
        let s = |v: &serde_json::Value| v.as_str().unwrap_or("").to_string();
        out.push(RunEntry {
            id: dir
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            levels,
            endpoint: s(&echo["endpoint"]["name"]),
            model: s(&echo["endpoint"]["model"]),
            workload: s(&echo["workload"]["name"]),
            path: dir,
        });
    }
    Ok(out)
}
