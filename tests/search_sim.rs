//! Acceptance: against the simulator, a dense sweep finds the true SLA boundary, then the
//! search over 16..4096 lands within 5 % of it using at most 7 levels, for each latency SLA
//! kind alone and for e2e plus TTFT together. Tail percentiles of 128 requests move with
//! every scheduling hiccup of a busy machine, so every case compares means (the statistic is
//! the user's choice: `--e2e-sla avg:200ms`). TPOT's p95 is no steadier here for being a
//! per-request mean: these answers have 3 to 5 tokens, so each request's TPOT is a mean of 2
//! to 4 gaps, and its p95 near the boundary moved 71, 82, 80, 89 ms over concurrency 48, 52,
//! 56, 60 (the mean: 57.8, 61.5, 63.7, 69.6), which put a 5 % test at the mercy of the draw.
//! (The error-rate SLA is in `search_error_rate.rs`.)

mod search_support;
use rightsize::plan::analysis::RunAnalysis;
use rightsize::plan::search::SearchConfig;
use rightsize::plan::sla::{SlaMetric, SlaSet, SlaThreshold};
use rightsize::plan::{analyse, Analysis, SearchPlanner};
use search_support::*;
use std::time::Duration;

const TIMEOUT: Duration = Duration::from_secs(30);

fn slas(list: &[(SlaMetric, &str)]) -> SlaSet {
    SlaSet(
        list.iter()
            .map(|(m, v)| SlaThreshold::parse(*m, v).unwrap())
            .collect(),
    )
}

fn search_cfg() -> SearchConfig {
    SearchConfig {
        min: 16,
        max: 4096,
        max_iterations: 7,
        tolerance: 0.05,
        // the 7-level budget measures where the planner puts its levels; the re-measuring of
        // the bracket ends (on by default) is exercised in search_noise.rs
        confirm: false,
        max_requests_per_level: None,
    }
}

async fn search(
    server: &rightsize::sim::SimServer,
    slas: &SlaSet,
) -> (RunAnalysis, Vec<rightsize::metrics::LevelSummary>) {
    let analysis = Analysis {
        slas: slas.clone(),
        search: Some(search_cfg()),
        ..Default::default()
    };
    let planner = SearchPlanner::new(search_cfg(), analysis.clone());
    let out = run_plan(
        server,
        Box::new(planner),
        &search_workload(),
        REQUESTS,
        TIMEOUT,
    )
    .await;
    let a = analyse(&analysis, &out.levels);
    // summary.json carries the same analysis
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.dir.join("summary.json")).unwrap())
            .unwrap();
    assert_eq!(
        summary["search"]["max_passing"],
        serde_json::json!(a.search.as_ref().unwrap().outcome.max_passing)
    );
    assert_eq!(
        summary["iterations"].as_array().unwrap().len(),
        out.levels.len()
    );
    (a, out.levels)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_lands_within_5_percent_of_the_dense_boundary_in_7_levels() {
    let server = rightsize::sim::start(search_sim()).await.unwrap();
    let coarse: Vec<u32> = (16..=112).step_by(4).collect();
    let coarse = run_plan(
        &server,
        sweep(coarse),
        &search_workload(),
        REQUESTS,
        TIMEOUT,
    )
    .await
    .levels;
    let cases: Vec<(&str, SlaSet)> = vec![
        ("tpot", slas(&[(SlaMetric::Tpot, "avg:60ms")])),
        ("e2e", slas(&[(SlaMetric::E2e, "avg:320ms")])),
        ("ttft", slas(&[(SlaMetric::Ttft, "avg:230ms")])),
        (
            "e2e+ttft",
            slas(&[
                (SlaMetric::E2e, "avg:420ms"),
                (SlaMetric::Ttft, "avg:160ms"),
            ]),
        ),
    ];
    let mut report = String::new();
    let mut failures = Vec::new();
    for (name, set) in &cases {
        let (first_fail_below, dense) =
            dense_sweep_boundary(&server, set, &coarse, 4, REQUESTS, TIMEOUT).await;
        let truth = fitted_boundary(set, &dense).expect("a rising curve");
        // a level measured during a scheduling stall of a shared CI machine can move one
        // search by more than 5 %: a miss gets up to two fresh searches, all reported (one
        // full `cargo test` in five still missed a case twice in a row)
        let mut misses = Vec::new();
        for attempt in 1..=3 {
            let (a, levels) = search(&server, set).await;
            let s = a.search.as_ref().unwrap();
            let answer = s.outcome.max_passing.unwrap_or(0);
            let trace: Vec<u32> = a.iterations.iter().map(|r| r.concurrency).collect();
            let line = format!(
                "{name} (attempt {attempt}): dense boundary {truth:.1} (last pass before the \
                 first fail {first_fail_below}), search {answer} in {} levels {trace:?}; {}\n",
                s.outcome.levels_used, s.outcome.confidence
            );
            report += &line;
            let off = (answer as f64 - truth).abs() / truth;
            if off <= 0.05 && s.outcome.levels_used <= 7 {
                misses.clear();
                break;
            }
            misses.push(format!(
                "{line}search:\n{}dense:\n{}",
                curve_text(&levels),
                curve_text(&dense)
            ));
        }
        failures.extend(misses);
    }
    server.shutdown();
    println!("{report}");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
