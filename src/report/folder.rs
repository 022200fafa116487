//! The results folder of a run: one directory per run under the user's data directory.
//!
//! ```text
//! <root>/<run_id>/
//!   run.json                the run's echo (version, endpoint without secrets, workload, plan)
//!   level-001-c0064.json    one LevelSummary per level, written atomically as the level ends
//!   requests.jsonl          one RequestRecord per line, with its level
//!   summary.json            knee, search result, planning numbers (absent if interrupted)
//! ```
//!
//! Every JSON file is written to `<name>.tmp` in the same folder, fsynced and renamed, so a
//! reader (or an interrupted run) sees either the old file, the whole new one, or none.

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::engine::sink::RunEcho;
use crate::engine::sink::RunSink;
use crate::metrics::LevelSummary;
use crate::record::RequestRecord;
use crate::telemetry::level::TelemetryLine;

/// File name of the run's echo.
pub const RUN_FILE: &str = "run.json";
/// File name of the run's summary.
pub const SUMMARY_FILE: &str = "summary.json";
/// File name of the per-request log.
pub const REQUESTS_FILE: &str = "requests.jsonl";
/// File name of the server's samples (`docs/telemetry.md`).
pub const TELEMETRY_FILE: &str = "telemetry.jsonl";

/// The platform data directory for runs (`.../rightsize/runs`), when the platform has one.
pub fn default_root() -> Option<PathBuf> {
    directories::ProjectDirs::from("dev", "rightsize", "rightsize")
        .map(|d| d.data_dir().join("runs"))
}

/// File name of a level: `level-001-c0064.json` for the level at 0-based `index` 0 run at
/// concurrency 64 (the number in the name is 1-based).
pub fn level_file_name(index: u32, concurrency: u32) -> String {
    format!("level-{:03}-c{:04}.json", u64::from(index) + 1, concurrency)
}

/// A level's file name without `.json`: `level-001-c0064` for a closed loop,
/// `level-002-rate-2.5rps` for a fixed rate, `level-001-schedule`, `level-001-replay`.
pub fn level_stem(level: &LevelSummary) -> String {
    use crate::workload::arrivals::LoadShape;
    let n = u64::from(level.index) + 1;
    match level.open_loop.rate.as_ref().map(|r| &r.shape) {
        None => level_file_name(level.index, level.concurrency).replace(".json", ""),
        Some(LoadShape::Rate { rps }) => {
            format!("level-{n:03}-rate-{}rps", crate::values::fmt_rps(*rps))
        }
        Some(LoadShape::Replay { .. }) => format!("level-{n:03}-replay"),
        Some(_) => format!("level-{n:03}-schedule"),
    }
}

/// `e` with `path` in front of its message: every error of the results names its file.
pub fn naming(path: &Path, e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("{}: {e}", path.display()))
}

fn tmp_path(path: &Path) -> io::Result<PathBuf> {
    let name = path.file_name().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} has no file name", path.display()),
        )
    })?;
    let mut tmp = name.to_os_string();
    tmp.push(".tmp");
    Ok(path.with_file_name(tmp))
}

/// Writes `value` as pretty JSON to `path` atomically (see [`write_atomic`]).
pub fn write_json_atomic<T: Serialize + ?Sized>(path: &Path, value: &T) -> io::Result<()> {
    write_atomic(path, |out| {
        serde_json::to_writer_pretty(&mut *out, value)?;
        out.write_all(b"\n")
    })
}

/// Writes `bytes` to `path` atomically (see [`write_atomic`]): an export that cannot be
/// written whole leaves no empty or cut file behind.
pub fn write_bytes_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_atomic(path, |out| out.write_all(bytes))
}

/// Writes what `fill` writes to `path` atomically: into `<name>.tmp` beside it, fsync,
/// rename over `path`, then fsync the folder (best effort) so the rename is durable. A
/// failure leaves `path` as it was, removes the temporary file, and names `path`.
fn write_atomic(
    path: &Path,
    fill: impl FnOnce(&mut BufWriter<File>) -> io::Result<()>,
) -> io::Result<()> {
    let tmp = tmp_path(path)?;
    let written = (|| {
        let file = File::create(&tmp)?;
        let mut out = BufWriter::new(file);
        fill(&mut out)?;
        let file = out.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()?;
        fs::rename(&tmp, path)
    })();
    if let Err(e) = written {
        let _ = fs::remove_file(&tmp);
        return Err(naming(path, e));
    }
    if let Some(dir) = path.parent() {
        // Directory fsync is not supported everywhere (e.g. Windows); the data is already safe
        // in the file, so a failure here is not worth failing the run for.
        if let Ok(d) = File::open(if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        }) {
            let _ = d.sync_all();
        }
    }
    Ok(())
}

