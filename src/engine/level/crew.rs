//! A distributed level's workers as the controller follows them (`docs/distributed.md`),
//! whatever drives the level: what each worker's share has done ([`Tally`]), whether the
//! running shares were told to stop ([`Halt`]), the loop that receives their messages while
//! shares run ([`Crew::receive`]) and the level's workers block ([`Crewed::block`]).
//!
//! A worker lost mid-level (no word for a heartbeat's time, its process gone) stops every
//! share: the level is kept partial with that worker named.

use super::measure::{Follow, Sending};
use super::LevelCtx;
use crate::clock::now_ns;
use crate::engine::events::EngineEvent;
use crate::engine::fleet::{Fleet, FleetMsg, FleetWorker, Share};
use crate::metrics::fleet::{FleetLevel, WorkerShare};
use crate::record::RequestRecord;
use tokio::sync::mpsc;
use tokio::time::Interval;

/// Per worker, over the level's batches.
#[derive(Debug, Clone, Default)]
pub(super) struct Tally {
    /// It was sent a share of the level.
    took: bool,
    concurrency: u32,
    requests: u64,
    errors: u64,
    timer_p99: f64,
    timer_max: f64,
    lost: Option<String>,
    in_flight: u64,
    /// Requests its share has sent (an open-loop share's).
    sent: u64,
    /// Content chunks its share of the running batch has received.
    chunks: u64,
    cpu_s: f64,
}

impl Tally {
    /// Counts a measured request as the level counts it: a request the stop cut is not the
    /// endpoint's error.
    fn count(&mut self, rec: &RequestRecord) {
        if rec.counted() {
            self.requests += 1;
            self.errors += u64::from(
                rec.error
                    .as_ref()
                    .is_some_and(|e| e.kind != crate::record::ErrorKind::Cancelled),
            );
        }
    }
}

/// What a worker's message changes: the records are the caller's to place and fold.
enum Heard {
    Records(usize, Vec<RequestRecord>),
    /// A worker was lost: every share stops.
    Lost,
    Noted,
}

/// Whether a level's running shares were told to stop, and whether a worker was lost.
#[derive(Debug, Default)]
pub(super) struct Halt {
    pub stopping: bool,
    pub lost: bool,
}

impl Halt {
    /// Stops every running share, once.
    fn stop(&mut self, fleet: &dyn Fleet) {
        if !self.stopping {
            self.stopping = true;
            fleet.stop_shares();
        }
    }

    /// A worker was lost: every share stops, and the level is partial.
    fn lose(&mut self, fleet: &dyn Fleet) {
        self.lost = true;
        self.stop(fleet);
    }
}

/// Notes a worker's message in its tally (and when its share began, on the controller's
/// clock, in `starts`).
fn hear(tally: &mut [Tally], starts: &mut [Option<u64>], msg: FleetMsg) -> Heard {
    match msg {
        FleetMsg::Records { worker, records } => return Heard::Records(worker, records),
        FleetMsg::Status {
            worker,
            in_flight,
            sent,
            chunks,
        } => {
            let t = &mut tally[worker];
            t.in_flight = in_flight;
            t.sent = t.sent.max(sent);
            t.chunks = t.chunks.max(chunks);
        }
        FleetMsg::Started { worker, at_ns } => starts[worker] = Some(at_ns),
        FleetMsg::Done {
            worker,
            timer_late_p99_ms,
            timer_late_max_ms,
            cpu_s,
        } => {
            let t = &mut tally[worker];
            t.cpu_s += cpu_s;
            t.timer_p99 = t.timer_p99.max(timer_late_p99_ms);
            t.timer_max = t.timer_max.max(timer_late_max_ms);
            t.in_flight = 0;
        }
        FleetMsg::Lost { worker, why } => {
            tally[worker].lost = Some(why);
            tally[worker].in_flight = 0;
            return Heard::Lost;
        }
    }
    Heard::Noted
}

/// How far apart the shares that have begun began (ns), at least `before`.
fn spread(starts: &[Option<u64>], before: u64) -> u64 {
    let began = starts.iter().flatten();
    match (began.clone().min(), began.max()) {
        (Some(a), Some(b)) => before.max(b - a),
        _ => before,
    }
}

