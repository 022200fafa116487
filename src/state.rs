//! The run state both consumers fold engine events into: the headless printer and the
//! dashboard read the same fields, so they can never disagree about what was measured.

use crate::engine::EngineEvent;
use crate::metrics::progress::OpenProgress;
use crate::metrics::{LevelProgress, LevelSummary};
use crate::telemetry::ServerSample;
use crate::workload::arrivals::LoadShape;
use std::path::PathBuf;

/// Everything a consumer knows about a run, built only by [`RunState::apply`].
#[derive(Debug, Clone, Default)]
pub struct RunState {
    pub run_id: Option<String>,
    pub dir: Option<PathBuf>,
    pub endpoint: Option<String>,
    pub model: Option<String>,
    /// Finished levels, in the order they ran.
    pub levels: Vec<LevelSummary>,
    /// The level now running: (index, concurrency, request count).
    pub running: Option<(u32, u32, u64)>,
    /// How the running level's rate changes, for an open-loop level.
    pub running_shape: Option<LoadShape>,
    /// The latest snapshot of the running level.
    pub progress: Option<LevelProgress>,
    /// The open-loop level's figures over time (s since its start), kept after it ends
    /// until the next level starts.
    pub timeline: Vec<(f64, OpenProgress)>,
    pub warnings: Vec<String>,
    /// The server's latest figures, and its first ones (the baseline for counter rates).
    pub server: Option<ServerSample>,
    pub server_first: Option<ServerSample>,
    pub finished: bool,
    pub interrupted: bool,
}

impl RunState {
    /// Folds one event in.
    pub fn apply(&mut self, ev: &EngineEvent) {
        match ev {
            EngineEvent::RunStarted {
                run_id,
                dir,
                endpoint,
                model,
                ..
            } => {
                self.run_id = Some(run_id.clone());
                self.dir = Some(dir.clone());
                self.endpoint = Some(endpoint.clone());
                self.model = Some(model.clone());
            }
            EngineEvent::LevelStarted {
                index,
                concurrency,
                request_count,
                shape,
            } => {
                self.running = Some((*index, *concurrency, *request_count));
                self.running_shape = shape.clone();
                self.progress = None;
                self.timeline.clear();
            }
            EngineEvent::Progress(p) => {
                if self.running.map(|r| r.0) == Some(p.index) {
                    if let Some(o) = p.open {
                        self.timeline.push((p.elapsed_s, o));
                    }
                    self.progress = Some(p.clone());
                }
            }
            EngineEvent::LevelFinished(summary) => {
                self.running = None;
                self.progress = None;
                self.levels.push((**summary).clone());
            }
            EngineEvent::Warning(w) => self.warnings.push(w.clone()),
            EngineEvent::Telemetry(sample) => {
                if self.server_first.is_none() {
                    self.server_first = Some(sample.clone());
                }
                self.server = Some(sample.clone());
            }
            EngineEvent::RunFinished { interrupted } => {
                self.finished = true;
                self.interrupted = *interrupted;
                self.running = None;
            }
        }
    }
}
