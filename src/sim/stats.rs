//! Live counters the scheduler publishes after every step, their snapshot ([`SimStats`]), and
//! their rendering as Prometheus text with vLLM's metric names.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// vLLM's bucket bounds for `time_to_first_token_seconds`, in seconds.
pub const TTFT_BUCKETS_S: &[f64] = &[
    0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0,
    20.0, 40.0, 80.0, 160.0, 640.0, 2560.0,
];

/// Counters and gauges shared between the scheduler thread (writer) and HTTP tasks (readers).
#[derive(Debug, Default)]
pub struct SharedMetrics {
    pub(crate) running: AtomicU64,
    pub(crate) waiting: AtomicU64,
    pub(crate) kv_used_tokens: AtomicU64,
    pub(crate) prompt_tokens: AtomicU64,
    pub(crate) generation_tokens: AtomicU64,
    pub(crate) prefix_queries: AtomicU64,
    pub(crate) prefix_hits: AtomicU64,
    pub(crate) preemptions: AtomicU64,
    pub(crate) finished: AtomicU64,
    pub(crate) aborted: AtomicU64,
    pub(crate) steps: AtomicU64,
    /// Running sequences summed over the steps (llama.cpp's busy slots per decode).
    pub(crate) busy_slot_steps: AtomicU64,
    /// The modelled GPU's power, energy and utilisation.
    pub(crate) gpu: super::gpu::GpuMeter,
    /// Each wall-clock minute's requests, latency and GPU time (SageMaker's CloudWatch view).
    pub(crate) minutes: super::minutes::MinuteHistory,
    /// Requests accepted by the HTTP layer (numbered 1, 2, 3...).
    pub(crate) requests: AtomicU64,
    /// Requests handed to the scheduler and not yet running for the first time.
    pub(crate) pending: AtomicU64,
    /// Sum of TTFTs as `f64` bits, in seconds (only the scheduler writes it).
    ttft_sum_bits: AtomicU64,
    ttft_count: AtomicU64,
    /// Non-cumulative bucket counts; the last is `+Inf`.
    ttft_buckets: [AtomicU64; 23],
    /// SageMaker requests whose SigV4 signature matched the test credentials, and those
    /// whose signature did not.
    #[cfg(feature = "sagemaker")]
    pub(crate) sagemaker_signed: AtomicU64,
    #[cfg(feature = "sagemaker")]
    pub(crate) sagemaker_bad_signatures: AtomicU64,
}

impl SharedMetrics {
    /// Records one time to first token, in seconds (scheduler thread only).
    pub(crate) fn observe_ttft(&self, seconds: f64) {
        let i = TTFT_BUCKETS_S
            .iter()
            .position(|b| seconds <= *b)
            .unwrap_or(TTFT_BUCKETS_S.len());
        self.ttft_buckets[i].fetch_add(1, Relaxed);
        let sum = f64::from_bits(self.ttft_sum_bits.load(Relaxed)) + seconds;
        self.ttft_sum_bits.store(sum.to_bits(), Relaxed);
        self.ttft_count.fetch_add(1, Relaxed);
    }

    /// A consistent-enough snapshot of every counter.
    pub fn snapshot(&self, kv_cache_tokens: u64) -> SimStats {
        let kv = self.kv_used_tokens.load(Relaxed);
        SimStats {
            running: self.running.load(Relaxed),
            waiting: self.waiting.load(Relaxed),
            kv_used_tokens: kv,
            kv_cache_usage: kv as f64 / kv_cache_tokens.max(1) as f64,
            requests_received: self.requests.load(Relaxed),
            requests_finished: self.finished.load(Relaxed),
            requests_aborted: self.aborted.load(Relaxed),
            prompt_tokens_total: self.prompt_tokens.load(Relaxed),
            generation_tokens_total: self.generation_tokens.load(Relaxed),
            prefix_cache_queries_total: self.prefix_queries.load(Relaxed),
            prefix_cache_hits_total: self.prefix_hits.load(Relaxed),
            preemptions_total: self.preemptions.load(Relaxed),
            steps_total: self.steps.load(Relaxed),
        }
    }