/// Shares as they run: what their workers say (`rx`), the level's ticks, when its clock
/// starts on the controller's (`origin`), and its index.
pub(super) struct Running {
    pub rx: mpsc::UnboundedReceiver<FleetMsg>,
    pub tick: Interval,
    pub origin: u64,
    pub index: u32,
}

/// A distributed level's workers while it runs: their tallies, whether their shares were
/// told to stop, how far apart the shares of its batches began, and the controller's CPU.
pub(super) struct Crew<'f> {
    pub fleet: &'f dyn Fleet,
    workers: Vec<FleetWorker>,
    tally: Vec<Tally>,
    pub halt: Halt,
    /// How far apart the shares of the level's batches so far began (ns).
    spread_ns: u64,
    /// The controller's CPU time when the level began (ns) and of the level's earlier
    /// measurements (s).
    cpu_before: u64,
    cpu_earlier: f64,
}

impl<'f> Crew<'f> {
    pub fn new(fleet: &'f dyn Fleet) -> Crew<'f> {
        Crew {
            fleet,
            workers: fleet.workers(),
            tally: vec![Tally::default(); fleet.size()],
            halt: Halt::default(),
            spread_ns: 0,
            cpu_before: crate::clock::process_cpu_ns(),
            cpu_earlier: 0.0,
        }
    }

    /// A level measured again: its workers block goes on from its earlier measurements'.
    pub fn go_on_from(&mut self, prev: &FleetLevel) {
        for s in &prev.shares {
            if let Some(t) = self
                .workers
                .iter()
                .position(|w| w.index == s.worker)
                .and_then(|i| self.tally.get_mut(i))
            {
                t.requests += s.requests;
                t.errors += s.errors;
                t.cpu_s += s.cpu_s;
                t.timer_p99 = t.timer_p99.max(s.timer_late_p99_ms);
            }
        }
        self.spread_ns = (prev.start_spread_ms * 1e6) as u64;
        self.cpu_earlier = prev.controller_cpu_s;
    }

    /// Notes which workers take a share of the level, and at what concurrency.
    pub fn took(&mut self, shares: &[Share]) {
        for s in shares {
            self.tally[s.worker].took = true;
            self.tally[s.worker].concurrency = s.concurrency;
        }
    }

    /// Content chunks the shares of the batch that ended received: the next batch's shares
    /// count theirs from zero.
    pub fn take_chunks(&mut self) -> u64 {
        self.tally
            .iter_mut()
            .map(|t| std::mem::take(&mut t.chunks))
            .sum()
    }

    /// What the workers say together: requests in flight, sent and content chunks.
    fn sending(&self) -> Sending {
        Sending {
            in_flight: self.tally.iter().map(|t| t.in_flight).sum(),
            sent: self.tally.iter().map(|t| t.sent).sum(),
            chunks: self.tally.iter().map(|t| t.chunks).sum(),
        }
    }

    /// Receives what the workers say while the shares started on `rx` run, until every one
    /// is done or lost: each record put on the level's timeline by `place` (from its share's
    /// timeline, given when its share began on the controller's clock), a warmup's logged, a
    /// measured one counted in its worker's tally and handed to `follow`. A stop (`cancel`,
    /// a lost worker, or `follow` finding the requests waiting keep growing) stops every
    /// share. At each tick the workers block and the progress go to the consumer.
    pub async fn receive(
        &mut self,
        ctx: &mut LevelCtx<'_>,
        running: Running,
        follow: &mut impl Follow,
        mut place: impl FnMut(usize, &mut RequestRecord, Option<u64>),
    ) {
        let Running {
            mut rx,
            mut tick,
            origin,
            index,
        } = running;
        // when each share really began, on the controller's clock: its records' times count
        // from there
        let mut starts: Vec<Option<u64>> = vec![None; self.fleet.size()];
        loop {
            tokio::select! {
                biased;
                msg = rx.recv() => match msg.map(|m| hear(&mut self.tally, &mut starts, m)) {
                    Some(Heard::Records(worker, records)) => {
                        for mut rec in records {
                            place(worker, &mut rec, starts[worker]);
                            if rec.warmup {
                                let _ = ctx.sink.append_request(index, &rec);
                                continue;
                            }
                            self.tally[worker].count(&rec);
                            follow.record(&rec, ctx.sink);
                        }
                    }
                    Some(Heard::Lost) => self.halt.lose(self.fleet),
                    Some(Heard::Noted) => {}
                    None => break,
                },
                _ = ctx.cancel.cancelled(), if !self.halt.stopping => self.halt.stop(self.fleet),
                _ = tick.tick() => {
                    let now = now_ns().saturating_sub(origin);
                    let (progress, saturated) =
                        follow.progress(now, !self.halt.stopping, self.sending());
                    if saturated {
                        self.halt.stop(self.fleet);
                    }
                    let live = self.block(spread(&starts, self.spread_ns));
                    let _ = ctx.events.try_send(EngineEvent::Workers(Box::new(live)));
                    let _ = ctx.events.try_send(EngineEvent::Progress(progress));
                }
            }
        }
        self.spread_ns = spread(&starts, self.spread_ns);
    }

    /// The level's load is over: what its block is made of.
    pub fn end(self) -> Crewed {
        let cpu = crate::clock::process_cpu_ns().saturating_sub(self.cpu_before) as f64 / 1e9;
        Crewed {
            workers: self.workers,
            tally: self.tally,
            spread_ns: self.spread_ns,
            controller_cpu_s: self.cpu_earlier + cpu,
        }
    }

    /// The workers block while the level runs.
    fn block(&self, spread_ns: u64) -> FleetLevel {
        block(&self.workers, &self.tally, spread_ns, 0.0, 0.0)
    }
}

/// A distributed level's workers once its load is over.
pub(super) struct Crewed {
    workers: Vec<FleetWorker>,
    tally: Vec<Tally>,
    spread_ns: u64,
    controller_cpu_s: f64,
}

impl Crewed {
    /// The timer lag of the level's workers (p99, max; ms): the level's client lag.
    pub fn lag(&self) -> (f64, f64) {
        self.tally.iter().fold((0.0f64, 0.0f64), |(p, m), t| {
            (p.max(t.timer_p99), m.max(t.timer_max))
        })
    }

