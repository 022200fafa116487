//! Acceptance (issue 14): a max-RPS search (`search --by rate`) against the simulator lands
//! within 5 % of the boundary a dense rate sweep finds, decided once. The sweep and the search
//! run side by side, each against a simulator of its own with the same model, so both sample
//! the same minute of the machine (as in `search_sim.rs`).

use crate::support::search_support;
use rightsize::plan::judge::SlaSet;
use rightsize::plan::search::SearchConfig;
use rightsize::plan::{Analysis, LevelLoad, SearchPlanner, SweepPlanner};
use rightsize::record::sla::{SlaMetric, SlaThreshold};
use rightsize::workload::arrivals::{Arrival, LoadShape, OpenSettings};
use search_support::*;
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_rps_search_lands_within_5_percent_of_the_dense_rate_sweep() {
    let _turn = MACHINE.take(4);
    // 8 batch slots at 2x real time: a 32-token answer takes about 180 ms and the server
    // finishes about 44 requests/s; past that, requests queue and latency climbs. (At 4x,
    // with 90 ms answers and twice the events a second, a moment of CPU starvation on a
    // loaded machine moved one dense level's p90 by 40 %, and the dense boundary with it.)
    let mut sim = rightsize::sim::SimConfig::fast(2.0);
    sim.max_num_seqs = 8;
    // the two runs send the same prompts: no cache may make the second one faster
    sim.prefix_cache_blocks = 0;
    let servers = sims(sim, 2).await;
    let w = workload(64, 32);
    let analysis = Analysis {
        slas: SlaSet(vec![
            SlaThreshold::parse(SlaMetric::E2e, "p90:260ms").unwrap()
        ]),
        max_error_rate: 0.05,
        ..Analysis::default()
    };
    // evenly spaced sends, 5 s a level
    let open = OpenSettings {
        arrival: Arrival::Constant,
        level_s: Duration::from_secs(5),
        ..OpenSettings::default()
    };
    let timeout = Duration::from_secs(30);

    let dense_rates = [40.0, 41.25, 42.5, 43.75, 45.0, 46.25, 47.5];
    let dense = SweepPlanner::open(
        dense_rates
            .iter()
            .map(|r| LevelLoad::Open(LoadShape::Rate { rps: *r }))
            .collect(),
        analysis.clone(),
    );

    let config = SearchConfig {
        min: 2000,
        max: 10000,
        ..SearchConfig::default()
    };
    let search = SearchPlanner::by_rate(config, analysis.clone());
    let ((dense, _), (found, _)) = tokio::join!(
        run_plan_with(&servers[0], Box::new(dense), &w, 0, timeout, open),
        run_plan_with(&servers[1], Box::new(search), &w, 0, timeout, open)
    );
    shutdown_all(servers);

    let truth = dense_range(&analysis, &dense.levels);
    let report = rightsize::plan::analyse(
        &Analysis {
            search: Some(config),
            ..analysis.clone()
        },
        &found.levels,
    );
    let answer = report
        .search
        .as_ref()
        .and_then(|s| s.outcome.max_passing)
        .expect("a passing rate");
    let rps = |load: f64| load / 100.0;
    let off = (f64::from(answer) - truth.estimate).abs() / truth.estimate;
    let line = format!(
        "search answer {:.2} req/s in {} levels; dense boundary {:.2} req/s [{:.2}, {:.2}]; \
         off by {:.1} %",
        rps(f64::from(answer)),
        found.levels.len(),
        rps(truth.estimate),
        rps(truth.low),
        rps(truth.high),
        off * 100.0
    );
    println!(
        "{line}\nsearch:\n{}dense:\n{}",
        curve_text(&analysis, &found.levels),
        curve_text(&analysis, &dense.levels)
    );
    assert!(
        off <= 0.05,
        "{line}\nsearch:\n{}dense:\n{}",
        curve_text(&analysis, &found.levels),
        curve_text(&analysis, &dense.levels)
    );
}
