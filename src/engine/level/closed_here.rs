//! A closed-loop level in this process: `concurrency` workers that together complete the
//! level's requests over the shared endpoint, with a collector folding their records as they
//! arrive. Each worker takes the next request the moment its previous one ends, so the
//! target concurrency is held with no client-side queue.
//!
//! Adaptive sampling (see `docs/search.md`): when the workers reach the end of a batch, the
//! collector asks the planner whether the level's verdict is decided; while it is uncertain,
//! the level held its concurrency and the cap allows, another batch of requests runs at the
//! same concurrency without a restart.
//!
//! A worker of a distributed run runs its share of a level the same way (`closed_fleet`),
//! its cooldown held until every share's measured requests have ended ([`LevelCtx::hold`]).

use super::begin::Begun;
use super::closed::Ran;
use super::measure::{fold, progress, ticks, Sending};
use super::sampling::{first_batch, next_batch, snapshot};
use super::{prompts, LevelCtx, LevelPlan, PROGRESS_PERIOD};
use crate::clock::now_ns;
use crate::engine::events::EngineEvent;
use crate::engine::start_note::FirstRound;
use crate::engine::workers::{self, Handover, PromptMaker, SessionSource, Work};
use crate::metrics::{AdaptiveSampling, LevelSummary, SamplingStop};
use crate::record::RequestRecord;
use crate::workload::{Prompt, WorkloadSpec};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use tokio::sync::mpsc;
use tokio::task::{JoinError, JoinHandle};
use tokio_util::sync::CancellationToken;

/// Warmup prompts are drawn from their own index range so they never repeat a measured one.
const WARMUP_INDEX_BASE: u64 = 1 << 40;
/// Warmup sessions likewise (multi-turn).
const WARMUP_SESSION_BASE: u64 = 1 << 40;

/// The work of a level's first batch, its prompts made (before the level begins: its lag
/// probe would count the time they take).
pub(super) fn book(workload: &WorkloadSpec, plan: &LevelPlan) -> Arc<Work> {
    Work::with_sessions(
        prompts(
            workload,
            plan.order,
            plan.prompt_base,
            u64::from(plan.request_count),
        ),
        SessionSource::of(workload, plan.order, plan.prompt_base),
        Some(PromptMaker {
            workload: workload.clone(),
            level: plan.order,
            cap: plan.request_cap,
            base: plan.prompt_base,
        }),
    )
}

/// Runs a closed-loop level's load in this process on `work` to its end (or until
/// cancelled), folding its records into `begun`.
pub(super) async fn run(
    ctx: &mut LevelCtx<'_>,
    plan: LevelPlan,
    begun: &mut Begun,
    work: Arc<Work>,
) -> Ran {
    let base = u64::from(plan.request_count);
    let (tx, rx) = mpsc::unbounded_channel::<RequestRecord>();
    let done_before = begun.acc.completed();
    let level_start = now_ns().saturating_sub(begun.from_ns);
    // The warmup flows into the level: its workers run the warmup requests and each leaves
    // when none is left for it, giving its place to one of the level's workers, so the
    // level's first requests meet a server already at the load, not one that all the
    // level's streams reach at once (whose queue for its prefills would be measured).
    // A level measured again warms again: other levels ran in between and the server has
    // drained, so its new requests would meet it idle, and their start would be pooled with
    // the earlier requests; a level's later batches (adaptive sampling) run on without a
    // restart and need none.
    let handover_flows = plan.warmup > 0;
    let warmup_cut = ctx.cancel.child_token();
    let handover = if handover_flows && !ctx.cancel.is_cancelled() {
        warm_up(ctx, &plan, level_start, &tx, &warmup_cut)
    } else {
        Handover::None
    };
    workers::spawn(
        ctx.endpoint,
        plan.concurrency,
        &work,
        level_start,
        ctx.cancel,
        tx,
        handover,
    );
    // a share's cooldown ends when the controller says every share's measured requests have
    let settles_here = ctx.hold.is_none();
    if let Some(hold) = ctx.hold {
        let (hold, work) = (hold.clone(), work.clone());
        tokio::spawn(async move {
            hold.cancelled().await;
            work.settled.cancel();
        });
    }
    // a level's first measurement without warmup: whether its start holds its TTFT tail
    let first_round =
        (!handover_flows && begun.index_offset == 0).then(|| FirstRound::new(plan.concurrency));
    let mut level = Collect {
        ctx,
        begun,
        plan,
        work,
        warmup_cut,
        settles_here,
        done_before,
        sampling: first_batch(&plan, 1),
        ahead: Vec::new(),
        first_round,
        pending: None,
        upcoming: None,
    };
    level.upcoming = if plan.request_cap > base {
        level.next_prompts(base)
    } else {
        // a fixed count: the workers run the book and leave
        level.work.done.cancel();
        None
    };
    level.collect(rx, level_start).await;
    level.end()
}

