//! Snapshot tests of every screen: scripted engine events in, `TestBackend` text out.
//! Nothing rendered depends on the wall clock, so the snapshots are stable.

use super::app::{App, Screen};
use super::render::render;
use super::setup::{FieldId, SetupChoices};
use crate::engine::EngineEvent;
use crate::metrics::fixtures::level;
use crate::metrics::{LevelProgress, LevelSummary};
use crate::plan::capacity::{CapacityInputs, Peak};
use crate::plan::judge::SlaSet;
use crate::plan::search::SearchConfig;
use crate::plan::Analysis;
use crate::record::sla::{SlaMetric, SlaThreshold};
use crate::record::ErrorKind;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use std::collections::BTreeMap;

pub(super) fn choices() -> SetupChoices {
    SetupChoices {
        endpoints: vec!["local-vllm".into(), "sim".into()],
        sagemaker_endpoints: vec![],
        profiles: vec!["chat".into(), "rag".into()],
        default_endpoint: "sim".into(),
        default_profile: "rag".into(),
        default_levels: vec![16, 64, 256, 1024],
        default_requests: 1024,
    }
}

pub(super) fn started() -> EngineEvent {
    EngineEvent::RunStarted {
        run_id: "20261129-090000-sweep".into(),
        dir: "/tmp/runs/20261129-090000-sweep".into(),
        endpoint: "sim".into(),
        model: "sim-moe-30b-a3b".into(),
        server: Default::default(),
    }
}

fn progress(index: u32, concurrency: u32, done: u64, errors: &[(ErrorKind, u64)]) -> EngineEvent {
    EngineEvent::Progress(LevelProgress {
        open: None,
        index,
        concurrency,
        done,
        total: 1024,
        in_flight: concurrency as u64,
        ok: done - errors.iter().map(|e| e.1).sum::<u64>(),
        errors_by_kind: errors.iter().copied().collect::<BTreeMap<_, _>>(),
        output_tokens: done * 256,
        output_tokens_per_sec: 3875.0,
        output_tps_series: vec![3000.0, 3500.0, 3900.0, 4100.0, 3875.0, 3950.0],
        elapsed_s: 12.5,
        chunks: 0,
        sent: 0,
        live: Default::default(),
    })
}

/// The four sweep levels of the default simulator, roughly as measured.
pub(super) fn sweep_levels() -> Vec<LevelSummary> {
    vec![
        // enough requests that a p99 and the 1 % error limit can be decided (368 and 381)
        level(0, 16, 512, 220, 3400, 256, None),
        level(1, 64, 512, 560, 5800, 256, None),
        level(2, 256, 1024, 2500, 15700, 256, None),
        level(3, 1024, 2048, 21000, 62000, 256, None),
    ]
}

pub(super) fn draw(app: &App, w: u16, h: u16) -> String {
    let mut t = Terminal::new(TestBackend::new(w, h)).expect("test terminal");
    t.draw(|f| render(f, app)).expect("draw");
    t.backend().to_string()
}

pub(super) fn app() -> App {
    App::new(&choices(), false)
}

pub(super) fn key(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE)
}

#[test]
fn empty_setup() {
    insta::assert_snapshot!(draw(&app(), 100, 30));
}

#[test]
fn setup_shows_validation_beside_the_field() {
    let mut a = app();
    a.setup.select(FieldId::Concurrency);
    a.setup.set(FieldId::Concurrency, "16,0");
    // on a text field `s` would type: Ctrl-S starts from anywhere
    a.on_key(KeyEvent::new(KeyCode::Char('s'), KeyModifiers::CONTROL));
    insta::assert_snapshot!(draw(&a, 100, 30));
}