    /// The Prometheus text exposition (format 0.0.4) with vLLM's names and labels.
    pub fn render_prometheus(&self, model: &str, kv_cache_tokens: u64) -> String {
        let s = self.snapshot(kv_cache_tokens);
        let model = model.replace('\\', "\\\\").replace('"', "\\\"");
        let labels = format!("engine=\"0\",model_name=\"{model}\"");
        // as vLLM's Python client writes format 0.0.4: a counter's HELP and TYPE lines name
        // the series with its `_total` suffix
        let mut out = super::exposition::write(
            &[
                (
                    "vllm:num_requests_running",
                    "gauge",
                    "Number of requests in model execution batches.",
                    s.running.to_string(),
                ),
                (
                    "vllm:num_requests_waiting",
                    "gauge",
                    "Number of requests waiting to be processed.",
                    s.waiting.to_string(),
                ),
                (
                    "vllm:kv_cache_usage_perc",
                    "gauge",
                    "KV-cache usage. 1 means 100 percent usage.",
                    format!("{}", s.kv_cache_usage),
                ),
                (
                    "vllm:prefix_cache_queries_total",
                    "counter",
                    "Prefix cache queries, in terms of number of queried tokens.",
                    s.prefix_cache_queries_total.to_string(),
                ),
                (
                    "vllm:prefix_cache_hits_total",
                    "counter",
                    "Prefix cache hits, in terms of number of cached tokens.",
                    s.prefix_cache_hits_total.to_string(),
                ),
                (
                    "vllm:prompt_tokens_total",
                    "counter",
                    "Number of prefill tokens processed.",
                    s.prompt_tokens_total.to_string(),
                ),
                (
                    "vllm:generation_tokens_total",
                    "counter",
                    "Number of generation tokens processed.",
                    s.generation_tokens_total.to_string(),
                ),
                (
                    "vllm:num_preemptions_total",
                    "counter",
                    "Cumulative number of preemptions from the engine.",
                    s.preemptions_total.to_string(),
                ),
            ],
            &labels,
        );
        let name = "vllm:time_to_first_token_seconds";
        let _ = writeln!(
            out,
            "# HELP {name} Histogram of time to first token in seconds."
        );
        let _ = writeln!(out, "# TYPE {name} histogram");
        let mut cumulative = 0u64;
        for (i, bound) in TTFT_BUCKETS_S.iter().enumerate() {
            cumulative += self.ttft_buckets[i].load(Relaxed);
            let _ = writeln!(
                out,
                "{name}_bucket{{{labels},le=\"{bound:?}\"}} {cumulative}"
            );
        }
        cumulative += self.ttft_buckets[TTFT_BUCKETS_S.len()].load(Relaxed);
        let _ = writeln!(out, "{name}_bucket{{{labels},le=\"+Inf\"}} {cumulative}");
        let sum = f64::from_bits(self.ttft_sum_bits.load(Relaxed));
        let _ = writeln!(out, "{name}_sum{{{labels}}} {sum:?}");
        let _ = writeln!(
            out,
            "{name}_count{{{labels}}} {}",
            self.ttft_count.load(Relaxed)
        );
        #[cfg(feature = "sagemaker")]
        {
            let (signed, bad) = (
                self.sagemaker_signed.load(Relaxed),
                self.sagemaker_bad_signatures.load(Relaxed),
            );
            if signed + bad > 0 {
                let _ = writeln!(
                    out,
                    "rightsize_sim:sagemaker_signed_requests_total {signed}\n\
                     rightsize_sim:sagemaker_bad_signatures_total {bad}"
                );
            }
        }
        out
    }
}

