//! Snapshot tests of open-loop runs: the curves of a rate sweep on a request-rate axis.

use super::snapshot_tests::{app, draw, key, started};
use crate::engine::EngineEvent;
use crate::metrics::fixtures::level;
use crate::metrics::open_loop::RateSummary;
use crate::metrics::LevelSummary;
use crate::plan::capacity::Peak;
use crate::plan::Analysis;
use crate::workload::arrivals::{Arrival, LoadShape};
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// Four rate levels of the same shape as the concurrency sweep's (throughput flattens at the
/// third), sent as an open loop.
fn rate_levels() -> Vec<LevelSummary> {
    [(1.0, 16, 512, 220, 3400), (2.0, 64, 512, 560, 5800)]
        .into_iter()
        .chain([
            (4.0, 256, 1024, 2500, 15700),
            (8.0, 1024, 2048, 21000, 62000),
        ])
        .enumerate()
        .map(|(i, (rps, c, n, ttft, e2e))| {
            let mut l = level(i as u32, c, n, ttft, e2e, 256, None);
            l.concurrency = 0;
            l.held = true;
            l.open_loop.rate = Some(RateSummary {
                shape: LoadShape::Rate { rps },
                arrival: Arrival::Poisson,
                offered_rps: rps,
                achieved_rps: rps,
                max_in_flight: None,
                saturated: None,
            });
            l
        })
        .collect()
}

#[test]
fn a_rate_sweep_draws_its_curves_against_the_request_rate() {
    let mut a = app();
    a.run_started(Some(20.0), Analysis::default());
    a.on_engine(&started());
    for l in rate_levels() {
        a.on_engine(&EngineEvent::LevelFinished(Box::new(l)));
    }
    a.on_engine(&EngineEvent::RunFinished { interrupted: false });
    a.run_ended(None);
    assert_eq!(
        a.report.as_ref().map(|r| r.axis),
        Some(crate::plan::analysis::Axis::Rate)
    );
    let ticks: Vec<&str> = a.view.x_ticks.iter().map(|t| t.1.as_str()).collect();
    assert_eq!(ticks, ["1", "2", "4", "8"]);
    insta::assert_snapshot!(draw(&a, 120, 36));
    // the peak typed on the run screen is a request rate, sized by the requests/s the ideal
    // level carried
    a.on_key(key('p'));
    for c in "10".chars() {
        a.on_key(key(c));
    }
    a.on_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    let planning = &a.report.as_ref().expect("analysed").planning;
    let rs = planning.right_size.as_ref().expect("sized");
    assert_eq!(rs.peak, Peak::Rps(10.0));
    assert_eq!(
        Some(rs.per_instance),
        planning.ideal.as_ref().map(|i| i.rps)
    );
}

#[test]
fn a_rate_level_running_shows_its_rate() {
    let mut a = app();
    a.run_started(None, Analysis::default());
    a.on_engine(&started());
    for l in rate_levels().into_iter().take(2) {
        a.on_engine(&EngineEvent::LevelFinished(Box::new(l)));
    }
    a.on_engine(&EngineEvent::LevelStarted {
        index: 2,
        concurrency: 0,
        request_count: 512,
        shape: Some(LoadShape::Rate { rps: 4.0 }),
    });
    assert_eq!(a.status.as_deref(), Some("level 3 at 4 req/s"));
    let s = draw(&a, 120, 36);
    assert!(s.contains("level 3 · 4 req/s"), "{s}");
    assert!(s.contains("output tokens/s vs request rate"), "{s}");
}
