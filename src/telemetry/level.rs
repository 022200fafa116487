//! The server's state recorded per level: every scrape becomes a line of `telemetry.jsonl`
//! (its time on the run's monotonic clock and the level it fell in), and the scrapes taken
//! while a level ran are folded into the level's [`ServerSummary`].
//!
//! The scraper runs beside the levels in a task of its own, so the [`Recorder`] is shared:
//! the scraper's forwarder hands it each sample, the engine's level loop opens and closes
//! levels on it and takes the lines it has to write.

use super::ServerSample;
use crate::record::{MeanMax, ServerSummary};
use serde::Serialize;
use std::collections::BTreeMap;

/// One line of `telemetry.jsonl`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TelemetryLine {
    /// Nanoseconds since the run began, on the monotonic clock the requests are timed on.
    pub t_ns: u64,
    /// The 0-based index of the level running when the sample was taken; absent between
    /// levels.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub level: Option<u32>,
    #[serde(flatten)]
    pub sample: ServerSample,
}

/// Mean and max of one gauge, folded sample by sample.
#[derive(Debug, Clone, Copy, Default)]
struct Gauge {
    n: u32,
    sum: f64,
    max: f64,
}

impl Gauge {
    fn add(&mut self, v: Option<f64>) {
        let Some(v) = v.filter(|v| v.is_finite()) else {
            return;
        };
        self.max = if self.n == 0 { v } else { self.max.max(v) };
        self.n += 1;
        self.sum += v;
    }

    fn mean_max(&self) -> Option<MeanMax> {
        (self.n > 0).then(|| MeanMax {
            mean: self.sum / f64::from(self.n),
            max: self.max,
        })
    }
}

/// The samples of one level, folded.
#[derive(Debug, Clone, Default)]
pub struct LevelTelemetry {
    /// The last sample before the level began: the counters' starting point.
    before: Option<ServerSample>,
    first: Option<ServerSample>,
    last: Option<ServerSample>,
    samples: u32,
    running: Gauge,
    waiting: Gauge,
    kv: Gauge,
}

impl LevelTelemetry {
    /// A level whose counters start from `before` (the last sample taken before it began).
    pub fn after(before: Option<ServerSample>) -> Self {
        Self {
            before,
            ..Self::default()
        }
    }

    /// Folds one sample of a known server (others are not counted).
    pub fn add(&mut self, s: &ServerSample) {
        if s.server.is_none() {
            return;
        }
        self.samples += 1;
        self.running.add(s.running);
        self.waiting.add(s.waiting);
        self.kv.add(s.kv_cache_usage);
        if self.first.is_none() {
            self.first = Some(s.clone());
        }
        self.last = Some(s.clone());
    }

    /// The level's summary; `None` when no sample of a known server fell in it.
    pub fn summary(&self) -> Option<ServerSummary> {
        let last = self.last.as_ref()?;
        // counters from the sample before the level, else from its own first one
        let start = self.before.as_ref().or(self.first.as_ref());
        let preemptions = match (last.preemptions, start.and_then(|s| s.preemptions)) {
            (Some(end), Some(begin)) => Some((end - begin).max(0.0)),
            (Some(_), None) => Some(0.0),
            _ => None,
        };
        Some(ServerSummary {
            scheme: last.server.unwrap_or_default().to_string(),
            samples: self.samples,
            running: self.running.mean_max(),
            waiting: self.waiting.mean_max(),
            kv_cache_usage: self.kv.mean_max(),
            prefix_cache_hit_rate: last.prefix_hit_rate(start),
            preemptions,
            gpu: None,
        })
    }
}

/// What the engine and the scraper share: the level running, its fold, and the lines not
/// yet written.
#[derive(Debug, Default)]
pub struct Recorder {
    level: Option<(u32, LevelTelemetry)>,
    last: Option<ServerSample>,
    pending: Vec<TelemetryLine>,
    config: Option<BTreeMap<String, String>>,
}

impl Recorder {
    /// A sample taken `t_ns` after the run began.
    pub fn record(&mut self, t_ns: u64, sample: ServerSample) {
        if self.config.is_none() {
            self.config.clone_from(&sample.config);
        }
        if let Some((_, fold)) = &mut self.level {
            fold.add(&sample);
        }
        self.pending.push(TelemetryLine {
            t_ns,
            level: self.level.as_ref().map(|(i, _)| *i),
            sample: sample.clone(),
        });
        if sample.server.is_some() {
            self.last = Some(sample);
        }
    }

