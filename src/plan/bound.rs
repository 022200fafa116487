//! What bounds the server where its curve bends, read from the `server` figures recorded per
//! level (`docs/telemetry.md`, "What bounds the server"): *batch slots* (running flat below the
//! load while requests wait), *KV-cache memory* (the cache full, with preemptions or a queue),
//! *compute* (the batch takes the whole load; each step slows as it grows), or *not known* (no
//! telemetry, or figures that fit no rule). Each comes with its evidence and, as a hint, the
//! server's own setting that would move it.

use crate::metrics::LevelSummary;
use crate::record::ServerSummary;
use serde::Serialize;

/// The share of the load the batch must hold for the server to count as taking all of it.
const WHOLE_LOAD: f64 = 0.9;
/// KV-cache use from which the cache counts as full.
const KV_FULL: f64 = 0.9;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BoundKind {
    BatchSlots,
    KvCache,
    Compute,
    NotKnown,
}

impl BoundKind {
    pub fn label(self) -> &'static str {
        match self {
            BoundKind::BatchSlots => "batch slots",
            BoundKind::KvCache => "KV-cache memory",
            BoundKind::Compute => "compute",
            BoundKind::NotKnown => "not known",
        }
    }
}

/// What bounds the server, at which level, on what evidence.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Bound {
    pub kind: BoundKind,
    /// The concurrency whose figures say it: the first level past the knee, else the highest.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub at: Option<u32>,
    pub evidence: String,
    /// The setting that would move it, in the server's words: a hint, not a promise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

/// The setting that adds batch slots, per server.
fn slots_setting(scheme: &str) -> &'static str {
    match scheme {
        "vllm" => "vLLM's --max-num-seqs",
        "sglang" => "SGLang's --max-running-requests",
        "llamacpp" => "llama.cpp's --parallel",
        "tgi" => "TGI's --max-batch-size",
        _ => "the server's batch-size limit",
    }
}

/// The setting that adds KV-cache memory, per server.
fn kv_setting(scheme: &str) -> &'static str {
    match scheme {
        "vllm" => "vLLM's --gpu-memory-utilization or --kv-cache-dtype fp8",
        "sglang" => "SGLang's --mem-fraction-static or --kv-cache-dtype",
        "llamacpp" => "llama.cpp's --ctx-size or --cache-type-k/--cache-type-v",
        "tgi" => "TGI's --max-batch-total-tokens",
        _ => "the server's KV-cache budget",
    }
}

/// Samples a level needs for a diagnosis.
const MIN_SAMPLES: u32 = 3;

/// The share of the load that must wait, on average, for a queue to mean the slots are full.
const QUEUED_SHARE: f64 = 0.05;

fn pct(v: f64) -> String {
    if v > 0.0 && v < 0.01 {
        return "under 1 %".into();
    }
    format!("{:.0} %", v * 100.0)
}

/// What bounds the server, from the complete closed-loop `levels` that carry server figures,
/// at the first level past `knee` (the load where the curve has bent), else at the highest.
pub fn diagnose(levels: &[LevelSummary], knee: Option<u32>) -> Bound {
    let with = with_engine_figures(levels);
    let pick = knee
        .and_then(|k| with.iter().position(|(l, _)| l.concurrency > k))
        .or_else(|| with.len().checked_sub(1));
    let Some(i) = pick else {
        return no_engine_figures(levels);
    };
    let (level, s) = with[i];
    if s.samples < MIN_SAMPLES {
        return too_few_samples(level.concurrency, s.samples);
    }
    let at = Reading::new(with[i], i.checked_sub(1).map(|j| with[j]));
    at.kv_cache()
        .or_else(|| at.batch_slots())
        .or_else(|| at.compute())
        .unwrap_or_else(|| at.no_rule())
}

