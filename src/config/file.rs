//! The TOML config file: its schema, loading with errors that name the file, line and key,
//! and layering (shipped defaults, then the user's file, entries replaced by name).

use super::campaign::CampaignEntry;
use super::error::ConfigError;
use super::sla_value::SlaValue;
use crate::endpoint::Api;
use crate::values::{DurationValue, Fraction, Positive};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The shipped default config, embedded so the binary works from anywhere.
pub const SHIPPED: &str = include_str!("../../config/rightsize.toml");
/// How the shipped config is named in error messages.
pub const SHIPPED_NAME: &str = "<built-in config/rightsize.toml>";

/// A config file, as written.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    #[serde(default)]
    pub defaults: Defaults,
    #[serde(default)]
    pub endpoints: BTreeMap<String, EndpointEntry>,
    #[serde(default)]
    pub profiles: BTreeMap<String, ProfileEntry>,
    #[serde(default)]
    pub sweeps: BTreeMap<String, SweepEntry>,
    #[serde(default)]
    pub searches: BTreeMap<String, SearchEntry>,
    /// `[campaigns.NAME]`: candidates ranked by cost per token at the SLA (docs/campaigns.md).
    #[serde(default)]
    pub campaigns: BTreeMap<String, CampaignEntry>,
}

/// `[defaults]`: what to use when a flag does not say.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Defaults {
    pub endpoint: Option<String>,
    pub profile: Option<String>,
    pub sweep: Option<String>,
    /// A `[searches.NAME]` for `rightsize search` without `--plan`.
    pub search: Option<String>,
    /// Per-request timeout.
    pub timeout: Option<DurationValue>,
    /// Where runs are saved (default: the platform data directory).
    pub results_dir: Option<PathBuf>,
    /// The error-rate limit every analysis applies when no error-rate SLA is given
    /// (default 0.01).
    pub max_error_rate: Option<Fraction>,
    /// The server's prefix cache before each level: `"keep"` (the default) or `"reset"`
    /// (`--prefix-cache`).
    pub prefix_cache: Option<crate::record::PrefixCachePolicy>,
    /// A POST that empties the prefix cache instead of the server's own endpoint
    /// (`--prefix-cache-reset-url`; checked as read).
    #[serde(default, deserialize_with = "checked_url")]
    pub prefix_cache_reset_url: Option<String>,
}

/// What serves an endpoint.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EndpointKind {
    /// An OpenAI-compatible HTTP server at `url`.
    #[default]
    Openai,
    /// The built-in simulator, started in-process.
    Simulator,
    /// An Amazon SageMaker AI endpoint, called through the AWS SDK (docs/sagemaker.md).
    Sagemaker,
}

/// `[endpoints.NAME]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EndpointEntry {
    #[serde(default)]
    pub kind: EndpointKind,
    /// Base URL including the API prefix, e.g. `http://127.0.0.1:8000/v1` (checked as read).
    #[serde(default, deserialize_with = "checked_url")]
    pub url: Option<String>,
    pub model: Option<String>,
    pub api: Option<Api>,
    /// Name of the environment variable that holds the bearer token.
    pub api_key_env: Option<String>,
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// Send `ignore_eos` and `min_tokens` for an exact output length (default true).
    pub exact_output_length: Option<bool>,
    /// Simulator only: how many times faster than real time the model runs.
    pub time_scale: Option<f64>,
    /// Calibrate prompt lengths against the server's count in pre-flight (default: on for
    /// HTTP endpoints, off for the simulator).
    pub calibrate: Option<bool>,
    /// SageMaker only (kind = "sagemaker"): the endpoint's name.
    pub endpoint_name: Option<String>,
    /// SageMaker only: AWS region (default: the SDK's chain, `AWS_REGION` or the profile's).
    pub region: Option<String>,
    /// SageMaker only: AWS named profile (credentials never go in this file).
    pub profile: Option<String>,
    /// SageMaker only: the inference component to invoke.
    pub inference_component: Option<String>,
    /// SageMaker only: the production variant to invoke.
    pub target_variant: Option<String>,
    /// SageMaker only: `X-Amzn-SageMaker-Custom-Attributes`.
    pub custom_attributes: Option<String>,
    /// SageMaker only: the container's payload format (`openai-chat`, `openai-completions`,
    /// `tgi`, `custom`).
    pub format: Option<crate::endpoint::SageMakerFormat>,
    /// SageMaker `format = "custom"`: the request body as JSON with `"{prompt}"`,
    /// `"{max_tokens}"` and `"{stream}"` placeholders.
    pub request_template: Option<String>,
    /// SageMaker `format = "custom"`: JSON pointer to the text of each streamed event.
    pub text_pointer: Option<String>,
    /// SageMaker `format = "custom"`: JSON pointer to the server's output token count.
    pub token_count_pointer: Option<String>,
}

