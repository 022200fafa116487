//! `[campaigns.NAME]` (or a campaign file given to `rightsize campaign FILE`): one workload,
//! one SLA search, an optional peak, and the candidates to rank (see docs/campaigns.md).

use super::error::ConfigError;
use super::sla_value::SlaValue;
use crate::values::{Fraction, Positive};
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// A campaign, as written.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CampaignEntry {
    /// What the campaign compares, in a few words (shown above the ranking).
    pub description: Option<String>,
    /// The `[searches.NAME]` every candidate runs (SLAs, bounds, requests per level).
    pub search: Option<String>,
    /// The `[profiles.NAME]` every candidate is sent (default: the config's default).
    pub profile: Option<String>,
    /// SLAs that replace the search plan's on the same metric.
    pub e2e_sla_ms: Option<SlaValue>,
    pub ttft_sla_ms: Option<SlaValue>,
    pub tpot_sla_ms: Option<SlaValue>,
    pub error_rate_sla: Option<SlaValue>,
    /// Requests per level, over the search plan's.
    pub request_count: Option<Positive>,
    /// Search bounds and length, over the search plan's.
    pub concurrency_min: Option<Positive>,
    pub concurrency_max: Option<Positive>,
    pub search_max_iterations: Option<Positive>,
    /// The error-rate limit when no `error_rate_sla` is given (default 0.01).
    pub max_error_rate: Option<Fraction>,
    /// Request lengths, over the profile's.
    pub input_tokens: Option<Positive>,
    pub output_tokens: Option<Positive>,
    /// Peak traffic, in one unit: requests in flight, requests/s or output tokens/s.
    pub peak_concurrency: Option<f64>,
    pub peak_rps: Option<f64>,
    pub peak_output_tps: Option<f64>,
    /// Spare capacity on top of the peak (default 0.2).
    pub headroom: Option<Fraction>,
    /// The candidates, run one after another in this order.
    #[serde(default)]
    pub candidates: Vec<CandidateEntry>,
}

/// One candidate: what it is, where it runs, what it costs.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CandidateEntry {
    /// A name for the ranking, e.g. `g6e.xlarge vLLM max-num-seqs=64 fp8`.
    pub label: String,
    /// An `[endpoints.NAME]` or an `http(s)://` base URL.
    pub endpoint: Option<String>,
    /// Model to send (default: the endpoint's, else the only one the server lists).
    pub model: Option<String>,
    /// The built-in simulator with these model parameters (instead of `endpoint`).
    pub sim: Option<SimModelEntry>,
    /// A finished run folder to rank instead of measuring (a run, or an imported AIPerf /
    /// SageMaker benchmark result).
    pub run: Option<PathBuf>,
    /// Price of one instance per hour (any currency, the same for every candidate).
    pub price_per_hour: f64,
    /// GPUs per instance (for the record and the cost per GPU-hour).
    pub gpus: Option<Positive>,
    /// Free text: serving flags, region, reservation.
    pub notes: Option<String>,
}

/// A simulated candidate's model (see docs/simulator.md); what is not given is the
/// simulator's default.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SimModelEntry {
    pub time_scale: Option<f64>,
    pub max_num_seqs: Option<Positive>,
    pub max_num_batched_tokens: Option<Positive>,
    pub kv_cache_tokens: Option<u64>,
    pub decode_base_ms: Option<f64>,
    pub decode_per_seq_ms: Option<f64>,
    pub prefill_per_token_ms: Option<f64>,
    pub noise: Option<f64>,
    pub noise_period_ms: Option<f64>,
    pub seed: Option<u64>,
    pub model: Option<String>,
}

impl CampaignEntry {
    /// Reads a campaign file (the keys of one `[campaigns.NAME]` at the top level).
    pub fn read(path: &Path) -> Result<CampaignEntry, ConfigError> {
        let name = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError {
            file: name.clone(),
            message: format!("cannot read: {e}"),
        })?;
        toml::from_str(&text).map_err(|e| ConfigError::toml(&name, &text, &e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_campaign_reads_with_inline_simulators() {
        let text = r#"
search = "reference"
peak_concurrency = 500
[[candidates]]
label = "a"
price_per_hour = 1.5
sim = { max_num_seqs = 16, decode_base_ms = 8.0 }
[[candidates]]
label = "b"
endpoint = "http://127.0.0.1:9/v1"
price_per_hour = 3
gpus = 2
"#;
        let c: CampaignEntry = toml::from_str(text).unwrap();
        assert_eq!(c.search.as_deref(), Some("reference"));
        assert_eq!(c.peak_concurrency, Some(500.0));
        assert_eq!(c.candidates.len(), 2);
        let sim = c.candidates[0].sim.as_ref().unwrap();
        assert_eq!(sim.max_num_seqs, Some(Positive(16)));
        assert_eq!(sim.decode_base_ms, Some(8.0));
        assert_eq!(c.candidates[1].gpus, Some(Positive(2)));
        assert_eq!(c.candidates[1].price_per_hour, 3.0);
    }

    #[test]
    fn an_unknown_candidate_key_names_its_line() {
        let text = "[[candidates]]\nlabel = \"a\"\nprice_per_hour = 1\nprise = 2\n";
        let e = toml::from_str::<CampaignEntry>(text)
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 4"), "{e}");
        assert!(e.contains("unknown field `prise`"), "{e}");
    }
}
