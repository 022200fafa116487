//! What every kind of level does with its load while it runs: each finished request logged
//! and folded into the level ([`fold`]), and four times a second the live figures made into a
//! progress snapshot ([`progress`]) from what the sender says ([`Sending`]). A load that
//! hands its records and ticks to another (an open-loop collector, a worker's share, a
//! distributed level's batch) does so through [`Follow`].

use crate::engine::sink::RunSink;
use crate::metrics::progress::LevelProgress;
use crate::metrics::{LevelAccumulator, LiveLevel};
use crate::record::RequestRecord;
use std::time::Duration;
use tokio::time::{Instant, Interval, MissedTickBehavior};

/// What the sender of a level says at a tick: requests in flight, sent so far (an open-loop
/// sender's), and content chunks received so far (the live token count).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Sending {
    pub in_flight: u64,
    pub sent: u64,
    pub chunks: u64,
}

/// What a level makes of its load while it runs.
pub(super) trait Follow {
    /// Takes one finished request (its times on the level's timeline).
    fn record(&mut self, rec: &RequestRecord, sink: &mut dyn RunSink);
    /// The progress `now` ns into the level, from what the sender says, while `sending` (the
    /// level has not been stopped); `true` when the level must stop sending (its requests
    /// waiting keep growing: the server cannot keep up).
    fn progress(&mut self, now: u64, sending: bool, s: Sending) -> (LevelProgress, bool);
}

/// Logs a record and, unless it is warmup or cooldown, folds it into the level.
pub(super) fn fold(
    level: u32,
    rec: &RequestRecord,
    acc: &mut LevelAccumulator,
    live: &mut LiveLevel,
    sink: &mut dyn RunSink,
) {
    live.on_record(rec);
    acc.add(rec);
    // a failed write has stopped the run (the engine's sink says so, once)
    let _ = sink.append_request(level, rec);
}

/// The live figures `now` ns into the level, with the sender's chunks and requests in flight.
pub(super) fn progress(live: &mut LiveLevel, now: u64, s: Sending) -> LevelProgress {
    live.on_chunks(now, s.chunks);
    let mut snapshot = live.snapshot(now);
    snapshot.in_flight = s.in_flight;
    snapshot
}

/// A level's ticks: the first at `first`, then every `period`; a tick missed while the
/// runtime was busy is not made up in a burst.
pub(super) fn ticks(first: Instant, period: Duration) -> Interval {
    let mut tick = tokio::time::interval_at(first, period);
    tick.set_missed_tick_behavior(MissedTickBehavior::Delay);
    tick
}