/// Reads an endpoint URL, refusing one that is not an http(s) URL with a host (the error
/// then carries the file, line and key like any other bad value).
fn checked_url<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    let url = String::deserialize(d)?;
    crate::endpoint::api_base(&url).map_err(serde::de::Error::custom)?;
    Ok(Some(url))
}

/// `[profiles.NAME]`: a workload.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProfileEntry {
    pub input_tokens: Option<Positive>,
    pub input_tokens_stddev: Option<u32>,
    pub output_tokens: Option<Positive>,
    pub output_tokens_stddev: Option<u32>,
    pub stream: Option<bool>,
    pub shared_prefix_tokens: Option<u32>,
    pub shared_prefix_share: Option<Fraction>,
    /// `approx`, `o200k`, `cl100k` or the path of a Hugging Face `tokenizer.json`.
    pub tokenizer: Option<String>,
    pub seed: Option<u64>,
    /// Prompts from this file instead of generated ones (see docs/workloads.md).
    pub dataset: Option<PathBuf>,
    /// `jsonl`, `sharegpt` or `mooncake` (default: detected).
    pub dataset_format: Option<String>,
    /// `in-order`, `shuffle` or `replace`.
    pub dataset_sampling: Option<String>,
    /// Mooncake traces: tokens per hash id (default 512).
    pub block_tokens: Option<Positive>,
    /// Dataset records outside these lengths (tokens) are skipped.
    pub dataset_min_input: Option<u32>,
    pub dataset_max_input: Option<u32>,
    pub dataset_min_output: Option<u32>,
    pub dataset_max_output: Option<u32>,
    /// Multi-turn sessions: user turns per session (see docs/workloads.md).
    pub turns: Option<u32>,
    /// Tokens of the new user message of turns 2 and later.
    pub turn_input_tokens: Option<Positive>,
    /// Pause between an answer and the next turn, e.g. `"500ms"`.
    pub think_time: Option<String>,
    /// Agent loops: answers with tool calls are followed by their results (needs `tools`).
    pub agent: Option<bool>,
    /// Agent loops: the time a tool takes to run, e.g. `"200ms"`.
    pub tool_latency: Option<String>,
    /// Agent loops: tokens of each tool result.
    pub tool_result_tokens: Option<Positive>,
    /// Tools sent with every chat request: a JSON file of OpenAI tool definitions.
    pub tools: Option<PathBuf>,
    /// `auto`, `none`, `required` or a function name.
    pub tool_choice: Option<String>,
    /// A tool call with arguments that are not JSON fails its request.
    pub fail_on_bad_tool_call: Option<bool>,
}

/// `[sweeps.NAME]`: a concurrency sweep plan.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SweepEntry {
    pub concurrency: Option<Vec<Positive>>,
    pub request_count: Option<Positive>,
    pub warmup: Option<u32>,
    pub max_error_rate: Option<Fraction>,
}

/// `[searches.NAME]`: an SLA search plan (keys in docs/search.md). Latency SLAs are milliseconds
/// (`e2e_sla_ms = 50000`) or a string with a statistic (`ttft_sla_ms = "p99:800ms"`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SearchEntry {
    pub e2e_sla_ms: Option<SlaValue>,
    pub ttft_sla_ms: Option<SlaValue>,
    pub tpot_sla_ms: Option<SlaValue>,
    pub error_rate_sla: Option<SlaValue>,
    pub concurrency_min: Option<Positive>,
    pub concurrency_max: Option<Positive>,
    pub search_max_iterations: Option<Positive>,
    pub request_count: Option<Positive>,
    pub warmup: Option<u32>,
    /// The error-rate limit when `error_rate_sla` is not given (default 0.01).
    pub max_error_rate: Option<Fraction>,
    /// The most requests one level may run while a verdict is uncertain.
    pub max_requests_per_level: Option<Positive>,
}