/// `sagemaker:NAME` typed into the endpoint row brings the SageMaker rows under it, and the
/// custom format its three; on a short terminal the form scrolls to keep the cursor in view.
#[test]
fn setup_with_a_sagemaker_endpoint_in_a_custom_format() {
    let mut a = app();
    a.setup.select(FieldId::Endpoint);
    a.on_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    for c in "sagemaker:llama-prod".chars() {
        a.on_key(key(c));
    }
    a.on_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    a.setup.set(FieldId::Region, "us-east-1");
    a.setup.set(FieldId::SageMakerFormat, "custom");
    a.setup
        .set(FieldId::RequestTemplate, r#"{"inputs": "{prompt}"}"#);
    a.setup.set(FieldId::TextPointer, "token.text");
    a.setup.select(FieldId::TextPointer);
    // on a text field `s` would type: Ctrl-S starts from anywhere
    a.on_key(KeyEvent::new(KeyCode::Char('s'), KeyModifiers::CONTROL));
    insta::assert_snapshot!(draw(&a, 120, 40));
    insta::assert_snapshot!("setup_with_a_sagemaker_endpoint_at_80x24", draw(&a, 80, 24));
}

/// Two levels of the default sweep done, the third (256) running.
fn mid_run_at_256() -> App {
    let mut a = app();
    a.run_started(Some(20.0), Analysis::default());
    a.on_engine(&started());
    for l in sweep_levels().into_iter().take(2) {
        a.on_engine(&EngineEvent::LevelFinished(Box::new(l)));
    }
    a.on_engine(&EngineEvent::LevelStarted {
        shape: None,
        index: 2,
        concurrency: 256,
        request_count: 1024,
        request_cap: 1024,
        earlier: 0,
        warmup: 0,
    });
    a.on_engine(&progress(2, 256, 412, &[]));
    a
}

#[test]
fn mid_run_with_two_levels_done() {
    let mut a = mid_run_at_256();
    a.on_engine(&EngineEvent::Telemetry(crate::telemetry::ServerSample {
        server: Some("vllm"),
        running: Some(256.0),
        waiting: Some(0.0),
        kv_cache_usage: Some(0.62),
        prefix_hits: Some(0.0),
        prefix_queries: Some(1_000_000.0),
        ..Default::default()
    }));
    insta::assert_snapshot!(draw(&a, 120, 36));
}

/// A distributed run (`--workers 4`): the workers panel above the notes, one worker lost.
#[test]
fn mid_run_with_four_workers_one_lost() {
    use crate::metrics::fleet::{FleetLevel, WorkerShare};
    let mut a = mid_run_at_256();
    let share = |worker: u32, in_flight: u64, requests: u64, lost: Option<&str>| WorkerShare {
        worker,
        host: format!("rightsize-workers-{worker}-x7k2q:1"),
        concurrency: 64,
        requests,
        errors: 0,
        timer_late_p99_ms: if worker == 0 { 0.0 } else { 1.2 },
        cpu_s: 0.0,
        in_flight,
        lost: lost.map(str::to_string),
    };
    a.on_engine(&EngineEvent::Workers(Box::new(FleetLevel {
        workers: 4,
        start_spread_ms: 1.84,
        clock_uncertainty_ms: 0.2,
        controller_cpu_s: 0.0,
        shares: vec![
            share(0, 64, 104, None),
            share(1, 64, 103, None),
            share(2, 0, 98, Some("its process exited (signal: 9)")),
            share(3, 64, 107, None),
        ],
        warning: Some("lost worker 2".into()),
    })));
    // room for every worker
    insta::assert_snapshot!(draw(&a, 120, 44));
    // a shorter screen: the lost worker first, and how many more there are
    insta::assert_snapshot!(draw(&a, 120, 36));
}

#[test]
fn finished_search_with_knee_sla_line_and_planning() {
    let mut a = app();
    let analysis = Analysis {
        slas: SlaSet(vec![SlaThreshold::parse(SlaMetric::E2e, "30s").unwrap()]),
        search: Some(SearchConfig::default()),
        max_error_rate: 0.01,
        capacity: CapacityInputs {
            peak: Some(Peak::Concurrency(1000.0)),
            headroom: 0.2,
            price_per_hour: Some(4.0),
        },
    };
    a.setup.set(FieldId::PeakConcurrency, "1000");
    a.setup.set(FieldId::PricePerHour, "4");
    a.run_started(Some(20.0), analysis);
    a.on_engine(&started());
    for l in sweep_levels() {
        a.on_engine(&EngineEvent::LevelFinished(Box::new(l)));
    }
    a.on_engine(&EngineEvent::RunFinished { interrupted: false });
    a.run_ended(None);
    insta::assert_snapshot!(draw(&a, 120, 36));
}

#[test]
fn error_heavy_level() {
    let mut a = app();
    a.run_started(None, Analysis::default());
    a.on_engine(&started());
    a.on_engine(&EngineEvent::LevelFinished(Box::new(level(
        0,
        64,
        256,
        300,
        4000,
        256,
        Some((ErrorKind::HttpStatus, 4)),
    ))));
    a.on_engine(&EngineEvent::LevelStarted {
        shape: None,
        index: 1,
        concurrency: 256,
        request_count: 1024,
        request_cap: 1024,
        earlier: 0,
        warmup: 0,
    });
    a.on_engine(&progress(
        1,
        256,
        300,
        &[(ErrorKind::HttpStatus, 41), (ErrorKind::Timeout, 12)],
    ));
    a.on_engine(&EngineEvent::Warning(
        "level 1 (concurrency 64): client lag: p99 12.0 ms exceeds 10.0 ms".into(),
    ));
    insta::assert_snapshot!(draw(&a, 120, 36));
}

#[test]
fn layout_at_80x24() {
    let mut a = app();
    a.run_started(Some(20.0), Analysis::default());
    a.on_engine(&started());
    for l in sweep_levels().into_iter().take(3) {
        a.on_engine(&EngineEvent::LevelFinished(Box::new(l)));
    }
    a.on_engine(&EngineEvent::LevelStarted {
        shape: None,
        index: 3,
        concurrency: 1024,
        request_count: 1024,
        request_cap: 1024,
        earlier: 0,
        warmup: 0,
    });
    a.on_engine(&progress(3, 1024, 100, &[]));
    insta::assert_snapshot!(draw(&a, 80, 24));
    a.screen = Screen::Setup;
    insta::assert_snapshot!("layout_at_80x24_setup", draw(&a, 80, 24));
}

#[test]
fn help_overlay_lists_every_key_and_quit_asks_while_live() {
    let mut a = app();
    a.on_key(key('?'));
    insta::assert_snapshot!(draw(&a, 100, 30));
    a.on_key(key('x')); // any key closes help
    assert!(!a.help);
    a.run_started(None, Analysis::default());
    assert!(matches!(a.on_key(key('q')), super::app::Action::None));
    assert!(a.confirm_quit);
    assert!(matches!(a.on_key(key('y')), super::app::Action::Quit));
}

#[test]
fn ctrl_c_and_delete_ask_before_they_discard_anything() {
    let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
    let mut a = app();
    a.run_started(None, Analysis::default());
    // a live run: Ctrl-C asks; any other key keeps the run going; a second Ctrl-C is a yes
    assert!(matches!(a.on_key(ctrl_c), super::app::Action::None));
    assert!(a.confirm_quit);
    assert!(matches!(a.on_key(key('n')), super::app::Action::None));
    assert!(!a.confirm_quit);
    a.on_key(ctrl_c);
    assert!(matches!(a.on_key(ctrl_c), super::app::Action::Quit));
    // a past run is deleted only after a yes
    let mut a = app();
    a.runs = vec![super::app::RunEntry {
        id: "20261129-091500-sweep".into(),
        path: "/tmp/runs/20261129-091500-sweep".into(),
        date: "2026-11-29 09:15".into(),
        kind: "sweep".into(),
        answer: "ideal c=64".into(),
        status: crate::report::history::RunStatus::Finished,
        levels: 4,
        endpoint: "sim".into(),
        model: "m".into(),
        workload: "rag".into(),
        problem: None,
    }];
    a.screen = Screen::Runs;
    assert!(matches!(a.on_key(key('d')), super::app::Action::None));
    let shown = draw(&a, 100, 12);
    assert!(
        shown.contains(" delete? ") && shown.contains("Delete run 20261129-091500-sweep and every"),
        "{shown}"
    );
    assert!(matches!(a.on_key(key('n')), super::app::Action::None));
    assert_eq!(a.status.as_deref(), Some("kept the run"));
    a.on_key(key('d'));
    match a.on_key(key('y')) {
        super::app::Action::DeleteRun(p) => {
            assert_eq!(p, std::path::Path::new("/tmp/runs/20261129-091500-sweep"))
        }
        _ => panic!("y deletes"),
    }
}

#[test]
fn an_overlay_goes_with_its_deleted_run_and_c_clears_it_on_the_run_screen() {
    let mut a = app();
    a.run_started(None, Analysis::default());
    a.on_engine(&started());
    for l in sweep_levels() {
        a.on_engine(&EngineEvent::LevelFinished(Box::new(l)));
    }
    a.run_ended(None);
    let path = std::path::PathBuf::from("/tmp/runs/20261128-170000-sweep");
    a.overlay = Some(("20261128-170000-sweep".into(), path.clone(), sweep_levels()));
    a.refresh_view();
    assert!(a.view.overlay.is_some());
    // another run's folder deleted: the overlay stays
    a.run_deleted(std::path::Path::new("/tmp/runs/other"));
    assert!(a.overlay.is_some());
    a.run_deleted(&path);
    assert!(a.overlay.is_none() && a.view.overlay.is_none());
    // on the run screen, as its status line says, C clears it
    a.overlay = Some(("20261128-170000-sweep".into(), path, sweep_levels()));
    a.screen = Screen::Run;
    a.on_key(key('C'));
    assert!(a.overlay.is_none());
    assert_eq!(a.status.as_deref(), Some("overlay cleared"));
}

#[test]
fn arrows_scroll_the_panel_in_focus_and_stop_at_its_last_row() {
    let mut a = app();
    a.size = (80, 24);
    let analysis = Analysis {
        slas: SlaSet(vec![SlaThreshold::parse(SlaMetric::E2e, "30s").unwrap()]),
        search: Some(SearchConfig::default()),
        max_error_rate: 0.01,
        capacity: CapacityInputs {
            peak: Some(Peak::Concurrency(1000.0)),
            headroom: 0.2,
            price_per_hour: Some(4.0),
        },
    };
    a.run_started(None, analysis);
    a.on_engine(&started());
    let mut levels = sweep_levels();
    levels.extend(sweep_levels().into_iter().map(|mut l| {
        l.index += 4;
        l.concurrency += 1;
        l
    }));
    for l in levels {
        a.on_engine(&EngineEvent::LevelFinished(Box::new(l)));
    }
    a.run_ended(None);
    let limits = crate::tui::render::scroll::scroll_limits(&a);
    // eight levels in a table of four rows: it shows the newest four
    assert_eq!(limits.levels, 4);
    assert!(draw(&a, 80, 24).contains("levels (ms) 5-8 of 8"));
    // Tab twice: the levels; up scrolls away from the newest, down stops at the last row
    a.on_key(KeyEvent::new(KeyCode::Tab, KeyModifiers::NONE));
    a.on_key(KeyEvent::new(KeyCode::Tab, KeyModifiers::NONE));
    assert_eq!(a.focus, super::app::Panel::Levels);
    a.on_key(KeyEvent::new(KeyCode::Up, KeyModifiers::NONE));
    assert_eq!((a.level_scroll, a.level_follow), (3, false));
    assert!(draw(&a, 80, 24).contains("levels (ms) 4-7 of 8"));
    for _ in 0..10 {
        a.on_key(KeyEvent::new(KeyCode::Down, KeyModifiers::NONE));
    }
    assert_eq!((a.level_scroll, a.level_follow), (4, true));
    // the results panel (Shift-Tab back to it) scrolls as far as its text goes, no further
    a.on_key(KeyEvent::new(KeyCode::BackTab, KeyModifiers::NONE));
    assert_eq!(a.focus, super::app::Panel::Results);
    assert!(
        limits.results > 0,
        "the results overflow their panel at 80x24"
    );
    for _ in 0..50 {
        a.on_key(KeyEvent::new(KeyCode::Down, KeyModifiers::NONE));
    }
    assert_eq!(a.results_scroll, limits.results);
    // the full view: End goes to its last page, where the right-size is
    a.on_key(KeyEvent::new(KeyCode::Char('r'), KeyModifiers::NONE));
    a.on_key(KeyEvent::new(KeyCode::End, KeyModifiers::NONE));
    let full = draw(&a, 80, 24);
    assert_eq!(
        a.full_scroll,
        crate::tui::render::scroll::full_results_max_scroll(&a)
    );
    assert!(full.contains("notes"), "{full}");
    a.on_key(KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE));
    assert!(!a.full_results);
}