/// Starts the level's warmup on its `concurrency` streams; returns how the level's workers
/// take their places over from the warmup's.
///
/// When the level's first request ends, the server has run at the level's load for a whole
/// request: a warmup request that has had no answer yet then is cut (its record says so)
/// and its place goes to the level. Without the cut the level fills its last slots only
/// when the slowest warmup request ends; where most streams wait in the server's queue (or
/// in the listen backlog, for a connection), that is rounds late, and a level of a few
/// rounds never has every slot busy (`tests/hold/hold_10k.rs`). A warmup request already
/// answering runs on: its answer is at most one request's length (`warmup_lengths`), and
/// cutting the ones still decoding put their places into the level at once, as a wave.
fn warm_up(
    ctx: &LevelCtx<'_>,
    plan: &LevelPlan,
    level_start: u64,
    tx: &mpsc::UnboundedSender<RequestRecord>,
    warmup_cut: &CancellationToken,
) -> Handover {
    let mut first = prompts(
        ctx.workload,
        plan.order,
        WARMUP_INDEX_BASE + plan.prompt_base,
        u64::from(plan.warmup),
    );
    crate::engine::warmup_lengths::spread(&mut first, plan.concurrency);
    let warmup = Work::warmup(
        first,
        SessionSource::of(
            ctx.workload,
            plan.order,
            WARMUP_SESSION_BASE + plan.prompt_base,
        ),
        warmup_cut.clone(),
    );
    let places = Arc::new(tokio::sync::Semaphore::new(0));
    workers::spawn(
        ctx.endpoint,
        plan.concurrency,
        &warmup,
        level_start,
        ctx.cancel,
        tx.clone(),
        Handover::Gives(places.clone()),
    );
    Handover::Takes(places)
}

/// The collector of a level running in this process: it folds the workers' records, decides
/// at each batch's end whether the level grows, and says the level's progress.
struct Collect<'a, 'c> {
    ctx: &'a mut LevelCtx<'c>,
    begun: &'a mut Begun,
    plan: LevelPlan,
    work: Arc<Work>,
    /// Cuts the warmup's unanswered requests when the level's first request ends.
    warmup_cut: CancellationToken,
    /// Cooldown ends here (one process), not when the controller says so (a share).
    settles_here: bool,
    /// Requests the level had completed before this measurement.
    done_before: u64,
    sampling: AdaptiveSampling,
    /// Records of requests started past the limit wait here until the level grows over them:
    /// `acc` holds exactly the requests below the limit until the level is done, so a decision
    /// reads a whole batch, not the requests that happened to finish first (quick failures,
    /// short answers). The snapshot is summarised on a blocking thread: it reads every
    /// histogram, which must not hold up the reads on the runtime's threads.
    ahead: Vec<RequestRecord>,
    first_round: Option<FirstRound>,
    /// The snapshot a decision reads, being summarised.
    pending: Option<JoinHandle<LevelSummary>>,
    /// The next batch's prompts, being made.
    upcoming: Option<JoinHandle<Vec<Prompt>>>,
}

impl Collect<'_, '_> {
    /// Until every worker has left (the records channel closes).
    async fn collect(&mut self, mut rx: mpsc::UnboundedReceiver<RequestRecord>, level_start: u64) {
        let mut tick = ticks(tokio::time::Instant::now(), PROGRESS_PERIOD);
        loop {
            tokio::select! {
                // records first: a decision reads what the collector has folded
                biased;
                rec = rx.recv() => match rec {
                    Some(rec) => self.record(rec),
                    None => break,
                },
                stocked = joined(&mut self.upcoming), if self.upcoming.is_some() => {
                    self.upcoming = None;
                    self.work.stock(stocked.unwrap_or_default());
                }
                snapshot = joined(&mut self.pending), if self.pending.is_some() => {
                    self.pending = None;
                    self.decide(snapshot).await;
                }
                _ = tick.tick() => self.tick(level_start),
            }
        }
    }

    fn record(&mut self, mut rec: RequestRecord) {
        // the warmup's requests are logged, not measured
        if rec.warmup {
            if !self.ctx.cancel.is_cancelled() {
                cut_note(&mut rec);
            }
            let _ = self.ctx.sink.append_request(self.plan.index, &rec);
            return;
        }
        self.warmup_cut.cancel();
        let at = rec.index;
        rec.index += self.begun.index_offset;
        if let Some(f) = self.first_round.as_mut() {
            f.add(&rec);
        }
        if at < self.work.limit() {
            self.fold(&rec);
        } else if self.work.done.is_cancelled() {
            rec.cooldown = true;
            self.fold(&rec);
        } else {
            self.ahead.push(rec);
        }
        self.settle();
        let batch_done = self.measured() >= self.work.limit();
        if batch_done && self.pending.is_none() && !self.work.done.is_cancelled() {
            self.pending = Some(snapshot(self.begun, &self.plan));
        }
    }

