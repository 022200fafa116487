//! Past runs: what `rightsize runs` lists, how a RUN argument (an id, a unique prefix of one,
//! or a path) finds its folder, and a finished run read back whole for `show`, `compare` and
//! `export`. Everything here reads `run.json` and `summary.json` as loose JSON, so runs made by
//! older versions, interrupted runs and imported runs all read.

use std::io;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::folder::{list_runs, load_levels, read_json, RUN_FILE, SUMMARY_FILE};
use crate::metrics::LevelSummary;

/// One line of `rightsize runs`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RunInfo {
    /// The run id (its folder's name).
    pub id: String,
    /// The run folder.
    pub path: PathBuf,
    /// Wall-clock start, RFC 3339 (empty when unknown).
    pub started_at: String,
    /// Endpoint name (config name or URL).
    pub endpoint: String,
    /// Model name.
    pub model: String,
    /// Workload profile name.
    pub workload: String,
    /// `sweep`, `search`, `import-aiperf`, ...
    pub kind: String,
    /// Number of level files.
    pub levels: usize,
    /// The run's answer in a few words: the search answer, else the ideal balance, else the
    /// knee, else `-`.
    pub answer: String,
    /// The run was interrupted.
    pub interrupted: bool,
    /// How the run ended.
    pub status: RunStatus,
    /// Why the run cannot be read (a file that does not parse), when it cannot: the run is
    /// listed with this instead of being left out.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
}

impl RunInfo {
    /// When it began, to the minute (`2026-12-06 09:25`; empty when unknown).
    pub fn date(&self) -> String {
        let s = &self.started_at;
        s.get(..16).unwrap_or(s).replace('T', " ")
    }
}

/// How a run ended, as its files tell it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    /// Every level ran (or the search ended by its own rule).
    Finished,
    /// Stopped by the user or a signal; the finished levels were kept and the run closed.
    Stopped,
    /// Never closed: the process ended without writing its end (killed, or still running).
    Interrupted,
    /// Ended by an error the run recorded (`run.json`'s `failure`).
    Failed,
}

impl RunStatus {
    /// The word every surface shows.
    pub fn label(self) -> &'static str {
        match self {
            RunStatus::Finished => "finished",
            RunStatus::Stopped => "stopped",
            RunStatus::Interrupted => "interrupted",
            RunStatus::Failed => "failed",
        }
    }

    /// From `run.json` (`Null` when missing: an imported run's folder may have none).
    pub fn of(echo: &Value, interrupted: bool) -> RunStatus {
        if echo["failure"].is_string() {
            RunStatus::Failed
        } else if interrupted {
            RunStatus::Stopped
        } else if !echo.is_null() && echo["ended_at"].is_null() {
            RunStatus::Interrupted
        } else {
            RunStatus::Finished
        }
    }
}

/// A run read back whole.
#[derive(Debug, Clone)]
pub struct RunData {
    pub info: RunInfo,
    /// `run.json` as written (see `engine::RunEcho`); `Null` when missing.
    pub echo: Value,
    /// Every level, sorted by index.
    pub levels: Vec<LevelSummary>,
    /// `summary.json`, when the run wrote one.
    pub summary: Option<Value>,
}

impl RunData {
    /// The knee its levels show, found by the same code as a live run (so a run imported
    /// from AIPerf files gets the knee the same data recorded natively gets).
    pub fn knee(&self) -> Option<u32> {
        self.report().knee.map(|k| k.concurrency)
    }

    /// How the run was meant to be read: its SLAs and search bounds from `run.json`'s plan
    /// (or, failing that, the SLAs `summary.json` lists), and the peak and price it was
    /// right-sized with (`summary.json`'s right-size).
    pub fn analysis(&self) -> crate::plan::Analysis {
        let mut a = crate::plan::recorded::analysis(&self.echo["plan"]);
        if let Some(s) = &self.summary {
            if a.slas.is_empty() {
                a.slas = crate::plan::recorded::slas(s);
            }
            // the peak and price the run was sized with
            if let Some(c) = crate::plan::recorded::capacity(s) {
                a.capacity = c;
            }
        }
        a
    }

