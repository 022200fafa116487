//! One process's sending of an open-loop schedule (see `docs/open-loop.md`): requests go out
//! when an arrival schedule says, whether or not earlier ones have finished, so a slow server
//! builds a queue the way production traffic does. A dispatcher thread sleeps until each
//! intended time (no busy loop), optionally for a free slot under `--max-in-flight`, and
//! spawns the request on the same request path as the closed loop
//! ([`crate::engine::workers::Sent`]); its records come back on [`Sender::records`].
//!
//! A worker of a distributed run sends its segment of the same schedule: the same
//! dispatcher, walking the same seeded times and keeping every `of`-th arrival.

use super::measure::Sending;
use super::prompts;
use crate::clock::now_ns;
use crate::engine::intended::{Intended, Segment};
use crate::engine::open_plan::OpenPlan;
use crate::engine::workers::Sent;
use crate::record::RequestRecord;
use crate::workload::{Prompt, WorkloadSpec};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, Semaphore};
use tokio_util::sync::CancellationToken;

/// A level's dispatcher at work: its records as they finish and its counts.
pub(super) struct Sender {
    pub records: mpsc::UnboundedReceiver<RequestRecord>,
    in_flight: Arc<AtomicU64>,
    dispatched: Arc<AtomicU64>,
    live_chunks: Arc<AtomicU64>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Sender {
    /// Starts the dispatcher on the `segment` of `intended` (its `total` arrivals, counted
    /// once by the caller): the segment's first prompts are made, then `level_start` is read
    /// (on this process's clock; the times count from it) and returned; `stop` ends the
    /// sending and cuts the requests in flight.
    pub fn start(
        endpoint: &crate::endpoint::Endpoint,
        workload: &WorkloadSpec,
        plan: &OpenPlan,
        (intended, total): (Intended, u64),
        segment: Segment,
        level_start: impl FnOnce() -> u64,
        stop: CancellationToken,
    ) -> (Sender, u64) {
        let n = segment.share_of(total);
        let feed = PromptFeed::start(workload, plan.index, segment, n);
        let level_start = level_start();
        let cap = plan.max_in_flight.unwrap_or(0);
        let in_flight = Arc::new(AtomicU64::new(0));
        let dispatched = Arc::new(AtomicU64::new(0));
        let live_chunks = Arc::new(AtomicU64::new(0));
        let (tx, records) = mpsc::unbounded_channel::<RequestRecord>();
        let rt = tokio::runtime::Handle::current();
        let args = Dispatch {
            endpoint: endpoint.clone(),
            intended,
            segment,
            level_start,
            slots: (cap > 0).then(|| Arc::new(Semaphore::new(cap as usize))),
            in_flight: in_flight.clone(),
            dispatched: dispatched.clone(),
            live: live_chunks.clone(),
            stop,
            tx,
        };
        let thread = std::thread::Builder::new()
            .name("rightsize-dispatch".into())
            .spawn(move || dispatch(args, feed, rt))
            .expect("a thread for the dispatcher");
        let sender = Sender {
            records,
            in_flight,
            dispatched,
            live_chunks,
            thread: Some(thread),
        };
        (sender, level_start)
    }

    pub fn sending(&self) -> Sending {
        Sending {
            in_flight: self.in_flight.load(Ordering::Relaxed),
            sent: self.dispatched.load(Ordering::Relaxed),
            chunks: self.live_chunks.load(Ordering::Relaxed),
        }
    }

    /// Waits for the dispatcher thread (once the records channel has closed: every sender,
    /// the dispatcher's and each request's, is gone).
    pub async fn join(&mut self) {
        if let Some(t) = self.thread.take() {
            let _ = tokio::task::spawn_blocking(move || t.join()).await;
        }
    }
}

/// How many prompts are made ahead of the dispatcher.
const PROMPTS_AHEAD: usize = 4096;

/// A level's prompts in order, made as they are used: the first [`PROMPTS_AHEAD`] before the
/// level starts, the rest on a thread of their own that stays that far ahead of the
/// dispatcher. A long high-rate level holds a few thousand prompts, not millions (a
/// 100,000 req/s level used to grow by 170 MB/s while it made all of them up front).
struct PromptFeed {
    next: std::sync::mpsc::Receiver<Prompt>,
}

impl PromptFeed {
    /// The prompts of the `n` arrivals of `segment`, in order (arrival `i`'s prompt is the
    /// level's `i`-th, whichever worker sends it).
    fn start(workload: &WorkloadSpec, level: u32, segment: Segment, n: u64) -> PromptFeed {
        let (tx, next) = std::sync::mpsc::sync_channel(PROMPTS_AHEAD);
        let (part, of) = (u64::from(segment.part), u64::from(segment.of.max(1)));
        let prompt = move |w: &WorkloadSpec, k: u64| prompts(w, level, part + k * of, 1).pop();
        let first = n.min(PROMPTS_AHEAD as u64);
        for k in 0..first {
            // room for all of them: the channel holds PROMPTS_AHEAD
            if let Some(p) = prompt(workload, k) {
                let _ = tx.send(p);
            }
        }
        if first < n {
            let w = workload.clone();
            std::thread::Builder::new()
                .name("rightsize-prompts".into())
                .spawn(move || {
                    for k in first..n {
                        let Some(p) = prompt(&w, k) else {
                            return;
                        };
                        // the dispatcher has stopped: so does this
                        if tx.send(p).is_err() {
                            return;
                        }
                    }
                })
                .expect("a thread for the prompts");
        }
        PromptFeed { next }
    }
}

/// What the dispatcher needs.
struct Dispatch {
    endpoint: crate::endpoint::Endpoint,
    intended: Intended,
    /// The arrivals this process sends.
    segment: Segment,
    level_start: u64,
    slots: Option<Arc<Semaphore>>,
    in_flight: Arc<AtomicU64>,
    dispatched: Arc<AtomicU64>,
    live: Arc<AtomicU64>,
    stop: CancellationToken,
    tx: mpsc::UnboundedSender<RequestRecord>,
}

/// The longest the dispatcher sleeps before looking at the stop token again.
const STOP_CHECK: Duration = Duration::from_millis(20);

/// Sends each request at its intended time (after a free slot, when capped), each read on a
/// task of its own; returns when every request is sent (or the level stops).
///
/// It runs on a thread of its own, not on the runtime: tokio's timer wheel fires to the
/// millisecond and late when the workers are busy, while a thread sleeping on the system
/// clock wakes within tens of microseconds. On an `http://` endpoint it writes the request
/// itself the moment it wakes, on an idle connection or one it connected ahead
/// ([`crate::endpoint::DirectWriter`]), and the runtime only reads the answer: a send waits
/// on this thread's wake-up alone. Without a ready connection (or over `https://`) the
/// runtime sends it, one wake-up later. Either way the send is stamped where the bytes go
/// out, so any delay shows in the schedule lag.
fn dispatch(d: Dispatch, feed: PromptFeed, rt: tokio::runtime::Handle) {
    crate::sched::latency_critical();
    let d = Arc::new(d);
    let mut writer = d.endpoint.direct_writer();
    for (i, at) in d.intended.segment(d.segment) {
        let due = d.level_start + at;
        let Ok(prompt) = feed.next.recv() else {
            return;
        };
        // the bytes are built before the sleep, not at the intended time
        let prepared = writer
            .as_ref()
            .map(|w| d.endpoint.prepare(w, prompt.input(), prompt.max_tokens));
        loop {
            if d.stop.is_cancelled() {
                return;
            }
            if let Some(w) = writer.as_mut() {
                w.get_ready(due);
            }
            let now = now_ns();
            if now >= due {
                break;
            }
            std::thread::sleep(Duration::from_nanos(due - now).min(STOP_CHECK));
        }
        let permit = match &d.slots {
            Some(s) => {
                let s = s.clone();
                let stop = d.stop.clone();
                let p = rt.block_on(async move {
                    tokio::select! {
                        _ = stop.cancelled() => None,
                        p = s.acquire_owned() => p.ok(),
                    }
                });
                if p.is_none() {
                    return;
                }
                p
            }
            None => None,
        };
        d.dispatched.fetch_add(1, Ordering::Relaxed);
        let released = now_ns();
        let written = match (writer.as_mut(), prepared) {
            (Some(w), Some(p)) => w.write(p),
            _ => None,
        };
        let d = d.clone();
        rt.spawn(async move {
            let sent = Sent {
                endpoint: &d.endpoint,
                in_flight: &d.in_flight,
                live: &d.live,
                cancel: &d.stop,
                cut_unanswered: None,
                drop_on: &CancellationToken::new(),
                released_ns: Some(released),
            };
            let rec = match written {
                Some(w) => {
                    sent.send_written(&prompt, w, i, i as u32, d.level_start)
                        .await
                }
                None => sent.send(&prompt, i, i as u32, d.level_start).await,
            };
            if let Some(mut rec) = rec {
                rec.detail.intended_ns = Some(at);
                let _ = d.tx.send(rec);
            }
            drop(permit);
        });
    }
}
