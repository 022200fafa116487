//! Snapshot tests of open-loop runs: the time view of a `steps:` schedule fed with scripted
//! progress events, and the curves of a rate sweep on a request-rate axis.

use super::app::ChartMode;
use super::snapshot_tests::{app, draw, key, started};
use crate::engine::EngineEvent;
use crate::metrics::fixtures::level;
use crate::metrics::progress::OpenProgress;
use crate::metrics::rate::RateSummary;
use crate::metrics::{LevelProgress, LevelSummary};
use crate::plan::capacity::Peak;
use crate::plan::judge::SlaSet;
use crate::plan::Analysis;
use crate::record::sla::{SlaMetric, SlaThreshold};
use crate::workload::arrivals::{Arrival, LoadShape};
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

fn steps() -> LoadShape {
    LoadShape::Steps {
        rates: vec![2.0, 6.0],
        each_s: 3.0,
    }
}

/// A snapshot of level 0 of `steps()` at `t` s: the sender follows the step within a second,
/// the queue and the latencies grow on the second step.
fn open_progress(t: f64) -> EngineEvent {
    let offered = steps_rate(t);
    let sent = if t < 3.0 {
        2.0
    } else {
        2.0 + 4.0 * (t - 3.0).min(1.0)
    };
    let second = (t - 3.0).clamp(0.0, 3.0) / 3.0;
    let pending = (1.0 + 5.0 * second).round() as u64;
    let done = (t * 2.0).floor() as u64 + (8.0 * second) as u64;
    EngineEvent::Progress(LevelProgress {
        index: 0,
        concurrency: 0,
        done,
        total: 24,
        in_flight: pending,
        ok: done,
        errors_by_kind: Default::default(),
        output_tokens: done * 64,
        output_tokens_per_sec: sent * 64.0,
        output_tps_series: vec![],
        elapsed_s: t,
        chunks: 0,
        sent: 0,
        live: Default::default(),
        open: Some(OpenProgress {
            offered_rps: offered,
            sent_rps: sent,
            done_rps: sent * 0.9,
            pending,
            ttft_ms: (t >= 0.5).then_some([20.0 + 40.0 * second, 60.0 + 90.0 * second]),
            e2e_ms: (t >= 0.5).then_some([300.0 + 150.0 * second, 450.0 + 300.0 * second]),
        }),
    })
}

fn steps_rate(t: f64) -> f64 {
    if t < 3.0 {
        2.0
    } else {
        6.0
    }
}

fn slas() -> Analysis {
    Analysis {
        slas: SlaSet(vec![
            SlaThreshold::parse(SlaMetric::E2e, "800ms").unwrap(),
            SlaThreshold::parse(SlaMetric::Ttft, "200ms").unwrap(),
        ]),
        ..Analysis::default()
    }
}

/// A run of one `steps:` schedule, `until` s into it.
fn schedule_app(until: f64) -> super::app::App {
    let mut a = app();
    a.run_started(Some(20.0), slas());
    a.on_engine(&started());
    a.on_engine(&EngineEvent::LevelStarted {
        index: 0,
        concurrency: 0,
        request_count: 24,
        request_cap: 24,
        earlier: 0,
        warmup: 0,
        shape: Some(steps()),
    });
    for i in 1..=(until * 4.0) as u32 {
        a.on_engine(&open_progress(f64::from(i) * 0.25));
    }
    a
}

#[test]
fn time_view_of_a_steps_schedule() {
    let a = schedule_app(4.5);
    assert!(a.shows_time_view());
    insta::assert_snapshot!(draw(&a, 120, 36));
    insta::assert_snapshot!("time_view_of_a_steps_schedule_80x24", draw(&a, 80, 24));
}

#[test]
fn the_time_view_stays_after_a_schedule_and_t_switches_to_the_curves() {
    let mut a = schedule_app(6.0);
    let mut l = level(0, 6, 24, 40, 600, 64, None);
    l.concurrency = 0;
    l.open_loop.rate = Some(RateSummary {
        shape: steps(),
        arrival: Arrival::Constant,
        offered_rps: 4.0,
        achieved_rps: 4.0,
        max_in_flight: None,
        saturated: None,
    });
    a.on_engine(&EngineEvent::LevelFinished(Box::new(l)));
    a.on_engine(&EngineEvent::RunFinished { interrupted: false });
    a.run_ended(None);
    // a schedule has no place on a load axis: no curves, so the time view stays
    assert!(a.view.points.is_empty());
    assert!(a.shows_time_view());
    insta::assert_snapshot!(draw(&a, 100, 30));
    a.on_key(key('t'));
    assert_eq!(a.chart_mode, ChartMode::Curves);
    assert!(!a.shows_time_view());
    let curves = draw(&a, 100, 30);
    assert!(curves.contains("t time view"), "{curves}");
    assert!(curves.contains("output tok/s vs concurrency"), "{curves}");
    a.on_key(key('t'));
    assert!(a.shows_time_view());
}

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
    // the ends of the log axis and its middle, the rate that lies there (the geometric
    // mean of 1 and 8)
    assert_eq!(ticks, ["1", "2.83", "8"]);
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
fn a_rate_level_running_shows_its_rate_and_the_time_view() {
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
        request_cap: 512,
        earlier: 0,
        warmup: 0,
        shape: Some(LoadShape::Rate { rps: 4.0 }),
    });
    assert_eq!(a.status.as_deref(), Some("level 3 at 4 req/s"));
    assert!(a.shows_time_view(), "a live open-loop level");
    a.on_key(key('t'));
    let s = draw(&a, 120, 36);
    assert!(s.contains("level 3 · 4 req/s"), "{s}");
    assert!(s.contains("output tok/s vs request rate"), "{s}");
}
