//! The server's state recorded per level: every scrape becomes a line of `telemetry.jsonl`
//! (its time on the run's monotonic clock and the level it fell in), and the scrapes taken
//! while a level ran are folded into the level's [`ServerSummary`].
//!
//! The scraper runs beside the levels in a task of its own, so the [`Recorder`] is shared:
//! the scraper's forwarder hands it each sample, the engine's level loop opens and closes
//! levels on it and takes the lines it has to write.

use super::ServerSample;
use crate::record::{kwh_per_million, GpuSummary, MeanMax, ServerSummary};
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

/// A sample's energy counter (J) and the server's generated-token counter, at `t_ns`.
#[derive(Debug, Clone, Copy, PartialEq)]
struct EnergyMark {
    t_ns: u64,
    energy_j: f64,
    tokens: Option<f64>,
}

impl EnergyMark {
    fn of(t_ns: u64, s: &ServerSample) -> Option<EnergyMark> {
        Some(EnergyMark {
            t_ns,
            energy_j: s.gpu.as_ref()?.energy_j()?,
            tokens: s.generation_tokens,
        })
    }
}

/// The GPUs' gauges of one level, folded.
#[derive(Debug, Clone, Default)]
struct GpuFold {
    gpus: u32,
    util: Gauge,
    memory: Gauge,
    power: Gauge,
}

/// The samples of one level, folded.
#[derive(Debug, Clone, Default)]
pub struct LevelTelemetry {
    /// The last sample before the level began: the counters' starting point.
    before: Option<ServerSample>,
    /// The energy counter before the level began.
    before_energy: Option<EnergyMark>,
    first: Option<ServerSample>,
    last: Option<ServerSample>,
    scheme: Option<&'static str>,
    samples: u32,
    running: Gauge,
    waiting: Gauge,
    kv: Gauge,
    gpu: Option<GpuFold>,
    first_energy: Option<EnergyMark>,
    last_energy: Option<EnergyMark>,
}

impl LevelTelemetry {
    /// A level whose counters start from `before` (the last sample taken before it began, at
    /// `t_ns`).
    pub fn after(before: Option<(u64, ServerSample)>) -> Self {
        Self {
            before_energy: before.as_ref().and_then(|(t, s)| EnergyMark::of(*t, s)),
            before: before.map(|(_, s)| s),
            ..Self::default()
        }
    }

    /// Folds one sample, taken at `t_ns`, of a known server or GPU exporter (others are not
    /// counted).
    pub fn add(&mut self, t_ns: u64, s: &ServerSample) {
        if s.server.is_none() && s.gpu.is_none() {
            return;
        }
        self.samples += 1;
        if s.server.is_some() {
            self.scheme = s.server;
            self.running.add(s.running);
            self.waiting.add(s.waiting);
            self.kv.add(s.kv_cache_usage);
            if self.first.is_none() {
                self.first = Some(s.clone());
            }
            self.last = Some(s.clone());
        }
        if let Some(g) = &s.gpu {
            let fold = self.gpu.get_or_insert_with(GpuFold::default);
            fold.gpus = fold.gpus.max(g.gpus.len() as u32);
            fold.util.add(g.util_pct());
            fold.memory.add(g.memory_used_mib());
            fold.power.add(g.power_w());
            if let Some(mark) = EnergyMark::of(t_ns, s) {
                self.first_energy.get_or_insert(mark);
                self.last_energy = Some(mark);
            }
        }
    }

    /// The level's summary, given its length and the output tokens it measured; `None` when
    /// no sample of a known server or GPU exporter fell in it.
    pub fn summary(&self, duration_s: f64, output_tokens: f64) -> Option<ServerSummary> {
        if self.samples == 0 {
            return None;
        }
        // counters from the sample before the level, else from its own first one
        let start = self.before.as_ref().or(self.first.as_ref());
        let preemptions = self.last.as_ref().and_then(|last| {
            match (last.preemptions, start.and_then(|s| s.preemptions)) {
                (Some(end), Some(begin)) => Some((end - begin).max(0.0)),
                (Some(_), None) => Some(0.0),
                _ => None,
            }
        });
        Some(ServerSummary {
            scheme: self.scheme.unwrap_or_default().to_string(),
            samples: self.samples,
            running: self.running.mean_max(),
            waiting: self.waiting.mean_max(),
            kv_cache_usage: self.kv.mean_max(),
            prefix_cache_hit_rate: self.last.as_ref().and_then(|l| l.prefix_hit_rate(start)),
            preemptions,
            gpu: self
                .gpu
                .as_ref()
                .map(|g| self.gpu_summary(g, duration_s, output_tokens)),
            cloudwatch: None,
        })
    }

    /// The GPUs' summary. Energy per output token, in order of preference: the energy
    /// counter's increase over the server's generated-token counter's increase between the
    /// same two samples (the last before the level, else its first, and its last); else the
    /// counter's rate times the level's length over its output tokens; else the mean power
    /// times the length over the tokens.
    fn gpu_summary(&self, g: &GpuFold, duration_s: f64, output_tokens: f64) -> GpuSummary {
        let from = self.before_energy.or(self.first_energy);
        let pair = from.zip(self.last_energy).filter(|(a, b)| b.t_ns > a.t_ns);
        let by_tokens = pair.and_then(|(a, b)| {
            let tokens = b.tokens? - a.tokens?;
            (tokens > 0.0).then(|| (b.energy_j - a.energy_j).max(0.0) / tokens)
        });
        let watts = pair
            .map(|(a, b)| (b.energy_j - a.energy_j).max(0.0) / ((b.t_ns - a.t_ns) as f64 / 1e9))
            .or(g.power.mean_max().map(|p| p.mean));
        let by_time = watts
            .filter(|_| output_tokens > 0.0 && duration_s > 0.0)
            .map(|w| w * duration_s / output_tokens);
        let per_token = by_tokens.or(by_time);
        GpuSummary {
            gpus: g.gpus,
            utilization_pct: g.util.mean_max(),
            memory_used_mib: g.memory.mean_max(),
            power_w: g.power.mean_max(),
            energy_j: per_token.map(|j| j * output_tokens),
            joules_per_output_token: per_token,
            kwh_per_million_output_tokens: per_token.map(kwh_per_million),
        }
    }
}

