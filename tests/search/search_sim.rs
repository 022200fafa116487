//! Acceptance: against the simulator (noise off, fixed seed), a dense sweep's 95 % intervals
//! place the SLA boundary (two sweeps, one rising and one falling, and the range either
//! gives); the search over 16..4096 lands within 5 % of that range using at most 7 levels, for
//! each latency SLA kind alone and for e2e plus TTFT together. Each case is decided once: the
//! range already carries the measurement's uncertainty, and a search level near the boundary
//! takes more requests until its own interval decides it.
//!
//! The SLAs compare means: a mean's interval narrows with every request, where a tail
//! percentile of a few hundred requests moves with each scheduling hiccup of a busy machine.
//! (The error-rate SLA is in `search_error_rate.rs`.)
//!
//! The six runs (two dense sweeps, four searches) go side by side, each against a simulator
//! of its own with the same model: the simulator's real-time steps and the client share the
//! machine, so what a level reads depends on how busy the machine is while it runs. Run one
//! after another, the sweeps and the searches sampled different minutes of a test suite (beside
//! a release build one dense sweep put the TTFT boundary at 78 where runs before and after put
//! it at 81 and 84); side by side they sample the same ones, and the sweep that rises and the
//! one that falls measure each level at two moments of that window.

use crate::support::search_support;
use rightsize::metrics::LevelSummary;
use rightsize::plan::analysis::RunAnalysis;
use rightsize::plan::judge::SlaSet;
use rightsize::plan::search::SearchConfig;
use rightsize::plan::{analyse, Analysis, SearchPlanner};
use rightsize::record::sla::{SlaMetric, SlaThreshold};
use search_support::*;
use std::time::Duration;

const TIMEOUT: Duration = Duration::from_secs(30);

/// The search's tolerance: it stops once its bracket is this narrow.
const TOLERANCE: f64 = 0.05;

fn analysis(list: &[(SlaMetric, &str)], search: Option<SearchConfig>) -> Analysis {
    Analysis {
        slas: SlaSet(
            list.iter()
                .map(|(m, v)| SlaThreshold::parse(*m, v).unwrap())
                .collect(),
        ),
        // no request fails here; a 5 % limit is decided by a level's first 73 requests (a 1 %
        // one needs 381)
        max_error_rate: 0.05,
        search,
        ..Analysis::default()
    }
}

fn search_cfg() -> SearchConfig {
    SearchConfig {
        min: 16,
        max: 4096,
        max_iterations: 7,
        tolerance: TOLERANCE,
        // the 7-level budget measures where the planner puts its levels; the re-measuring of
        // the bracket ends (on by default) is exercised in search_noise.rs
        confirm: false,
        max_requests_per_level: None,
    }
}

async fn search(
    server: &rightsize::sim::SimServer,
    a: &Analysis,
) -> (RunAnalysis, Vec<LevelSummary>) {
    let planner = SearchPlanner::new(search_cfg(), a.clone());
    let out = run_plan(
        server,
        Box::new(planner),
        &search_workload(),
        REQUESTS,
        TIMEOUT,
    )
    .await;
    let result = analyse(a, &out.levels);
    // summary.json carries the same analysis
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.dir.join("summary.json")).unwrap())
            .unwrap();
    assert_eq!(
        summary["search"]["max_passing"],
        serde_json::json!(result.search.as_ref().unwrap().outcome.max_passing)
    );
    (result, out.levels)
}

/// The dense sweep: every 4 around the four boundaries (about 50, 53, 58 and 84), in the
/// order given.
async fn dense(server: &rightsize::sim::SimServer, levels: Vec<u32>) -> Vec<LevelSummary> {
    run_plan(server, sweep(levels), &search_workload(), REQUESTS, TIMEOUT)
        .await
        .levels
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_lands_within_5_percent_of_the_dense_range_in_7_levels() {
    let _turn = MACHINE.take(8);
    let cases: Vec<(&str, Vec<(SlaMetric, &str)>)> = vec![
        ("tpot", vec![(SlaMetric::Tpot, "avg:60ms")]),
        ("e2e", vec![(SlaMetric::E2e, "avg:320ms")]),
        ("ttft", vec![(SlaMetric::Ttft, "avg:230ms")]),
        (
            "e2e+ttft",
            vec![
                (SlaMetric::E2e, "avg:420ms"),
                (SlaMetric::Ttft, "avg:160ms"),
            ],
        ),
    ];
    let servers = sims(search_sim(), cases.len() + 2).await;
    let rising_levels: Vec<u32> = (36..=100).step_by(4).collect();
    let falling_levels: Vec<u32> = rising_levels.iter().rev().copied().collect();
    let analyses: Vec<Analysis> = cases
        .iter()
        .map(|(_, list)| analysis(list, Some(search_cfg())))
        .collect();
    let searches = futures_util::future::join_all(
        analyses
            .iter()
            .zip(&servers[2..])
            .map(|(a, server)| search(server, a)),
    );
    let (rising, falling, searched) = tokio::join!(
        dense(&servers[0], rising_levels),
        dense(&servers[1], falling_levels),
        searches
    );
    shutdown_all(servers);
    let mut report = String::new();
    let mut failures = Vec::new();
    let mut contradictions = 0;
    for (((name, _), a), (result, levels)) in cases.iter().zip(&analyses).zip(&searched) {
        let (r1, r2) = (dense_range(a, &rising), dense_range(a, &falling));
        let (low, high) = (r1.low.min(r2.low), r1.high.max(r2.high));
        let s = result.search.as_ref().unwrap();
        let answer = s.outcome.max_passing.unwrap_or(0) as f64;
        contradictions += s.outcome.contradictions.len();
        let trace: Vec<(u32, u64)> = levels
            .iter()
            .map(|l| (l.concurrency, l.planned_requests))
            .collect();
        let line = format!(
            "{name}: dense range [{low:.1}, {high:.1}] (rising [{:.1}, {:.1}], falling [{:.1}, \
             {:.1}]); search {answer} in {} levels (concurrency, requests) {trace:?}; {}\n",
            r1.low, r1.high, r2.low, r2.high, s.outcome.levels_used, s.outcome.confidence
        );
        report += &line;
        let low = low / (1.0 + TOLERANCE) - 1.0;
        let high = high * (1.0 + TOLERANCE);
        if !(low..=high).contains(&answer) || s.outcome.levels_used > 7 {
            failures.push(format!(
                "{line}search:\n{}dense rising:\n{}dense falling:\n{}",
                curve_text(a, levels),
                curve_text(a, &rising),
                curve_text(a, &falling)
            ));
        }
    }
    println!("{report}contradictions: {contradictions}");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