    /// A batch's snapshot is in: the level grows by a batch, or takes no more.
    async fn decide(&mut self, snapshot_read: Result<LevelSummary, JoinError>) {
        let grow = snapshot_read.is_ok_and(|snapshot| {
            next_batch(
                &snapshot,
                self.work.limit(),
                self.ctx.planner,
                self.plan,
                self.ctx.cancel,
                &mut self.sampling,
            )
        });
        if grow && !self.work.stocked() {
            if let Some(h) = self.upcoming.take() {
                self.work.stock(h.await.unwrap_or_default());
            }
        }
        let before = self.work.limit();
        if grow && self.work.stocked() {
            self.work.grow();
            self.begun.acc.plan_more(self.work.limit() - before);
            self.begun.live.set_total(self.work.limit());
            self.sampling.batches += 1;
            self.upcoming = self.next_prompts(self.work.limit());
        } else {
            self.work.done.cancel();
        }
        // below the limit if the level grew over them, else they were cooldown
        for mut rec in std::mem::take(&mut self.ahead) {
            rec.cooldown = rec.index - self.begun.index_offset >= self.work.limit();
            self.fold(&rec);
        }
        self.settle();
        // a batch the run-ahead already finished is decided at once
        if !self.work.done.is_cancelled() && self.measured() >= self.work.limit() {
            self.pending = Some(snapshot(self.begun, &self.plan));
        }
    }

    fn tick(&mut self, level_start: u64) {
        let now = now_ns().saturating_sub(level_start);
        let sending = Sending {
            in_flight: self.work.in_flight.load(Ordering::Relaxed),
            chunks: self.work.live_chunks.load(Ordering::Relaxed),
            ..Sending::default()
        };
        let snapshot = progress(&mut self.begun.live, now, sending);
        // a snapshot may be dropped when the consumer lags; the next one replaces it
        let _ = self.ctx.events.try_send(EngineEvent::Progress(snapshot));
    }

    /// The next batch's prompts are made while the current batch runs and put in the book;
    /// a worker that gets there first makes its own (`PromptMaker`).
    fn next_prompts(&self, from: u64) -> Option<JoinHandle<Vec<Prompt>>> {
        let base = u64::from(self.plan.request_count);
        let room = self.plan.request_cap.saturating_sub(from).min(base);
        let (w, level) = (self.ctx.workload.clone(), self.plan.order);
        (room > 0).then(|| tokio::task::spawn_blocking(move || prompts(&w, level, from, room)))
    }

    fn fold(&mut self, rec: &RequestRecord) {
        let begun = &mut *self.begun;
        fold(
            self.plan.index,
            rec,
            &mut begun.acc,
            &mut begun.live,
            self.ctx.sink,
        );
    }

    /// Requests of this measurement that have finished.
    fn measured(&self) -> u64 {
        self.begun.acc.completed() - self.done_before
    }

    /// Once the level takes no more and every measured request of this measurement has
    /// finished, cooldown stops (here; a share's when the controller says so).
    fn settle(&self) {
        if self.settles_here
            && self.work.done.is_cancelled()
            && self.measured() >= self.work.limit()
        {
            self.work.settled.cancel();
        }
    }

    /// The workers have all left.
    fn end(mut self) -> Ran {
        // cut short (cancelled) while some ran ahead: past the limit, not measured
        for mut rec in std::mem::take(&mut self.ahead) {
            rec.cooldown = true;
            self.fold(&rec);
        }
        let partial = self.ctx.cancel.is_cancelled();
        if partial {
            self.sampling.stopped = SamplingStop::Interrupted;
        }
        Ran {
            sampling: self.sampling,
            partial,
            first_round: self.first_round,
            crew: None,
        }
    }
}

/// A blocking task's result once it has one (never while there is none).
async fn joined<T>(task: &mut Option<JoinHandle<T>>) -> Result<T, JoinError> {
    match task.as_mut() {
        Some(h) => h.await,
        None => std::future::pending().await,
    }
}

/// A warmup request cut when the level's first request ended (the run goes on) says so.
fn cut_note(rec: &mut RequestRecord) {
    if let Some(e) = rec
        .error
        .as_mut()
        .filter(|e| e.kind == crate::record::ErrorKind::Cancelled)
    {
        e.message = "warmup request cut: the level's first request had ended".into();
    }
}
