//! The simulator's saturation curve, from its own stamps: closed-loop streaming clients at 4,
//! 16, 32 and 64 against 16 batch slots at 2x real time, each level's output tokens per model
//! second and median end-to-end latency. The model says 1,276 tok/s once the 16 slots are
//! full (16 tokens per step of 10 + 0.12 x 16 ms, plus 16 prefills of 64 tokens per 32
//! steps: 512 tokens / 401 ms); below the limit throughput scales, past it it stays flat while
//! latency keeps rising. How close a run comes depends on how late this machine's threads
//! wake (a busy machine makes the simulator slower), which is why it is a benchmark and not a
//! test; `tests/sim/sim_load.rs` checks the metrics and the noise.
//!
//! `cargo bench --bench sim_saturation` (release build; the machine otherwise idle).

#[path = "../tests/support/sim_util/mod.rs"]
mod sim_util;

use rightsize::sim::{SimConfig, TIMING_HEADER};
use sim_util::*;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Closed-loop streaming clients: (output tokens per model second, median e2e latency in model
/// seconds), both from the simulator's stamps of its writes (`x-rightsize-sim-timing`), so a
/// client slowed by a busy machine does not count: the throughput is the middle half of the
/// level's tokens over the time the simulator took to write them (all slots busy, no ramp or
/// tail), the latency each request's send to its last token's write.
async fn level(
    addr: SocketAddr,
    concurrency: usize,
    requests: usize,
    time_scale: f64,
) -> (f64, f64) {
    let next = Arc::new(AtomicUsize::new(0));
    let mut workers = Vec::new();
    for _ in 0..concurrency {
        let next = Arc::clone(&next);
        workers.push(tokio::spawn(async move {
            let mut out = Vec::new();
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= requests {
                    return out;
                }
                let body = chat_body(&prompt(64, 1000 + i as u64), 32, true);
                let sent = rightsize::clock::now_ns();
                let r = post_with(
                    addr,
                    "/v1/chat/completions",
                    &[(TIMING_HEADER, "1")],
                    &body,
                    Duration::from_secs(60),
                )
                .await;
                // the stamps of the chunks that carry a token (not the role's)
                let stamps: Vec<u64> = r
                    .chunks()
                    .iter()
                    .filter(|c| {
                        let delta = &c["choices"][0]["delta"];
                        delta["content"].is_string() && delta["role"].is_null()
                    })
                    .filter_map(|c| c["sim_sent_ns"].as_u64())
                    .collect();
                out.push((sent, stamps));
            }
        }));
    }
    let mut lat = Vec::new();
    let mut tokens = Vec::new();
    for w in workers {
        for (sent, stamps) in w.await.unwrap() {
            assert_eq!(stamps.len(), 32);
            lat.push(stamps[31].saturating_sub(sent) as f64 / 1e9);
            tokens.extend(stamps);
        }
    }
    assert_eq!(tokens.len(), 32 * requests);
    tokens.sort_unstable();
    let n = tokens.len();
    let (from, to) = (tokens[n / 4], tokens[3 * n / 4]);
    lat.sort_by(f64::total_cmp);
    (
        (3 * n / 4 - n / 4) as f64 / ((to - from) as f64 / 1e9 * time_scale),
        lat[lat.len() / 2] * time_scale,
    )
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    // 2x: about 80 requests a second to turn around at saturation (at 10x, 400 a second, a
    // debug client at 32 lagged reading its answers and the simulator's queue ran dry)
    let scale = 2.0;
    let sim = start(SimConfig {
        max_num_seqs: 16,
        ..SimConfig::fast(scale)
    })
    .await;
    println!("concurrency  tok/s (model)  p50 e2e s (model)");
    let mut points = Vec::new();
    for c in [4usize, 16, 32, 64] {
        let (tput, p50) = level(sim.addr, c, (c * 3).max(48), scale).await;
        println!("{c:11}  {tput:13.0}  {p50:17.2}");
        points.push((tput, p50));
    }
    sim.shutdown();
    let (t4, t16, t32, t64) = (points[0].0, points[1].0, points[2].0, points[3].0);
    let (l16, l32, l64) = (points[1].1, points[2].1, points[3].1);
    let checks = [
        ("scales below the slot limit (16 > 2 x 4)", t16 > 2.0 * t4),
        (
            "saturates near the model's 1,276 tok/s (1,050-1,400 at 64)",
            (1050.0..1400.0).contains(&t64),
        ),
        (
            "flat past the slot limit (64 < 1.15 x 32)",
            t64 < 1.15 * t32,
        ),
        (
            "latency keeps rising (32 > 1.3 x 16, 64 > 1.6 x 32)",
            l32 > 1.3 * l16 && l64 > 1.6 * l32,
        ),
    ];
    for (what, held) in checks {
        println!("{} {what}", if held { "held  " } else { "MISSED" });
    }
}
