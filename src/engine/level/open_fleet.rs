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

use super::crew::{Crew, Crewed, Running};
use super::measure::ticks;
use super::open_collect::{OpenCollector, SAMPLE};
use super::LevelCtx;
use crate::clock::now_ns;
use crate::engine::fleet::{split_even, Fleet, Share};
use crate::engine::intended::Segment;
use crate::engine::open_plan::OpenPlan;

/// How far ahead of now an open-loop level's start instant is set: time for every worker to
/// get its share, count the schedule and make its first prompts (up to 4,096, about 35 ms
/// in a release build) before it, since its first arrivals are due at the instant. A worker
/// ready only after it reports that later start, and the level's spread shows it.
const OPEN_START_LEAD: std::time::Duration = std::time::Duration::from_secs(1);

/// The shares of an open-loop level of `n` arrivals over `workers` workers, starting at
/// `start_at_ns`: one segment each, for as many workers as there are arrivals (and parts of
/// the in-flight cap); none when the level sends nothing.
fn open_shares(plan: &OpenPlan, n: u64, workers: usize, start_at_ns: u64) -> Vec<Share> {
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

/// Sends one open-loop level on the fleet (see the module header), its records into
/// `collector`; whether it was cut short (cancelled, or a worker lost), and its workers.
pub(super) async fn run(
    ctx: &mut LevelCtx<'_>,
    plan: &OpenPlan,
    collector: &mut OpenCollector,
    fleet: &dyn Fleet,
) -> (bool, Option<Crewed>) {
    let start_at = now_ns() + OPEN_START_LEAD.as_nanos() as u64;
    let shares = open_shares(plan, collector.count(), fleet.size(), start_at);
    let mut crew = Crew::new(fleet);
    crew.took(&shares);
    let rx = fleet.start(shares);
    // samples from the level's start on, as one process takes them
    let first = std::time::Duration::from_nanos(start_at.saturating_sub(now_ns())) + SAMPLE;
    let running = Running {
        rx,
        tick: ticks(tokio::time::Instant::now() + first, SAMPLE),
        origin: start_at,
        index: plan.index,
    };
    // the records come with times from the level's start, numbered by arrival
    crew.receive(ctx, running, collector, |_, _, _| {}).await;
    let partial = crew.halt.lost || ctx.cancel.is_cancelled();
    (partial, Some(crew.end()))
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