/// Reads a JSON file into `T`; the error names the file.
pub fn read_json<T: DeserializeOwned>(path: &Path) -> io::Result<T> {
    let file = File::open(path)?;
    serde_json::from_reader(BufReader::new(file)).map_err(|e| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{}: {e}", path.display()),
        )
    })
}

/// One run's folder.
#[derive(Debug, Clone)]
pub struct ResultsDir {
    path: PathBuf,
    run_id: String,
}

impl ResultsDir {
    /// Creates `root/run_id/` (and `root` if needed). A run never writes into another run's
    /// folder: if `run_id` is taken, `run_id-2`, `run_id-3`, ... are tried.
    /// Errors name the folder.
    pub fn create(root: &Path, run_id: &str) -> io::Result<ResultsDir> {
        fs::create_dir_all(root).map_err(|e| naming(root, e))?;
        for n in 1..=99u32 {
            let id = if n == 1 {
                run_id.to_string()
            } else {
                format!("{run_id}-{n}")
            };
            let path = root.join(&id);
            match fs::create_dir(&path) {
                Ok(()) => return Ok(ResultsDir { path, run_id: id }),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(naming(&path, e)),
            }
        }
        Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!("{}: run id {run_id} taken 99 times", root.display()),
        ))
    }

    /// An existing run folder (for reading back).
    pub fn open(path: &Path) -> io::Result<ResultsDir> {
        if !path.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("{} is not a run folder", path.display()),
            ));
        }
        let run_id = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        Ok(ResultsDir {
            path: path.to_path_buf(),
            run_id,
        })
    }

    /// The folder.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The run id (the folder's name).
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// Writes the run's echo to `run.json`.
    pub fn write_run<T: Serialize + ?Sized>(&self, echo: &T) -> io::Result<PathBuf> {
        let path = self.path.join(RUN_FILE);
        write_json_atomic(&path, echo)?;
        Ok(path)
    }

    /// Writes a finished level to `level-NNN-cCCCC.json` (see [`level_stem`]).
    pub fn write_level(&self, level: &LevelSummary) -> io::Result<PathBuf> {
        // every level the test suite makes is checked here (debug builds only)
        debug_assert_eq!(
            level.intervals_hold_estimates(),
            Ok(()),
            "{}",
            level_stem(level)
        );
        let path = self.path.join(format!("{}.json", level_stem(level)));
        write_json_atomic(&path, level)?;
        Ok(path)
    }

    /// Writes the run's summary to `summary.json`.
    pub fn write_summary<T: Serialize + ?Sized>(&self, summary: &T) -> io::Result<PathBuf> {
        let path = self.path.join(SUMMARY_FILE);
        write_json_atomic(&path, summary)?;
        Ok(path)
    }

    /// Opens `requests.jsonl` for appending.
    pub fn request_log(&self) -> io::Result<JsonLinesFile> {
        JsonLinesFile::open(&self.path.join(REQUESTS_FILE))
    }

    /// Opens `telemetry.jsonl` for appending.
    pub fn telemetry_log(&self) -> io::Result<JsonLinesFile> {
        JsonLinesFile::open(&self.path.join(TELEMETRY_FILE))
    }

    /// Every level of the run, sorted by index.
    pub fn load_levels(&self) -> io::Result<Vec<LevelSummary>> {
        load_levels(&self.path)
    }

    /// The run's summary, or `None` if the run did not write one (e.g. it was interrupted).
    pub fn load_summary<T: DeserializeOwned>(&self) -> io::Result<Option<T>> {
        let path = self.path.join(SUMMARY_FILE);
        if !path.exists() {
            return Ok(None);
        }
        read_json(&path).map(Some)
    }
}