#[cfg(test)]
mod long_line_tests {
    use super::*;

    #[test]
    fn a_long_line_is_quoted_around_the_error_not_whole() {
        // a 5 MB line with the error near its middle
        let text = format!(
            "a = 1\nb = \"{}\" x{}\n",
            "y".repeat(2_500_000),
            "z".repeat(2_500_000)
        );
        let e = ConfigFile::parse(&text, "big.toml").unwrap_err();
        let msg = e.to_string();
        assert!(msg.len() < 1_000, "{} bytes", msg.len());
        assert!(
            msg.starts_with("big.toml: TOML parse error at line 2, column 2500008"),
            "{msg}"
        );
        assert!(
            msg.contains("(a line of 5000008 characters: characters 2499928 to 2500087 shown)"),
            "{msg}"
        );
        // the caret under the place
        let lines: Vec<&str> = msg.lines().collect();
        let quoted = lines[2].find("\" x").unwrap();
        assert_eq!(lines[3].find('^'), Some(quoted + 2), "{msg}");
        // a short line is quoted whole, as the parser quotes it
        let e = ConfigFile::parse("a = \"x\" y\n", "small.toml").unwrap_err();
        assert!(e.to_string().contains("1 | a = \"x\" y"), "{e}");
    }
}

impl ConfigFile {
    /// Parses TOML text; `name` is used in error messages.
    pub fn parse(text: &str, name: &str) -> Result<ConfigFile, ConfigError> {
        toml::from_str(text).map_err(|e| ConfigError::toml(name, text, &e))
    }

    /// Reads and parses a file.
    pub fn read(path: &Path) -> Result<ConfigFile, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError {
            file: path.display().to_string(),
            message: format!("cannot read: {e}"),
        })?;
        ConfigFile::parse(&text, &path.display().to_string())
    }

    /// Lays `over` on top of `self`: named entries are replaced whole, defaults field by field.
    pub fn merge(mut self, over: ConfigFile) -> ConfigFile {
        let d = over.defaults;
        self.defaults.endpoint = d.endpoint.or(self.defaults.endpoint);
        self.defaults.profile = d.profile.or(self.defaults.profile);
        self.defaults.sweep = d.sweep.or(self.defaults.sweep);
        self.defaults.search = d.search.or(self.defaults.search);
        self.defaults.timeout = d.timeout.or(self.defaults.timeout);
        self.defaults.results_dir = d.results_dir.or(self.defaults.results_dir);
        self.defaults.max_error_rate = d.max_error_rate.or(self.defaults.max_error_rate);
        self.endpoints.extend(over.endpoints);
        self.profiles.extend(over.profiles);
        self.sweeps.extend(over.sweeps);
        self.searches.extend(over.searches);
        self.campaigns.extend(over.campaigns);
        self
    }
}

/// Where the user's config file lives on this platform (it need not exist).
pub fn user_config_path() -> Option<PathBuf> {
    directories::ProjectDirs::from("dev", "rightsize", "rightsize")
        .map(|d| d.config_dir().join("rightsize.toml"))
}

