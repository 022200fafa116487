//! What a served run has said so far: every event, numbered, as one JSON line each, so a
//! watcher that connects late (or again, after a dropped connection) is sent the run from its
//! start, or from the number it got to. Snapshots (progress, server telemetry, the workers)
//! are kept as the latest of each kind only: a watcher needs the newest, and a night-long run
//! sends four a second. The same events are folded as they come (a run's into a [`RunState`]
//! with the reducer both consumers use), for `/metrics`.
//!
//! A run's events are [`EngineEvent`]s; a campaign's are its own (they carry its candidates'
//! engine events): the log takes any event that says what [`Logged`] asks.

use crate::engine::EngineEvent;
use crate::state::RunState;
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::watch;

/// One event as sent: its number and its JSON line (with the newline).
#[derive(Debug, Clone)]
pub struct Line {
    pub seq: u64,
    pub text: Arc<str>,
}

/// The kinds of event of which only the latest is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Snapshot {
    Progress,
    Telemetry,
    Workers,
}

impl Snapshot {
    /// The kind of snapshot an engine event is, if it is one.
    pub fn of(ev: &EngineEvent) -> Option<Snapshot> {
        match ev {
            EngineEvent::Progress(_) => Some(Snapshot::Progress),
            EngineEvent::Telemetry(_) => Some(Snapshot::Telemetry),
            EngineEvent::Workers(_) => Some(Snapshot::Workers),
            _ => None,
        }
    }
}

/// An event a served log keeps: it is written (and read back by a watcher) as JSON, it may be
/// a snapshot, it may be the run's last, and it folds into what `/metrics` reads.
pub trait Logged: serde::Serialize + serde::de::DeserializeOwned + Send + Sync + 'static {
    /// What the events fold into.
    type Folded: Default + Send + 'static;
    /// The kind of snapshot this event is (only the latest of a kind is kept), if any.
    fn snapshot(&self) -> Option<Snapshot>;
    /// Whether this is the last event of a run that ended as it should.
    fn is_last(&self) -> bool;
    /// Folds the event in.
    fn fold(&self, into: &mut Self::Folded);
}

impl Logged for EngineEvent {
    type Folded = RunState;
    fn snapshot(&self) -> Option<Snapshot> {
        Snapshot::of(self)
    }
    fn is_last(&self) -> bool {
        matches!(self, EngineEvent::RunFinished { .. })
    }
    fn fold(&self, into: &mut RunState) {
        into.apply(self);
    }
}

struct Inner<E: Logged> {
    /// Every event but the snapshots, in order.
    lines: Vec<Line>,
    /// The latest snapshot of each kind.
    latest: Vec<(Snapshot, Line)>,
    next: u64,
    folded: E::Folded,
    /// The run is over: nothing more will be added.
    ended: bool,
}

/// The served run's events (see the module header). Shared by the engine's side, which adds,
/// and each connection, which reads.
pub struct EventLog<E: Logged> {
    inner: Mutex<Inner<E>>,
    /// The number the next event will take; moves on each event, so a waiting stream wakes.
    added: watch::Sender<u64>,
}

impl<E: Logged> Default for EventLog<E> {
    fn default() -> Self {
        EventLog {
            inner: Mutex::new(Inner {
                lines: Vec::new(),
                latest: Vec::new(),
                next: 0,
                folded: E::Folded::default(),
                ended: false,
            }),
            added: watch::channel(0).0,
        }
    }
}

impl<E: Logged> EventLog<E> {
    fn lock(&self) -> MutexGuard<'_, Inner<E>> {
        // a panic elsewhere while holding it leaves plain data: read on
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Adds one event (numbered in the order added) and folds it into the run state.
    pub fn add(&self, ev: &E) {
        let mut inner = self.lock();
        let seq = inner.next;
        let text = match serde_json::to_string(&Numbered { seq, event: ev }) {
            Ok(t) => Arc::from(t + "\n"),
            // every event type serialises; a failure would be a bug, not the watcher's
            Err(_) => return,
        };
        inner.next += 1;
        ev.fold(&mut inner.folded);
        let line = Line { seq, text };
        match ev.snapshot() {
            Some(kind) => match inner.latest.iter_mut().find(|(k, _)| *k == kind) {
                Some(slot) => slot.1 = line,
                None => inner.latest.push((kind, line)),
            },
            None => inner.lines.push(line),
        }
        if ev.is_last() {
            inner.ended = true;
        }
        let next = inner.next;
        drop(inner);
        self.added.send_replace(next);
    }

    /// Says that nothing more will be added (the run ended without its last event: it failed
    /// before it started, or its task ended): open streams end.
    pub fn close(&self) {
        let next = {
            let mut inner = self.lock();
            inner.ended = true;
            inner.next
        };
        self.added.send_replace(next);
    }

    /// The events numbered `from` or more, in order, and whether the run is over (nothing
    /// will follow them).
    pub fn since(&self, from: u64) -> (Vec<Line>, bool) {
        let inner = self.lock();
        let start = inner.lines.partition_point(|l| l.seq < from);
        let mut out: Vec<Line> = inner.lines[start..].to_vec();
        out.extend(
            inner
                .latest
                .iter()
                .filter(|(_, l)| l.seq >= from)
                .map(|(_, l)| l.clone()),
        );
        out.sort_by_key(|l| l.seq);
        (out, inner.ended)
    }

