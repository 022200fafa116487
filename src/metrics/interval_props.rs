//! Property: every interval a level carries holds its own estimate, whatever the level's
//! size, concurrency, correlation in time, ties, SLA limit, or measurements pooled into it
//! (`docs/search.md`, "Confidence"). Levels are drawn by proptest from a fixed seed, so the
//! test decides the same way on every run.

use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

use super::accumulator::{LevelAccumulator, RequestLimits};
use super::fixtures::record;
use super::summary::LevelMeta;

const MS: f64 = 1e6;

/// A drawn level: its concurrency, its requests' (TTFT, e2e) in ms in start order, how many
/// of them the first measurement had (the rest are a second measurement pooled into it),
/// and the SLA limits the run counted them against.
#[derive(Debug, Clone)]
struct Drawn {
    concurrency: u32,
    times: Vec<(f64, f64)>,
    first: usize,
    limits: RequestLimits,
}

/// Latencies whose speed moves in stretches (`period` requests), with ties when `grid` rounds
/// them to a few values, and a slow start when `cold` (the first round queued).
fn level() -> impl Strategy<Value = Drawn> {
    (
        1u32..600,
        1usize..2500,
        1usize..400,
        0u32..4,
        any::<bool>(),
        any::<u64>(),
        prop::option::of(1.0f64..3000.0),
        prop::option::of(1.0f64..3000.0),
        0.0f64..1.0,
    )
        .prop_map(
            |(concurrency, n, period, grid, cold, seed, e2e_limit, ttft_limit, split)| {
                let mut x = seed | 1;
                let mut unit = move || {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    (x >> 11) as f64 / (1u64 << 53) as f64
                };
                let mut speed = 1.0;
                let times = (0..n)
                    .map(|i| {
                        if i % period == 0 {
                            speed = 0.3 + 3.0 * unit();
                        }
                        let slow = if cold && i < concurrency as usize {
                            5.0
                        } else {
                            1.0
                        };
                        let mut ttft = slow * speed * (5.0 - 40.0 * unit().max(1e-12).ln());
                        let mut e2e = ttft + speed * (50.0 + 500.0 * unit());
                        if grid > 0 {
                            let step = 10f64.powi(grid as i32);
                            ttft = (ttft / step).ceil() * step;
                            e2e = (e2e / step).ceil() * step + ttft;
                        }
                        (ttft, e2e)
                    })
                    .collect();
                Drawn {
                    concurrency,
                    times,
                    first: ((n as f64 * split) as usize).max(1),
                    limits: RequestLimits {
                        ttft_ms: ttft_limit,
                        itl_ms: None,
                        e2e_ms: e2e_limit,
                    },
                }
            },
        )
}

/// The level summarised as the engine does: the first measurement, then (when `first` is
/// short of every request) a second one resumed where the first ended, pooled into it.
fn summarise(d: &Drawn) -> super::LevelSummary {
    let c = d.concurrency as usize;
    let mut acc = LevelAccumulator::new(d.concurrency, d.first as u64).with_goodput(d.limits);
    let mut offset = 0u64;
    for (part, range) in [(0, 0..d.first), (1, d.first..d.times.len())] {
        if part == 1 {
            if range.is_empty() {
                break;
            }
            offset = acc.resume();
            acc.plan_more(range.len() as u64);
        }
        for (j, i) in range.enumerate() {
            let (ttft, e2e) = d.times[i];
            let start = offset + (j / c) as u64 * 4_000 * MS as u64 + (j % c) as u64;
            let at = |ms: f64| start + (ms * MS) as u64;
            acc.add(&crate::record::RequestRecord {
                worker: (j % c) as u32,
                first_token_ns: Some(at(ttft)),
                output_tokens: Some(16),
                content_chunks: 16,
                ..record(i as u64, start, at(e2e))
            });
        }
    }
    acc.finish(LevelMeta::default())
}

#[test]
fn every_interval_holds_its_estimate() {
    let config = Config {
        cases: 300,
        failure_persistence: None,
        ..Config::default()
    };
    let seed = [7u8; 32];
    let mut runner =
        TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &seed));
    runner
        .run(&level(), |d| {
            let s = summarise(&d);
            prop_assert_eq!(s.intervals_hold_estimates(), Ok(()));
            Ok(())
        })
        .unwrap();
}
