//! One open-loop level sent by the workers of a distributed run (`docs/distributed.md`).
//!
//! Every worker gets the level's whole schedule (its seed and shape, or the replayed trace)
//! and a segment of it ([`Segment`]: arrival `i` is worker `i % N`'s, as k6's execution
//! segments do), and sends its arrivals at their times counted from one start instant, set in
//! each worker's own clock. Together the workers send exactly the schedule one process would:
//! the same intended times, the same prompts, each arrival once. A `--max-in-flight` cap is
//! split over them as evenly as possible (each holds its part; a worker with no part of it
//! gets no share).
//!
//! Their records come back with times from that instant, numbered by arrival, and are folded
//! here by the same collector one process uses ([`OpenCollector`]): the merged level is the
//! union of the workers' requests. The collector also watches the requests waiting over the
//! whole level, and when they keep growing every share stops (the server cannot keep up),
//! as one process's dispatcher would. The records come a report period (250 ms) or so after
//! the requests end, so the collector judges the requests waiting half a second back
//! (`Fleet::records_lag`), counting ends by when they happened: the same count one process
//! has, half a second later.
//!
//! A worker lost mid-level stops every share: the level is kept partial with it named.

use super::closed_loop::LevelCtx;
use super::events::EngineEvent;
use super::fleet::{split_even, Fleet, Share};
use super::fleet_level::{fleet_level, hear, spread, with_workers, workers_lag};
use super::fleet_level::{Halt, Heard, Tally};
use super::intended::Segment;
use super::lag::LagProbe;
use super::open_collect::{OpenCollector, Sending, SAMPLE};
use super::open_plan::OpenPlan;
use crate::clock::now_ns;
use crate::metrics::LevelSummary;

/// How far ahead of now an open-loop level's start instant is set: time for every worker to
/// get its share, count the schedule and make its first prompts (up to 4,096, about 35 ms
/// in a release build) before it, since its first arrivals are due at the instant. A worker
/// ready only after it reports that later start, and the level's spread shows it.
pub const OPEN_START_LEAD: std::time::Duration = std::time::Duration::from_secs(1);

/// The shares of an open-loop level of `n` arrivals over `workers` workers, starting at
/// `start_at_ns`: one segment each, for as many workers as there are arrivals (and parts of
/// the in-flight cap); none when the level sends nothing.
pub fn open_shares(plan: &OpenPlan, n: u64, workers: usize, start_at_ns: u64) -> Vec<Share> {
    let cap = plan.max_in_flight.filter(|c| *c > 0);
    let parts = (workers as u64).min(n).min(cap.map_or(u64::MAX, u64::from)) as usize;
    let caps = cap.map(|c| split_even(u64::from(c), parts));
    (0..parts)
        .map(|w| {
            let segment = Segment {
                part: w as u32,
                of: parts as u32,
            };
            let held = caps.as_ref().map(|c| c[w] as u32);
            Share {
                worker: w,
                level: plan.index,
                order: plan.index,
                concurrency: held.unwrap_or(0),
                requests: segment.share_of(n).min(u64::from(u32::MAX)) as u32,
                warmup: 0,
                prompt_base: 0,
                slot_base: 0,
                start_at_ns,
                open: Some(Box::new(plan.share(segment, held))),
            }
        })
        .collect()
}

