//! The server's own figures from its `/metrics`, under the names vLLM, SGLang, llama.cpp and
//! TGI use. A server without `/metrics`, or with other names, is normal: what is found is
//! shown and what is not is said.

use super::prometheus::Sample;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// vLLM's serving configuration: a gauge of 1 whose labels are the settings.
const VLLM_CONFIG: &str = "vllm:cache_config_info";

/// One scrape, reduced to what the dashboard shows. `None` means the server did not expose it.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ServerSample {
    /// Which naming scheme matched (`vllm`, `sglang`, `llamacpp`, `tgi`); read back (a served
    /// run's events) as the scheme of that name, `None` for a name no scheme has.
    pub server: Option<&'static str>,
    pub running: Option<f64>,
    pub waiting: Option<f64>,
    /// KV-cache use, 0-1.
    pub kv_cache_usage: Option<f64>,
    /// Prefix-cache hits and queries (tokens, counters), or a hit rate gauge.
    pub prefix_hits: Option<f64>,
    pub prefix_queries: Option<f64>,
    pub prefix_hit_rate_gauge: Option<f64>,
    pub preemptions: Option<f64>,
    pub generation_tokens: Option<f64>,
    /// The GPUs' figures from `--gpu-metrics`, scraped at the same tick.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu: Option<super::gpu::GpuSample>,
    /// The serving configuration the server states (vLLM's `vllm:cache_config_info`
    /// labels), recorded once in `run.json`, not with every sample.
    #[serde(skip)]
    pub config: Option<BTreeMap<String, String>>,
}

struct Names {
    server: &'static str,
    running: &'static str,
    waiting: &'static str,
    kv: Option<&'static str>,
    hits: Option<&'static str>,
    queries: Option<&'static str>,
    hit_rate: Option<&'static str>,
    preemptions: Option<&'static str>,
    generated: Option<&'static str>,
}

const SCHEMES: [Names; 4] = [
    Names {
        server: "vllm",
        running: "vllm:num_requests_running",
        waiting: "vllm:num_requests_waiting",
        kv: Some("vllm:kv_cache_usage_perc"),
        hits: Some("vllm:prefix_cache_hits"),
        queries: Some("vllm:prefix_cache_queries"),
        hit_rate: None,
        preemptions: Some("vllm:num_preemptions"),
        generated: Some("vllm:generation_tokens"),
    },
    Names {
        server: "sglang",
        running: "sglang:num_running_reqs",
        waiting: "sglang:num_queue_reqs",
        kv: Some("sglang:token_usage"),
        hits: None,
        queries: None,
        hit_rate: Some("sglang:cache_hit_rate"),
        preemptions: None,
        generated: Some("sglang:generation_tokens"),
    },
    Names {
        server: "llamacpp",
        running: "llamacpp:requests_processing",
        waiting: "llamacpp:requests_deferred",
        // only builds before the unified KV cache expose it; no prefix-cache counters at all
        kv: Some("llamacpp:kv_cache_usage_ratio"),
        hits: None,
        queries: None,
        hit_rate: None,
        preemptions: None,
        generated: Some("llamacpp:tokens_predicted"),
    },
    Names {
        server: "tgi",
        running: "tgi_batch_current_size",
        waiting: "tgi_queue_size",
        kv: None,
        hits: None,
        queries: None,
        hit_rate: None,
        preemptions: None,
        generated: None,
    },
];

/// Sum of every series called `name` (or `name_total`, as counters are exposed), across
/// labels (several engines add up).
fn sum(samples: &[Sample], name: &str) -> Option<f64> {
    let total = format!("{name}_total");
    let mut found = None;
    for s in samples {
        if s.name == name || s.name == total {
            *found.get_or_insert(0.0) += s.value;
        }
    }
    found
}

/// A [`ServerSample`] as it is read back (a served run's events): the scheme by its name.
/// `From<Wire>` names every field of the sample, so a field added there and not here does
/// not compile.
#[derive(Deserialize)]
struct Wire {
    server: Option<String>,
    running: Option<f64>,
    waiting: Option<f64>,
    kv_cache_usage: Option<f64>,
    prefix_hits: Option<f64>,
    prefix_queries: Option<f64>,
    prefix_hit_rate_gauge: Option<f64>,
    preemptions: Option<f64>,
    generation_tokens: Option<f64>,
    #[serde(default)]
    gpu: Option<super::gpu::GpuSample>,
}

// by hand, through `Wire`: a derived one would hold the input borrowed for the `&'static str`
impl<'de> Deserialize<'de> for ServerSample {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Wire::deserialize(d).map(ServerSample::from)
    }
}

impl From<Wire> for ServerSample {
    fn from(w: Wire) -> Self {
        ServerSample {
            server: w
                .server
                .and_then(|n| SCHEMES.iter().map(|s| s.server).find(|s| *s == n)),
            running: w.running,
            waiting: w.waiting,
            kv_cache_usage: w.kv_cache_usage,
            prefix_hits: w.prefix_hits,
            prefix_queries: w.prefix_queries,
            prefix_hit_rate_gauge: w.prefix_hit_rate_gauge,
            preemptions: w.preemptions,
            generation_tokens: w.generation_tokens,
            gpu: w.gpu,
            config: None,
        }
    }
}

