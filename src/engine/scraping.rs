//! The server's telemetry while a run sends load: its `/metrics` (and the GPUs' exporter)
//! sampled every interval and on demand at each level's start and end, each sample recorded
//! per level (`telemetry.jsonl`, the level files' `server`) and shown as it comes. The
//! scraper stops however the run ends, an error included ([`Scraping`] holds its guard).

use super::events::EngineEvent;
use super::sink::RunSink;
use crate::clock::now_ns;
use crate::endpoint::Endpoint;
use crate::metrics::LevelSummary;
use crate::telemetry::level::Recorder;
use crate::telemetry::scrape::Scraped;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::{CancellationToken, DropGuard};

/// The longest a level waits at its start or end for the sample it asked for: a server whose
/// `/metrics` is slow or gone costs the run no more than this.
const SAMPLE_NOW_WAIT: Duration = Duration::from_millis(500);

/// A run's telemetry: the scraper (when the run samples at all) and what it recorded.
pub(super) struct Scraping {
    stop: CancellationToken,
    // the scraper stops however the run ends, an error included: its forwarder holds a
    // sender of `events`, and the consumer reads them until every sender is gone
    _guard: DropGuard,
    /// The server's samples, recorded per level (`telemetry.jsonl`, the level files' `server`).
    recorder: Arc<Mutex<Recorder>>,
    /// A scrape at each level's start and end, and when the last sample arrived (run clock).
    scrape_now: Arc<tokio::sync::Notify>,
    sampled: tokio::sync::watch::Receiver<u64>,
    _sampled_tx: tokio::sync::watch::Sender<u64>,
    origin: u64,
    tasks: Option<(JoinHandle<()>, JoinHandle<()>)>,
}

impl Scraping {
    /// Starts sampling every `every` (`None`: not sampled): the server's `/metrics` when
    /// `scrape_server`, the GPUs' exporter at `gpu`.
    pub fn start(
        every: Option<Duration>,
        (endpoint, scrape_server): (&Endpoint, bool),
        gpu: Option<String>,
        events: &mpsc::Sender<EngineEvent>,
    ) -> Scraping {
        let stop = CancellationToken::new();
        let recorder = Arc::new(Mutex::new(Recorder::default()));
        let scrape_now = Arc::new(tokio::sync::Notify::new());
        let (sampled_tx, sampled) = tokio::sync::watch::channel(0u64);
        let origin = now_ns();
        let tasks = every.map(|every| {
            let (tx, rx) = mpsc::channel(4);
            let targets = crate::telemetry::scrape::Targets {
                server: scrape_server
                    .then(|| (endpoint.control_client(), endpoint.spec().base_url.clone())),
                gpu,
            };
            let scrape = tokio::spawn(crate::telemetry::scrape::scrape_on_demand(
                targets,
                every,
                tx,
                stop.clone(),
                scrape_now.clone(),
            ));
            let forward = forward_telemetry(
                rx,
                events.clone(),
                recorder.clone(),
                origin,
                sampled_tx.clone(),
            );
            (scrape, tokio::spawn(forward))
        });
        Scraping {
            _guard: stop.clone().drop_guard(),
            stop,
            recorder,
            scrape_now,
            sampled,
            _sampled_tx: sampled_tx,
            origin,
            tasks,
        }
    }

    /// A level begins: a sample now, and what comes is the level's.
    pub async fn begin(&mut self, index: u32) {
        if self.tasks.is_some() {
            self.sample_now().await;
        }
        recording(&self.recorder).begin(index);
    }

    /// A level ended: a sample now (a level measured again: the server as its last
    /// measurement saw it), the level's `server` figures, its samples written.
    pub async fn end(
        &mut self,
        summary: &mut LevelSummary,
        sink: &mut dyn RunSink,
    ) -> std::io::Result<()> {
        if self.tasks.is_some() {
            self.sample_now().await;
        }
        summary.server = recording(&self.recorder).end(
            summary.benchmark_duration.avg,
            summary.output_tps() * summary.benchmark_duration.avg,
        );
        let lines = recording(&self.recorder).take_lines();
        sink.append_telemetry(&lines)
    }

    /// The run is over: the scraper stops, its last samples are written; the server's
    /// serving configuration, if its samples told it.
    pub async fn finish(
        self,
        sink: &mut dyn RunSink,
    ) -> std::io::Result<Option<BTreeMap<String, String>>> {
        self.stop.cancel();
        if let Some((scrape, forward)) = self.tasks {
            let _ = scrape.await;
            let _ = forward.await;
        }
        let lines = recording(&self.recorder).take_lines();
        sink.append_telemetry(&lines)?;
        let config = recording(&self.recorder).serving_config().cloned();
        Ok(config)
    }

    /// Asks the scraper for a sample now and waits (up to [`SAMPLE_NOW_WAIT`]) until one
    /// taken from now on has been recorded.
    async fn sample_now(&mut self) {
        let asked = now_ns().saturating_sub(self.origin);
        self.scrape_now.notify_one();
        let _ = tokio::time::timeout(SAMPLE_NOW_WAIT, self.sampled.wait_for(|t| *t >= asked)).await;
    }
}

/// The recorder, whoever else held it: a panic elsewhere leaves its samples as they were.
fn recording(recorder: &Mutex<Recorder>) -> std::sync::MutexGuard<'_, Recorder> {
    recorder
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The scraper's findings: each sample recorded (its stamp counted on the run's monotonic
/// clock from `origin`) and sent as a snapshot event (dropped when the consumer is behind), the one note
/// of a server without known metrics as a warning.
async fn forward_telemetry(
    mut rx: mpsc::Receiver<Scraped>,
    events: mpsc::Sender<EngineEvent>,
    recorder: Arc<Mutex<Recorder>>,
    origin: u64,
    sampled: tokio::sync::watch::Sender<u64>,
) {
    while let Some(s) = rx.recv().await {
        match s {
            Scraped::Sample { sample, at_ns } => {
                let t = at_ns.saturating_sub(origin);
                recording(&recorder).record(t, sample.clone());
                sampled.send_replace(t);
                let _ = events.try_send(EngineEvent::Telemetry(sample));
            }
            Scraped::Missing(note) => {
                let _ = events.send(EngineEvent::Warning(note)).await;
            }
        }
    }
}
