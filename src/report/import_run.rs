//! What every import shares once its file has been read into levels: a new run folder under
//! the results root holding the `run.json` echo, one level file per level and the summary,
//! so `list`, `show`, `compare`, `export` and campaign candidates read it as a recorded run.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::metrics::LevelSummary;
use crate::report::ResultsDir;
use crate::wallclock::new_run_id;

/// What an import made.
#[derive(Debug, Clone)]
pub struct ImportOutcome {
    pub run_id: String,
    pub dir: PathBuf,
    pub levels: Vec<LevelSummary>,
    /// What the source lacked or what was dropped, said once each (`source.notes` of the echo).
    pub notes: Vec<String>,
}

/// Writes `levels` as a new run under `root`. The run id starts with `prefix` (the source
/// tool's name); `make_echo` gets the final run id (a clash adds a suffix) and returns the
/// `run.json` echo, whose `kind` the summary repeats and whose `source.notes` the outcome
/// carries.
pub fn write_imported_run(
    root: &Path,
    prefix: &str,
    levels: &[LevelSummary],
    make_echo: impl FnOnce(&str) -> Value,
) -> anyhow::Result<ImportOutcome> {
    let run_id = new_run_id(prefix, std::time::SystemTime::now());
    let dir = ResultsDir::create(root, &run_id)
        .map_err(|e| anyhow::anyhow!("cannot create a run folder: {e}"))?;
    let run_id = dir.run_id().to_string();
    let echo = make_echo(&run_id);
    // the errors name their files
    let io = anyhow::Error::from;
    dir.write_run(&echo).map_err(io)?;
    for l in levels {
        dir.write_level(l).map_err(io)?;
    }
    dir.write_summary(&json!({
        "run_id": run_id,
        "kind": echo["kind"],
        "interrupted": false,
        "levels": levels,
    }))
    .map_err(io)?;
    Ok(ImportOutcome {
        notes: echo["source"]["notes"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|n| n.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default(),
        run_id,
        dir: dir.path().to_path_buf(),
        levels: levels.to_vec(),
    })
}
