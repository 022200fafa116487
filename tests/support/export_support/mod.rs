//! Runs against the simulator shared by the export, history and import tests: each test
//! binary makes its runs once and reuses them. Each run's clock starts a minute after the
//! previous one's ([`next_clock`]), so their ids differ and sort in the order they were made.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Output;

use super::common::{bin, next_clock, on_sim, stderr, tmpdir, SimProcess};

/// The report binary's runs whose figures its tests assert (the knee at 8 of
/// [`saturating_run`], the search's answer of `report_support::search_run`) and its headless
/// Chromium take turns (see `common::lane`): such a run takes both units, a Chromium render
/// one. A request of those runs lasts 100-140 ms, and beside Chromium renders a debug client
/// turned around late enough between requests that the 8 slots stood idle (the knee at 8
/// read 8.7 % [0.5, 16.8] up to 32, not decided) or a search's lowest level was not held (no
/// answer).
pub static MACHINE: super::common::lane::Lane = super::common::lane::Lane::new(2);

/// A quick sweep (`-c LEVELS -n 24`, 64 in / 16 out, streaming) into `root`; returns the new
/// run's folder.
pub fn sim_run(root: &Path, levels: &str) -> PathBuf {
    let before: Vec<PathBuf> = runs_in(root);
    let o = next_clock(&mut on_sim("sweep", 64, 16))
        .args(["--stream", "-c", levels, "-n", "24", "--out"])
        .arg(root)
        .output()
        .expect("run rightsize sweep");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    runs_in(root)
        .into_iter()
        .find(|p| !before.contains(p))
        .expect("the sweep made a run folder")
}

/// The run folders under `root`.
pub fn runs_in(root: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(root)
        .map(|it| {
            it.filter_map(|e| e.ok())
                .map(|e| e.path())
                .filter(|p| p.is_dir())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// A fresh results root.
pub fn root(name: &str) -> PathBuf {
    tmpdir(name)
}

/// The run's id (its folder name).
pub fn id(run: &Path) -> String {
    run.file_name().unwrap().to_string_lossy().into_owned()
}

/// A sweep (`-c LEVELS -n 96`, 64 in / 64 out), with an e2e SLA when given, against a simulator
/// process with 8 batch slots, so the run has a real knee at 8. A request lasts about 140 ms
/// (64 steps of 11 ms at 5x): with 16 tokens out (35 ms) the 8 slots stood idle while a
/// debug client on a busy machine turned around between requests, the queue at 32 filled
/// those gaps, and throughput rose past 8 by more than the knee allows (no knee, beside a
/// release build). The config names that server
/// `sim`, so titles read as for the built-in one. 96 requests per level and a 5 % error limit
/// let a p90 SLA be decided (a p90 needs 36 values, a 5 % limit 73 requests without an error).
pub fn saturating_run(root: &Path, levels: &str, sla: Option<&str>) -> PathBuf {
    let sim = SimProcess::start(&["--max-num-seqs", "8", "--time-scale", "5"]);
    let cfg = root.with_extension("toml");
    std::fs::write(&cfg, format!("[endpoints.sim]\nurl = \"{}\"\n", sim.url)).unwrap();
    let before: Vec<PathBuf> = runs_in(root);
    let turn = MACHINE.alone();
    let o = next_clock(&mut bin())
        .args(["sweep", "--config"])
        .arg(&cfg)
        .args(["-e", "sim", "--input-tokens", "64", "--output-tokens", "64"])
        .args([
            "--stream",
            "-c",
            levels,
            "-n",
            "96",
            "--max-error-rate",
            "0.05",
        ])
        .args(sla.map(|s| ["--e2e-sla", s]).into_iter().flatten())
        .arg("--out")
        .arg(root)
        .output()
        .expect("run rightsize sweep");
    drop(turn);
    drop(sim);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    runs_in(root)
        .into_iter()
        .find(|p| !before.contains(p))
        .expect("the sweep made a run folder")
}

/// `rightsize ARGS --runs-dir ROOT`.
pub fn rs(root: &Path, args: &[&str]) -> Output {
    bin()
        .args(args)
        .arg("--runs-dir")
        .arg(root)
        .output()
        .expect("run rightsize")
}

/// `rightsize import ARGS --runs-dir ROOT`, which must succeed; returns its stderr (the
/// notes) and the new run's folder.
pub fn import_ok(root: &Path, args: &[&str]) -> (String, PathBuf) {
    let before = runs_in(root);
    let o = rs(root, &[&["import"], args].concat());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let dir = runs_in(root)
        .into_iter()
        .find(|p| !before.contains(p))
        .expect("a new run folder");
    (stderr(&o), dir)
}

/// `rightsize show RUN --json`: the run's echo, levels and summary.
pub fn show_json(root: &Path, run: &Path) -> serde_json::Value {
    let o = rs(root, &["show", &id(run), "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    serde_json::from_slice(&o.stdout).expect("show --json prints JSON")
}

/// `rightsize import ARGS --runs-dir ROOT`, which must refuse its input (exit 2); returns its
/// stderr.
pub fn import_refused(root: &Path, args: &[&str]) -> String {
    let o = rs(root, &[&["import"], args].concat());
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    stderr(&o)
}

/// The points of every polyline in `stroke` in an SVG chart.
pub fn polylines(doc: &roxmltree::Document, stroke: &str) -> Vec<Vec<(f64, f64)>> {
    doc.descendants()
        .filter(|n| n.has_tag_name("polyline") && n.attribute("stroke") == Some(stroke))
        .map(|n| {
            n.attribute("points")
                .unwrap()
                .split_whitespace()
                .map(|p| {
                    let (x, y) = p.split_once(',').unwrap();
                    (x.parse().unwrap(), y.parse().unwrap())
                })
                .collect()
        })
        .collect()
}

/// The HTML report parsed as the XHTML it is written as (its doctype allowed).
pub fn report_xhtml(html: &str) -> roxmltree::Document<'_> {
    roxmltree::Document::parse_with_options(
        html,
        roxmltree::ParsingOptions {
            allow_dtd: true,
            ..Default::default()
        },
    )
    .expect("the report is well-formed XHTML")
}
