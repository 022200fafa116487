//! Helpers for the search and knee tests: run a plan through the engine against an
//! in-process simulator, and find a boundary on a dense sweep.
#![allow(dead_code)]

use rightsize::endpoint::{Api, EndpointSpec};
use rightsize::engine::{run, EngineEvent, LevelPlanner, RunOutcome, RunRequest};
use rightsize::metrics::LevelSummary;
use rightsize::plan::sla::SlaSet;
use rightsize::plan::{Analysis, SweepPlanner};
use rightsize::sim::SimServer;
use rightsize::workload::WorkloadSpec;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

pub fn workload(input: u32, output: u32) -> WorkloadSpec {
    WorkloadSpec::fixed(input, output)
}

#[path = "../common/mod.rs"]
mod common;
pub use common::tmpdir;

/// Runs `planner` against the simulator with `requests` per level.
pub async fn run_plan(
    server: &SimServer,
    planner: Box<dyn LevelPlanner>,
    w: &WorkloadSpec,
    requests: u32,
    timeout: Duration,
) -> RunOutcome {
    let spec = EndpointSpec {
        name: "sim".into(),
        base_url: server.base_url.clone(),
        model: server.model.clone(),
        api: Api::Chat,
        stream: w.stream,
        exact_output_length: true,
        headers: vec![],
        api_key_env: None,
        sim_timing: false,
    };
    let req = RunRequest {
        kind: "search".into(),
        endpoint: spec,
        workload: w.clone(),
        request_count: requests,
        warmup: 0,
        timeout,
        results_root: tmpdir("search"),
        in_process_sim: true,
        config_sources: vec![],
    };
    let (tx, mut rx) = tokio::sync::mpsc::channel::<EngineEvent>(64);
    let drain = tokio::spawn(async move { while rx.recv().await.is_some() {} });
    let out = run(req, planner, tx, CancellationToken::new())
        .await
        .expect("run completes");
    let _ = drain.await;
    out
}

/// A plain sweep over `levels`.
pub fn sweep(levels: Vec<u32>) -> Box<dyn LevelPlanner> {
    Box::new(SweepPlanner {
        levels,
        refine_knee: false,
        analysis: Analysis::default(),
    })
}

/// The true boundary on a dense sweep: the highest level below the first failing one.
pub fn dense_boundary(slas: &SlaSet, levels: &[LevelSummary]) -> Option<u32> {
    let mut sorted: Vec<&LevelSummary> = levels.iter().collect();
    sorted.sort_by_key(|l| l.concurrency);
    let first_fail = sorted.iter().position(|l| !slas.passes(l))?;
    first_fail.checked_sub(1).map(|i| sorted[i].concurrency)
}

/// The boundary a dense sweep shows, robust to one noisy level: where a straight line fitted
/// to the binding SLA's observed/limit ratio crosses 1, over the levels within 20 % of the
/// first level that fails together with the next one, after dropping the worst outlier.
pub fn fitted_boundary(slas: &SlaSet, levels: &[LevelSummary]) -> Option<f64> {
    let ratio = |l: &LevelSummary| {
        slas.check(l)
            .iter()
            .map(|c| c.ratio())
            .fold(0.0_f64, f64::max)
    };
    let mut sorted: Vec<&LevelSummary> = levels.iter().collect();
    sorted.sort_by_key(|l| l.concurrency);
    let first_fail = sorted
        .windows(2)
        .find(|w| ratio(w[0]) > 1.0 && ratio(w[1]) > 1.0)?[0]
        .concurrency as f64;
    let near: Vec<(f64, f64)> = sorted
        .iter()
        .map(|l| (l.concurrency as f64, ratio(l)))
        .filter(|(c, r)| (*c - first_fail).abs() <= 0.2 * first_fail && r.is_finite())
        .collect();
    let (mx, my, slope) = fit(&near);
    // drop the point furthest from the line, once, and fit again
    let worst = near
        .iter()
        .enumerate()
        .max_by(|a, b| {
            let r = |p: &(f64, f64)| (p.1 - (my + slope * (p.0 - mx))).abs();
            r(a.1).total_cmp(&r(b.1))
        })
        .map(|(i, _)| i)?;
    let rest: Vec<(f64, f64)> = near
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != worst)
        .map(|(_, p)| *p)
        .collect();
    let (mx, my, slope) = fit(&rest);
    (slope > 0.0).then(|| mx + (1.0 - my) / slope)
}