#[test]
fn past_runs_list_and_an_overlay_of_two_runs() {
    let mut a = app();
    a.runs = vec![
        super::app::RunEntry {
            id: "20261129-091500-sweep".into(),
            path: "/tmp/runs/20261129-091500-sweep".into(),
            date: "2026-11-29 09:15".into(),
            kind: "sweep".into(),
            answer: "ideal c=64".into(),
            status: crate::report::history::RunStatus::Finished,
            levels: 4,
            endpoint: "sim".into(),
            model: "sim-moe-30b-a3b".into(),
            workload: "rag".into(),
            problem: None,
        },
        super::app::RunEntry {
            id: "20261128-170000-sweep".into(),
            path: "/tmp/runs/20261128-170000-sweep".into(),
            date: "2026-11-28 17:00".into(),
            kind: "sweep".into(),
            answer: "ideal c=64".into(),
            status: crate::report::history::RunStatus::Finished,
            levels: 3,
            endpoint: "local-vllm".into(),
            model: "Qwen/Qwen3-30B-A3B".into(),
            workload: "chat".into(),
            problem: None,
        },
    ];
    a.screen = Screen::Runs;
    a.runs_selected = 1;
    insta::assert_snapshot!(draw(&a, 100, 12));
    a.on_engine(&started());
    for l in sweep_levels() {
        a.on_engine(&EngineEvent::LevelFinished(Box::new(l)));
    }
    // the other run: half the throughput, twice the latency
    let other = vec![
        level(0, 16, 64, 440, 6800, 128, None),
        level(1, 64, 128, 1100, 11600, 128, None),
        level(2, 256, 512, 5000, 31400, 128, None),
    ];
    a.overlay = Some((
        "20261128-170000-sweep".into(),
        "/tmp/runs/20261128-170000-sweep".into(),
        other,
    ));
    a.refresh_view();
    a.screen = Screen::Run;
    insta::assert_snapshot!("overlay_on_the_run_screen", draw(&a, 120, 36));
}