/// Loads every `level-*.json` in `dir`, sorted by level index. Works whether or not the run
/// finished (`summary.json` is not needed); leftover `.tmp` files are ignored; a level file that
/// does not parse is an error naming it.
pub fn load_levels(dir: &Path) -> io::Result<Vec<LevelSummary>> {
    let mut levels = Vec::new();
    for entry in fs::read_dir(dir)? {
        let path = entry?.path();
        let is_level = path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("level-") && n.ends_with(".json"));
        if is_level {
            levels.push(read_json::<LevelSummary>(&path)?);
        }
    }
    levels.sort_by_key(|l| l.index);
    Ok(levels)
}

/// The run folders under `root`, oldest first (run ids sort by time), the runs of a campaign
/// folder (one holding `campaign.json`, see docs/campaigns.md) in its place. A missing root is
/// empty.
pub fn list_runs(root: &Path) -> io::Result<Vec<PathBuf>> {
    let mut runs = Vec::new();
    for path in sub_dirs(root)? {
        if path.join("campaign.json").is_file() {
            runs.extend(sub_dirs(&path)?);
        } else {
            runs.push(path);
        }
    }
    Ok(runs)
}

/// The folders in `dir`, sorted; a missing `dir` has none.
fn sub_dirs(dir: &Path) -> io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    match fs::read_dir(dir) {
        Ok(entries) => {
            for entry in entries {
                let path = entry?.path();
                if path.is_dir() {
                    out.push(path);
                }
            }
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    out.sort();
    Ok(out)
}

/// One line of `requests.jsonl`: the record with the level (0-based index) it belongs to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RequestLine {
    pub level: u32,
    #[serde(flatten)]
    pub record: RequestRecord,
}

#[derive(Serialize)]
struct RequestLineRef<'a> {
    level: u32,
    #[serde(flatten)]
    record: &'a RequestRecord,
}

/// How many bytes of whole lines [`JsonLinesFile`] gathers before writing them out.
const REQUESTS_BUFFER: usize = 64 * 1024;

/// Appends JSON lines (request records to `requests.jsonl`, server samples to
/// `telemetry.jsonl`), one object per line, through a buffer of whole lines. Call
/// [`JsonLinesFile::flush`] at the end of each level.
///
/// The file only ever ends in a whole line: a write that fails part-way (a full disk) is cut
/// back to the last whole line before the error is returned, and every later call returns an
/// error without writing. Errors name the file.
#[derive(Debug)]
pub struct JsonLinesFile {
    path: PathBuf,
    file: File,
    buf: Vec<u8>,
    /// The file's length in whole lines written.
    written: u64,
    failed: bool,
}

impl JsonLinesFile {
    /// Opens (creating if needed) `path` for appending.
    pub fn open(path: &Path) -> io::Result<JsonLinesFile> {
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|e| naming(path, e))?;
        let written = file.metadata().map_err(|e| naming(path, e))?.len();
        Ok(JsonLinesFile {
            path: path.to_path_buf(),
            file,
            buf: Vec::with_capacity(REQUESTS_BUFFER),
            written,
            failed: false,
        })
    }

    /// Appends one record of level `level`.
    pub fn append(&mut self, level: u32, record: &RequestRecord) -> io::Result<()> {
        self.append_line(&RequestLineRef { level, record })
    }

    /// Appends one line.
    pub fn append_line<T: Serialize>(&mut self, line: &T) -> io::Result<()> {
        self.usable()?;
        let mark = self.buf.len();
        if let Err(e) = serde_json::to_writer(&mut self.buf, line) {
            self.buf.truncate(mark);
            return Err(naming(&self.path, e.into()));
        }
        self.buf.push(b'\n');
        if self.buf.len() >= REQUESTS_BUFFER {
            self.write_out()?;
        }
        Ok(())
    }

    /// Writes the buffer out and syncs the file's data to disk.
    pub fn flush(&mut self) -> io::Result<()> {
        self.usable()?;
        self.write_out()?;
        self.file.sync_data().map_err(|e| self.fail(e))
    }

    fn usable(&self) -> io::Result<()> {
        if self.failed {
            return Err(naming(
                &self.path,
                io::Error::other("an earlier write failed"),
            ));
        }
        Ok(())
    }

    fn write_out(&mut self) -> io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        if let Err(e) = self.file.write_all(&self.buf) {
            // whatever part of the buffer got in ends mid-line: cut it off
            let _ = self.file.set_len(self.written);
            return Err(self.fail(e));
        }
        self.written += self.buf.len() as u64;
        self.buf.clear();
        Ok(())
    }

    fn fail(&mut self, e: io::Error) -> io::Error {
        self.failed = true;
        self.buf.clear();
        naming(&self.path, e)
    }
}