/// The complete closed-loop levels with the serving engine's own figures (a level may have
/// only its GPUs' or CloudWatch's), by concurrency.
fn with_engine_figures(levels: &[LevelSummary]) -> Vec<(&LevelSummary, &ServerSummary)> {
    let mut with: Vec<(&LevelSummary, &ServerSummary)> = levels
        .iter()
        .filter(|l| !l.partial && l.open_loop.rate.is_none())
        .filter_map(|l| Some((l, l.server.as_ref()?)))
        .filter(|(_, s)| s.running.is_some() || s.waiting.is_some())
        .collect();
    with.sort_by_key(|(l, _)| l.concurrency);
    with
}

/// Not known: no level has the engine's figures.
fn no_engine_figures(levels: &[LevelSummary]) -> Bound {
    // GPU or CloudWatch figures alone: the batch and the queue are what tell
    let some = levels.iter().any(|l| l.server.is_some());
    Bound {
        kind: BoundKind::NotKnown,
        at: None,
        evidence: if some {
            "the server's batch and queue were not recorded (GPU or CloudWatch figures \
             alone do not say what bounds it; a SageMaker endpoint has no /metrics)"
        } else {
            "no server telemetry was recorded: the server exposes no /metrics \
             rightsize knows, or the run was imported from elsewhere"
        }
        .into(),
        hint: None,
    }
}

/// Not known: the level at `c` has too few samples of the server.
fn too_few_samples(c: u32, samples: u32) -> Bound {
    // one or two samples catch a moment (the level's first round arriving, its last
    // requests draining), not the level
    Bound {
        kind: BoundKind::NotKnown,
        at: Some(c),
        evidence: format!(
            "only {} sample{} of the server at concurrency {c}: too few to tell; longer \
             levels or a shorter --telemetry-interval would",
            samples,
            if samples == 1 { "" } else { "s" }
        ),
        hint: None,
    }
}

/// The server's figures at the level diagnosed, beside the level below it; each rule reads
/// them and names the bound if they fit it.
struct Reading<'a> {
    level: &'a LevelSummary,
    below: Option<(&'a LevelSummary, &'a ServerSummary)>,
    scheme: &'a str,
    c: u32,
    /// Requests running at most.
    running: f64,
    /// Requests waiting on average.
    waiting: f64,
    /// KV-cache use at most.
    kv: Option<f64>,
    preempted: f64,
}

