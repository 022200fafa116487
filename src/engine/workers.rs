//! The closed-loop workers of one level and the work they share: a book of prompts that can
//! grow by batches (adaptive sampling), one cursor handing out request indices, the decided
//! limit, and how far the book reaches.
//!
//! A worker takes the next index the moment its previous request ends. When every request
//! below the limit has finished, the collector decides whether the level grows; until then
//! workers run on into the next batch's prompts (already in the book), so a level neither
//! drains nor pauses at a batch end. The next batch's prompts are made on a blocking thread
//! while the current batch runs; when that falls behind (a loaded client machine, a batch of
//! few rounds), a worker that reaches the end of the book makes its own prompt of the next
//! batch ([`PromptMaker`]), the same prompt the book would hold, rather than wait: a level
//! whose workers waited for prompts ran below its concurrency and was judged not held.
//!
//! Once the level takes no more, every index at or past the limit is a *cooldown* request:
//! it keeps its slot busy until the last measured request has finished, is not counted, and
//! is dropped in flight at that moment ([`Work::settled`]). So every measured request runs
//! with every slot busy from its start to its end: a level's last round does not run at a
//! lower concurrency than its label (it did, and short levels looked better than long ones:
//! a 384-request level showed 4.4 % timeouts where 3,072 requests at the same load settled at
//! 5.5 %).
//!
//! Workers start together: spawning one task per slot costs microseconds, so 10,000 slots
//! fill without a serial ramp.
//!
//! With multi-turn sessions (`docs/workloads.md`) a worker runs one session at a time: each
//! index it takes is its session's next turn, sent with the whole history so far (the answers
//! as this task read them off the stream), after the think time. A failed turn ends its
//! session (the next index starts a new one): the history would lack the answer the next
//! turn is meant to carry. A session holds its slot while it thinks, so the level's
//! concurrency counts sessions. An agent loop's session goes on only after an answer with
//! tool calls, pausing for its tools (`--tool-latency`) instead of a think time.

use crate::clock::now_ns;
use crate::endpoint::{Endpoint, Written};
use crate::record::{ErrorKind, ExchangeOutcome, RequestError, RequestRecord, ToolCall};
use crate::workload::{Prompt, Session, WorkloadSpec};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

/// How far the work reaches: the decided limit and the prompts in the book.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Reach {
    /// Requests the level runs for sure.
    limit: u64,
    /// Prompts in the book (at least `limit`): how far workers may run before a decision.
    available: u64,
}

/// Where a level's sessions come from (multi-turn workloads).
pub struct SessionSource {
    workload: WorkloadSpec,
    level: u32,
    /// The next session's index.
    next: AtomicU64,
    think: Duration,
}

impl SessionSource {
    /// Sessions of `workload` for level `level`, numbered from `first`; `None` when the
    /// workload is single-turn.
    pub fn of(workload: &WorkloadSpec, level: u32, first: u64) -> Option<SessionSource> {
        let spec = workload.sessions.as_ref()?;
        // an agent pauses for its tools, a user for the think time
        let pause_ms = spec.agent.map_or(spec.think_time_ms, |a| a.tool_latency_ms);
        Some(SessionSource {
            workload: workload.clone(),
            level,
            next: AtomicU64::new(first),
            think: Duration::from_millis(pause_ms),
        })
    }

    fn start(&self) -> Option<Session> {
        let index = self.next.fetch_add(1, Ordering::Relaxed);
        self.workload.session(self.level, index)
    }

    /// The pause before a session's next turn (the think time, or an agent's tool latency):
    /// the time it took (ns), `None` inside when there is no pause to record (no think time,
    /// no agent); `None` when the run stopped or the level settled meanwhile.
    async fn pause(
        &self,
        agent: bool,
        cancel: &CancellationToken,
        settled: &CancellationToken,
    ) -> Option<Option<u64>> {
        if !agent && self.think.is_zero() {
            return Some(None);
        }
        let started = now_ns();
        if !self.think.is_zero() {
            tokio::select! {
                _ = tokio::time::sleep(self.think) => {}
                _ = cancel.cancelled() => return None,
                _ = settled.cancelled() => return None,
            }
        }
        Some(Some(now_ns().saturating_sub(started)))
    }
}