    /// The answer, knee and planning numbers, computed from the levels as a live run would.
    pub fn report(&self) -> crate::plan::RunAnalysis {
        crate::plan::analyse(&self.analysis(), &self.levels)
    }
}

fn knee_of(summary: Option<&Value>) -> Option<u32> {
    let c = summary?.get("knee")?.get("concurrency")?.as_u64()?;
    u32::try_from(c).ok()
}

fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

fn answer_of(summary: Option<&Value>, interrupted: bool) -> String {
    let search = summary.and_then(|s| {
        s.get("search")
            .and_then(|x| x.get("answer"))
            .or_else(|| s.get("answer"))
    });
    // a rate run's places are hundredths of a request/s
    let by_rate = summary.and_then(|s| s.get("axis")).and_then(Value::as_str) == Some("rate");
    let place = |c: u64| {
        if by_rate {
            crate::plan::analysis::Axis::Rate.fmt(c as f64)
        } else {
            format!("c={c}")
        }
    };
    if let Some(c) = search.and_then(|a| a.get("concurrency").or(Some(a)).and_then(Value::as_u64)) {
        return place(c);
    }
    let ideal = summary.and_then(|s| s["planning"]["ideal"]["concurrency"].as_u64());
    if let Some(c) = ideal {
        return format!("ideal {}", place(c));
    }
    if let Some(k) = knee_of(summary) {
        return format!("knee {}", place(u64::from(k)));
    }
    if interrupted {
        "interrupted".into()
    } else {
        "-".into()
    }
}

fn is_run_dir(dir: &Path) -> bool {
    if dir.join(RUN_FILE).is_file() {
        return true;
    }
    std::fs::read_dir(dir).is_ok_and(|it| {
        it.filter_map(Result::ok).any(|e| {
            let n = e.file_name();
            let n = n.to_string_lossy();
            n.starts_with("level-") && n.ends_with(".json")
        })
    })
}

fn count_levels(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .map(|it| {
            it.filter_map(Result::ok)
                .filter(|e| {
                    let n = e.file_name();
                    let n = n.to_string_lossy();
                    n.starts_with("level-") && n.ends_with(".json")
                })
                .count()
        })
        .unwrap_or(0)
}

fn optional_json(path: &Path) -> io::Result<Option<Value>> {
    if path.exists() {
        read_json(path).map(Some)
    } else {
        Ok(None)
    }
}

fn info_from(dir: &Path, echo: &Value, summary: Option<&Value>) -> RunInfo {
    let id = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let interrupted = echo["interrupted"].as_bool().unwrap_or(false)
        || summary.is_some_and(|s| s["interrupted"].as_bool().unwrap_or(false));
    RunInfo {
        started_at: text(&echo["started_at"]),
        endpoint: text(&echo["endpoint"]["name"]),
        model: text(&echo["endpoint"]["model"]),
        workload: text(&echo["workload"]["name"]),
        kind: text(&echo["kind"]),
        levels: count_levels(dir),
        answer: answer_of(summary, interrupted),
        interrupted,
        status: RunStatus::of(echo, interrupted),
        path: dir.to_path_buf(),
        id,
        problem: None,
    }
}

/// The line for one run folder. A missing `run.json` gives empty fields; a file that does
/// not parse (a level file included: what `show` reads) is an error naming it.
pub fn run_info(dir: &Path) -> io::Result<RunInfo> {
    let echo = optional_json(&dir.join(RUN_FILE))?.unwrap_or(Value::Null);
    let summary = optional_json(&dir.join(SUMMARY_FILE))?;
    load_levels(dir)?;
    Ok(info_from(dir, &echo, summary.as_ref()))
}

