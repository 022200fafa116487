//! One level: `concurrency` closed-loop workers that together complete `request_count`
//! requests over the shared endpoint, with a collector folding their records as they arrive.
//! Each worker takes the next request the moment its previous one ends, so the target
//! concurrency is held with no client-side queue.

use super::events::EngineEvent;
use super::lag::{lag_warning, LagProbe};
use super::record::{ErrorKind, ExchangeOutcome, RequestError, RequestRecord};
use crate::clock::now_ns;
use crate::endpoint::Endpoint;
use crate::metrics::{ClientLag, LevelAccumulator, LevelMeta, LevelSummary, LiveLevel};
use crate::report::RequestLog;
use crate::workload::{Prompt, WorkloadSpec};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// How often a progress snapshot goes to the consumer.
pub const PROGRESS_PERIOD: Duration = Duration::from_millis(250);

/// Warmup prompts are drawn from their own index range so they never repeat a measured one.
const WARMUP_INDEX_BASE: u64 = 1 << 40;

/// What to run for one level.
#[derive(Debug, Clone, Copy)]
pub struct LevelPlan {
    /// 0-based position of the level in the run.
    pub index: u32,
    pub concurrency: u32,
    pub request_count: u32,
    /// Requests sent first at the same concurrency and not counted.
    pub warmup: u32,
}

/// Everything a level needs from the run.
pub struct LevelCtx<'a> {
    pub endpoint: &'a Endpoint,
    pub workload: &'a WorkloadSpec,
    pub cancel: &'a CancellationToken,
    pub events: &'a mpsc::Sender<EngineEvent>,
    pub log: &'a mut RequestLog,
}

/// Runs one level to its end (or until cancelled: then the summary is marked partial).
pub async fn run_level(ctx: LevelCtx<'_>, plan: LevelPlan) -> LevelSummary {
    let LevelCtx {
        endpoint,
        workload,
        cancel,
        events,
        log,
    } = ctx;
    // a failing request log must not stop the measurement: the first error becomes a warning
    let mut log_error: Option<std::io::Error> = None;
    if plan.warmup > 0 && !cancel.is_cancelled() {
        let prompts = Arc::new(
            (0..plan.warmup as u64)
                .map(|i| workload.prompt(plan.index, WARMUP_INDEX_BASE + i))
                .collect::<Vec<_>>(),
        );
        let (tx, mut rx) = mpsc::unbounded_channel();
        let inflight = Arc::new(AtomicU64::new(0));
        let start = now_ns();
        spawn_workers(
            endpoint,
            plan.concurrency,
            prompts,
            start,
            cancel,
            &inflight,
            tx,
        );
        while let Some(mut rec) = rx.recv().await {
            rec.warmup = true;
            log_error = log_error.or(log.append(plan.index, &rec).err());
        }
    }

    let prompts = Arc::new(
        (0..plan.request_count as u64)
            .map(|i| workload.prompt(plan.index, i))
            .collect::<Vec<_>>(),
    );
    let _ = events
        .send(EngineEvent::LevelStarted {
            index: plan.index,
            concurrency: plan.concurrency,
            request_count: plan.request_count as u64,
        })
        .await;
    let started_at = crate::report::rfc3339_utc(std::time::SystemTime::now());
    let probe = LagProbe::start();
    let (tx, mut rx) = mpsc::unbounded_channel::<RequestRecord>();
    let inflight = Arc::new(AtomicU64::new(0));
    let level_start = now_ns();
    spawn_workers(
        endpoint,
        plan.concurrency,
        prompts,
        level_start,
        cancel,
        &inflight,
        tx,
    );

    let mut acc = LevelAccumulator::new(plan.concurrency, plan.request_count as u64);
    let mut live = LiveLevel::new(
        plan.index,
        plan.concurrency,
        plan.request_count as u64,
        Duration::from_millis(500),
        20,
    );
    let mut tick = tokio::time::interval(PROGRESS_PERIOD);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            rec = rx.recv() => match rec {
                Some(rec) => {
                    live.on_record(&rec);
                    if log_error.is_none() {
                        log_error = log.append(plan.index, &rec).err();
                    }
                    acc.add(&rec);
                }
                None => break,
            },
            _ = tick.tick() => {
                let mut snapshot = live.snapshot(now_ns().saturating_sub(level_start));
                snapshot.in_flight = inflight.load(Ordering::Relaxed);
                // a snapshot may be dropped when the consumer lags; the next one replaces it
                let _ = events.try_send(EngineEvent::Progress(snapshot));
            }
        }
    }
    let (timer_p99, timer_max) = probe.stop().await;
    log_error = log_error.or(log.flush().err());
    if let Some(e) = log_error {
        let _ = events
            .send(EngineEvent::Warning(format!(
                "requests.jsonl: cannot write per-request records: {e}"
            )))
            .await;
    }
    let partial = cancel.is_cancelled();
    let mut summary = acc.finish(LevelMeta {
        index: plan.index,
        started_at,
        ended_at: crate::report::rfc3339_utc(std::time::SystemTime::now()),
        partial,
        lag: None,
    });
    let slot_p99 = summary.slot_to_send.as_ref().map_or(0.0, |s| s.p99);
    let typical = summary.ttft_p(50.0).or(summary.e2e_p50_ms()).unwrap_or(0.0);
    let warning = lag_warning(timer_p99, slot_p99, typical);
    if let Some(w) = &warning {
        let _ = events
            .send(EngineEvent::Warning(format!(
                "level {} (concurrency {}): {w}",
                plan.index + 1,
                plan.concurrency
            )))
            .await;
    }
    summary.client_lag = Some(ClientLag {
        timer_late_p99_ms: timer_p99,
        timer_late_max_ms: timer_max,
        slot_to_send_p99_ms: slot_p99,
        warning,
    });
    summary
}

/// Spawns `concurrency` workers that share the prompt list through one atomic cursor.
fn spawn_workers(
    endpoint: &Endpoint,
    concurrency: u32,
    prompts: Arc<Vec<Prompt>>,
    level_start: u64,
    cancel: &CancellationToken,
    inflight: &Arc<AtomicU64>,
    tx: mpsc::UnboundedSender<RequestRecord>,
) {
    let cursor = Arc::new(AtomicU64::new(0));
    for worker in 0..concurrency.min(prompts.len() as u32) {
        let endpoint = endpoint.clone();
        let prompts = prompts.clone();
        let cursor = cursor.clone();
        let cancel = cancel.clone();
        let inflight = inflight.clone();
        let tx = tx.clone();
        tokio::spawn(async move {
            loop {
                let slot_free = now_ns();
                let index = cursor.fetch_add(1, Ordering::Relaxed);
                let Some(prompt) = prompts.get(index as usize) else {
                    break;
                };
                if cancel.is_cancelled() {
                    break;
                }
                inflight.fetch_add(1, Ordering::Relaxed);
                let outcome = tokio::select! {
                    biased;
                    _ = cancel.cancelled() => cancelled_outcome(slot_free),
                    o = endpoint.send(&prompt.text, prompt.max_tokens) => o,
                };
                inflight.fetch_sub(1, Ordering::Relaxed);
                let rec = RequestRecord::from_outcome(
                    index,
                    worker,
                    level_start,
                    slot_free,
                    prompt.input_tokens,
                    outcome,
                );
                if tx.send(rec).is_err() {
                    break;
                }
            }
        });
    }
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