/// Makes the prompts of the batch after the limit when the book has not got them yet, and
/// the cooldown requests' prompts.
pub struct PromptMaker {
    pub workload: WorkloadSpec,
    pub level: u32,
    /// The level's request cap: no measured prompt at or past it is made.
    pub cap: u64,
    /// Where the level's prompt indices start (a distributed share's range).
    pub base: u64,
}

/// Set in the level number of a cooldown request's prompt: its prompts are drawn apart from
/// every level's measured ones. Bit 23, because the prompt seeds keep a level's low 24
/// bits (a run has far fewer levels).
const COOLDOWN_PROMPTS: u32 = 1 << 23;

impl PromptMaker {
    /// A cooldown request's prompt: drawn like the level's (the same lengths), but new to
    /// the server. Sending one of the level's own prompts again would find it in a prefix
    /// cache, so the level's last requests would run beside lighter requests than the rest
    /// did (on the simulator, the last round's mean ITL read 8 % under the others').
    fn cooldown(&self, index: u64) -> Prompt {
        self.workload
            .prompt(self.level | COOLDOWN_PROMPTS, self.base + index)
    }
}

/// What the workers of one level share.
pub struct Work {
    /// Prompts by batch: batch `k` holds indices `[k * batch, (k + 1) * batch)`.
    book: RwLock<Vec<Arc<Vec<Prompt>>>>,
    batch: u64,
    cursor: AtomicU64,
    reach: watch::Sender<Reach>,
    /// The level takes no index at or past the limit any more: those are cooldown requests.
    pub done: CancellationToken,
    /// Every measured request has finished: cooldown requests stop, in flight ones dropped.
    pub settled: CancellationToken,
    /// Requests sent and not yet finished.
    pub in_flight: AtomicU64,
    /// Content chunks received by every request of the level so far.
    pub live_chunks: Arc<AtomicU64>,
    /// Multi-turn: each index is the next turn of a worker's session, not a prompt of the
    /// book.
    sessions: Option<SessionSource>,
    /// Single-turn levels: the prompts of a growing level past the book, and the cooldown
    /// requests', are made by the worker (a fixed level's cap is its book: it makes only
    /// cooldown prompts). Without it a cooldown request reuses one of the book's.
    maker: Option<PromptMaker>,
    /// Set for a level's warmup (`Work::warmup`), whose records are marked warmup and whose
    /// worker past the limit leaves (its place goes to one of the level's workers) instead of
    /// sending cooldown requests: its cut (the level's first request has ended), when a warmup
    /// request that has had no answer yet is cut (its place goes to the level), one already
    /// answering runs to its end, and the workers take no more warmup requests.
    cut: Option<CancellationToken>,
}

impl Work {
    /// Work for the first batch of prompts (indices from 0).
    pub fn new(first: Vec<Prompt>) -> Arc<Work> {
        Work::with_sessions(first, None, None)
    }

    /// Work whose indices are turns of `sessions` when given (the book then only counts the
    /// indices), else the book's prompts; with `maker`, workers may run into the next batch
    /// before its prompts are stocked.
    pub fn with_sessions(
        first: Vec<Prompt>,
        sessions: Option<SessionSource>,
        maker: Option<PromptMaker>,
    ) -> Arc<Work> {
        Arc::new(Work::build(first, sessions, maker))
    }

    fn build(
        first: Vec<Prompt>,
        sessions: Option<SessionSource>,
        maker: Option<PromptMaker>,
    ) -> Work {
        let batch = first.len() as u64;
        Work {
            book: RwLock::new(vec![Arc::new(first)]),
            batch: batch.max(1),
            cursor: AtomicU64::new(0),
            reach: watch::Sender::new(Reach {
                limit: batch,
                available: batch,
            }),
            done: CancellationToken::new(),
            settled: CancellationToken::new(),
            in_flight: AtomicU64::new(0),
            live_chunks: Arc::new(AtomicU64::new(0)),
            maker: maker.filter(|_| sessions.is_none()),
            sessions,
            cut: None,
        }
    }