/// Runs one open-loop level on the fleet (see the module header).
pub async fn run_fleet_open_level(
    ctx: LevelCtx<'_>,
    plan: OpenPlan,
    fleet: &dyn Fleet,
) -> LevelSummary {
    let LevelCtx {
        cancel,
        events,
        sink,
        planner,
        ..
    } = ctx;
    let mut collector =
        OpenCollector::new(&plan, plan.intended(), planner).viewed_late(fleet.records_lag());
    collector.announce(events).await;
    let start_at = now_ns() + OPEN_START_LEAD.as_nanos() as u64;
    let shares = open_shares(&plan, collector.count(), fleet.size(), start_at);
    let workers = fleet.workers();
    let mut tally = vec![Tally::default(); fleet.size()];
    for s in &shares {
        tally[s.worker].took = true;
        tally[s.worker].concurrency = s.concurrency;
    }
    let cpu_before = crate::clock::process_cpu_ns();
    let mut rx = fleet.start(shares);
    let mut starts: Vec<Option<u64>> = vec![None; fleet.size()];
    let mut halt = Halt::default();
    // samples from the level's start on, as one process takes them
    let first = std::time::Duration::from_nanos(start_at.saturating_sub(now_ns())) + SAMPLE;
    let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + first, SAMPLE);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            biased;
            msg = rx.recv() => match msg.map(|m| hear(&mut tally, &mut starts, m)) {
                Some(Heard::Records(worker, records)) => {
                    for rec in records {
                        tally[worker].count(&rec);
                        collector.record(&rec, sink);
                    }
                }
                Some(Heard::Lost) => halt.lose(fleet),
                Some(Heard::Noted) => {}
                None => break,
            },
            _ = cancel.cancelled(), if !halt.stopping => halt.stop(fleet),
            _ = tick.tick() => {
                let now = now_ns().saturating_sub(start_at);
                let sending = Sending {
                    in_flight: tally.iter().map(|t| t.in_flight).sum(),
                    sent: tally.iter().map(|t| t.sent).sum(),
                    chunks: tally.iter().map(|t| t.chunks).sum(),
                };
                let (progress, saturated) = collector.sample(now, !halt.stopping, sending);
                if saturated {
                    halt.stop(fleet);
                }
                let live = fleet_level(&workers, &tally, spread(&starts, 0), 0.0, 0.0);
                let _ = events.try_send(EngineEvent::Workers(Box::new(live)));
                let _ = events.try_send(EngineEvent::Progress(progress));
            }
        }
    }
    let controller_cpu_s = crate::clock::process_cpu_ns().saturating_sub(cpu_before) as f64 / 1e9;
    let label = plan.shape.label();
    // the level's client lag is the workers' (they time the requests)
    let mut summary = collector
        .finish(
            halt.lost || cancel.is_cancelled(),
            LagProbe::off(),
            workers_lag(&tally),
            sink,
            events,
            planner,
        )
        .await;
    let block = fleet_level(
        &workers,
        &tally,
        spread(&starts, 0),
        controller_cpu_s,
        summary.benchmark_duration.avg,
    );
    with_workers(&mut summary, block, events, &label).await;
    summary
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::arrivals::{Arrival, LoadShape};
    use std::time::Duration;

    fn plan(cap: Option<u32>) -> OpenPlan {
        OpenPlan {
            index: 2,
            shape: LoadShape::Rate { rps: 2000.0 },
            arrival: Arrival::Poisson,
            seed: 11,
            times: None,
            max_requests: 10,
            max_in_flight: cap,
            window: Duration::from_secs(1),
        }
    }

    /// (worker, part, of, its cap, its arrivals) of each share.
    fn shape(shares: &[Share]) -> Vec<(usize, u32, u32, Option<u32>, u32)> {
        shares
            .iter()
            .map(|s| {
                let o = s.open.as_ref().expect("an open share");
                (
                    s.worker,
                    o.segment.part,
                    o.segment.of,
                    o.max_in_flight,
                    s.requests,
                )
            })
            .collect()
    }

    #[test]
    fn a_level_splits_into_segments_and_its_cap_into_parts() {
        let cases = [
            // 10 arrivals over 4 workers, no cap: every worker, 3-3-2-2
            (
                None,
                10,
                4,
                vec![
                    (0, 0, 4, None, 3),
                    (1, 1, 4, None, 3),
                    (2, 2, 4, None, 2),
                    (3, 3, 4, None, 2),
                ],
            ),
            // a cap of 6: 2-2-1-1
            (
                Some(6),
                10,
                4,
                vec![
                    (0, 0, 4, Some(2), 3),
                    (1, 1, 4, Some(2), 3),
                    (2, 2, 4, Some(1), 2),
                    (3, 3, 4, Some(1), 2),
                ],
            ),
            // a cap of 2: two workers, each holding one
            (
                Some(2),
                10,
                4,
                vec![(0, 0, 2, Some(1), 5), (1, 1, 2, Some(1), 5)],
            ),
            // three arrivals: three workers
            (
                None,
                3,
                4,
                vec![(0, 0, 3, None, 1), (1, 1, 3, None, 1), (2, 2, 3, None, 1)],
            ),
            // nothing to send: no share
            (None, 0, 4, vec![]),
        ];
        for (cap, n, workers, want) in cases {
            let shares = open_shares(&plan(cap), n, workers, 77);
            assert_eq!(shape(&shares), want, "cap {cap:?}, {n} over {workers}");
            assert!(shares.iter().all(|s| s.start_at_ns == 77 && s.level == 2));
        }
        // the schedule is the level's, whole, in every share
        let p = plan(None);
        let s = open_shares(&p, 10, 2, 0);
        let o = s[1].open.as_ref().unwrap();
        assert_eq!(
            (&o.shape, o.arrival, o.seed, o.max_requests),
            (&p.shape, p.arrival, p.seed, 10)
        );
        // a trace longer than the level: each share carries only the times it sends
        let traced = OpenPlan {
            times: Some(std::sync::Arc::new((0..25).map(|i| i * 1_000).collect())),
            ..plan(None)
        };
        let s = open_shares(&traced, 10, 2, 0);
        let times = s[0].open.as_ref().unwrap().times.clone().unwrap();
        assert_eq!(times, (0..10).map(|i| i * 1_000).collect::<Vec<u64>>());
    }
}
