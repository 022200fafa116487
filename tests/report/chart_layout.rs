//! The exported charts' layout (issue 46), checked from the SVG ([`chart_support`]): no two
//! texts overlap, no text or legend covers a data marker, and every measured level has its
//! tick label or a tick mark. Over a search (with server metrics and a right-size), a sweep
//! at 16,64,256,1024, the two overlaid, a ten-level sweep and a campaign's Pareto chart, at
//! the default size and at the smallest. The runs are written from scripted levels (every
//! request of a level takes the same time), so the images are the same every time.

use crate::support::chart_support;
use crate::support::common;
use crate::support::scripted_support;

use common::tmpdir;
use rightsize::metrics::fixtures::level;
use rightsize::metrics::LevelSummary;
use rightsize::plan::capacity::{CapacityInputs, Peak};
use rightsize::plan::judge::SlaSet;
use rightsize::plan::search::SearchConfig;
use rightsize::plan::{Analysis, LevelPlanner, SearchPlanner, SweepPlanner};
use rightsize::record::sla::{SlaMetric, SlaThreshold};
use rightsize::record::{GpuSummary, MeanMax, ServerSummary};
use rightsize::report::chart::{MAX_SIZE, MIN_SIZE};
use rightsize::report::export_run::DEFAULT_SIZE;
use rightsize::report::{export_run, ExportRequest};
use scripted_support::write_run;
use std::path::{Path, PathBuf};

/// What a vLLM server's metrics would say at `c` concurrent requests on 128 slots.
fn server_at(c: u32) -> ServerSummary {
    let c = f64::from(c);
    let mm = |mean: f64| Some(MeanMax { mean, max: mean });
    ServerSummary {
        scheme: "vllm".into(),
        samples: 4,
        running: mm(c.min(128.0)),
        waiting: mm((c - 128.0).max(0.0)),
        kv_cache_usage: mm((c / 200.0).min(0.97)),
        preemptions: Some(0.0),
        gpu: Some(GpuSummary {
            gpus: 1,
            power_w: mm(300.0 + c.min(128.0) * 1.2),
            ..GpuSummary::default()
        }),
        ..ServerSummary::default()
    }
}

/// (concurrency, TTFT ms, e2e ms) levels judged by `planner`, with server metrics when
/// `server`.
fn levels(
    planner: &dyn LevelPlanner,
    script: &[(u32, u64, u64)],
    server: bool,
) -> Vec<LevelSummary> {
    script
        .iter()
        .enumerate()
        .map(|(i, &(c, ttft, e2e))| {
            let mut l = level(i as u32, c, 1024, ttft, e2e, 256, None);
            planner.judge(&mut l);
            if server {
                l.server = Some(server_at(c));
            }
            l
        })
        .collect()
}

/// A search with e2e p99 <= 1.5 s and TTFT p95 <= 500 ms, a peak of 2000 and a price of 4
/// an hour, its levels crowded around the answer as a search's are (the shape of the search
/// the issue exported: answer 189, bracket 189 to 203, levels 8 % apart above 180).
fn search(root: &Path) -> (PathBuf, Vec<u32>) {
    let analysis = Analysis {
        slas: SlaSet(vec![
            SlaThreshold::parse(SlaMetric::E2e, "p99:1.5s").unwrap(),
            SlaThreshold::parse(SlaMetric::Ttft, "p95:900ms").unwrap(),
        ]),
        search: Some(SearchConfig::default()),
        max_error_rate: 0.01,
        capacity: CapacityInputs {
            peak: Some(Peak::Concurrency(2000.0)),
            headroom: 0.2,
            price_per_hour: Some(4.0),
        },
    };
    let planner = SearchPlanner::new(SearchConfig::default(), analysis);
    let script = [
        (16, 11, 180),
        (32, 23, 235),
        (64, 98, 377),
        (128, 303, 708),
        (256, 726, 1700),
        (180, 325, 906),
        (213, 1130, 1600),
        (203, 775, 1560),
        (189, 517, 1090),
    ];
    let lv = levels(&planner, &script, true);
    let run = write_run(root, "20261129-090000-search", "search", &planner, &lv);
    (run, script.iter().map(|s| s.0).collect())
}

/// A sweep at `cs` (TTFT and e2e growing with the load), no SLA.
fn sweep(root: &Path, id: &str, cs: &[u32]) -> (PathBuf, Vec<u32>) {
    let planner = SweepPlanner::fixed(cs.to_vec());
    let script: Vec<(u32, u64, u64)> = cs
        .iter()
        .map(|&c| (c, 10 + u64::from(c) * 2, 150 + u64::from(c) * 6))
        .collect();
    let lv = levels(&planner, &script, false);
    (write_run(root, id, "sweep", &planner, &lv), cs.to_vec())
}

/// The run's chart as SVG, at `size`, with `compare` overlaid.
fn svg_of(run: &Path, compare: &[PathBuf], size: (u32, u32)) -> String {
    let out = tmpdir("chart-layout-svg").join("chart.svg");
    let req = ExportRequest {
        svg: Some(out.clone()),
        compare: compare.to_vec(),
        size,
        ..ExportRequest::default()
    };
    export_run(run, &req).expect("export");
    std::fs::read_to_string(out).unwrap()
}

/// The levels of several runs, each once.
fn union(lists: &[&[u32]]) -> Vec<u32> {
    let mut v: Vec<u32> = lists.iter().flat_map(|l| l.iter().copied()).collect();
    v.sort_unstable();
    v.dedup();
    v
}

