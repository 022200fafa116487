//! What every import shares once its file has been read into levels: a new run folder under
//! the results root holding the `run.json` echo, one level file per level and the summary,
//! so `list`, `show`, `compare`, `export` and campaign candidates read it as a recorded run.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::metrics::{LevelSummary, Scalar, TokenSourceCounts};
use crate::report::ResultsDir;
use crate::wallclock::new_run_id;

/// Largest file an import reads (bytes).
pub const MAX_FILE: u64 = 64 << 20;

/// Why an import could not read its input (the command exits 2 naming the file).
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("{0}: no such file or folder")]
    NotFound(PathBuf),
    /// A folder without the files an import reads: `what` says which.
    #[error("{path}: {what}")]
    NoFiles { path: PathBuf, what: String },
    #[error("{source_name}: {message}")]
    Bad {
        source_name: String,
        message: String,
    },
    #[error("{0}: {1}")]
    Io(PathBuf, std::io::Error),
}

/// Names to record for an imported run (defaults come from the files).
#[derive(Debug, Clone, Default)]
pub struct ImportNames {
    /// Endpoint name (default: the URL the files name, else the tool's name).
    pub endpoint: Option<String>,
    /// Model name (default: the files' model).
    pub model: Option<String>,
    /// Workload name (default: the tool's name with the lengths the files name).
    pub workload: Option<String>,
}

/// How deep an import searches a folder.
const MAX_DEPTH: usize = 8;

