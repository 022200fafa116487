//! The run state both consumers fold engine events into: the headless printer and the
//! dashboard read the same fields, so they can never disagree about what was measured.

pub mod time_left;

use crate::engine::EngineEvent;
use crate::metrics::progress::OpenProgress;
use crate::metrics::{LevelProgress, LevelSummary};
use crate::telemetry::ServerSample;
use crate::workload::arrivals::LoadShape;
use std::path::PathBuf;

/// One progress snapshot of an open-loop level, as the time view draws it.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct TimelinePoint {
    /// Time since the level started (s).
    pub elapsed_s: f64,
    /// Requests sent and not finished.
    pub in_flight: u64,
    pub open: OpenProgress,
}

/// The most points a timeline keeps. A long schedule or replay sends four snapshots a second;
/// past this many, every other point is dropped, so memory stays bounded and the whole level
/// stays on the chart, finer where it is recent.
pub const TIMELINE_MAX: usize = 4096;

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
    /// The most requests the running level may run (more than its request count when it
    /// grows by batches until decided).
    pub running_cap: u64,
    /// The latest snapshot of the running level.
    pub progress: Option<LevelProgress>,
    /// The open-loop level's figures over time, kept after it ends until the next level
    /// starts; at most [`TIMELINE_MAX`] points (older ones thinned out, see [`RunState::apply`]).
    pub timeline: Vec<TimelinePoint>,
    pub warnings: Vec<String>,
    /// The server's latest figures, and its first ones (the baseline for counter rates).
    pub server: Option<ServerSample>,
    pub server_first: Option<ServerSample>,
    /// A distributed run's workers, as the running (or last) level has them.
    pub workers: Option<crate::metrics::fleet::FleetLevel>,
    pub finished: bool,
    pub interrupted: bool,
    /// How many levels may run after the running one: the fewest and the most.
    pub levels_left: Option<[u32; 2]>,
}

impl RunState {
    /// For a level that grows by batches until decided: `batch 3, up to 1524`, from the
    /// batches its requests so far make and its cap. `None` for a level of fixed size.
    pub fn batch_note(&self) -> Option<String> {
        let (_, _, batch) = self.running?;
        if batch == 0 || self.running_cap <= batch {
            return None;
        }
        let total = self.progress.as_ref().map_or(batch, |p| p.total.max(batch));
        Some(format!(
            "batch {}, up to {}",
            total.div_ceil(batch),
            self.running_cap
        ))
    }

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
                request_cap,
                shape,
                ..
            } => {
                self.running = Some((*index, *concurrency, *request_count));
                self.running_cap = *request_cap;
                self.running_shape = shape.clone();
                self.progress = None;
                self.timeline.clear();
            }
            EngineEvent::Progress(p) => {
                if self.running.map(|r| r.0) == Some(p.index) {
                    if let Some(open) = p.open {
                        if self.timeline.len() >= TIMELINE_MAX {
                            thin_out(&mut self.timeline);
                        }
                        self.timeline.push(TimelinePoint {
                            elapsed_s: p.elapsed_s,
                            in_flight: p.in_flight,
                            open,
                        });
                    }
                    self.progress = Some(p.clone());
                }
            }
            EngineEvent::LevelFinished(summary) => {
                self.running = None;
                self.progress = None;
                // a level measured again replaces what it was: one entry per level
                if let Some(w) = &summary.workers {
                    self.workers = Some(w.clone());
                }
                match self.levels.iter_mut().find(|l| l.index == summary.index) {
                    Some(l) => *l = (**summary).clone(),
                    None => self.levels.push((**summary).clone()),
                }
            }
            EngineEvent::LevelsLeft(left) => self.levels_left = Some(*left),
            EngineEvent::Warning(w) => self.warnings.push(w.clone()),
            EngineEvent::Workers(w) => self.workers = Some((**w).clone()),
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