    /// Warmup work for `first`'s prompts (a fixed count: done from the start): records marked
    /// warmup, and each worker leaves once no warmup index is left for it or `cut` fires.
    pub fn warmup(
        first: Vec<Prompt>,
        sessions: Option<SessionSource>,
        cut: CancellationToken,
    ) -> Arc<Work> {
        let mut w = Work::build(first, sessions, None);
        w.cut = Some(cut);
        w.done.cancel();
        Arc::new(w)
    }

    /// Whether this is a level's warmup.
    fn is_warmup(&self) -> bool {
        self.cut.is_some()
    }

    /// Whether the warmup has been cut (never, for a level's own work).
    fn is_cut(&self) -> bool {
        self.cut
            .as_ref()
            .is_some_and(CancellationToken::is_cancelled)
    }

    /// Requests the level runs for sure.
    pub fn limit(&self) -> u64 {
        self.reach.borrow().limit
    }

    /// Puts the next batch's prompts in the book (indices from what it holds on), so
    /// workers may run on into them before the decision. Its length must not exceed the first
    /// batch's.
    pub fn stock(&self, prompts: Vec<Prompt>) {
        let n = prompts.len() as u64;
        if n == 0 {
            return;
        }
        if let Ok(mut book) = self.book.write() {
            book.push(Arc::new(prompts));
        }
        self.reach.send_modify(|r| r.available += n);
    }

    /// The level runs every prompt in the book: the limit moves to its end.
    pub fn grow(&self) {
        self.reach.send_modify(|r| r.limit = r.available);
    }

    /// Whether the book holds prompts past the limit (the next batch is stocked).
    pub fn stocked(&self) -> bool {
        let r = *self.reach.borrow();
        r.available > r.limit
    }

    /// The prompt of `index`; a cooldown request reuses the prompt of `index` modulo the
    /// limit.
    fn prompt_batch(&self, index: u64) -> Option<(Arc<Vec<Prompt>>, usize)> {
        let r = *self.reach.borrow();
        let index = if index >= r.available {
            index % r.limit.max(1)
        } else {
            index
        };
        let book = self.book.read().ok()?;
        let b = book.get((index / self.batch) as usize)?;
        Some((b.clone(), (index % self.batch) as usize))
    }

    /// Waits until `index` may run, and says how, or that the worker should leave.
    async fn wait_for(
        &self,
        index: u64,
        reach: &mut watch::Receiver<Reach>,
        cancel: &CancellationToken,
    ) -> Slot {
        loop {
            if cancel.is_cancelled() || self.settled.is_cancelled() {
                return Slot::Leave;
            }
            let r = *reach.borrow_and_update();
            if index < r.limit {
                return Slot::Measured;
            }
            if self.done.is_cancelled() {
                return if self.is_warmup() {
                    Slot::Leave
                } else {
                    Slot::Cooldown
                };
            }
            if index < r.available {
                // run ahead: measured if the level grows over it, cooldown if it stops
                return Slot::Measured;
            }
            // the next batch is not stocked yet: its prompt is made here
            if self
                .maker
                .as_ref()
                .is_some_and(|m| index < r.limit + self.batch && index < m.cap)
            {
                return Slot::Made;
            }
            tokio::select! {
                _ = reach.changed() => {}
                _ = self.done.cancelled() => {}
                _ = cancel.cancelled() => return Slot::Leave,
            }
        }
    }
}

/// What a worker does with the index it took.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slot {
    Measured,
    /// Measured like a run-ahead request, its prompt made by the worker.
    Made,
    Cooldown,
    Leave,
}

/// How a level's workers take over from its warmup's, one place at a time, so the server
/// never sees the level's streams arrive at once.
#[derive(Clone)]
pub enum Handover {
    /// Workers start at once.
    None,
    /// A warmup worker gives its place here when it leaves.
    Gives(Arc<tokio::sync::Semaphore>),
    /// A level worker waits here for a place before its first request.
    Takes(Arc<tokio::sync::Semaphore>),
}

/// Gives a place back when a warmup worker's task ends, however it ends.
struct GivesOnDrop(Option<Arc<tokio::sync::Semaphore>>);

impl Drop for GivesOnDrop {
    fn drop(&mut self) {
        if let Some(s) = &self.0 {
            s.add_permits(1);
        }
    }
}