/// The results folder as the engine's sink: `root/<run id>/` made when the run opens, each
/// file written atomically as the engine hands it over, `requests.jsonl` appended through a
/// buffer that is synced at each level's end.
pub struct FolderSink {
    root: PathBuf,
    dir: Option<ResultsDir>,
    log: Option<JsonLinesFile>,
    /// Opened with the first sample: a run against a server without metrics has no file.
    telemetry: Option<JsonLinesFile>,
}

impl FolderSink {
    /// Runs go into folders of their own under `root`.
    pub fn new(root: PathBuf) -> FolderSink {
        FolderSink {
            root,
            dir: None,
            log: None,
            telemetry: None,
        }
    }

    fn dir(&self) -> io::Result<&ResultsDir> {
        self.dir.as_ref().ok_or_else(not_open)
    }
}

fn not_open() -> io::Error {
    io::Error::other("the run's folder is not open yet")
}

impl RunSink for FolderSink {
    fn open(&mut self, run_id: &str) -> io::Result<(String, PathBuf)> {
        let dir = ResultsDir::create(&self.root, run_id)?;
        self.log = Some(dir.request_log()?);
        let opened = (dir.run_id().to_string(), dir.path().to_path_buf());
        self.dir = Some(dir);
        Ok(opened)
    }

    fn write_run(&mut self, echo: &RunEcho) -> io::Result<()> {
        self.dir()?.write_run(echo).map(drop)
    }

    fn append_request(&mut self, level: u32, record: &RequestRecord) -> io::Result<()> {
        self.log
            .as_mut()
            .ok_or_else(not_open)?
            .append(level, record)
    }

    fn flush_requests(&mut self) -> io::Result<()> {
        self.log.as_mut().ok_or_else(not_open)?.flush()
    }

    fn append_telemetry(&mut self, lines: &[TelemetryLine]) -> io::Result<()> {
        if lines.is_empty() {
            return Ok(());
        }
        if self.telemetry.is_none() {
            self.telemetry = Some(self.dir()?.telemetry_log()?);
        }
        let file = self.telemetry.as_mut().ok_or_else(not_open)?;
        for line in lines {
            file.append_line(line)?;
        }
        file.flush()
    }

    fn write_level(&mut self, level: &LevelSummary) -> io::Result<()> {
        self.dir()?.write_level(level).map(drop)
    }

    fn write_summary(&mut self, summary: &serde_json::Value) -> io::Result<()> {
        self.dir()?.write_summary(summary).map(drop)
    }
}

/// Reads every line of a `requests.jsonl`; the error names the file and line.
pub fn load_requests(path: &Path) -> io::Result<Vec<RequestLine>> {
    let reader = BufReader::new(File::open(path)?);
    let mut lines = Vec::new();
    for (n, line) in reader.lines().enumerate() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let parsed = serde_json::from_str(&line).map_err(|e| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("{}:{}: {e}", path.display(), n + 1),
            )
        })?;
        lines.push(parsed);
    }
    Ok(lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn level_file_names() {
        assert_eq!(level_file_name(0, 64), "level-001-c0064.json");
        assert_eq!(level_file_name(11, 1024), "level-012-c1024.json");
        assert_eq!(level_file_name(0, 12345), "level-001-c12345.json");
    }

    #[test]
    fn tmp_name_sits_beside_the_file() {
        let p = tmp_path(Path::new("/a/b/level-001-c0064.json")).unwrap();
        assert_eq!(p, Path::new("/a/b/level-001-c0064.json.tmp"));
    }

    #[test]
    fn default_root_ends_in_runs() {
        if let Some(root) = default_root() {
            assert!(root.ends_with("runs"));
        }
    }
}