/// Halves the points: keeps the first, every other one after it, and the last.
fn thin_out(points: &mut Vec<TimelinePoint>) {
    let last = points.last().copied();
    let mut i = 0;
    points.retain(|_| {
        i += 1;
        i % 2 == 1
    });
    if let Some(l) = last {
        if points.last() != Some(&l) {
            points.push(l);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::LevelProgress;

    fn open_progress(index: u32, elapsed_s: f64) -> EngineEvent {
        EngineEvent::Progress(LevelProgress {
            index,
            concurrency: 0,
            done: 0,
            total: 10,
            in_flight: 3,
            ok: 0,
            errors_by_kind: Default::default(),
            output_tokens: 0,
            output_tokens_per_sec: 0.0,
            output_tps_series: vec![],
            elapsed_s,
            chunks: 0,
            sent: 0,
            live: Default::default(),
            open: Some(OpenProgress {
                offered_rps: 2.0,
                ..OpenProgress::default()
            }),
        })
    }

    fn started(index: u32, shape: Option<LoadShape>) -> EngineEvent {
        EngineEvent::LevelStarted {
            index,
            concurrency: 0,
            request_count: 10,
            request_cap: 10,
            earlier: 0,
            warmup: 0,
            shape,
        }
    }

    #[test]
    fn a_growing_level_says_its_batch_and_cap() {
        let mut s = RunState::default();
        assert_eq!(s.batch_note(), None);
        let start = |cap: u64| EngineEvent::LevelStarted {
            index: 0,
            concurrency: 1,
            request_count: 16,
            request_cap: cap,
            earlier: 0,
            warmup: 0,
            shape: None,
        };
        let at = |total: u64| {
            let EngineEvent::Progress(mut p) = open_progress(0, 1.0) else {
                unreachable!()
            };
            p.total = total;
            p.open = None;
            EngineEvent::Progress(p)
        };
        s.apply(&start(16));
        assert_eq!(s.batch_note(), None, "a level of fixed size");
        s.apply(&start(1524));
        assert_eq!(s.batch_note().as_deref(), Some("batch 1, up to 1524"));
        for (total, want) in [
            (16, "batch 1, up to 1524"),
            (48, "batch 3, up to 1524"),
            (384, "batch 24, up to 1524"),
            // the cap need not be a whole number of batches
            (1524, "batch 96, up to 1524"),
        ] {
            s.apply(&at(total));
            assert_eq!(s.batch_note().as_deref(), Some(want), "total {total}");
        }
    }

    #[test]
    fn the_timeline_follows_the_running_open_level_and_stays_after_it() {
        let mut s = RunState::default();
        s.apply(&started(0, Some(LoadShape::Rate { rps: 2.0 })));
        s.apply(&open_progress(0, 0.25));
        s.apply(&open_progress(1, 0.5)); // another level's: ignored
        s.apply(&open_progress(0, 0.5));
        assert_eq!(s.timeline.len(), 2);
        assert_eq!(s.timeline[1].elapsed_s, 0.5);
        assert_eq!(s.timeline[1].in_flight, 3);
        s.apply(&EngineEvent::LevelFinished(Box::new(
            crate::metrics::fixtures::level(0, 1, 8, 100, 200, 4, None),
        )));
        assert_eq!(s.timeline.len(), 2);
        assert!(s.running_shape.is_some());
        s.apply(&started(1, None));
        assert!(s.timeline.is_empty());
        assert!(s.running_shape.is_none());
    }

    #[test]
    fn a_long_timeline_is_thinned_and_keeps_its_ends() {
        let mut s = RunState::default();
        s.apply(&started(0, Some(LoadShape::Rate { rps: 2.0 })));
        let n = TIMELINE_MAX * 3;
        for i in 1..=n {
            s.apply(&open_progress(0, i as f64 * 0.25));
        }
        assert!(s.timeline.len() <= TIMELINE_MAX);
        assert!(s.timeline.len() > TIMELINE_MAX / 2);
        assert_eq!(s.timeline[0].elapsed_s, 0.25);
        assert_eq!(s.timeline.last().unwrap().elapsed_s, n as f64 * 0.25);
        assert!(s
            .timeline
            .windows(2)
            .all(|w| w[0].elapsed_s < w[1].elapsed_s));
    }
}