/// Starts `concurrency` workers on `work`; their records go to `tx`, times rebased on
/// `level_start`. Workers leave when the level is done (or `cancel` fires) and no index they
/// may run is left; they give or take their places by `handover`.
pub fn spawn(
    endpoint: &Endpoint,
    concurrency: u32,
    work: &Arc<Work>,
    level_start: u64,
    cancel: &CancellationToken,
    tx: mpsc::UnboundedSender<RequestRecord>,
    handover: Handover,
) {
    for worker in 0..concurrency {
        let endpoint = endpoint.clone();
        let work = work.clone();
        let cancel = cancel.clone();
        let tx = tx.clone();
        let handover = handover.clone();
        tokio::spawn(async move {
            let _gives = GivesOnDrop(match &handover {
                Handover::Gives(s) => Some(s.clone()),
                _ => None,
            });
            if let Handover::Takes(places) = &handover {
                tokio::select! {
                    p = places.acquire() => match p {
                        Ok(p) => p.forget(),
                        Err(_) => return,
                    },
                    _ = cancel.cancelled() => return,
                }
            }
            let mut reach = work.reach.subscribe();
            // multi-turn: the session in progress and the think time before its next turn
            let mut session: Option<Session> = None;
            let mut think_ns: Option<u64> = None;
            loop {
                if cancel.is_cancelled() || work.is_cut() {
                    return;
                }
                let index = work.cursor.fetch_add(1, Ordering::Relaxed);
                let slot = work.wait_for(index, &mut reach, &cancel).await;
                if slot == Slot::Leave {
                    return;
                }
                // only a request past the limit is still in flight once the level settles
                let sent = Sent {
                    endpoint: &endpoint,
                    in_flight: &work.in_flight,
                    live: &work.live_chunks,
                    cancel: &cancel,
                    cut_unanswered: work.cut.as_ref(),
                    drop_on: &work.settled,
                    released_ns: None,
                };
                let mut rec = if let Some(src) = &work.sessions {
                    let Some(s) = session.take().or_else(|| src.start()) else {
                        return;
                    };
                    // a session starts with a turn to send and is kept only while it has one
                    // more (`WorkloadSpec::session`, below), so `turn` gives this index its
                    // request
                    let (w, waited) = (&src.workload, think_ns.take());
                    let Some(TurnSent {
                        mut rec,
                        next,
                        agent,
                    }) = sent.turn(s, w, index, worker, level_start, waited).await
                    else {
                        return;
                    };
                    let go_on = next.is_some();
                    session = next;
                    rec.cooldown = slot == Slot::Cooldown;
                    rec.warmup = work.is_warmup();
                    if tx.send(rec).is_err() {
                        return;
                    }
                    if go_on {
                        match src.pause(agent, &cancel, &work.settled).await {
                            Some(waited) => think_ns = waited,
                            None => return,
                        }
                    }
                    continue;
                } else if let (Slot::Made | Slot::Cooldown, Some(m)) = (slot, &work.maker) {
                    let prompt = match slot {
                        Slot::Made => m.workload.prompt(m.level, index),
                        _ => m.cooldown(index),
                    };
                    let Some(rec) = sent.send(&prompt, index, worker, level_start).await else {
                        return;
                    };
                    rec
                } else {
                    let Some((batch, at)) = work.prompt_batch(index) else {
                        return;
                    };
                    let prompt = &batch[at];
                    let Some(rec) = sent.send(prompt, index, worker, level_start).await else {
                        return;
                    };
                    rec
                };
                rec.cooldown = slot == Slot::Cooldown;
                rec.warmup = work.is_warmup();
                if tx.send(rec).is_err() {
                    return;
                }
            }
        });
    }
}

/// The one request path of both loops: a request sent, its bytes read and stamped in this
/// task, and recorded.
pub struct Sent<'a> {
    pub endpoint: &'a Endpoint,
    /// Requests sent and not yet finished (the level's gauge).
    pub in_flight: &'a AtomicU64,
    /// Content chunks received by the level so far.
    pub live: &'a Arc<AtomicU64>,
    /// The run is stopped: the request ends as `cancelled`.
    pub cancel: &'a CancellationToken,
    /// A warmup's cut: the request ends as `cancelled` if it has had no chunk of its answer
    /// when this fires, and otherwise runs to its end.
    pub cut_unanswered: Option<&'a CancellationToken>,
    /// The request is no longer wanted: dropped in flight, no record.
    pub drop_on: &'a CancellationToken,
    /// When the request was released to be sent, if earlier than this call (an open loop's
    /// dispatcher): recorded as its `slot_free_ns`, so slot-to-send shows the runtime's delay.
    pub released_ns: Option<u64>,
}

