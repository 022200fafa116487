//! Helpers for the search and knee tests: run a plan through the engine against an
//! in-process simulator, and find a boundary on a dense sweep.
#![allow(dead_code)]

use rightsize::engine::{run, EngineEvent, LevelPlanner, RunOutcome};
use rightsize::metrics::LevelSummary;
use rightsize::plan::range::{boundary_range, BoundaryRange};
use rightsize::plan::{Analysis, SweepPlanner};
use rightsize::sim::SimServer;
use rightsize::workload::WorkloadSpec;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

pub fn workload(input: u32, output: u32) -> WorkloadSpec {
    WorkloadSpec::fixed(input, output)
}

pub use super::common::tmpdir;

/// Runs `planner` against the simulator with `requests` per level.
pub async fn run_plan(
    server: &SimServer,
    planner: Box<dyn LevelPlanner>,
    w: &WorkloadSpec,
    requests: u32,
    timeout: Duration,
) -> RunOutcome {
    run_plan_with(server, planner, w, requests, timeout, Default::default())
        .await
        .0
}

/// The same with open-loop settings; also returns every event the run sent.
pub async fn run_plan_with(
    server: &SimServer,
    planner: Box<dyn LevelPlanner>,
    w: &WorkloadSpec,
    requests: u32,
    timeout: Duration,
    open: rightsize::workload::arrivals::OpenSettings,
) -> (RunOutcome, Vec<EngineEvent>) {
    let mut req = super::common::sim_run_request(
        server,
        w.clone(),
        requests,
        timeout,
        Box::new(rightsize::report::folder::FolderSink::new(tmpdir("search"))),
    );
    req.kind = "search".into();
    req.open = open;
    let (tx, mut rx) = tokio::sync::mpsc::channel::<EngineEvent>(64);
    let drain = tokio::spawn(async move {
        let mut seen = Vec::new();
        while let Some(ev) = rx.recv().await {
            seen.push(ev);
        }
        seen
    });
    let out = run(req, planner, tx, CancellationToken::new())
        .await
        .expect("run completes");
    let seen = drain.await.unwrap_or_default();
    (out, seen)
}

/// `n` simulators of the one model `cfg`, for runs that go side by side: each run has a
/// server of its own, so they share the machine and not the model's batch slots.
pub async fn sims(cfg: rightsize::sim::SimConfig, n: usize) -> Vec<SimServer> {
    let mut servers = Vec::with_capacity(n);
    for _ in 0..n {
        servers.push(rightsize::sim::start(cfg.clone()).await.unwrap());
    }
    servers
}

/// Stops every server of `sims`.
pub fn shutdown_all(servers: Vec<SimServer>) {
    servers.into_iter().for_each(SimServer::shutdown);
}

/// A plain sweep over `levels`.
pub fn sweep(levels: Vec<u32>) -> Box<dyn LevelPlanner> {
    Box::new(SweepPlanner::fixed(levels))
}

/// Where the dense sweep's 95 % intervals put the boundary of `analysis`'s limits (its SLAs
/// and error-rate limit): interpolated between the measured levels, as a search's own range.
pub fn dense_range(analysis: &Analysis, levels: &[LevelSummary]) -> BoundaryRange {
    boundary_range(&analysis.limits(), levels).expect("held levels to read the boundary off")
}

/// One line per level, for failure messages: the curve, and each limit's observed value,
/// interval and verdict.
pub fn curve_text(analysis: &Analysis, levels: &[LevelSummary]) -> String {
    let limits = analysis.limits();
    levels
        .iter()
        .map(|l| {
            let checks: Vec<String> = limits
                .check(l)
                .iter()
                .map(|c| {
                    format!(
                        "{} {:.3} [{:.3}, {:.3}] {:?}",
                        c.threshold.metric.label(),
                        c.observed.unwrap_or(f64::NAN),
                        c.ci.and_then(|i| i.lo()).unwrap_or(f64::NAN),
                        c.ci.and_then(|i| i.hi()).unwrap_or(f64::NAN),
                        c.verdict
                    )
                })
                .collect();
            format!(
                "{} n={} held={} tps={:.0} sustained={:.0} e2e99={:.2} err={:.3}; {}\n",
                rightsize::metrics::summary::load_label(l),
                l.planned_requests,
                l.held,
                l.output_tps(),
                l.sustained_tps(),
                l.e2e_p(99.0).unwrap_or(f64::NAN),
                l.error_rate,
                checks.join("; ")
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

/// Requests per level in the search tests. A level's statistics include its last round,
/// when fewer requests are in flight and each runs faster: with 128 requests at concurrency
/// 48 that tail was a third of the level and moved its mean TPOT several percent below a
/// longer level's. Both the dense sweep and the search run this many, so they measure alike.
pub const REQUESTS: u32 = 384;

/// The search binary's measuring tests share the machine through this lane (see
/// `common::lane`): fifteen units, a unit being a tenth of a core, so that together they keep
/// to one and a half of the two cores and leave the rest to the simulators' bursts and the
/// binary's other tests. Each test takes what it used alone (`/usr/bin/time` on
/// `target/debug/deps/search-* --exact NAME`, child processes included), rounded up:
/// `search_sim` 46 s of CPU in 60 s (8), `refine_knee` 39 in 65 (6), `search_rate` 20 in 48
/// (4), `search_noise` 20 in 105 before its levels were capped (3), a campaign 12 in 70 (2).
/// The pooled search of `search_cli` (19 in 13) and `search_error_rate` (18 in 23; beside the
/// others `search_sim` once missed by a hair) take the machine alone, after the rest. Side by
/// side without a lane, `refine_knee` and the pooled search inflated each other's latencies on
/// a clean CI clone and both missed (no knee; a search out of budget), and with every test of
/// the binary started at once four of them missed. With ten units (one core) and the tests
/// alone served in their place in the queue the binary took 323 s; now 145-167 s. Eighteen
/// units took as long (149-166 s): the tests wait on their simulators' model time more than on
/// the machine.
pub static MACHINE: super::common::lane::Lane = super::common::lane::Lane::new(15);
