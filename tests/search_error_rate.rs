//! Acceptance: the error-rate SLA. Errors grow with load for a real reason: a client request
//! timeout. Past the batch slots requests queue, end-to-end latency climbs, and a growing
//! share of requests time out. A dense sweep finds the boundary; the search over 16..4096
//! lands within 5 % of it using at most 7 levels.

mod search_support;
use rightsize::plan::search::SearchConfig;
use rightsize::plan::sla::{SlaMetric, SlaSet, SlaThreshold};
use rightsize::plan::{analyse, Analysis, SearchPlanner};
use search_support::*;
use std::time::Duration;

/// Requests slower than this fail as timeouts.
const TIMEOUT: Duration = Duration::from_millis(400);

/// Requests per level: more than the latency tests use, because an error rate near a 5 %
/// limit is a count of a few timeouts, and with 128 requests the draw of prompt lengths alone
/// moved one level's rate from 3.9 % to 8.6 %.
const ERROR_RATE_REQUESTS: u32 = 384;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn error_rate_search_lands_within_5_percent_of_the_dense_boundary() {
    let server = rightsize::sim::start(search_sim()).await.unwrap();
    let set = SlaSet(vec![
        SlaThreshold::parse(SlaMetric::ErrorRate, "0.05").unwrap()
    ]);
    let coarse: Vec<u32> = (16..=112).step_by(4).collect();
    let coarse = run_plan(
        &server,
        sweep(coarse),
        &search_workload(),
        ERROR_RATE_REQUESTS,
        TIMEOUT,
    )
    .await
    .levels;
    let (first_fail_below, dense) =
        dense_sweep_boundary(&server, &set, &coarse, 4, ERROR_RATE_REQUESTS, TIMEOUT).await;
    let truth = fitted_boundary(&set, &dense).expect("errors rise with load");
    // the errors are timeouts, and there are more of them the higher the load
    let top = dense.iter().max_by_key(|l| l.concurrency).unwrap();
    assert!(top.error_rate > 0.05, "{}", curve_text(&dense));
    assert!(
        top.errors_by_kind
            .keys()
            .all(|k| *k == rightsize::engine::record::ErrorKind::Timeout),
        "{:?}",
        top.errors_by_kind
    );
    let cfg = SearchConfig {
        min: 16,
        max: 4096,
        max_iterations: 7,
        tolerance: 0.05,
        // as in search_sim.rs: placement within 7 levels; confirmation is tested elsewhere
        confirm: false,
        max_requests_per_level: None,
    };
    let analysis = Analysis {
        slas: set.clone(),
        search: Some(cfg),
        ..Default::default()
    };
    // timeouts follow real time, so a scheduling stall of a shared CI machine can move one
    // search by more than 5 %: a miss gets one fresh search, and both are reported (as in
    // search_sim.rs)
    let mut misses = Vec::new();
    for attempt in 1..=2 {
        let out = run_plan(
            &server,
            Box::new(SearchPlanner::new(cfg, analysis.clone())),
            &search_workload(),
            ERROR_RATE_REQUESTS,
            TIMEOUT,
        )
        .await;
        let a = analyse(&analysis, &out.levels);
        let s = a.search.unwrap();
        let answer = s.outcome.max_passing.unwrap_or(0);
        let trace: Vec<u32> = out.levels.iter().map(|l| l.concurrency).collect();
        let line = format!(
            "error rate (attempt {attempt}): dense boundary {truth:.1} (last pass before the \
             first fail {first_fail_below}), search {answer} in {} levels {trace:?}; {}",
            s.outcome.levels_used, s.outcome.confidence
        );
        println!("{line}");
        if s.outcome.levels_used <= 7 && (answer as f64 - truth).abs() <= 0.05 * truth {
            misses.clear();
            break;
        }
        misses.push(format!(
            "{line}\nsearch:\n{}dense:\n{}",
            curve_text(&out.levels),
            curve_text(&dense)
        ));
    }
    server.shutdown();
    assert!(misses.is_empty(), "{}", misses.join("\n"));
}