/// Least squares: (mean x, mean y, slope).
fn fit(pts: &[(f64, f64)]) -> (f64, f64, f64) {
    let n = pts.len() as f64;
    let (sx, sy) = pts.iter().fold((0.0, 0.0), |a, p| (a.0 + p.0, a.1 + p.1));
    let (mx, my) = (sx / n, sy / n);
    let sxy: f64 = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let sxx: f64 = pts.iter().map(|p| (p.0 - mx).powi(2)).sum();
    (mx, my, sxy / sxx)
}

/// One line per level, for failure messages.
pub fn curve_text(levels: &[LevelSummary]) -> String {
    levels
        .iter()
        .map(|l| {
            format!(
                "c={} tps={:.0} ttft_avg={:.2} tpot_avg={:.3} tpot95={:.3} e2e_avg={:.2} e2e99={:.2} \
                 err={:.3}\n",
                l.concurrency,
                l.output_tps(),
                l.time_to_first_token.as_ref().map_or(f64::NAN, |s| s.avg),
                l.inter_token_latency.as_ref().map_or(f64::NAN, |s| s.avg),
                l.itl_p(95.0).unwrap_or(f64::NAN),
                l.request_latency.as_ref().map_or(f64::NAN, |s| s.avg),
                l.e2e_p(99.0).unwrap_or(f64::NAN),
                l.error_rate
            )
        })
        .collect()
}

/// The simulator the search tests measure: 64 batch slots and a decode step that grows
/// steeply with the batch (20 ms + 2 ms per sequence, model time), 2x real time, so a step
/// is 26 to 74 ms of real time: long enough that scheduling jitter on a busy machine stays
/// small beside it. TPOT rises smoothly up to 64 concurrent; past that, requests queue and
/// TTFT and e2e climb.
pub fn search_sim() -> rightsize::sim::SimConfig {
    let mut cfg = rightsize::sim::SimConfig::fast(2.0);
    cfg.max_num_seqs = 64;
    cfg.decode_base_ms = 20.0;
    cfg.decode_per_seq_ms = 2.0;
    cfg.prefill_per_token_ms = 0.05;
    // prompts are a function of (seed, level index, request index): a second run on the same
    // server would find the first run's prompts cached and measure a faster server
    cfg.prefix_cache_blocks = 0;
    cfg
}

/// 64 tokens in (stddev 16), 4 out (stddev 1): few steps per request keep levels short;
/// lengths vary so requests do not move in lockstep waves.
pub fn search_workload() -> WorkloadSpec {
    let mut w = workload(64, 4);
    w.input_tokens_stddev = 16;
    w.output_tokens_stddev = 1;
    w
}

/// Requests per level in the search tests.
pub const REQUESTS: u32 = 128;

/// The boundary on a dense sweep: a coarse pass every `step`, then every level inside the
/// bracket the coarse pass found. Returns (boundary, all levels measured).
pub async fn dense_sweep_boundary(
    server: &SimServer,
    slas: &SlaSet,
    coarse: &[LevelSummary],
    step: u32,
    requests: u32,
    timeout: Duration,
) -> (u32, Vec<LevelSummary>) {
    let b = robust_last_pass(slas, coarse).expect("the coarse sweep brackets the boundary");
    let fine: Vec<u32> = (b + 1..b + step).collect();
    let out = run_plan(server, sweep(fine), &search_workload(), requests, timeout).await;
    let mut all: Vec<LevelSummary> = coarse.to_vec();
    all.extend(out.levels);
    let b = robust_last_pass(slas, &all).expect("boundary");
    (b, all)
}

/// The last passing level before the first two failing levels in a row.
pub fn robust_last_pass(slas: &SlaSet, levels: &[LevelSummary]) -> Option<u32> {
    let mut sorted: Vec<&LevelSummary> = levels.iter().collect();
    sorted.sort_by_key(|l| l.concurrency);
    let i = sorted
        .windows(2)
        .position(|w| !slas.passes(w[0]) && !slas.passes(w[1]))?;
    sorted[..i]
        .iter()
        .rev()
        .find(|l| slas.passes(l))
        .map(|l| l.concurrency)
}
