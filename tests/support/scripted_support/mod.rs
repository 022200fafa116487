//! A search run's folder as the engine writes it, from scripted levels (every request of a
//! level takes the same time, so every figure drawn from it is the same each time): e2e p99
//! <= 1.5 s, a peak of 2000 and a price of 4 per hour; answer 189, bracket 189 to 203. The
//! dashboard tests (`tests/dashboard/dashboard_daily.rs`) and the README's images
//! (`benches/readme_images.rs`) both read it.

#![allow(dead_code)]

use rightsize::metrics::fixtures::level;
use rightsize::metrics::LevelSummary;
use rightsize::plan::capacity::{CapacityInputs, Peak};
use rightsize::plan::judge::SlaSet;
use rightsize::plan::search::SearchConfig;
use rightsize::plan::{Analysis, LevelPlanner, SearchPlanner};
use rightsize::record::sla::{SlaMetric, SlaThreshold};
use serde_json::json;
use std::path::{Path, PathBuf};

/// The scripted search's id.
pub const ID: &str = "20261129-090000-search";

/// Writes the run folder under `runs` and returns it.
pub fn scripted_search(runs: &Path) -> PathBuf {
    let id = ID;
    let analysis = Analysis {
        slas: SlaSet(vec![
            SlaThreshold::parse(SlaMetric::E2e, "p99:1.5s").expect("an SLA")
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
    // (concurrency, TTFT ms, e2e ms) in the order a search would measure them
    let levels: Vec<_> = [
        (16, 11, 180),
        (32, 23, 235),
        (64, 98, 377),
        (128, 303, 708),
        (256, 726, 1700),
        (180, 325, 906),
        (213, 1130, 1600),
        (203, 775, 1560),
        (189, 517, 1090),
    ]
    .into_iter()
    .enumerate()
    .map(|(i, (c, ttft, e2e))| {
        let mut l = level(i as u32, c, 1024, ttft, e2e, 256, None);
        planner.judge(&mut l);
        l
    })
    .collect();
    write_run(runs, id, "search", &planner, &levels)
}

/// A run folder as the engine writes it: `run.json`, a file per level, `summary.json`.
pub fn write_run(
    root: &Path,
    id: &str,
    kind: &str,
    planner: &dyn LevelPlanner,
    levels: &[LevelSummary],
) -> PathBuf {
    let run = root.join(id);
    std::fs::create_dir_all(&run).unwrap();
    for l in levels {
        let name = format!("level-{:03}-c{:04}.json", l.index + 1, l.concurrency);
        std::fs::write(run.join(name), serde_json::to_string_pretty(l).unwrap()).unwrap();
    }
    let echo = json!({
        "tool": "rightsize", "version": "0.1.0", "run_id": id, "kind": kind,
        "endpoint": {"name": "sim", "model": "sim-moe-30b-a3b"},
        "workload": {"name": "rag", "input_tokens": 1024, "output_tokens": 256, "stream": true},
        "plan": planner.describe(),
        "started_at": "2026-11-29T09:00:00.000Z", "ended_at": "2026-11-29T09:10:00.000Z",
        "interrupted": false,
    });
    std::fs::write(run.join("run.json"), echo.to_string()).unwrap();
    let mut summary = json!({"run_id": id, "kind": kind, "interrupted": false, "levels": levels});
    if let (Some(s), serde_json::Value::Object(extra)) =
        (summary.as_object_mut(), planner.report(levels))
    {
        s.extend(extra);
    }
    std::fs::write(run.join("summary.json"), summary.to_string()).unwrap();
    run
}