    /// Level `index` begins: the samples from now on are its.
    pub fn begin(&mut self, index: u32) {
        self.level = Some((index, LevelTelemetry::after(self.last.clone())));
    }

    /// The level ends: its summary, if any sample of a known server fell in it.
    pub fn end(&mut self) -> Option<ServerSummary> {
        self.level.take().and_then(|(_, fold)| fold.summary())
    }

    /// The serving configuration the server stated in its first sample that had one.
    pub fn serving_config(&self) -> Option<&BTreeMap<String, String>> {
        self.config.as_ref()
    }

    /// The lines recorded since the last call, for `telemetry.jsonl`.
    pub fn take_lines(&mut self) -> Vec<TelemetryLine> {
        std::mem::take(&mut self.pending)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vllm(
        running: f64,
        waiting: f64,
        kv: f64,
        hits: f64,
        queries: f64,
        pre: f64,
    ) -> ServerSample {
        ServerSample {
            server: Some("vllm"),
            running: Some(running),
            waiting: Some(waiting),
            kv_cache_usage: Some(kv),
            prefix_hits: Some(hits),
            prefix_queries: Some(queries),
            preemptions: Some(pre),
            ..Default::default()
        }
    }

    #[test]
    fn a_level_s_samples_fold_into_its_summary() {
        let mut r = Recorder::default();
        // before the level: counters at 100 hits of 400 queries, 2 preemptions
        r.record(1_000, vllm(0.0, 0.0, 0.0, 100.0, 400.0, 2.0));
        r.begin(3);
        r.record(2_000, vllm(16.0, 4.0, 0.5, 150.0, 500.0, 2.0));
        r.record(3_000, vllm(16.0, 10.0, 0.75, 250.0, 800.0, 5.0));
        // a scrape of a server with no known names is a line, not a sample of the level
        r.record(3_500, ServerSample::default());
        r.record(4_000, vllm(12.0, 1.0, 0.25, 300.0, 900.0, 7.0));
        let s = r.end().unwrap();
        assert_eq!(
            s,
            ServerSummary {
                scheme: "vllm".into(),
                samples: 3,
                running: Some(MeanMax {
                    mean: 44.0 / 3.0,
                    max: 16.0
                }),
                waiting: Some(MeanMax {
                    mean: 5.0,
                    max: 10.0
                }),
                kv_cache_usage: Some(MeanMax {
                    mean: 0.5,
                    max: 0.75
                }),
                // (300 - 100) / (900 - 400)
                prefix_cache_hit_rate: Some(0.4),
                preemptions: Some(5.0),
                gpu: None,
            }
        );
        r.record(5_000, vllm(0.0, 0.0, 0.0, 300.0, 900.0, 7.0));
        let lines = r.take_lines();
        let levels: Vec<Option<u32>> = lines.iter().map(|l| l.level).collect();
        assert_eq!(levels, [None, Some(3), Some(3), Some(3), Some(3), None]);
        assert_eq!(lines[2].t_ns, 3_000);
        assert!(r.take_lines().is_empty());
        let json = serde_json::to_value(&lines[1]).unwrap();
        assert_eq!(
            (
                &json["t_ns"],
                &json["level"],
                &json["server"],
                &json["running"]
            ),
            (&2000.into(), &3.into(), &"vllm".into(), &16.0.into())
        );
        assert!(serde_json::to_value(&lines[0])
            .unwrap()
            .get("level")
            .is_none());
    }

    #[test]
    fn a_level_without_known_samples_has_no_summary() {
        let mut r = Recorder::default();
        r.begin(0);
        r.record(10, ServerSample::default());
        assert_eq!(r.end(), None);
        // no level open: nothing to end
        assert_eq!(r.end(), None);
        // the first level: counters from its own first sample; a gauge the server lacks is
        // absent, not 0
        let mut r = Recorder::default();
        r.begin(0);
        let mut s = vllm(4.0, 0.0, 0.1, 0.0, 0.0, 1.0);
        s.kv_cache_usage = None;
        r.record(10, s);
        r.record(20, vllm(4.0, 0.0, 0.3, 10.0, 40.0, 1.0));
        let sum = r.end().unwrap();
        assert_eq!(sum.preemptions, Some(0.0));
        assert_eq!(sum.prefix_cache_hit_rate, Some(0.25));
        assert_eq!(sum.kv_cache_usage.unwrap().mean, 0.3);
    }
}