/// The files under `dir` (at most [`MAX_DEPTH`] folders down) whose path `keep` accepts,
/// sorted; the error names the folder it could not read.
pub fn files_under(dir: &Path, keep: &dyn Fn(&Path) -> bool) -> Result<Vec<PathBuf>, ImportError> {
    fn walk(
        dir: &Path,
        depth: usize,
        keep: &dyn Fn(&Path) -> bool,
        out: &mut Vec<PathBuf>,
    ) -> Result<(), ImportError> {
        let io = |e| ImportError::Io(dir.to_path_buf(), e);
        for entry in std::fs::read_dir(dir).map_err(io)? {
            let path = entry.map_err(io)?.path();
            if path.is_dir() && depth < MAX_DEPTH {
                walk(&path, depth + 1, keep, out)?;
            } else if keep(&path) {
                out.push(path);
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    walk(dir, 0, keep, &mut out)?;
    out.sort();
    Ok(out)
}

/// `run.json`'s `source.files` (each level's source) and `source.KEY` (each level's head).
pub fn files_and_heads(levels: &[ImportedLevel], key: &str) -> serde_json::Map<String, Value> {
    let mut source = serde_json::Map::new();
    source.insert(
        "files".into(),
        json!(levels.iter().map(|l| l.source.clone()).collect::<Vec<_>>()),
    );
    source.insert(
        key.into(),
        json!(levels.iter().map(|l| l.head.clone()).collect::<Vec<_>>()),
    );
    source
}

/// Which tool wrote a parsed results file, by the keys only it writes: `aiperf`
/// (`input_config` with `request_latency` or `output_token_throughput`), `guidellm`
/// (`benchmarks`), `vllm` (`completed` with `request_throughput`, as `vllm bench serve`
/// saves); for a message that names the import to use.
pub fn which_tool(obj: &Value) -> Option<&'static str> {
    let has = |k: &str| obj.get(k).is_some();
    if has("benchmarks") {
        Some("guidellm")
    } else if has("completed") && has("request_throughput") {
        Some("vllm")
    } else if has("input_config") && (has("request_latency") || has("output_token_throughput")) {
        Some("aiperf")
    } else {
        None
    }
}

/// `not a TOOL file`, with the import that reads it when another tool wrote it.
pub fn not_this_tool(obj: &Value, what: &str) -> String {
    match which_tool(obj) {
        Some(other) => {
            format!("not {what}: it looks like {other}'s output; use `rightsize import {other}`")
        }
        None => format!("not {what}"),
    }
}

/// A file's text as JSON; the error names the file (`source`).
pub fn parse_json(source: &str, text: &str) -> Result<Value, ImportError> {
    serde_json::from_str(text).map_err(|e| ImportError::Bad {
        source_name: source.to_string(),
        message: format!("not JSON: {e}"),
    })
}

/// A file's text, at most [`MAX_FILE`] bytes; the error names the file.
pub fn read_limited(path: &Path) -> Result<String, ImportError> {
    let file = File::open(path).map_err(|e| ImportError::Io(path.to_path_buf(), e))?;
    let mut text = String::new();
    file.take(MAX_FILE)
        .read_to_string(&mut text)
        .map_err(|e| ImportError::Io(path.to_path_buf(), e))?;
    Ok(text)
}

/// One level read from another tool's file.
#[derive(Debug, Clone)]
pub struct ImportedLevel {
    /// Where it came from, for notes and messages: a file (`file#2` for a second result in
    /// it, `archive.tar.gz:inner/path`) or the tool's name for it (`concurrent@4`).
    pub source: String,
    pub summary: LevelSummary,
    /// What this level's file lacked or what was filled in, said once each.
    pub notes: Vec<String>,
    /// What `run.json`'s `source` keeps of it (versions, ids, the load it was sent at).
    pub head: Value,
    /// How the tool was configured for it (AIPerf's `input_config`), for the echo's names;
    /// `null` when the echo reads its names elsewhere. Not written.
    pub config: Value,
}

/// A level of an imported run with its counts (`ok` successful and `errors` failed
/// requests, neither cancelled), every other number absent or zero, taken as held: an import
/// fills in what its file holds with `LevelSummary { field, ..imported_level(..) }`.
pub fn imported_level(concurrency: u32, ok: f64, errors: f64) -> LevelSummary {
    LevelSummary {
        index: 0,
        concurrency,
        planned_requests: (ok + errors) as u64,
        requests_asked: (ok + errors) as u64,
        held: true,
        // an imported file does not say
        warmup: None,
        sampling: None,
        measurements: Vec::new(),
        server: None,
        prefix_cache: None,
        slas: Vec::new(),
        verdict: None,
        start_time: String::new(),
        end_time: String::new(),
        partial: false,
        time_to_first_token: None,
        inter_token_latency: None,
        inter_chunk_latency: None,
        request_latency: None,
        output_sequence_length: None,
        input_sequence_length: None,
        output_token_throughput_per_user: None,
        output_token_throughput: Scalar::new("tokens/sec", 0.0),
        output_token_throughput_steady: None,
        output_token_throughput_sustained: None,
        request_throughput: Scalar::new("requests/sec", 0.0),
        request_count: Scalar::new("requests", ok),
        error_request_count: Scalar::new("requests", errors),
        benchmark_duration: Scalar::new("sec", 0.0),
        total_osl: Scalar::new("tokens", 0.0),
        total_isl: Scalar::new("tokens", 0.0),
        goodput: None,
        error_summary: Vec::new(),
        error_rate: if ok + errors > 0.0 {
            errors / (ok + errors)
        } else {
            0.0
        },
        errors_by_kind: Default::default(),
        cancelled_count: 0,
        steady_window: None,
        achieved_concurrency: None,
        mean_in_flight: None,
        slot_to_send: None,
        output_tokens_source: TokenSourceCounts::default(),
        reconnect_count: 0,
        client_lag: None,
        workers: None,
        workload: Default::default(),
        open_loop: Default::default(),
    }
}

/// Sorts levels by concurrency, then start time, then end time, and numbers them 0.. .
pub fn number_by_concurrency(levels: &mut [ImportedLevel]) {
    levels.sort_by_cached_key(|l| {
        let s = &l.summary;
        (s.concurrency, s.start_time.clone(), s.end_time.clone())
    });
    for (i, l) in levels.iter_mut().enumerate() {
        l.summary.index = i as u32;
    }
}

/// Every level's notes, each after its source (`file: note`), then `general` (what the
/// format lacks, said once per run).
pub fn level_notes(levels: &[ImportedLevel], general: &[&str]) -> Vec<String> {
    levels
        .iter()
        .flat_map(|l| l.notes.iter().map(move |n| format!("{}: {n}", l.source)))
        .chain(general.iter().map(|g| g.to_string()))
        .collect()
}

/// Writes `levels` as a new run under `root`, its `run.json` from `echo`.
pub fn import_levels(
    root: &Path,
    levels: &[ImportedLevel],
    echo: &ImportedEcho,
) -> anyhow::Result<ImportOutcome> {
    let summaries: Vec<LevelSummary> = levels.iter().map(|l| l.summary.clone()).collect();
    write_imported_run(root, echo.tool, &summaries, |run_id| {
        echo.to_json(run_id, &summaries)
    })
}

/// What an imported run's `run.json` says, beside its levels: the names, the lengths, and
/// where it came from.
#[derive(Debug, Clone)]
pub struct ImportedEcho {
    /// The source tool (`aiperf`, `guidellm`, `vllm`): the run's kind is `import-TOOL`.
    pub tool: &'static str,
    /// What was imported, as given.
    pub path: String,
    pub endpoint: String,
    /// The URL the files name (`""` when none).
    pub base_url: Value,
    pub model: String,
    pub stream: Option<bool>,
    pub workload: String,
    pub input_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
    /// Requests per level the source asked for, when it says.
    pub request_count: Value,
    /// A rightsize export carries its run's SLAs and error-rate limit (`[]`, `null` else).
    pub slas: Value,
    pub max_error_rate: Value,
    /// The tool's own keys under `source` (files, versions, ...).
    pub source: serde_json::Map<String, Value>,
    /// What the source lacked or what was dropped, each said once.
    pub notes: Vec<String>,
}

impl ImportedEcho {
    /// The `run.json` of the imported run `run_id`, shaped like a recorded run's echo.
    pub fn to_json(&self, run_id: &str, levels: &[LevelSummary]) -> Value {
        let times = |f: fn(&LevelSummary) -> &str| {
            levels
                .iter()
                .map(f)
                .filter(|s| !s.is_empty())
                .map(String::from)
                .collect::<Vec<_>>()
        };
        let mut source = serde_json::Map::new();
        source.insert("format".into(), json!(self.tool));
        source.insert("path".into(), json!(self.path));
        source.extend(self.source.clone());
        source.insert("notes".into(), json!(self.notes));
        json!({
            "tool": "rightsize",
            "version": env!("CARGO_PKG_VERSION"),
            "run_id": run_id,
            "kind": format!("import-{}", self.tool),
            "endpoint": {
                "name": self.endpoint,
                "base_url": self.base_url,
                "model": self.model,
                "stream": self.stream,
            },
            "workload": {
                "name": self.workload,
                "input_tokens": self.input_tokens,
                "output_tokens": self.output_tokens,
                "stream": self.stream,
            },
            "plan": {
                "kind": "import",
                "concurrency": levels.iter().map(|l| l.concurrency).collect::<Vec<_>>(),
                "slas": self.slas,
                "max_error_rate": self.max_error_rate,
            },
            "request_count": self.request_count,
            "started_at": times(|l| &l.start_time).into_iter().min(),
            "ended_at": times(|l| &l.end_time).into_iter().max(),
            "interrupted": false,
            "source": source,
        })
    }
}

/// The endpoint name of an import: the one given, else the files' URL (secrets redacted),
/// else the tool's name.
pub fn endpoint_name(given: &Option<String>, url: &Value, tool: &str) -> String {
    given.clone().unwrap_or_else(|| match url.as_str() {
        Some(u) if !u.is_empty() => crate::secrets::redact_url(u),
        _ => tool.into(),
    })
}

/// The workload name of an import: the one given, else `TOOL IN/OUT` from the lengths the
/// files name, else the tool's name.
pub fn workload_name(
    given: &Option<String>,
    tool: &str,
    input: Option<u64>,
    output: Option<u64>,
) -> String {
    given.clone().unwrap_or_else(|| match (input, output) {
        (Some(i), Some(o)) => format!("{tool} {i}/{o}"),
        _ => tool.into(),
    })
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
    let run_id = new_run_id(prefix, crate::wallclock::now());
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
