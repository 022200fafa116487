//! What every import shares once its file has been read into levels: a new run folder under
//! the results root holding the `run.json` echo, one level file per level and the summary,
//! so `list`, `show`, `compare`, `export` and campaign candidates read it as a recorded run.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::metrics::LevelSummary;
use crate::report::ResultsDir;
use crate::wallclock::new_run_id;

/// Largest file an import reads (bytes); real exports are a few kilobytes.
pub const MAX_FILE: u64 = 64 << 20;
/// How deep an import searches a folder.
pub const MAX_DEPTH: usize = 8;

/// The text of `path`, at most [`MAX_FILE`] bytes of it.
pub fn read_limited(path: &Path) -> std::io::Result<String> {
    let mut text = String::new();
    File::open(path)?.take(MAX_FILE).read_to_string(&mut text)?;
    Ok(text)
}

/// The files under `dir` (at most [`MAX_DEPTH`] folders down) whose name `wanted` accepts,
/// sorted; an error names the folder it came from.
pub fn find_files(
    dir: &Path,
    wanted: &dyn Fn(&str) -> bool,
) -> Result<Vec<PathBuf>, (PathBuf, std::io::Error)> {
    fn walk(
        dir: &Path,
        depth: usize,
        wanted: &dyn Fn(&str) -> bool,
        out: &mut Vec<PathBuf>,
    ) -> Result<(), (PathBuf, std::io::Error)> {
        let io = |e| (dir.to_path_buf(), e);
        for entry in std::fs::read_dir(dir).map_err(io)? {
            let path = entry.map_err(io)?.path();
            if path.is_dir() {
                if depth < MAX_DEPTH {
                    walk(&path, depth + 1, wanted, out)?;
                }
            } else if path
                .file_name()
                .is_some_and(|n| wanted(&n.to_string_lossy()))
            {
                out.push(path);
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    walk(dir, 0, wanted, &mut out)?;
    out.sort();
    Ok(out)
}

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
