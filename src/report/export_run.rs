//! Exporting a finished run: charts (PNG, SVG; optionally overlaying other runs), the one-file
//! HTML report, the level table as CSV, the whole run as JSON, one AIPerf
//! `profile_export_aiperf.json` per level, and one llm-d Benchmark Report v0.2 per level.
//! [`export_run`] is the one entry point, shared by `rightsize export` and the dashboard.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use serde_json::{json, Value};

use super::chart::{render_png, render_svg};
use super::export::{aiperf_export, levels_csv};
use super::history::{load_run, RunData};
use super::run_chart::chart_spec;

/// Default chart size (pixels).
pub const DEFAULT_SIZE: (u32, u32) = (1600, 900);

/// What to export. Each path may be a file or an existing folder (or end in `/`), in which
/// case the file is named after the run: `<run_id>.png`, or `<a>-vs-<b>.png` when comparing.
#[derive(Debug, Clone, PartialEq)]
pub struct ExportRequest {
    pub png: Option<PathBuf>,
    pub svg: Option<PathBuf>,
    /// The one-file HTML report (see `docs/export.md`).
    pub html: Option<PathBuf>,
    pub csv: Option<PathBuf>,
    pub json: Option<PathBuf>,
    /// A folder to receive `level-NNN-cCCCC/profile_export_aiperf.json`, one per level.
    pub aiperf: Option<PathBuf>,
    /// A folder to receive `benchmark_report_v0.2,_level-NNN-cCCCC.json`, one per level
    /// (`docs/formats.md`).
    pub benchmark_report: Option<PathBuf>,
    /// Other run folders to overlay on the charts and set beside the first run in the HTML
    /// report (CSV, JSON, AIPerf and Benchmark Report cover the first run).
    pub compare: Vec<PathBuf>,
    /// Chart size (width, height) in pixels.
    pub size: (u32, u32),
}

impl Default for ExportRequest {
    fn default() -> Self {
        ExportRequest {
            png: None,
            svg: None,
            html: None,
            csv: None,
            json: None,
            aiperf: None,
            benchmark_report: None,
            compare: Vec::new(),
            size: DEFAULT_SIZE,
        }
    }
}

impl ExportRequest {
    /// Nothing would be written.
    pub fn is_empty(&self) -> bool {
        self.png.is_none()
            && self.svg.is_none()
            && self.html.is_none()
            && self.csv.is_none()
            && self.json.is_none()
            && self.aiperf.is_none()
            && self.benchmark_report.is_none()
    }
}

/// Where to write: `path` itself, or `path/<default_name>` when `path` is a folder (exists as
/// one, or ends in a separator). Parent folders are created.
fn target(path: &Path, default_name: &str) -> anyhow::Result<PathBuf> {
    let as_dir = path.is_dir() || path.as_os_str().to_string_lossy().ends_with(['/', '\\']);
    let out = if as_dir {
        path.join(default_name)
    } else {
        path.to_path_buf()
    };
    if let Some(parent) = out.parent().filter(|p| !p.as_os_str().is_empty()) {
        fs::create_dir_all(parent)
            .with_context(|| format!("cannot create the folder {}", parent.display()))?;
    }
    Ok(out)
}

/// Writes an export whole or not at all (a full disk used to leave an empty file); the error
/// reads `cannot write PATH: OS error`.
fn write(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    super::folder::write_bytes_atomic(path, bytes).map_err(|e| anyhow::anyhow!("cannot write {e}"))
}

/// `v` as pretty JSON ending in a newline.
fn write_pretty(path: &Path, v: &Value) -> anyhow::Result<()> {
    let text = serde_json::to_string_pretty(v).context("cannot serialise a level")?;
    write(path, (text + "\n").as_bytes())
}

