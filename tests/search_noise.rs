//! Acceptance: with the simulator's noise turned up, neighbouring levels contradict each
//! other; the search re-measures and reports the contradiction instead of flipping, and its
//! answer lies inside the bracket it reports.

mod search_support;
use rightsize::plan::search::SearchConfig;
use rightsize::plan::sla::{SlaMetric, SlaSet, SlaThreshold};
use rightsize::plan::{analyse, Analysis, SearchPlanner};
use search_support::*;
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn noisy_search_reports_contradictions_and_answers_inside_its_bracket() {
    let cfg = SearchConfig {
        min: 16,
        max: 4096,
        max_iterations: 12,
        tolerance: 0.05,
        confirm: true,
        max_requests_per_level: None,
    };
    let set = SlaSet(vec![
        SlaThreshold::parse(SlaMetric::E2e, "avg:300ms").unwrap()
    ]);
    let analysis = Analysis {
        slas: set.clone(),
        search: Some(cfg),
        ..Default::default()
    };
    let mut seen_contradiction = false;
    let mut log = String::new();
    for seed in 1..=6u64 {
        let mut sim = search_sim();
        sim.noise = 0.3;
        sim.seed = seed;
        let server = rightsize::sim::start(sim).await.unwrap();
        let out = run_plan(
            &server,
            Box::new(SearchPlanner::new(cfg, analysis.clone())),
            &search_workload(),
            REQUESTS,
            Duration::from_secs(30),
        )
        .await;
        server.shutdown();
        let a = analyse(&analysis, &out.levels);
        let s = a.search.unwrap();
        let o = &s.outcome;
        let trace: Vec<(u32, Option<bool>)> = a
            .iterations
            .iter()
            .map(|r| (r.concurrency, Some(r.passes())))
            .collect();
        log += &format!(
            "seed {seed}: {trace:?} -> {:?}; {}\n",
            s.bracket, o.confidence
        );
        // the answer is inside the reported bracket, below its failing end
        if let [Some(lo), Some(hi)] = s.bracket {
            assert_eq!(o.max_passing, Some(lo));
            assert!(lo < hi, "{log}");
            // no level inside the bracket was left unexplained: every level at or below the
            // answer that failed, and every level above the first fail that passed, is a
            // reported contradiction
            for r in &a.iterations {
                let odd = (r.concurrency > hi && r.passes())
                    || (r.concurrency < hi && r.concurrency > lo);
                assert!(
                    !odd || !o.contradictions.is_empty(),
                    "level {} {:?} unexplained\n{log}",
                    r.concurrency,
                    r.verdict
                );
            }
        }
        if !o.contradictions.is_empty() {
            seen_contradiction = true;
            assert!(o.confidence.starts_with("contradiction: "), "{log}");
            assert!(!o.remeasured.is_empty(), "re-measured nothing\n{log}");
            for c in o.remeasured.keys() {
                assert_eq!(trace.iter().filter(|t| t.0 == *c).count(), 2, "{log}");
            }
            break;
        }
    }
    println!("{log}");
    assert!(
        seen_contradiction,
        "noise 0.3 never produced a contradiction\n{log}"
    );
}