    /// What `read` makes of the events folded so far.
    pub fn read_folded<R>(&self, read: impl FnOnce(&E::Folded) -> R) -> R {
        read(&self.lock().folded)
    }

    /// Wakes when an event is added (or the log is closed).
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.added.subscribe()
    }
}

#[derive(serde::Serialize)]
struct Numbered<'a, E> {
    seq: u64,
    event: &'a E,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::LevelProgress;

    fn progress(index: u32, done: u64) -> EngineEvent {
        EngineEvent::Progress(LevelProgress {
            index,
            concurrency: 4,
            done,
            total: 10,
            in_flight: 4,
            ok: done,
            errors_by_kind: Default::default(),
            output_tokens: 0,
            output_tokens_per_sec: 0.0,
            output_tps_series: vec![],
            elapsed_s: 1.0,
            chunks: 0,
            sent: 0,
            live: Default::default(),
            open: None,
        })
    }

    fn seqs(lines: &[Line]) -> Vec<u64> {
        lines.iter().map(|l| l.seq).collect()
    }

    #[test]
    fn a_late_reader_gets_every_event_and_only_the_latest_snapshot() {
        let log = EventLog::<EngineEvent>::default();
        log.add(&EngineEvent::LevelsLeft([1, 2])); // 0
        log.add(&progress(0, 1)); // 1, replaced
        log.add(&EngineEvent::Warning("w".into())); // 2
        log.add(&progress(0, 5)); // 3
        let (all, ended) = log.since(0);
        assert_eq!(seqs(&all), vec![0, 2, 3]);
        assert!(!ended);
        assert!(all[2].text.contains("\"done\":5"), "{}", all[2].text);
        // from a number on: what came after it
        assert_eq!(seqs(&log.since(3).0), vec![3]);
        assert_eq!(seqs(&log.since(4).0), Vec::<u64>::new());
        log.add(&EngineEvent::RunFinished { interrupted: false }); // 4
        let (rest, ended) = log.since(4);
        assert_eq!(seqs(&rest), vec![4]);
        assert!(ended);
        assert!(log.read_folded(|s| s.finished));
    }

    #[test]
    fn every_kind_of_event_reads_back_as_it_was_written() {
        use crate::telemetry::gpu::{GpuReading, GpuSample};
        let mut with_live = progress(1, 7);
        if let EngineEvent::Progress(p) = &mut with_live {
            p.live.ttft_ms = Some(crate::metrics::Percentiles {
                p50: 1.5,
                p95: 2.5,
                p99: 3.5,
            });
            p.errors_by_kind
                .insert(crate::record::ErrorKind::Timeout, 2);
        }
        let events = vec![
            EngineEvent::RunStarted {
                run_id: "r".into(),
                dir: "/runs/r".into(),
                endpoint: "http://h/v1".into(),
                model: "m".into(),
                server: Default::default(),
            },
            EngineEvent::LevelsLeft([1, 3]),
            EngineEvent::LevelStarted {
                index: 0,
                concurrency: 8,
                request_count: 16,
                request_cap: 64,
                earlier: 0,
                warmup: 8,
                shape: None,
            },
            with_live,
            EngineEvent::Telemetry(crate::telemetry::ServerSample {
                server: Some("vllm"),
                running: Some(3.0),
                gpu: Some(GpuSample {
                    exporter: "dcgm",
                    gpus: vec![GpuReading {
                        gpu: "0".into(),
                        power_w: Some(300.0),
                        ..Default::default()
                    }],
                }),
                ..Default::default()
            }),
            EngineEvent::Workers(Box::new(crate::metrics::fleet::FleetLevel {
                workers: 2,
                start_spread_ms: 1.5,
                clock_uncertainty_ms: 0.2,
                controller_cpu_s: 0.1,
                shares: vec![],
                warning: Some("w".into()),
            })),
            EngineEvent::LevelFinished(Box::new(crate::metrics::fixtures::level(
                0, 4, 8, 100, 1000, 64, None,
            ))),
            EngineEvent::Warning("w".into()),
            EngineEvent::RunFinished { interrupted: true },
        ];
        for ev in events {
            let text = serde_json::to_string(&ev).unwrap();
            let back: EngineEvent = serde_json::from_str(&text).unwrap();
            assert_eq!(serde_json::to_string(&back).unwrap(), text);
        }
    }

    #[test]
    fn each_line_is_one_numbered_json_event() {
        let log = EventLog::<EngineEvent>::default();
        log.add(&EngineEvent::Warning("a \"quoted\" note".into()));
        let (lines, _) = log.since(0);
        let text = &lines[0].text;
        assert!(text.ends_with('\n') && text.matches('\n').count() == 1);
        let v: serde_json::Value = serde_json::from_str(text).unwrap();
        assert_eq!(v["seq"], 0);
        assert_eq!(v["event"]["warning"], "a \"quoted\" note");
    }
}