/// The runs under `root`, oldest first. Folders that are not runs (no `run.json`, no level
/// files) are skipped; a run whose files do not parse is listed with its problem.
pub fn list_run_infos(root: &Path) -> io::Result<Vec<RunInfo>> {
    let mut infos: Vec<RunInfo> = list_runs(root)?
        .into_iter()
        .filter(|d| is_run_dir(d))
        .map(|d| {
            run_info(&d).unwrap_or_else(|e| RunInfo {
                answer: "unreadable".into(),
                problem: Some(e.to_string()),
                ..info_from(&d, &Value::Null, None)
            })
        })
        .collect();
    // by when they began (an id starts with its start time; an imported run's may not)
    infos.sort_by_cached_key(|r| (start_key(r), r.id.clone()));
    Ok(infos)
}

/// When a run began, as digits (`20261206092558`): from `started_at`, else from its id.
fn start_key(r: &RunInfo) -> String {
    let from = if r.started_at.is_empty() {
        &r.id
    } else {
        &r.started_at
    };
    from.chars().filter(char::is_ascii_digit).take(14).collect()
}

/// Reads a run folder whole: echo, levels and summary.
pub fn load_run(dir: &Path) -> io::Result<RunData> {
    let echo = optional_json(&dir.join(RUN_FILE))?.unwrap_or(Value::Null);
    let summary = optional_json(&dir.join(SUMMARY_FILE))?;
    let levels = load_levels(dir)?;
    Ok(RunData {
        info: info_from(dir, &echo, summary.as_ref()),
        echo,
        levels,
        summary,
    })
}

/// Why a RUN argument found no single run.
#[derive(Debug, thiserror::Error)]
pub enum RunLookupError {
    #[error(
        "no run '{spec}' in {root}{hint}; `rightsize runs` lists them (or give a run folder's path)",
        hint = close_hint(close)
    )]
    NotFound {
        spec: String,
        root: PathBuf,
        close: Vec<String>,
    },
    #[error("'{spec}' matches {} runs: {}; give more of the id", matches.len(), matches.join(", "))]
    Ambiguous { spec: String, matches: Vec<String> },
    #[error(transparent)]
    Io(#[from] io::Error),
}

fn close_hint(close: &[String]) -> String {
    if close.is_empty() {
        " (there are no runs there yet)".into()
    } else {
        format!("; close matches: {}", close.join(", "))
    }
}

/// Levenshtein distance (characters).
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// Up to five ids closest to `spec`: those containing it, then by edit distance of `spec`
/// to the id's prefix of the same length; the newest runs when nothing is close.
pub fn close_matches(spec: &str, ids: &[String]) -> Vec<String> {
    let n = spec.chars().count();
    let mut scored: Vec<(usize, &String)> = ids
        .iter()
        .filter_map(|id| {
            if id.contains(spec) {
                return Some((0, id));
            }
            let head: String = id.chars().take(n).collect();
            let d = edit_distance(spec, &head).min(edit_distance(spec, id));
            (d <= (n / 3).max(2)).then_some((d, id))
        })
        .collect();
    scored.sort_by_key(|(d, _)| *d);
    let mut out: Vec<String> = scored.into_iter().take(5).map(|(_, s)| s.clone()).collect();
    if out.is_empty() {
        out = ids.iter().rev().take(5).cloned().collect();
    }
    out
}