/// Reduces a scrape to the figures rightsize knows by name.
pub fn reduce(samples: &[Sample]) -> ServerSample {
    for n in &SCHEMES {
        let running = sum(samples, n.running);
        let waiting = sum(samples, n.waiting);
        if running.is_none() && waiting.is_none() {
            continue;
        }
        let get = |name: Option<&str>| name.and_then(|name| sum(samples, name));
        // KV use is a 0-1 gauge per engine: average, not add
        let engines = samples
            .iter()
            .filter(|s| Some(s.name.as_str()) == n.kv)
            .count();
        return ServerSample {
            server: Some(n.server),
            running,
            waiting,
            kv_cache_usage: get(n.kv).map(|v| v / engines.max(1) as f64),
            prefix_hits: get(n.hits),
            prefix_queries: get(n.queries),
            prefix_hit_rate_gauge: get(n.hit_rate),
            preemptions: get(n.preemptions),
            generation_tokens: get(n.generated),
            gpu: None,
            config: config(samples),
        };
    }
    ServerSample::default()
}

/// The labels of the server's configuration series, the engine index left out.
fn config(samples: &[Sample]) -> Option<BTreeMap<String, String>> {
    let s = samples.iter().find(|s| s.name == VLLM_CONFIG)?;
    Some(
        s.labels
            .iter()
            .filter(|(k, _)| k != "engine")
            .cloned()
            .collect(),
    )
}

impl ServerSample {
    /// Prefix-cache hit rate (0-1): from the counters' change since `earlier` when both have
    /// them, else the counters since start, else the server's own gauge.
    pub fn prefix_hit_rate(&self, earlier: Option<&ServerSample>) -> Option<f64> {
        if let (Some(h), Some(q)) = (self.prefix_hits, self.prefix_queries) {
            let (h0, q0) = earlier
                .and_then(|e| Some((e.prefix_hits?, e.prefix_queries?)))
                .unwrap_or((0.0, 0.0));
            let dq = q - q0;
            return (dq > 0.0).then(|| (h - h0) / dq);
        }
        self.prefix_hit_rate_gauge
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::telemetry::prometheus::parse;

    #[test]
    fn schemes_table() {
        let vllm = parse(
            "vllm:num_requests_running{engine=\"0\"} 3\nvllm:num_requests_running{engine=\"1\"} 2\n\
             vllm:num_requests_waiting{engine=\"0\"} 7\nvllm:kv_cache_usage_perc{engine=\"0\"} 0.5\n\
             vllm:kv_cache_usage_perc{engine=\"1\"} 0.25\nvllm:prefix_cache_hits_total 30\n\
             vllm:prefix_cache_queries_total 120\nvllm:num_preemptions_total 4\n",
        );
        let s = reduce(&vllm);
        assert_eq!(s.server, Some("vllm"));
        assert_eq!(s.running, Some(5.0));
        assert_eq!(s.waiting, Some(7.0));
        assert_eq!(s.kv_cache_usage, Some(0.375));
        assert_eq!(s.prefix_hit_rate(None), Some(0.25));
        assert_eq!(s.preemptions, Some(4.0));
        assert_eq!(s.config, None);
        let with_config = reduce(&parse(
            "vllm:num_requests_running 1\n\
             vllm:cache_config_info{block_size=\"16\",enable_prefix_caching=\"True\",\
             engine=\"0\",gpu_memory_utilization=\"0.9\",num_gpu_blocks=\"2048\"} 1.0\n",
        ));
        let config = with_config.config.unwrap();
        assert_eq!(
            config.into_iter().collect::<Vec<_>>(),
            [
                ("block_size".to_string(), "16".to_string()),
                ("enable_prefix_caching".into(), "True".into()),
                ("gpu_memory_utilization".into(), "0.9".into()),
                ("num_gpu_blocks".into(), "2048".into()),
            ]
        );
        let earlier = ServerSample {
            prefix_hits: Some(10.0),
            prefix_queries: Some(20.0),
            ..Default::default()
        };
        assert_eq!(s.prefix_hit_rate(Some(&earlier)), Some(0.2));

        let sg = reduce(&parse(
            "sglang:num_running_reqs 8\nsglang:num_queue_reqs 1\nsglang:token_usage 0.9\n\
             sglang:cache_hit_rate 0.6\n",
        ));
        assert_eq!(
            (
                sg.server,
                sg.running,
                sg.kv_cache_usage,
                sg.prefix_hit_rate(None)
            ),
            (Some("sglang"), Some(8.0), Some(0.9), Some(0.6))
        );
        // as llama-server writes them (no labels; the KV pair only in older builds)
        let ll = reduce(&parse(
            "llamacpp:prompt_tokens_total 200\nllamacpp:tokens_predicted_total 80\n\
             llamacpp:n_decode_total 40\nllamacpp:n_busy_slots_per_decode 2\n\
             llamacpp:kv_cache_usage_ratio 0.5\nllamacpp:kv_cache_tokens 2048\n\
             llamacpp:requests_processing 2\nllamacpp:requests_deferred 3\n",
        ));
        assert_eq!(
            (
                ll.server,
                ll.running,
                ll.waiting,
                ll.kv_cache_usage,
                ll.generation_tokens
            ),
            (
                Some("llamacpp"),
                Some(2.0),
                Some(3.0),
                Some(0.5),
                Some(80.0)
            )
        );
        assert_eq!(ll.prefix_hit_rate(None), None);
        let current = reduce(&parse(
            "llamacpp:requests_processing 1\nllamacpp:requests_deferred 0\n",
        ));
        assert_eq!(current.kv_cache_usage, None);
        let tgi = reduce(&parse("tgi_batch_current_size 4\ntgi_queue_size 9\n"));
        assert_eq!((tgi.server, tgi.waiting), (Some("tgi"), Some(9.0)));
        assert_eq!(reduce(&parse("other_metric 1\n")), ServerSample::default());
    }
}
