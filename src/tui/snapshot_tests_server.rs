//! Snapshot tests of the run screen's server panel: a finished sweep whose levels recorded
//! what the server's metrics said draws it beside the two top charts; a narrow screen leaves
//! it out.

use super::snapshot_tests::{app, draw, started, sweep_levels};
use crate::engine::EngineEvent;
use crate::metrics::LevelSummary;
use crate::plan::Analysis;
use crate::record::{GpuSummary, MeanMax, ServerSummary};

/// The default simulator's four sweep levels with 256 batch slots: the batch follows the load
/// to 256, then 768 requests wait at 1024 with the KV cache nearly full; with `gpu`, two
/// GPUs' power rising from 410 to 1,380 W.
fn levels_with_server(gpu: bool) -> Vec<LevelSummary> {
    let figures = [
        (15.8, 0.0, 0.04, 410.0),
        (63.5, 0.0, 0.17, 780.0),
        (251.0, 3.5, 0.66, 1290.0),
        (256.0, 766.0, 0.93, 1380.0),
    ];
    let mm = |mean: f64| Some(MeanMax { mean, max: mean });
    sweep_levels()
        .into_iter()
        .zip(figures)
        .map(|(mut l, (running, waiting, kv, watts))| {
            l.server = Some(ServerSummary {
                scheme: "vllm".into(),
                samples: 6,
                running: mm(running),
                waiting: mm(waiting),
                kv_cache_usage: mm(kv),
                gpu: gpu.then(|| GpuSummary {
                    gpus: 2,
                    power_w: mm(watts),
                    ..GpuSummary::default()
                }),
                ..ServerSummary::default()
            });
            l
        })
        .collect()
}

fn finished(levels: Vec<LevelSummary>) -> super::app::App {
    let mut a = app();
    a.run_started(Some(20.0), Analysis::default());
    a.on_engine(&started());
    for l in levels {
        a.on_engine(&EngineEvent::LevelFinished(Box::new(l)));
    }
    a.on_engine(&EngineEvent::RunFinished { interrupted: false });
    a.run_ended(None);
    a
}

#[test]
fn the_server_panel_joins_the_top_row_when_levels_recorded_the_server() {
    let a = finished(levels_with_server(false));
    insta::assert_snapshot!(draw(&a, 120, 36));
    let gpu = finished(levels_with_server(true));
    insta::assert_snapshot!("server_panel_with_gpu_power", draw(&gpu, 150, 40));
    // no room for three charts: the two as before
    let narrow = draw(&a, 80, 24);
    assert!(!narrow.contains("server:"), "{narrow}");
}
