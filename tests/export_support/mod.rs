//! Runs against the simulator shared by the export, history and import tests: each test
//! binary makes its runs once and reuses them.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::common::{bin, stderr, tmpdir};

/// A quick sweep (`-c LEVELS -n 24`, 64 in / 16 out, streaming) into `root`; returns the new
/// run's folder.
pub fn sim_run(root: &Path, levels: &str) -> PathBuf {
    let before: Vec<PathBuf> = runs_in(root);
    let o = bin()
        .args([
            "sweep",
            "-e",
            "sim",
            "--sim-time-scale",
            "50",
            "--input-tokens",
            "64",
            "--output-tokens",
            "16",
            "--stream",
            "-c",
            levels,
            "-n",
            "24",
            "--out",
        ])
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

/// Adds the knee and SLA line that the planner will record, as SPEC's summary keys.
pub fn add_knee_and_sla(run: &Path, knee: u32, sla_ms: f64) {
    let p = run.join("summary.json");
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
    v["knee"] = serde_json::json!({ "concurrency": knee });
    v["sla"] = serde_json::json!({ "e2e_ms": sla_ms });
    std::fs::write(&p, serde_json::to_string_pretty(&v).unwrap()).unwrap();
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