impl Sent<'_> {
    /// Sends `prompt` as request `index` of the level that started at `level_start` (ns)
    /// and returns its record; `None` when it was dropped.
    pub async fn send(
        &self,
        prompt: &Prompt,
        index: u64,
        worker: u32,
        level_start: u64,
    ) -> Option<RequestRecord> {
        self.exchange(prompt, None, index, worker, level_start)
            .await
            .map(|(rec, _)| rec)
    }

    /// [`Sent::send`] of a request the open-loop dispatcher wrote already on its own thread:
    /// its answer is read here.
    pub async fn send_written(
        &self,
        prompt: &Prompt,
        written: Written,
        index: u64,
        worker: u32,
        level_start: u64,
    ) -> Option<RequestRecord> {
        self.exchange(prompt, Some(written), index, worker, level_start)
            .await
            .map(|(rec, _)| rec)
    }

    /// Sends the next turn of `session` as request `index`, `waited` ns after the previous
    /// answer (its think time, or an agent's wait for its tools): its record (with the
    /// session and turn), and the session with the answer taken when it goes on (the turn
    /// succeeded, the session has another, and an agent's answer had tool calls); `None` when
    /// the request was dropped.
    async fn turn(
        &self,
        mut session: Session,
        workload: &WorkloadSpec,
        index: u64,
        worker: u32,
        level_start: u64,
        waited: Option<u64>,
    ) -> Option<TurnSent> {
        let turn = session.next_turn(workload)?;
        let (mut rec, answer) = self
            .exchange(&turn.prompt, None, index, worker, level_start)
            .await?;
        rec.detail.session = Some(session.index);
        rec.detail.turn = Some(turn.number);
        let agent = session.agent().is_some();
        if agent {
            rec.detail.agent = true;
            rec.detail.tool_wait_ns = waited;
        } else {
            rec.detail.think_ns = waited;
        }
        let go_on = rec.ok()
            && !session.finished()
            && session.take_answer(workload, answer.text, answer.calls);
        Some(TurnSent {
            rec,
            next: go_on.then_some(session),
            agent,
        })
    }

    /// [`Sent::send`] (of a request already `written` when given), also returning the answer
    /// text and tool calls as received.
    async fn exchange(
        &self,
        prompt: &Prompt,
        written: Option<Written>,
        index: u64,
        worker: u32,
        level_start: u64,
    ) -> Option<(RequestRecord, Answer)> {
        let slot_free = self.released_ns.unwrap_or_else(now_ns);
        self.in_flight.fetch_add(1, Ordering::Relaxed);
        // a request that may be cut counts its own chunks, to tell whether it is answering
        let own = self.cut_unanswered.map(|_| Arc::new(AtomicU64::new(0)));
        let live = own.clone().unwrap_or_else(|| self.live.clone());
        let cut = async {
            match (self.cut_unanswered, &own) {
                (Some(cut), Some(own)) => {
                    cut.cancelled().await;
                    if own.load(Ordering::Relaxed) > 0 {
                        std::future::pending::<()>().await;
                    }
                }
                _ => std::future::pending::<()>().await,
            }
        };
        let send = async {
            match written {
                Some(w) => self.endpoint.send_written(w, live).await,
                None => {
                    self.endpoint
                        .send_counting(prompt.input(), prompt.max_tokens, live)
                        .await
                }
            }
        };
        let outcome = tokio::select! {
            biased;
            _ = self.cancel.cancelled() => Some(cancelled_outcome(slot_free)),
            _ = self.drop_on.cancelled() => None,
            _ = cut => Some(cancelled_outcome(slot_free)),
            o = send => Some(o),
        };
        self.in_flight.fetch_sub(1, Ordering::Relaxed);
        let mut outcome = outcome?;
        let answer = Answer {
            text: std::mem::take(&mut outcome.answer_text),
            calls: std::mem::take(&mut outcome.tool_call_list),
        };
        let rec = RequestRecord::from_outcome(
            index,
            worker,
            level_start,
            slot_free,
            prompt.input_tokens,
            outcome,
        );
        Some((rec, answer))
    }
}