/// Finds the run folder a RUN argument names: a path to a run folder, an id under `root`, or
/// a unique prefix of one.
pub fn resolve_run(root: &Path, spec: &str) -> Result<PathBuf, RunLookupError> {
    let as_path = Path::new(spec);
    if as_path.is_dir() && is_run_dir(as_path) {
        return Ok(as_path.to_path_buf());
    }
    let dirs: Vec<PathBuf> = list_runs(root)?
        .into_iter()
        .filter(|d| is_run_dir(d))
        .collect();
    let ids: Vec<String> = dirs
        .iter()
        .filter_map(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()))
        .collect();
    // a campaign's runs are in its folder: the id finds them there
    let dir_of = |id: &str| {
        dirs.iter()
            .find(|d| d.file_name().is_some_and(|n| n.to_string_lossy() == id))
            .cloned()
            .unwrap_or_else(|| root.join(id))
    };
    if ids.iter().any(|id| id == spec) {
        return Ok(dir_of(spec));
    }
    let matches: Vec<String> = ids
        .iter()
        .filter(|id| !spec.is_empty() && id.starts_with(spec))
        .cloned()
        .collect();
    match matches.len() {
        1 => Ok(dir_of(&matches[0])),
        0 => Err(RunLookupError::NotFound {
            spec: spec.to_string(),
            root: root.to_path_buf(),
            close: close_matches(spec, &ids),
        }),
        _ => Err(RunLookupError::Ambiguous {
            spec: spec.to_string(),
            matches,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ids() -> Vec<String> {
        [
            "20261129-083012-sweep",
            "20261129-091500-sweep",
            "20261130-101010-search",
        ]
        .map(String::from)
        .to_vec()
    }

    #[test]
    fn edit_distances() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("abc", "abc"), 0);
    }

    #[test]
    fn close_matches_prefer_near_prefixes() {
        let m = close_matches("20261129-083013", &ids());
        assert_eq!(m[0], "20261129-083012-sweep");
        let m = close_matches("search", &ids());
        assert_eq!(m, vec!["20261130-101010-search".to_string()]);
        // nothing close: the newest runs
        let m = close_matches("zzzzzzzzzzzzzzzzzz", &ids());
        assert_eq!(m[0], "20261130-101010-search");
    }

    #[test]
    fn how_a_run_ended_from_its_run_json() {
        let ended = json!({"ended_at": "2026-12-06T09:27:49.475Z", "interrupted": false});
        let cases = [
            (ended.clone(), false, RunStatus::Finished),
            (ended.clone(), true, RunStatus::Stopped),
            (
                json!({"started_at": "2026-12-06T09:25:58Z"}),
                false,
                RunStatus::Interrupted,
            ),
            (
                json!({"ended_at": "x", "failure": "lost worker 2"}),
                false,
                RunStatus::Failed,
            ),
            // an imported run's folder may have no run.json
            (Value::Null, false, RunStatus::Finished),
        ];
        for (echo, interrupted, want) in cases {
            assert_eq!(RunStatus::of(&echo, interrupted), want, "{echo}");
        }
    }

    #[test]
    fn answers_from_the_summary() {
        let s = json!({"search": {"answer": {"concurrency": 320}}, "knee": {"concurrency": 256}});
        assert_eq!(answer_of(Some(&s), false), "c=320");
        let s = json!({"knee": {"concurrency": 256}});
        assert_eq!(answer_of(Some(&s), false), "knee c=256");
        // a sweep's answer is its ideal balance, as `show` and the dashboard name it
        let s = json!({"planning": {"ideal": {"concurrency": 64}}, "knee": {"concurrency": 256}});
        assert_eq!(answer_of(Some(&s), false), "ideal c=64");
        assert_eq!(answer_of(None, true), "interrupted");
        assert_eq!(answer_of(Some(&json!({"levels": []})), false), "-");
    }

    #[test]
    fn unreadable_runs_are_listed_with_their_problem() {
        let root = std::env::temp_dir().join(format!("rightsize-history-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        for (id, run_json) in [
            ("20261203-100000-sweep", "{}"),
            ("20261203-100001-sweep", "{"),
        ] {
            std::fs::create_dir_all(root.join(id)).unwrap();
            std::fs::write(root.join(id).join(RUN_FILE), run_json).unwrap();
        }
        let infos = list_run_infos(&root).unwrap();
        let _ = std::fs::remove_dir_all(&root);
        assert_eq!(infos.len(), 2);
        assert_eq!(infos[0].problem, None);
        assert_eq!(infos[1].answer, "unreadable");
        let problem = infos[1].problem.as_deref().unwrap();
        assert!(
            problem.contains("20261203-100001-sweep/run.json: EOF while parsing an object"),
            "{problem}"
        );
        let text = crate::report::history_text::render_runs(&infos);
        assert!(
            text.lines()
                .any(|l| l.starts_with("unreadable 20261203-100001-sweep: ")),
            "{text}"
        );
    }
}