/// The shipped config, then the user's file (or `explicit`, which must exist) on top.
pub fn load_layered(explicit: Option<&Path>) -> Result<(ConfigFile, Vec<String>), ConfigError> {
    let mut cfg = ConfigFile::parse(SHIPPED, SHIPPED_NAME)?;
    let mut sources = vec![SHIPPED_NAME.to_string()];
    let user = match explicit {
        Some(p) => Some(p.to_path_buf()),
        None => user_config_path().filter(|p| p.exists()),
    };
    if let Some(path) = user {
        cfg = cfg.merge(ConfigFile::read(&path)?);
        sources.push(path.display().to_string());
    }
    Ok((cfg, sources))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shipped_config_parses() {
        let c = ConfigFile::parse(SHIPPED, SHIPPED_NAME).unwrap();
        assert_eq!(c.defaults.endpoint.as_deref(), Some("sim"));
        assert_eq!(c.endpoints["sim"].kind, EndpointKind::Simulator);
        assert_eq!(c.profiles["rag"].input_tokens, Some(Positive(1024)));
        assert_eq!(c.profiles["rag"].output_tokens, Some(Positive(256)));
        let reference = c.sweeps["reference"].concurrency.clone().unwrap();
        assert_eq!(
            reference.iter().map(|p| p.0).collect::<Vec<_>>(),
            vec![64, 256, 1024]
        );
        assert!(c.profiles.contains_key("chat"));
        let s = &c.searches["reference"];
        assert_eq!(s.e2e_sla_ms, Some(SlaValue::Number(50_000.0)));
        assert_eq!(s.concurrency_min, Some(Positive(16)));
        assert_eq!(s.concurrency_max, Some(Positive(4096)));
        assert_eq!(s.search_max_iterations, Some(Positive(10)));
        assert_eq!(s.request_count, Some(Positive(1024)));
        let demo = &c.campaigns["demo"];
        let labels: Vec<&str> = demo.candidates.iter().map(|c| c.label.as_str()).collect();
        assert_eq!(
            labels,
            [
                "sim small: 16 slots",
                "sim medium: 64 slots",
                "sim large: 128 slots, tp2"
            ]
        );
        assert!(demo.candidates.iter().all(|c| c.sim.is_some()));
    }

    #[test]
    fn a_users_defaults_lay_over_the_shipped_ones_field_by_field() {
        let shipped = ConfigFile::parse(SHIPPED, SHIPPED_NAME).unwrap();
        let user = ConfigFile::parse(
            "[defaults]\nmax_error_rate = 0.05\nresults_dir = \"/r\"\n",
            "my.toml",
        )
        .unwrap();
        let c = shipped.merge(user);
        // every field of [defaults]; max_error_rate was dropped once, and the dashboard's
        // and the command line's runs judged errors at 1 % whatever the file said
        assert_eq!(c.defaults.max_error_rate.map(|f| f.0), Some(0.05));
        assert_eq!(c.defaults.results_dir, Some(PathBuf::from("/r")));
        assert_eq!(c.defaults.endpoint.as_deref(), Some("sim"));
        assert_eq!(c.defaults.profile.as_deref(), Some("rag"));
    }

    #[test]
    fn unknown_key_names_file_line_and_key() {
        let text = "[profiles.rag]\ninput_tokens = 10\ninput_tokenz = 5\n";
        let e = ConfigFile::parse(text, "my.toml").unwrap_err().to_string();
        assert!(
            e.starts_with("my.toml: TOML parse error at line 3, column 1"),
            "{e}"
        );
        assert!(e.contains("unknown field `input_tokenz`"), "{e}");
    }

    #[test]
    fn bad_value_names_file_line_and_reason() {
        let text = "[sweeps.x]\nconcurrency = [16, 0]\n";
        let e = ConfigFile::parse(text, "my.toml").unwrap_err().to_string();
        assert!(e.contains("line 2"), "{e}");
        assert!(e.contains("must be at least 1, got 0"), "{e}");
        let text = "[profiles.p]\nshared_prefix_share = 2.0\n";
        let e = ConfigFile::parse(text, "my.toml").unwrap_err().to_string();
        assert!(
            e.contains("must be a fraction between 0 and 1, got 2"),
            "{e}"
        );
        let text = "[defaults]\ntimeout = \"soon\"\n";
        let e = ConfigFile::parse(text, "my.toml").unwrap_err().to_string();
        assert!(e.contains("`soon` is not a duration"), "{e}");
    }

    #[test]
    fn user_entries_replace_shipped_ones_by_name() {
        let base = ConfigFile::parse(SHIPPED, SHIPPED_NAME).unwrap();
        let over = ConfigFile::parse(
            "[defaults]\nprofile = \"chat\"\n[sweeps.reference]\nconcurrency = [8]\n",
            "u.toml",
        )
        .unwrap();
        let m = base.merge(over);
        assert_eq!(m.defaults.profile.as_deref(), Some("chat"));
        assert_eq!(m.defaults.endpoint.as_deref(), Some("sim"));
        assert_eq!(m.sweeps["reference"].concurrency, Some(vec![Positive(8)]));
        assert_eq!(m.sweeps["reference"].request_count, None);
        assert!(m.sweeps.contains_key("demo"));
    }
}
