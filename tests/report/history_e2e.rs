//! `rightsize runs`, `show` and `compare` end to end on runs made against the simulator, and
//! what a RUN that names no run says.

use crate::support::common;
use crate::support::export_support;

use common::{stderr, stdout};
use export_support::{id, root, rs, saturating_run, sim_run};
use std::path::PathBuf;
use std::sync::OnceLock;

/// Two runs in one root, made once for this test binary: (root, A, B).
fn runs() -> &'static (PathBuf, PathBuf, PathBuf) {
    static RUNS: OnceLock<(PathBuf, PathBuf, PathBuf)> = OnceLock::new();
    RUNS.get_or_init(|| {
        let r = root("history");
        // 140 ms a request; at 32 (four to a slot) about 600 ms: 32 passes
        let a = saturating_run(&r, "4,8,32", Some("p90:2s"));
        let b = sim_run(&r, "2,4,8");
        (r, a, b)
    })
}

#[test]
fn runs_lists_every_run_with_its_columns() {
    let (r, a, b) = runs();
    let o = rs(r, &["runs"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    let header = out.lines().next().unwrap();
    for col in [
        "id", "date", "endpoint", "model", "workload", "kind", "answer",
    ] {
        assert!(header.contains(col), "{header}");
    }
    let line_a = out
        .lines()
        .find(|l| l.starts_with(&id(a)))
        .expect("run A listed");
    assert!(
        line_a.contains("sim") && line_a.contains("sweep"),
        "{line_a}"
    );
    // a sweep's answer is what the CI gate compares: with an SLA, the best passing level
    assert!(line_a.contains("c=32"), "{line_a}");
    assert!(out.lines().any(|l| l.starts_with(&id(b))), "{out}");

    let o = rs(r, &["runs", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let list = v.as_array().unwrap();
    assert_eq!(list.len(), 2);
    assert_eq!(list[0]["kind"], "sweep");
    assert_eq!(list[0]["levels"], 3);
    assert_eq!(list[1]["levels"], 3);
}

#[test]
fn runs_in_an_empty_root_says_how_to_make_one() {
    let empty = root("history-empty");
    let o = rs(&empty, &["runs"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("no runs yet"));
}

#[test]
fn show_prints_the_table_and_planning_numbers_by_id_prefix_or_path() {
    let (r, a, _) = runs();
    let full = id(a);
    // the id is unique from its time stamp on: drop the kind suffix
    let prefix = full.trim_end_matches("-sweep");
    for spec in [full.as_str(), prefix, a.to_str().unwrap()] {
        let o = rs(r, &["show", spec]);
        assert_eq!(o.status.code(), Some(0), "{spec}: {}", stderr(&o));
        let out = stdout(&o);
        assert!(out.contains(&format!("run {full} (sweep)")), "{out}");
        assert!(
            out.contains("concurrency") && out.contains("e2e p99 ms"),
            "{out}"
        );
        // the level table's rows (the server table after it has one per level too)
        let levels = out.split("\nserver").next().unwrap_or(&out);
        let rows: Vec<&str> = levels
            .lines()
            .filter(|l| {
                let first = l.split_whitespace().next().unwrap_or("");
                first == "4" || first == "8"
            })
            .collect();
        assert_eq!(rows.len(), 2, "{out}");
        assert!(out.contains("knee: 8 "), "{out}");
        assert!(out.contains("by sla"), "{out}");
        assert!(
            out.contains("workload  rag: 64 in / 64 out, streaming"),
            "{out}"
        );
    }
    let o = rs(r, &["show", &full, "--json"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["knee"], 8);
    assert_eq!(v["levels"].as_array().unwrap().len(), 3);
}

#[test]
fn compare_prints_both_runs_level_by_level() {
    let (r, a, b) = runs();
    let o = rs(r, &["compare", &id(a), &id(b)]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains(&format!("A: run {}", id(a))), "{out}");
    assert!(out.contains(&format!("B: run {}", id(b))), "{out}");
    assert!(
        out.contains("A output tok/s") && out.contains("B e2e p99 ms"),
        "{out}"
    );
    // concurrency 2 only B measured: A's cells are dashes
    let row2 = out
        .lines()
        .find(|l| l.split_whitespace().next() == Some("2"))
        .expect("a row for concurrency 2");
    assert_eq!(row2.split_whitespace().nth(1), Some("-"), "{row2}");
    // B (the 256-slot simulator at 2, 4, 8) has no real knee; on a loaded machine the
    // client may flatten its curve, so only A's knee is asserted
    assert!(out.contains("knee: A c=8,"), "{out}");

    let o = rs(r, &["compare", &id(a), &id(b), "--json"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["b"]["levels"].as_array().unwrap().len(), 3);
}

#[test]
fn a_bad_run_lists_close_matches_and_exits_2() {
    let (r, a, _) = runs();
    let full = id(a);
    // one character wrong in the time stamp
    let mut typo: Vec<char> = full.chars().collect();
    typo[10] = if typo[10] == '9' { '8' } else { '9' };
    let typo: String = typo.into_iter().collect();
    let o = rs(r, &["show", &typo]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    let err = stderr(&o);
    assert!(err.contains(&format!("no run '{typo}'")), "{err}");
    assert!(
        err.contains("close matches") && err.contains(&full),
        "{err}"
    );
    assert!(err.contains("rightsize runs"), "{err}");

    // a prefix two runs share is ambiguous
    let o = rs(r, &["compare", "2", &full]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("matches 2 runs"), "{}", stderr(&o));

    let o = rs(r, &["export", "nope", "--csv", "/tmp"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("no run 'nope'"), "{}", stderr(&o));
}

#[test]
fn the_runs_folder_comes_from_the_config_else_the_data_dir() {
    let (r, a, _) = runs();
    let cfg = common::tmpdir("history-cfg").join("rightsize.toml");
    std::fs::write(
        &cfg,
        format!("[defaults]\nresults_dir = \"{}\"\n", r.display()),
    )
    .unwrap();
    let o = common::bin()
        .args(["--config", cfg.to_str().unwrap(), "runs"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains(&id(a)), "{}", stdout(&o));

    // no flag, no config entry: the platform data dir (XDG_DATA_HOME here)
    let data = common::tmpdir("history-xdg");
    let fixture =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/aiperf/sagemaker");
    let o = common::bin()
        .env("XDG_DATA_HOME", &data)
        .args(["import", "aiperf", fixture.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains(&data.join("rightsize/runs").display().to_string()));
    let o = common::bin()
        .env("XDG_DATA_HOME", &data)
        .args(["runs"])
        .output()
        .unwrap();
    assert!(stdout(&o).contains("import-aiperf"), "{}", stdout(&o));
}
