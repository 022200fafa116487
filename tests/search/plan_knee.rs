//! Acceptance: knee detection on the default simulator swept at 16, 64, 256, 1024 with
//! `--refine-knee` lands within 1.25x of the knee a dense sweep shows, using at most 3 extra
//! levels, decided once.
//!
//! Both knees are read off one set of measurements: a dense sweep measures every level the
//! comparison needs, and the refining planner is then driven by those levels (a level it asks
//! for that the dense sweep did not measure is measured then, and joins the dense curve). Two
//! separate runs would compare two states of the machine: beside a release build the
//! simulator at 10x ran up to 20 % slower in one run than in the other, and the "dense knee"
//! moved with it. What this test decides is where the refinement puts its levels and whether
//! the knee it reads from them is the dense curve's; how steady the measurement is on a busy
//! machine is the subject of the intervals (docs/search.md).

use crate::support::search_support;
use rightsize::metrics::LevelSummary;
use rightsize::plan::knee::{curve, find_knee, DEFAULT_MIN_GAIN};
use rightsize::plan::{Analysis, LevelLoad, LevelPlanner, SweepPlanner};
use search_support::*;
use std::time::Duration;

const REQUESTS: u32 = 1024;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refine_knee_lands_within_1_25x_of_the_dense_knee() {
    let _turn = MACHINE.take(6);
    // the default model (256 batch slots), 10x real time, noise off; not streamed, so the
    // client parses one body per request instead of one chunk per token and stays far from
    // being the bottleneck (the knee needs only throughput and end-to-end latency)
    let mut sim = rightsize::sim::SimConfig::fast(10.0);
    // prompts are a function of (seed, level index, request index): a level measured twice
    // would find its prompts cached the second time
    sim.prefix_cache_blocks = 0;
    // A knee the method can decide: a decode step takes 40 ms whatever the batch, so
    // throughput grows with concurrency up to the 256 slots and is flat past them (a doubling
    // from 181 adds 41 %, from 215 19 %, from 256 nothing). The default model's steps grow
    // with the batch (10 ms + 0.12 ms a sequence), so its gain fades slowly through the 10 %
    // threshold: from 181 it read 9.4 % on one curve and 11.5 % on another, and which level
    // was named followed the level-to-level noise, not the refinement (one CI run: refined
    // 181, dense 256). A gain that close to the threshold is the undecided knee's case
    // (docs/search.md), which `src/plan/knee.rs`'s tests cover; this test decides where the
    // refinement puts its levels.
    sim.decode_base_ms = 40.0;
    sim.decode_per_seq_ms = 0.0;
    let server = rightsize::sim::start(sim).await.unwrap();
    // 128 tokens out: at most ~500 requests/s at the plateau, well within what the client
    // (a debug build, on a shared machine) handles, so the knee is the server's
    let mut w = workload(64, 128);
    w.stream = false;
    // output lengths vary (sd 32), as a real model's do: with every answer exactly 128
    // tokens the simulator's 256 slots finish together in rounds, and levels past them
    // swing with how the last round falls (304 to 431 read 5 % above 256 and 512)
    w.output_tokens_stddev = 32;
    let timeout = Duration::from_secs(60);
    // the dense sweep: the sweep's own four levels and every 2^(1/4) from 91 to 724 (twice
    // the highest knee candidate needs measuring too; below 91 the sweep's levels show
    // throughput still climbing). The refinement's geometric midpoints of these levels are
    // levels of this grid.
    let mut dense_levels: Vec<u32> = vec![1024];
    dense_levels.extend((10..=22).map(|i| (16.0 * 2f64.powf(i as f64 / 4.0)).round() as u32));
    dense_levels.sort_unstable();
    // 16 and 64 take a quarter of the requests: there every request is in a batch slot the
    // moment it is sent, throughput is four and sixteen sequences' worth of steps (a doubling
    // adds ~100 %, far from the 10 % threshold), and 1,024 requests at 16 were 64 rounds of
    // 128 steps, a third of the test's time
    let mut dense = run_plan(&server, sweep(vec![16, 64]), &w, REQUESTS / 4, timeout)
        .await
        .levels;
    dense.extend(
        run_plan(&server, sweep(dense_levels), &w, REQUESTS, timeout)
            .await
            .levels,
    );
    let mut refine = SweepPlanner {
        levels: vec![16, 64, 256, 1024],
        refine_knee: true,
        analysis: Analysis::default(),
        open: vec![],
        auto_rates: None,
    };
    let mut refined: Vec<LevelSummary> = Vec::new();
    while let Some(load) = refine.next(&refined) {
        let LevelLoad::Concurrency(c) = load else {
            panic!("a closed-loop sweep asked for {load:?}")
        };
        let level = match dense.iter().find(|l| l.concurrency == c) {
            Some(l) => l.clone(),
            None => {
                let extra = run_plan(&server, sweep(vec![c]), &w, REQUESTS, timeout).await;
                dense.push(extra.levels[0].clone());
                extra.levels[0].clone()
            }
        };
        refined.push(level);
    }
    server.shutdown();
    // the curves first: a failure below (no knee on one of them too) shows what was measured
    let a = Analysis::default();
    dense.sort_by_key(|l| l.concurrency);
    println!(
        "refined:\n{}dense:\n{}",
        curve_text(&a, &refined),
        curve_text(&a, &dense)
    );
    let truth = find_knee(&curve(&dense), DEFAULT_MIN_GAIN).expect("a dense knee");
    let extra = refined.len() - 4;
    let knee = find_knee(&curve(&refined), DEFAULT_MIN_GAIN).expect("a knee");
    let added: Vec<u32> = refined[4..].iter().map(|l| l.concurrency).collect();
    let ratio = knee.concurrency.max(truth.concurrency) as f64
        / knee.concurrency.min(truth.concurrency) as f64;
    let line = format!(
        "refined knee {} (between {:?} and {}) with {extra} extra levels {added:?}; dense knee \
         {}; ratio {ratio:.3}",
        knee.concurrency, knee.below, knee.concurrency, truth.concurrency
    );
    println!("{line}");
    let below = knee.below.unwrap_or(0).max(1);
    assert!(
        extra <= 3 && ratio <= 1.25 && knee.concurrency as f64 / below as f64 <= 1.25,
        "{line}\nrefined {knee:?} vs dense {truth:?} (curves above)"
    );
}
