//! Exploration: print dense curves of the simulator configurations the search tests use.
//! `cargo bench --bench search_explore`, with `LEVELS` (comma-separated, 1,2,4,...,64 by
//! default), `N` (requests per level), `TS` (time scale) and `MW` (the simulator's
//! waiting-queue limit).
#[path = "../tests/support/common/mod.rs"]
mod common;
#[path = "../tests/support/search_support/mod.rs"]
mod search_support;
use search_support::*;
use std::time::Duration;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let ts: f64 = std::env::var("TS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(4.0);
    let mut cfg = search_sim();
    cfg.time_scale = ts;
    if let Ok(w) = std::env::var("MW") {
        cfg.max_waiting = w.parse().ok();
    }
    let server = rightsize::sim::start(cfg).await.unwrap();
    let levels: Vec<u32> = std::env::var("LEVELS")
        .unwrap_or_else(|_| "1,2,4,8,16,32,64".into())
        .split(',')
        .map(|s| {
            s.trim()
                .parse()
                .unwrap_or_else(|_| panic!("LEVELS: {s:?} is not a concurrency"))
        })
        .collect();
    let n: u32 = std::env::var("N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(192);
    let t0 = std::time::Instant::now();
    let out = run_plan(
        &server,
        sweep(levels),
        &search_workload(),
        n,
        Duration::from_secs(30),
    )
    .await;
    println!(
        "{}",
        curve_text(&rightsize::plan::Analysis::default(), &out.levels)
    );
    println!("took {:?}", t0.elapsed());
}