/// A turn sent: its record, the session when it goes on, and whether it is an agent's.
struct TurnSent {
    rec: RequestRecord,
    next: Option<Session>,
    agent: bool,
}

/// An answer as streamed: its text and its tool calls.
struct Answer {
    text: String,
    calls: Vec<ToolCall>,
}

fn cancelled_outcome(start_ns: u64) -> ExchangeOutcome {
    ExchangeOutcome {
        start_ns,
        end_ns: now_ns(),
        error: Some(RequestError {
            kind: ErrorKind::Cancelled,
            status: None,
            message: "run stopped while the request was in flight".into(),
        }),
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn level_work(first: u64, cap: u64) -> (WorkloadSpec, Arc<Work>) {
        let w = WorkloadSpec::fixed(40, 3);
        let book = super::super::level::prompts(&w, 2, 0, first);
        let maker = PromptMaker {
            workload: w.clone(),
            level: 2,
            cap,
            base: 0,
        };
        (w, Work::with_sessions(book, None, Some(maker)))
    }

    /// What `wait_for` answers for `index` without waiting: `None` when it would wait.
    fn slot_now(work: &Work, index: u64) -> Option<Slot> {
        let mut reach = work.reach.subscribe();
        let cancel = CancellationToken::new();
        let fut = work.wait_for(index, &mut reach, &cancel);
        futures_now(fut)
    }

    fn futures_now<F: std::future::Future>(fut: F) -> Option<F::Output> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        rt.block_on(async {
            tokio::select! {
                biased;
                out = fut => Some(out),
                () = std::future::ready(()) => None,
            }
        })
    }

    #[test]
    fn a_worker_past_the_book_makes_the_next_batch_prompt_and_no_further() {
        let (w, work) = level_work(4, 10);
        // the book: 0..4 measured; the next batch 4..8 made by the worker; past it, wait
        assert_eq!(slot_now(&work, 3), Some(Slot::Measured));
        assert_eq!(slot_now(&work, 4), Some(Slot::Made));
        assert_eq!(slot_now(&work, 7), Some(Slot::Made));
        assert_eq!(slot_now(&work, 8), None);
        // the made prompt is the one the book would hold
        let stocked = super::super::level::prompts(&w, 2, 4, 4);
        let made = w.prompt(2, 5);
        assert_eq!(
            (&made.text, made.input_tokens, made.max_tokens),
            (
                &stocked[1].text,
                stocked[1].input_tokens,
                stocked[1].max_tokens
            )
        );
        assert_ne!(made.text, w.prompt(2, 6).text);
        // stocked and grown: 4..8 from the book, 8..10 made (the cap), 10 waits
        work.stock(stocked);
        work.grow();
        assert_eq!(slot_now(&work, 5), Some(Slot::Measured));
        assert_eq!(slot_now(&work, 9), Some(Slot::Made));
        assert_eq!(slot_now(&work, 10), None);
        // once the level takes no more, past the limit is cooldown
        work.done.cancel();
        assert_eq!(slot_now(&work, 9), Some(Slot::Cooldown));
    }

    #[test]
    fn a_fixed_level_makes_only_cooldown_prompts_and_they_are_new() {
        // a level of 4 whose cap is its book (`level::closed_here`'s maker for a fixed level)
        let (w, fixed) = level_work(4, 4);
        assert_eq!(slot_now(&fixed, 4), None);
        fixed.done.cancel();
        assert_eq!(slot_now(&fixed, 4), Some(Slot::Cooldown));
        // a cooldown prompt has the level's lengths and none of its texts (a prefix cache
        // would know them), nor the next batch's
        let maker = fixed.maker.as_ref().unwrap();
        let level = super::super::level::prompts(&w, 2, 0, 12);
        for i in 4..8 {
            let c = maker.cooldown(i);
            assert_eq!((c.input_tokens, c.max_tokens), (40, 3), "cooldown {i}");
            assert!(level.iter().all(|p| p.text != c.text), "cooldown {i}");
        }
        assert_ne!(maker.cooldown(4).text, maker.cooldown(5).text);
    }
}