fn assert_clean(what: &str, svg: &str, levels: &[u32]) {
    let found = chart_support::problems(svg, levels);
    if !found.is_empty() {
        let path = tmpdir("chart-layout-failed").join(format!("{}.svg", what.replace(' ', "-")));
        std::fs::write(&path, svg).unwrap();
        panic!(
            "{what}: {} layout problems (the SVG is at {}):\n{}",
            found.len(),
            path.display(),
            found.join("\n")
        );
    }
}

#[test]
fn the_check_finds_what_was_wrong_with_the_search_chart_before_issue_46() {
    // the chart `export` drew of a default search on the built-in simulator (e2e p99 <= 1.5 s,
    // TTFT p95 <= 500 ms, 512 requests a level, time scale 20) before the layout was redone
    let svg = include_str!("../support/chart_support/search_before_46.svg");
    let levels = [16, 32, 64, 128, 180, 189, 198, 205, 212, 256];
    let found = chart_support::problems(svg, &levels);
    eprintln!("{}", found.join("\n"));
    let has = |pat: &[&str]| found.iter().any(|f| pat.iter().all(|p| f.contains(p)));
    // the answer's name at the top of the server panel ran into the GPU-use markers
    assert!(
        has(&["'answer c=128'", "covers a data marker"]),
        "{found:#?}"
    );
    // the throughput-against-latency labels of the crowded levels lay on their points
    assert!(has(&["'c=256'", "covers a data marker"]), "{found:#?}");
    // the server panel's legend lay over its GPU-use markers
    assert!(has(&["legend frame", "covers a data marker"]), "{found:#?}");
    // levels 189 to 212 had neither a tick label nor a mark, on every load axis
    for c in [189, 198, 205, 212] {
        assert!(has(&[&format!("level {c} ")]), "{c}: {found:#?}");
    }
}

#[test]
fn no_text_covers_another_or_a_point_and_every_level_is_on_its_axis() {
    let root = tmpdir("chart-layout");
    let (search, s_levels) = search(&root);
    let (sweep4, w_levels) = sweep(&root, "20261129-100000-sweep", &[16, 64, 256, 1024]);
    let ten = [16, 20, 24, 32, 40, 48, 64, 80, 96, 128];
    let (sweep10, t_levels) = sweep(&root, "20261129-110000-sweep", &ten);
    assert!(MIN_SIZE.0 <= DEFAULT_SIZE.0 && DEFAULT_SIZE.0 <= MAX_SIZE.0);
    for size in [DEFAULT_SIZE, MIN_SIZE] {
        let at = |what: &str| format!("{what} at {}x{}", size.0, size.1);
        let svg = svg_of(&search, &[], size);
        assert_clean(&at("search"), &svg, &s_levels);
        let svg = svg_of(&sweep4, &[], size);
        assert_clean(&at("sweep"), &svg, &w_levels);
        let svg = svg_of(&sweep10, &[], size);
        assert_clean(&at("ten-level sweep"), &svg, &t_levels);
        let svg = svg_of(&search, std::slice::from_ref(&sweep4), size);
        assert_clean(&at("overlay"), &svg, &union(&[&s_levels, &w_levels]));
        let svg = rightsize::report::chart::render_pareto_svg(&pareto(), size).unwrap();
        assert_clean(&at("campaign Pareto chart"), &svg, &[]);
    }
}

/// A campaign's Pareto chart of four candidates, two of them close together.
fn pareto() -> rightsize::report::chart::pareto::ParetoSpec {
    use rightsize::report::chart::pareto::{ParetoPoint, ParetoSpec};
    let p = |label: &str, x: f64, y: f64| ParetoPoint {
        label: label.into(),
        x,
        x_range: (x * 0.9, x * 1.1),
        y,
        y_range: (y * 0.95, y * 1.05),
    };
    ParetoSpec {
        title: "campaign gpus: cost per million output tokens at the SLA".into(),
        subtitle: "started 2026-11-29 09:00".into(),
        x_label: "p99 e2e at the answer (ms)".into(),
        points: vec![
            p("h100 tp1", 900.0, 0.021),
            p("h100 tp2", 940.0, 0.020),
            p("a100 tp1", 1300.0, 0.014),
            p("l40s tp1", 1450.0, 0.030),
        ],
    }
}

#[test]
fn the_right_size_box_is_on_the_chart_only_when_a_peak_or_price_was_set() {
    let root = tmpdir("chart-layout-right-size");
    let (search, _) = search(&root);
    let (sweep4, _) = sweep(&root, "20261129-100000-sweep", &[16, 64, 256, 1024]);
    let texts = |svg: &str| -> String {
        chart_support::parse(svg)
            .texts
            .into_iter()
            .map(|t| t.text)
            .collect::<Vec<_>>()
            .join("\n")
    };
    let with = texts(&svg_of(&search, &[], DEFAULT_SIZE));
    // the same words and figures as `show`'s right-size line
    let shown = std::process::Command::new(env!("CARGO_BIN_EXE_rightsize"))
        .arg("show")
        .arg(&search)
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&shown.stdout).into_owned();
    let line = shown
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("right-size: "))
        .unwrap_or_else(|| panic!("no right-size in show:\n{shown}"));
    let flat = with.replace('\n', " ");
    assert!(
        flat.contains(line),
        "'{line}' not in the chart's texts:\n{with}"
    );
    // a search's marker is its answer, a sweep's its ideal balance; loads in full
    assert!(with.contains("answer c=189"), "{with}");
    let without = texts(&svg_of(&sweep4, &[], DEFAULT_SIZE));
    assert!(!without.contains("right-size"), "{without}");
    assert!(without.contains("ideal balance c="), "{without}");
    assert!(!without.lines().any(|t| t == "1k"), "{without}");
    assert!(without.lines().any(|t| t == "1024"), "{without}");
}