/// What the engine and the scraper share: the level running, its fold, and the lines not
/// yet written.
#[derive(Debug, Default)]
pub struct Recorder {
    level: Option<(u32, LevelTelemetry)>,
    /// The last sample of a known server or GPU exporter, and when it was taken.
    last: Option<(u64, ServerSample)>,
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
            fold.add(t_ns, &sample);
        }
        self.pending.push(TelemetryLine {
            t_ns,
            level: self.level.as_ref().map(|(i, _)| *i),
            sample: sample.clone(),
        });
        if sample.server.is_some() || sample.gpu.is_some() {
            self.last = Some((t_ns, sample));
        }
    }

    /// Level `index` begins: the samples from now on are its.
    pub fn begin(&mut self, index: u32) {
        self.level = Some((index, LevelTelemetry::after(self.last.clone())));
    }

    /// The level ends, having lasted `duration_s` and measured `output_tokens`: its summary,
    /// if any sample of a known server or GPU exporter fell in it.
    pub fn end(&mut self, duration_s: f64, output_tokens: f64) -> Option<ServerSummary> {
        self.level
            .take()
            .and_then(|(_, fold)| fold.summary(duration_s, output_tokens))
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
        let s = r.end(1.0, 100.0).unwrap();
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
                cloudwatch: None,
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
        assert_eq!(r.end(1.0, 100.0), None);
        // no level open: nothing to end
        assert_eq!(r.end(1.0, 100.0), None);
        // the first level: counters from its own first sample; a gauge the server lacks is
        // absent, not 0
        let mut r = Recorder::default();
        r.begin(0);
        let mut s = vllm(4.0, 0.0, 0.1, 0.0, 0.0, 1.0);
        s.kv_cache_usage = None;
        r.record(10, s);
        r.record(20, vllm(4.0, 0.0, 0.3, 10.0, 40.0, 1.0));
        let sum = r.end(1.0, 100.0).unwrap();
        assert_eq!(sum.preemptions, Some(0.0));
        assert_eq!(sum.prefix_cache_hit_rate, Some(0.25));
        assert_eq!(sum.kv_cache_usage.unwrap().mean, 0.3);
    }

    fn gpu(power: f64, energy_j: Option<f64>, tokens: Option<f64>) -> ServerSample {
        let mut reading = crate::telemetry::gpu::GpuReading {
            gpu: "0".into(),
            util_pct: Some(50.0),
            memory_used_mib: Some(1000.0),
            power_w: Some(power),
            energy_j,
            ..Default::default()
        };
        let second = reading.clone();
        reading.gpu = "1".into();
        ServerSample {
            server: tokens.map(|_| "vllm"),
            generation_tokens: tokens,
            gpu: Some(crate::telemetry::gpu::GpuSample {
                exporter: "dcgm",
                gpus: vec![second, reading],
            }),
            ..Default::default()
        }
    }

    #[test]
    fn joules_per_token_from_the_counters_else_the_rate_else_the_power() {
        // energy over the server's tokens between the sample before and the last: two GPUs,
        // each 100 J -> 400 J, tokens 1,000 -> 1,600: 600 J / 600 tokens
        let mut r = Recorder::default();
        r.record(0, gpu(200.0, Some(100.0), Some(1000.0)));
        r.begin(0);
        r.record(1_000_000_000, gpu(400.0, Some(250.0), Some(1300.0)));
        r.record(2_000_000_000, gpu(600.0, Some(400.0), Some(1600.0)));
        let g = r.end(2.0, 500.0).unwrap().gpu.unwrap();
        assert_eq!(g.gpus, 2);
        assert_eq!(
            g.power_w,
            Some(MeanMax {
                mean: 1000.0,
                max: 1200.0
            })
        );
        assert_eq!(g.utilization_pct.unwrap().mean, 50.0);
        assert_eq!(g.memory_used_mib.unwrap().max, 2000.0);
        assert_eq!(g.joules_per_output_token, Some(1.0));
        assert_eq!(g.energy_j, Some(500.0));
        assert_eq!(g.kwh_per_million_output_tokens, Some(1.0 / 3.6));
        // no token counter: the energy rate (600 J over 2 s = 300 W) times the level's 4 s
        // over its 600 tokens
        let mut r = Recorder::default();
        r.record(0, gpu(200.0, Some(100.0), None));
        r.begin(1);
        r.record(2_000_000_000, gpu(400.0, Some(400.0), None));
        let s = r.end(4.0, 600.0).unwrap();
        assert_eq!(s.scheme, "");
        assert_eq!(s.gpu.unwrap().joules_per_output_token, Some(2.0));
        // no energy counter: the mean power (2 x 300 W) times 4 s over 600 tokens
        let mut r = Recorder::default();
        r.begin(0);
        r.record(1, gpu(300.0, None, None));
        let g = r.end(4.0, 600.0).unwrap().gpu.unwrap();
        assert_eq!(g.joules_per_output_token, Some(4.0));
        // no tokens measured: nothing per token
        let mut r = Recorder::default();
        r.begin(0);
        r.record(1, gpu(300.0, None, None));
        assert_eq!(
            r.end(4.0, 0.0)
                .unwrap()
                .gpu
                .unwrap()
                .joules_per_output_token,
            None
        );
    }
}