impl<'a> Reading<'a> {
    fn new(
        (level, s): (&'a LevelSummary, &'a ServerSummary),
        below: Option<(&'a LevelSummary, &'a ServerSummary)>,
    ) -> Reading<'a> {
        Reading {
            level,
            below,
            scheme: &s.scheme,
            c: level.concurrency,
            running: s.running.map_or(0.0, |r| r.max),
            waiting: s.waiting.map_or(0.0, |w| w.mean),
            kv: s.kv_cache_usage.map(|k| k.max),
            preempted: s.preemptions.unwrap_or(0.0),
        }
    }

    /// KV-cache memory: the cache full, with preemptions or a queue.
    fn kv_cache(&self) -> Option<Bound> {
        let Reading {
            c,
            running,
            waiting,
            kv,
            preempted,
            ..
        } = *self;
        let full = kv.is_some_and(|k| k >= KV_FULL) && (preempted > 0.0 || waiting >= 1.0);
        if !full {
            return None;
        }
        Some(Bound {
            kind: BoundKind::KvCache,
            at: Some(c),
            evidence: format!(
                "the KV cache reached {} at concurrency {c}, with {preempted:.0} preemptions \
                 and {waiting:.1} requests waiting while {running:.0} ran",
                pct(kv.unwrap_or(0.0))
            ),
            hint: Some(format!(
                "more KV-cache memory would move it ({}; or tensor parallelism)",
                kv_setting(self.scheme)
            )),
        })
    }

    /// Batch slots: running flat below the load while requests wait.
    fn batch_slots(&self) -> Option<Bound> {
        let Reading {
            c,
            running,
            waiting,
            kv,
            ..
        } = *self;
        // a queue while fewer than the load run: the slots are full (a queue at the level's
        // start, all requests arriving at once, with every one of them running later, is not
        // this; nor are the few requests that arrive during a step and join the batch at the
        // next: with 64-token answers about one in 64 streams a step, so a queue must be 5 %
        // of the load)
        let queued = running < f64::from(c) && waiting >= (QUEUED_SHARE * f64::from(c)).max(1.0);
        if !queued {
            return None;
        }
        let flat = self
            .below
            .and_then(|(l, s)| Some((l.concurrency, s.running?)))
            .map_or(String::new(), |(lc, r)| format!(" (at {lc}: {:.0})", r.max));
        Some(Bound {
            kind: BoundKind::BatchSlots,
            at: Some(c),
            evidence: format!(
                "running flat at {running:.0}{flat} at concurrency {c} while {waiting:.1} \
                 requests wait{}",
                kv.map_or(String::new(), |k| format!(
                    ", the KV cache at most {}",
                    pct(k)
                ))
            ),
            hint: Some(format!(
                "more batch slots would move it ({})",
                slots_setting(self.scheme)
            )),
        })
    }

    /// Compute: the batch takes the whole load, and each step slows as it grows.
    fn compute(&self) -> Option<Bound> {
        let Reading {
            c,
            running,
            waiting,
            ..
        } = *self;
        let whole_load = running >= WHOLE_LOAD * f64::from(c);
        if !whole_load {
            return None;
        }
        let itl = |l: &LevelSummary| l.inter_token_latency.as_ref().map(|s| s.p50);
        let slower = self
            .below
            .and_then(|(l, _)| Some((l.concurrency, itl(l)?, itl(self.level)?)))
            .map_or(String::new(), |(lc, a, b)| {
                format!("; inter-token latency p50 {a:.1} ms at {lc}, {b:.1} ms at {c}")
            });
        Some(Bound {
            kind: BoundKind::Compute,
            at: Some(c),
            evidence: format!(
                "the batch takes the whole load ({running:.0} running at concurrency {c}, \
                 {waiting:.1} waiting) and each step slows as it grows{slower}"
            ),
            hint: Some(
                "a faster GPU or tensor parallelism would move it; more batch slots would not"
                    .into(),
            ),
        })
    }

    /// Not known: the figures fit no rule.
    fn no_rule(&self) -> Bound {
        let Reading {
            c,
            running,
            waiting,
            ..
        } = *self;
        Bound {
            kind: BoundKind::NotKnown,
            at: Some(c),
            evidence: format!(
                "the server's figures fit no rule: {running:.0} running and {waiting:.1} \
                 waiting at concurrency {c}"
            ),
            hint: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::fixtures;
    use crate::record::MeanMax;

    fn mm(mean: f64, max: f64) -> Option<MeanMax> {
        Some(MeanMax { mean, max })
    }

    /// A level at `c` whose server ran `running` (max), queued `waiting` (mean), filled the
    /// KV cache to `kv` (max) and preempted `pre` sequences; inter-token p50 `itl` ms.
    fn level(c: u32, running: f64, waiting: f64, kv: f64, pre: f64, itl: f64) -> LevelSummary {
        let mut l = fixtures::level(0, c, u64::from(4 * c), 10, 100, 16, None);
        l.server = Some(ServerSummary {
            scheme: "vllm".into(),
            samples: 3,
            running: mm(running * 0.9, running),
            waiting: mm(waiting, waiting * 1.5),
            kv_cache_usage: mm(kv * 0.8, kv),
            prefix_cache_hit_rate: None,
            preemptions: Some(pre),
            gpu: None,
            cloudwatch: None,
        });
        if let Some(s) = l.inter_token_latency.as_mut() {
            s.p50 = itl;
        }
        l
    }

    /// (levels, knee, kind, at, what the evidence says)
    type Case<'a> = (
        &'a [LevelSummary],
        Option<u32>,
        BoundKind,
        Option<u32>,
        &'a str,
    );

    #[test]
    fn diagnoses_table() {
        let slots = vec![
            level(8, 8.0, 0.0, 0.1, 0.0, 10.0),
            level(16, 16.0, 0.0, 0.2, 0.0, 11.0),
            level(32, 16.0, 16.0, 0.2, 0.0, 11.0),
        ];
        let kv = vec![
            level(16, 16.0, 0.0, 0.5, 0.0, 10.0),
            level(32, 24.0, 8.0, 1.0, 12.0, 12.0),
        ];
        let compute = vec![
            level(8, 8.0, 0.0, 0.05, 0.0, 10.0),
            level(16, 16.0, 0.0, 0.1, 0.0, 19.0),
            level(32, 32.0, 0.0, 0.2, 0.0, 37.0),
        ];
        let idle = vec![level(32, 10.0, 0.0, 0.1, 0.0, 10.0)];
        // one request past 16 slots: 16 run, one waits
        let just_past = vec![
            level(16, 16.0, 0.0, 0.1, 0.0, 10.0),
            level(17, 16.0, 1.0, 0.1, 0.0, 10.0),
        ];
        // every request runs (a queue only as they arrive at once): compute
        let all_run = vec![level(256, 256.0, 2.0, 0.3, 0.0, 30.0)];
        // one request between its arrival and the next step, at 64 of 256 slots: under 5 % of
        // the load waits, so not the slots
        let arriving = vec![level(64, 63.0, 1.0, 0.02, 0.0, 12.0)];
        // one sample: a moment of the level, not the level
        let mut one_sample = vec![level(128, 32.0, 24.0, 0.02, 0.0, 12.0)];
        if let Some(s) = one_sample[0].server.as_mut() {
            s.samples = 1;
        }
        // the GPUs' figures alone: no batch, no queue
        let mut gpu_only = vec![level(32, 0.0, 0.0, 0.0, 0.0, 10.0)];
        gpu_only[0].server = Some(ServerSummary {
            samples: 5,
            gpu: Some(crate::record::GpuSummary::default()),
            ..Default::default()
        });
        let cases: [Case; 11] = [
            (
                &arriving,
                None,
                BoundKind::Compute,
                Some(64),
                "63 running at concurrency 64, 1.0 waiting",
            ),
            (
                &one_sample,
                None,
                BoundKind::NotKnown,
                Some(128),
                "only 1 sample of the server at concurrency 128: too few to tell",
            ),
            (
                &gpu_only,
                None,
                BoundKind::NotKnown,
                None,
                "the server's batch and queue were not recorded",
            ),
            (
                &just_past,
                Some(16),
                BoundKind::BatchSlots,
                Some(17),
                "running flat at 16",
            ),
            (
                &all_run,
                None,
                BoundKind::Compute,
                Some(256),
                "256 running at concurrency 256",
            ),
            (
                &slots,
                Some(16),
                BoundKind::BatchSlots,
                Some(32),
                "running flat at 16 (at 16: 16) at concurrency 32 while 16.0 requests wait",
            ),
            // no knee: the highest level speaks
            (
                &slots,
                None,
                BoundKind::BatchSlots,
                Some(32),
                "the KV cache at most 20 %",
            ),
            (
                &kv,
                Some(16),
                BoundKind::KvCache,
                Some(32),
                "the KV cache reached 100 % at concurrency 32, with 12 preemptions",
            ),
            (
                &compute,
                Some(16),
                BoundKind::Compute,
                Some(32),
                "inter-token latency p50 19.0 ms at 16, 37.0 ms at 32",
            ),
            (&idle, None, BoundKind::NotKnown, Some(32), "fit no rule"),
            (&[], None, BoundKind::NotKnown, None, "no server telemetry"),
        ];
        for (levels, knee, kind, at, said) in cases {
            let b = diagnose(levels, knee);
            assert_eq!((b.kind, b.at), (kind, at), "{b:?}");
            assert!(
                b.evidence.contains(said),
                "{said:?} not in {:?}",
                b.evidence
            );
        }
        assert!(diagnose(&slots, None)
            .hint
            .unwrap()
            .contains("vLLM's --max-num-seqs"));
        assert!(diagnose(&kv, None)
            .hint
            .unwrap()
            .contains("--gpu-memory-utilization"));
        // a level without server figures is not read; a knee past every level falls back to
        // the highest
        let mut no_server = slots.clone();
        no_server[2].server = None;
        let b = diagnose(&no_server, Some(64));
        assert_eq!((b.kind, b.at), (BoundKind::Compute, Some(16)));
    }
}
