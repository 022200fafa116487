//! `rightsize import aiperf` end to end: hand-written AIPerf fixtures (a SageMaker-style folder
//! per concurrency, the same packed as a `.tar.gz`, an older export with fewer fields), and a
//! run recorded against the simulator, exported as AIPerf and imported back, which must give
//! the same levels and the same table as the native run.

use crate::support::common;
use crate::support::export_support;

use common::{stderr, stdout, tmpdir};
use export_support::{id, root, rs, runs_in, saturating_run};
use rightsize::metrics::LevelSummary;
use std::path::{Path, PathBuf};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/aiperf")
}

/// Packs every file under `dir` into `out` (.tar.gz) below `prefix/`.
fn tarball(dir: &Path, prefix: &str, out: &Path) {
    let file = std::fs::File::create(out).unwrap();
    let gz = flate2::write::GzEncoder::new(file, flate2::Compression::fast());
    let mut tar = tar::Builder::new(gz);
    tar.append_dir_all(prefix, dir).unwrap();
    tar.into_inner().unwrap().finish().unwrap();
}

/// Imports `path` into `root`; returns (stdout, the new run's folder).
fn import(root: &Path, path: &Path) -> (String, PathBuf) {
    let before = runs_in(root);
    let o = rs(root, &["import", "aiperf", path.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let dir = runs_in(root)
        .into_iter()
        .find(|p| !before.contains(p))
        .expect("a new run folder");
    (stdout(&o), dir)
}

/// The level table inside `show`'s output (from its header line to the blank line after).
fn table_of(show: &str) -> String {
    show.lines()
        .skip_while(|l| !l.starts_with("concurrency"))
        .take_while(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The `planning` section of `rightsize show`.
fn planning_of(show: &str) -> String {
    show.lines()
        .skip_while(|l| *l != "planning")
        .collect::<Vec<_>>()
        .join("\n")
}

fn show(root: &Path, run: &Path) -> String {
    let o = rs(root, &["show", run.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    stdout(&o)
}

#[test]
fn a_sagemaker_folder_imports_one_level_per_concurrency() {
    let r = root("import-folder");
    let (out, run) = import(&r, &fixtures().join("sagemaker"));
    assert!(out.contains("imported 3 level(s)"), "{out}");
    let levels = rightsize::report::load_levels(&run).unwrap();
    let cs: Vec<u32> = levels.iter().map(|l| l.concurrency).collect();
    assert_eq!(cs, vec![16, 64, 256]);
    let tps: Vec<f64> = levels.iter().map(LevelSummary::output_tps).collect();
    assert_eq!(tps, vec![492.5, 1433.4, 2823.4]);
    let top = &levels[2];
    assert_eq!(top.e2e_p50_ms(), Some(22800.0));
    assert_eq!(top.e2e_p99_ms(), Some(29900.0));
    assert_eq!(top.ttft_p95_ms(), Some(2984.0));
    assert_eq!(top.ok_count(), 1021);
    assert_eq!(top.error_count(), 3);
    assert_eq!(top.planned_requests, 1024);
    assert!((top.error_rate - 3.0 / 1024.0).abs() < 1e-12);
    assert_eq!(top.error_summary.len(), 2);
    assert_eq!(top.start_time, "2026-11-20T10:34:00.000000");

    let text = show(&r, &run);
    assert!(text.contains("(import-aiperf)"), "{text}");
    assert!(text.contains("model     Qwen/Qwen3-30B-A3B"), "{text}");
    assert!(
        text.contains("workload  aiperf 1024/256: 1024 in / 256 out, streaming"),
        "{text}"
    );
    assert!(text.contains("3 (0.3%)"), "{text}");
    let o = rs(&r, &["runs"]);
    assert!(stdout(&o).contains("import-aiperf"), "{}", stdout(&o));
    // an imported run charts like any other
    let png = tmpdir("import-png").join("c.png");
    let o = rs(
        &r,
        &[
            "export",
            &id(&run),
            "--png",
            png.to_str().unwrap(),
            "--size",
            "800x450",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(std::fs::metadata(&png).unwrap().len() > 1000);
}

#[test]
fn an_aiperf_0_13_export_reads_its_load_model_url_and_lengths_from_the_new_places() {
    // written from the 0.13 schema: the load in input_config.phases[] (no loadgen, and no
    // concurrency in the path), the model in models.items[], the URL in endpoint.urls[], the
    // lengths in datasets[].prompts
    let r = root("import-013");
    let (out, run) = import(&r, &fixtures().join("v013"));
    assert!(out.contains("imported 2 level(s)"), "{out}");
    let levels = rightsize::report::load_levels(&run).unwrap();
    let cs: Vec<u32> = levels.iter().map(|l| l.concurrency).collect();
    assert_eq!(cs, vec![4, 8]);
    // the newer per-run metric: the concurrency AIPerf kept
    assert_eq!(levels[0].achieved_concurrency, Some(3.9));
    assert_eq!(levels[1].achieved_concurrency, None);
    let echo: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("run.json")).unwrap()).unwrap();
    assert_eq!(echo["endpoint"]["name"], "http://10.0.0.7:8000");
    assert_eq!(echo["endpoint"]["base_url"], "http://10.0.0.7:8000");
    assert_eq!(echo["endpoint"]["model"], "Qwen/Qwen3-8B");
    assert_eq!(echo["workload"]["name"], "aiperf 32/16");
    assert_eq!(echo["workload"]["input_tokens"], 32);
    assert_eq!(echo["workload"]["output_tokens"], 16);
    assert_eq!(echo["request_count"], 64);
    let o = rs(&r, &["runs", "--json"]);
    let runs: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(runs[0]["endpoint"], "http://10.0.0.7:8000");
    assert_eq!(runs[0]["model"], "Qwen/Qwen3-8B");
    assert_eq!(runs[0]["workload"], "aiperf 32/16");
    // the older schema's loadgen concurrency still reads (the sagemaker fixtures name theirs
    // in the path; this one in input_config.loadgen)
    let dir = tmpdir("import-loadgen");
    let older =
        std::fs::read_to_string(fixtures().join("older/concurrency_32/profile_export_aiperf.json"))
            .unwrap()
            .replace(
                "\"input_config\": {",
                "\"input_config\": {\"loadgen\": {\"concurrency\": 12},",
            );
    std::fs::write(dir.join("profile_export_aiperf.json"), older).unwrap();
    let (_, run) = import(&r, &dir);
    let levels = rightsize::report::load_levels(&run).unwrap();
    assert_eq!(levels[0].concurrency, 12);
}

#[test]
fn a_sagemaker_tarball_imports_the_same_as_its_folder() {
    let r = root("import-tar");
    let tgz = tmpdir("tgz").join("benchmark-output.tar.gz");
    tarball(&fixtures().join("sagemaker"), "output/benchmark", &tgz);
    let (_, from_tar) = import(&r, &tgz);
    let (_, from_dir) = import(&r, &fixtures().join("sagemaker"));
    let a = rightsize::report::load_levels(&from_tar).unwrap();
    let b = rightsize::report::load_levels(&from_dir).unwrap();
    assert_eq!(a, b);
    assert_eq!(
        table_of(&show(&r, &from_tar)),
        table_of(&show(&r, &from_dir))
    );
}

#[test]
fn an_older_export_with_fewer_fields_imports_and_says_what_was_missing() {
    let r = root("import-old");
    let file = fixtures().join("older/concurrency_32/profile_export_aiperf.json");
    let o = rs(&r, &["import", "aiperf", file.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("request_latency: p1, p5, p10, p25, p75, p95, count not in the export"),
        "{err}"
    );
    let run = runs_in(&r).pop().unwrap();
    let levels = rightsize::report::load_levels(&run).unwrap();
    assert_eq!(levels.len(), 1);
    let l = &levels[0];
    assert_eq!(l.concurrency, 32, "from the folder name");
    assert_eq!(l.e2e_p99_ms(), Some(3900.0));
    assert_eq!(l.request_latency.as_ref().unwrap().count, 512);
    assert!(l.time_to_first_token.is_none());
    assert!((l.requests_per_sec() - 512.0 / 120.0).abs() < 1e-9);
}

#[test]
fn bad_input_names_the_file_and_the_fix() {
    let r = root("import-bad");
    let o = rs(&r, &["import", "aiperf", "/nonexistent/aiperf"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("no such file or folder"),
        "{}",
        stderr(&o)
    );

    let empty = tmpdir("import-empty");
    let o = rs(&r, &["import", "aiperf", empty.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("no profile_export_aiperf.json found"),
        "{}",
        stderr(&o)
    );

    let o = rs(
        &r,
        &[
            "import",
            "aiperf",
            fixtures().join("no-concurrency").to_str().unwrap(),
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(err.contains("results/profile_export_aiperf.json"), "{err}");
    assert!(err.contains("input_config.loadgen.concurrency"), "{err}");

    let junk = tmpdir("import-junk").join("profile_export_aiperf.json");
    std::fs::write(&junk, "{not json").unwrap();
    let o = rs(&r, &["import", "aiperf", junk.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("not JSON"), "{}", stderr(&o));
    assert!(
        runs_in(&r).is_empty(),
        "a failed import leaves no run behind"
    );
}

/// The fields the knee and the planner read.
fn planning_view(l: &LevelSummary) -> impl PartialEq + std::fmt::Debug {
    (
        l.concurrency,
        l.output_tps(),
        l.sustained_tps(),
        l.requests_per_sec(),
        l.request_latency.clone(),
        l.time_to_first_token.clone(),
        l.inter_token_latency.clone(),
        (l.ok_count(), l.error_count(), l.error_rate),
        l.errors_by_kind.clone(),
        l.partial,
    )
}

#[test]
fn a_native_run_exported_as_aiperf_imports_back_to_the_same_levels_knee_and_planning() {
    let r = root("import-roundtrip");
    // a run with a real knee (at 8, the simulator's batch slots)
    let native = saturating_run(&r, "4,8,16,32", None);
    let exported = tmpdir("aiperf-out");
    let o = rs(
        &r,
        &[
            "export",
            &id(&native),
            "--aiperf",
            exported.to_str().unwrap(),
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o).lines().count(), 4, "one export per level");

    // as a folder, and as the tarball a benchmark job would write
    let tgz = tmpdir("aiperf-tgz").join("job.tar.gz");
    tarball(&exported, "job", &tgz);
    let want = rightsize::report::load_levels(&native).unwrap();
    for source in [exported.clone(), tgz] {
        let (_, imported) = import(&r, &source);
        let got = rightsize::report::load_levels(&imported).unwrap();
        assert_eq!(got.len(), want.len());
        for (g, w) in got.iter().zip(&want) {
            assert_eq!(
                planning_view(g),
                planning_view(w),
                "level c={}",
                w.concurrency
            );
            assert_eq!(g.index, w.index);
            assert_eq!(g.start_time, w.start_time);
        }
        let (got, want) = (show(&r, &imported), show(&r, &native));
        assert_eq!(table_of(&got), table_of(&want), "the same table");
        // the same knee and planning numbers, computed from the imported levels
        assert!(planning_of(&want).contains("knee: 8 "), "{want}");
        // AIPerf's files carry no server telemetry: what bounded the server is known to the
        // native run only; everything else is the same
        assert!(
            planning_of(&want).contains("  bound: batch slots at "),
            "{want}"
        );
        assert!(
            planning_of(&got).contains("  bound: not known (no server telemetry"),
            "{got}"
        );
        let without_bound = |s: &str| {
            planning_of(s)
                .lines()
                .filter(|l| !l.starts_with("  bound: "))
                .collect::<Vec<_>>()
                .join("\n")
        };
        assert_eq!(
            without_bound(&got),
            without_bound(&want),
            "the same planning"
        );
    }
}