impl SharedMetrics {
    /// The Prometheus text llama.cpp's server (`llama-server --metrics`) writes: its names,
    /// no labels, counters with `_total`. The KV-cache pair is what builds before the unified
    /// cache exposed; llama.cpp keeps no prefix-cache counters.
    pub fn render_llamacpp(&self, kv_cache_tokens: u64) -> String {
        let s = self.snapshot(kv_cache_tokens);
        let steps = s.steps_total;
        let busy = self.busy_slot_steps.load(Relaxed);
        let per_decode = if steps == 0 {
            0.0
        } else {
            busy as f64 / steps as f64
        };
        super::exposition::write(
            &[
                (
                    "llamacpp:prompt_tokens_total",
                    "counter",
                    "Number of prompt tokens processed.",
                    s.prompt_tokens_total.to_string(),
                ),
                (
                    "llamacpp:tokens_predicted_total",
                    "counter",
                    "Number of generation tokens processed.",
                    s.generation_tokens_total.to_string(),
                ),
                (
                    "llamacpp:n_decode_total",
                    "counter",
                    "Total number of llama_decode() calls",
                    steps.to_string(),
                ),
                (
                    "llamacpp:n_busy_slots_per_decode",
                    "gauge",
                    "Average number of busy slots per llama_decode() call",
                    format!("{per_decode}"),
                ),
                (
                    "llamacpp:kv_cache_usage_ratio",
                    "gauge",
                    "KV-cache usage. 1 means 100 percent usage.",
                    format!("{}", s.kv_cache_usage),
                ),
                (
                    "llamacpp:kv_cache_tokens",
                    "gauge",
                    "KV-cache tokens.",
                    s.kv_used_tokens.to_string(),
                ),
                (
                    "llamacpp:requests_processing",
                    "gauge",
                    "Number of requests processing.",
                    s.running.to_string(),
                ),
                (
                    "llamacpp:requests_deferred",
                    "gauge",
                    "Number of requests deferred.",
                    s.waiting.to_string(),
                ),
            ],
            "",
        )
    }
}

/// A snapshot of the simulator's state and totals.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SimStats {
    /// Sequences in the running batch now.
    pub running: u64,
    /// Sequences in the waiting queue now (including preempted ones).
    pub waiting: u64,
    /// KV-cache tokens held by running sequences now.
    pub kv_used_tokens: u64,
    /// KV-cache use as a fraction of capacity (0-1).
    pub kv_cache_usage: f64,
    /// Inference requests accepted by the HTTP layer (valid requests, faulted or not).
    pub requests_received: u64,
    /// Sequences that produced their last token.
    pub requests_finished: u64,
    /// Sequences dropped because their client went away (or a fault ended the stream).
    pub requests_aborted: u64,
    /// Prompt tokens prefilled (each request counted once), in tokens.
    pub prompt_tokens_total: u64,
    /// Output tokens generated, in tokens.
    pub generation_tokens_total: u64,
    /// Prompt tokens looked up in the prefix cache, in tokens.
    pub prefix_cache_queries_total: u64,
    /// Prompt tokens found in the prefix cache, in tokens.
    pub prefix_cache_hits_total: u64,
    /// Sequences preempted (KV freed, sent back to the waiting queue).
    pub preemptions_total: u64,
    /// Scheduler steps run.
    pub steps_total: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ttft_histogram_is_cumulative() {
        let m = SharedMetrics::default();
        m.observe_ttft(0.003);
        m.observe_ttft(0.2);
        m.observe_ttft(5000.0);
        let text = m.render_prometheus("m", 100);
        assert!(text.contains("le=\"0.005\"} 1\n"), "{text}");
        assert!(text.contains("le=\"0.25\"} 2\n"));
        assert!(text.contains("le=\"+Inf\"} 3\n"));
        assert!(text
            .contains("vllm:time_to_first_token_seconds_count{engine=\"0\",model_name=\"m\"} 3"));
    }

    #[test]
    fn llamacpp_names_and_busy_slots_per_decode() {
        let m = SharedMetrics::default();
        m.running.store(3, Relaxed);
        m.waiting.store(5, Relaxed);
        m.kv_used_tokens.store(25, Relaxed);
        m.generation_tokens.store(40, Relaxed);
        m.steps.store(4, Relaxed);
        m.busy_slot_steps.store(10, Relaxed);
        let text = m.render_llamacpp(100);
        for line in [
            "llamacpp:requests_processing 3\n",
            "llamacpp:requests_deferred 5\n",
            "llamacpp:kv_cache_usage_ratio 0.25\n",
            "llamacpp:kv_cache_tokens 25\n",
            "llamacpp:tokens_predicted_total 40\n",
            "llamacpp:n_decode_total 4\n",
            "llamacpp:n_busy_slots_per_decode 2.5\n",
        ] {
            assert!(text.contains(line), "{line} in {text}");
        }
        assert!(!text.contains("vllm:"));
    }
}