    /// The level's workers block, its start spread warned about against its `duration_s`.
    pub fn block(&self, duration_s: f64) -> FleetLevel {
        block(
            &self.workers,
            &self.tally,
            self.spread_ns,
            self.controller_cpu_s,
            duration_s,
        )
    }
}

/// The level's workers block: each share, the start spread and what to warn about (a spread
/// is warned about against the level's `duration_s`; 0 while it runs).
fn block(
    workers: &[FleetWorker],
    tally: &[Tally],
    spread_ns: u64,
    controller_cpu_s: f64,
    duration_s: f64,
) -> FleetLevel {
    let shares: Vec<WorkerShare> = tally
        .iter()
        .enumerate()
        .filter(|(_, t)| t.took)
        .map(|(i, t)| WorkerShare {
            worker: workers.get(i).map_or(i as u32, |w| w.index),
            host: workers.get(i).map_or_else(String::new, |w| w.host.clone()),
            concurrency: t.concurrency,
            requests: t.requests,
            errors: t.errors,
            timer_late_p99_ms: t.timer_p99,
            cpu_s: t.cpu_s,
            in_flight: t.in_flight,
            lost: t.lost.clone(),
        })
        .collect();
    let mut level = FleetLevel {
        workers: shares.len() as u32,
        start_spread_ms: spread_ns as f64 / 1e6,
        clock_uncertainty_ms: workers
            .iter()
            .map(|w| w.clock_uncertainty_ns)
            .max()
            .unwrap_or(0) as f64
            / 1e6,
        controller_cpu_s,
        shares,
        warning: None,
    };
    let lost = level.lost();
    level.warning = if lost.is_empty() {
        level.spread_warning(duration_s)
    } else {
        Some(format!(
            "lost {}: the level is partial, and a search does not use it",
            lost.join("; ")
        ))
    };
    level
}
