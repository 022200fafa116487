//! An open-loop level sent from this process (see `docs/open-loop.md`): its dispatcher
//! (`dispatch`) sends each request at its intended time, and the collector
//! ([`OpenCollector`]) folds the records, reports progress, and stops the level early when
//! requests waiting (in flight or not yet sent) keep growing: the server cannot keep up with
//! the rate.
//!
//! A worker of a distributed run sends its segment of the same schedule
//! ([`run_open_share`]): the same dispatcher and the same loop, its records going to the
//! controller, whose collector makes the level (`open_fleet`).

use super::dispatch::Sender;
use super::measure::{progress, ticks, Follow, Sending};
use super::open_collect::{OpenCollector, SAMPLE};
use super::LevelCtx;
use crate::clock::now_ns;
use crate::engine::events::EngineEvent;
use crate::engine::fleet::OpenShare;
use crate::engine::intended::Segment;
use crate::engine::lag::LagProbe;
use crate::engine::open_plan::OpenPlan;
use crate::engine::sink::RunSink;
use crate::metrics::progress::LevelProgress;
use crate::metrics::LiveLevel;
use crate::record::RequestRecord;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tokio::time::{Instant, Interval};
use tokio_util::sync::CancellationToken;

/// Sends one open-loop level's schedule to its end, to saturation, or until cancelled, its
/// records into `collector`; whether it was cut short (cancelled).
pub(super) async fn run(
    ctx: &mut LevelCtx<'_>,
    plan: &OpenPlan,
    collector: &mut OpenCollector,
) -> bool {
    let stop = ctx.cancel.child_token();
    // the level starts once its first prompts are made, not while they are
    let (mut sender, level_start) = Sender::start(
        ctx.endpoint,
        ctx.workload,
        plan,
        (collector.intended().clone(), collector.count()),
        Segment::WHOLE,
        || now_ns() + 2_000_000,
        stop.clone(),
    );
    let tick = ticks(Instant::now() + SAMPLE, SAMPLE);
    send(ctx, &mut sender, (tick, level_start), &stop, collector).await;
    ctx.cancel.is_cancelled()
}

/// Runs one worker's share of a distributed open-loop level: its segment of the level's
/// schedule, counted from `level_start` (the instant the controller set, on this process's
/// clock; `began` is set to it, or to the later instant the first prompts were made), each
/// record handed to the sink as it finishes and the progress (in flight, sent,
/// chunks) sent four times a second. No saturation watch: the controller watches the whole
/// level and stops every share. Returns the dispatcher's timer lag (p99, max, ms).
pub async fn run_open_share(
    mut ctx: LevelCtx<'_>,
    index: u32,
    share: &OpenShare,
    (level_start, began): (u64, &AtomicU64),
) -> (f64, f64) {
    let plan = OpenPlan::of_share(index, share);
    let intended = plan.intended();
    let total = intended.count();
    let n = share.segment.share_of(total);
    let cap = plan.max_in_flight.unwrap_or(0);
    let mut live = ShareLive {
        index,
        live: LiveLevel::new(index, cap, n, Duration::from_millis(500), 20),
    };
    let probe = LagProbe::start();
    let cancel = ctx.cancel;
    let (mut sender, _) = Sender::start(
        ctx.endpoint,
        ctx.workload,
        &plan,
        (intended, total),
        share.segment,
        || {
            began.store(now_ns().max(level_start), Ordering::Relaxed);
            level_start
        },
        cancel.clone(),
    );
    let tick = ticks(Instant::now(), SAMPLE);
    send(
        &mut ctx,
        &mut sender,
        (tick, level_start),
        cancel,
        &mut live,
    )
    .await;
    probe.stop().await
}

/// Hands the dispatcher's records to `follow` as they finish and, at each tick, its progress
/// (`level_start`: when the schedule's times count from) to the consumer; a `follow` that
/// finds the requests waiting keep growing stops the sending (`stop`). Returns once every
/// request has ended and the dispatcher is gone.
async fn send(
    ctx: &mut LevelCtx<'_>,
    sender: &mut Sender,
    (mut tick, level_start): (Interval, u64),
    stop: &CancellationToken,
    follow: &mut impl Follow,
) {
    loop {
        tokio::select! {
            biased;
            rec = sender.records.recv() => match rec {
                Some(rec) => follow.record(&rec, ctx.sink),
                None => break,
            },
            _ = tick.tick() => {
                let now = now_ns().saturating_sub(level_start);
                let (progress, saturated) =
                    follow.progress(now, !stop.is_cancelled(), sender.sending());
                if saturated {
                    stop.cancel();
                }
                let _ = ctx.events.try_send(EngineEvent::Progress(progress));
            }
        }
    }
    sender.join().await;
}

/// A worker's share: its records go to the sink (the controller) as they are, its progress
/// is its own live figures with what it has sent.
struct ShareLive {
    index: u32,
    live: LiveLevel,
}

impl Follow for ShareLive {
    fn record(&mut self, rec: &RequestRecord, sink: &mut dyn RunSink) {
        self.live.on_record(rec);
        let _ = sink.append_request(self.index, rec);
    }

    fn progress(&mut self, now: u64, _sending: bool, s: Sending) -> (LevelProgress, bool) {
        let mut p = progress(&mut self.live, now, s);
        p.sent = s.sent;
        (p, false)
    }
}