#[test]
fn peak_and_price_typed_on_the_run_screen_update_the_planning_numbers() {
    let mut a = app();
    let analysis = Analysis {
        slas: SlaSet(vec![SlaThreshold::parse(SlaMetric::E2e, "30s").unwrap()]),
        ..Analysis::default()
    };
    a.run_started(None, analysis);
    for l in sweep_levels() {
        a.on_engine(&EngineEvent::LevelFinished(Box::new(l)));
    }
    a.run_ended(None);
    let instances = |a: &App| {
        a.report
            .as_ref()
            .and_then(|r| r.planning.right_size.as_ref())
            .map(|r| (r.instances, r.cost_per_hour))
    };
    assert_eq!(instances(&a), None);
    fn typed_more(a: &mut App, text: &str) {
        for c in text.chars() {
            a.on_key(key(c));
        }
        a.on_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    }
    let typed = |a: &mut App, k: char, text: &str| {
        a.on_key(key(k));
        typed_more(a, text);
    };
    // ideal balance 256 carries 256 streams: 1000 * 1.2 / 256 -> 5 instances
    typed(&mut a, 'p', "1000");
    assert_eq!(instances(&a), Some((5, None)));
    typed(&mut a, '$', "4");
    assert_eq!(instances(&a), Some((5, Some(20.0))));
    // the field opens holding 1000: erase it, type 2000
    a.on_key(key('p'));
    for _ in 0..4 {
        a.on_key(KeyEvent::new(KeyCode::Backspace, KeyModifiers::NONE));
    }
    typed_more(&mut a, "2000");
    assert_eq!(instances(&a).map(|i| i.0), Some(10));
}

/// A watched run (`rightsize watch`): `q` leaves at once, with no question (the run goes on
/// without the watcher), and once it ended the footer offers no new run and no export (the
/// run's folder is where it ran); the same run launched here offers both.
#[test]
fn a_watched_run_is_left_with_q_and_offers_no_new_run() {
    let mut a = mid_run_at_256();
    assert!(a.live);
    a.watching = true;
    assert!(matches!(a.on_key(key('q')), super::app::Action::Quit));
    assert!(!a.confirm_quit);
    a.run_ended(None);
    let screen = draw(&a, 120, 40);
    assert!(
        !screen.contains("s again") && !screen.contains("e export"),
        "{screen}"
    );
    a.watching = false;
    let screen = draw(&a, 120, 40);
    assert!(
        screen.contains("s again") && screen.contains("e export"),
        "{screen}"
    );
}