/// The AIPerf `input_config` echo of a level of `run`, plus the run's plan under
/// `rightsize_plan` (its SLAs and error-rate limit), so importing the export back reads the
/// levels as the run did.
fn input_config(run: &RunData, concurrency: u32, planned: u64) -> Value {
    let e = &run.echo;
    json!({
        "rightsize_plan": e["plan"],
        "endpoint": {
            "model_names": [e["endpoint"]["model"]],
            "streaming": e["workload"]["stream"],
            "url": e["endpoint"]["base_url"],
        },
        "loadgen": { "concurrency": concurrency, "request_count": planned },
        "input": { "prompt": {
            "input_tokens": { "mean": e["workload"]["input_tokens"],
                              "stddev": e["workload"]["input_tokens_stddev"] },
            "output_tokens": { "mean": e["workload"]["output_tokens"],
                               "stddev": e["workload"]["output_tokens_stddev"] },
        }},
    })
}

/// The run as the JSON export holds it: `{"run_id", "run", "summary", "levels"}`, pretty,
/// ending in a newline.
pub fn run_json_text(run: &RunData) -> anyhow::Result<String> {
    let v = json!({
        "run_id": run.info.id,
        "run": run.echo,
        "summary": run.summary,
        "levels": super::export::levels_json(&run.levels),
    });
    Ok(serde_json::to_string_pretty(&v).context("cannot serialise the run")? + "\n")
}

/// Exports the run in `run_dir` as `req` asks; returns the files written, in the order PNG,
/// SVG, HTML, CSV, JSON, AIPerf, Benchmark Report.
pub fn export_run(run_dir: &Path, req: &ExportRequest) -> anyhow::Result<Vec<PathBuf>> {
    let run = load_run(run_dir)
        .with_context(|| format!("cannot read the run in {}", run_dir.display()))?;
    let others = req
        .compare
        .iter()
        .map(|dir| {
            load_run(dir).with_context(|| format!("cannot read the run in {}", dir.display()))
        })
        .collect::<anyhow::Result<Vec<RunData>>>()?;
    let mut stem = run.info.id.clone();
    for o in &others {
        stem += &format!("-vs-{}", o.info.id);
    }
    let mut runs = vec![&run];
    runs.extend(others.iter());
    let mut written = Vec::new();
    if req.png.is_some() || req.svg.is_some() {
        let spec = chart_spec(&runs);
        if let Some(p) = &req.png {
            let path = target(p, &format!("{stem}.png"))?;
            write(&path, &render_png(&spec, req.size)?)?;
            written.push(path);
        }
        if let Some(p) = &req.svg {
            let path = target(p, &format!("{stem}.svg"))?;
            write(&path, render_svg(&spec, req.size)?.as_bytes())?;
            written.push(path);
        }
    }
    if let Some(p) = &req.html {
        let path = target(p, &format!("{stem}.html"))?;
        let now = crate::wallclock::rfc3339_utc(crate::wallclock::now());
        write(&path, super::html::report_html(&runs, &now)?.as_bytes())?;
        written.push(path);
    }
    if let Some(p) = &req.csv {
        let path = target(p, &format!("{}.csv", run.info.id))?;
        write(&path, levels_csv(&run.levels).as_bytes())?;
        written.push(path);
    }
    if let Some(p) = &req.json {
        let path = target(p, &format!("{}.json", run.info.id))?;
        write(&path, run_json_text(&run)?.as_bytes())?;
        written.push(path);
    }
    if let Some(dir) = &req.aiperf {
        fs::create_dir_all(dir)
            .with_context(|| format!("cannot create the folder {}", dir.display()))?;
        for l in &run.levels {
            let sub = dir.join(super::folder::level_stem(l));
            fs::create_dir_all(&sub)
                .with_context(|| format!("cannot create the folder {}", sub.display()))?;
            let mut v = aiperf_export(l, input_config(&run, l.concurrency, l.planned_requests));
            v["benchmark_id"] = json!(format!("{}-level-{:03}", run.info.id, l.index + 1));
            let path = sub.join("profile_export_aiperf.json");
            write_pretty(&path, &v)?;
            written.push(path);
        }
    }
    if let Some(dir) = &req.benchmark_report {
        fs::create_dir_all(dir)
            .with_context(|| format!("cannot create the folder {}", dir.display()))?;
        for l in &run.levels {
            let path = dir.join(super::benchmark_report::export::file_name(l));
            write_pretty(&path, &super::benchmark_report::export::report(&run, l))?;
            written.push(path);
        }
    }
    Ok(written)
}
