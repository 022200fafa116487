//! What the flags (and the dashboard's setup form) give on top of the config files, part by
//! part, each field `None` where the files decide; the error a bad flag or config value gets;
//! and where the load goes once resolved. The resolution itself is `super::resolve`.

use crate::endpoint::{Api, EndpointSpec};
use crate::workload::dataset::{DatasetFormat, LengthFilter, Sampling};
use std::path::PathBuf;
use std::time::Duration;

/// A bad flag or config value: exit code 2.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct InputError(pub String);

/// Endpoint choices given on the command line.
#[derive(Debug, Clone, Default)]
pub struct EndpointOverrides {
    /// A config name or an `http(s)://` URL.
    pub endpoint: Option<String>,
    pub model: Option<String>,
    pub api: Option<Api>,
    pub headers: Vec<(String, String)>,
    pub api_key_env: Option<String>,
    pub no_exact_length: bool,
    pub sim_time_scale: Option<f64>,
    /// Ask the simulator for ground-truth chunk send times.
    pub sim_timing: bool,
    /// SageMaker: `--region`, `--aws-profile`, `--inference-component`, `--target-variant`,
    /// `--sagemaker-format`.
    pub region: Option<String>,
    pub aws_profile: Option<String>,
    pub inference_component: Option<String>,
    pub target_variant: Option<String>,
    pub sagemaker_format: Option<crate::endpoint::SageMakerFormat>,
    /// SageMaker custom format: `--sagemaker-request-template` (JSON, or `@FILE`),
    /// `--sagemaker-text-pointer`, `--sagemaker-token-count-pointer`.
    pub request_template: Option<String>,
    pub text_pointer: Option<String>,
    pub token_count_pointer: Option<String>,
}

/// Workload choices given on the command line.
#[derive(Debug, Clone, Default)]
pub struct WorkloadOverrides {
    pub profile: Option<String>,
    pub input_tokens: Option<u32>,
    pub input_stddev: Option<u32>,
    pub output_tokens: Option<u32>,
    pub output_stddev: Option<u32>,
    pub stream: Option<bool>,
    pub prefix_tokens: Option<u32>,
    pub prefix_share: Option<f64>,
    pub seed: Option<u64>,
    /// `approx`, `o200k`, `cl100k` or a `tokenizer.json` path.
    pub tokenizer: Option<String>,
    pub dataset: Option<PathBuf>,
    pub dataset_format: Option<DatasetFormat>,
    pub sampling: Option<Sampling>,
    pub block_tokens: Option<u32>,
    pub filter: LengthFilter,
    pub calibrate: Option<bool>,
    /// `--turns`, `--turn-input-tokens`, `--think-time`: multi-turn sessions.
    pub turns: Option<u32>,
    pub turn_input_tokens: Option<u32>,
    pub think_time: Option<Duration>,
    /// `--agent`, `--tool-latency`, `--tool-result-tokens`: agent loops.
    pub agent: Option<bool>,
    pub tool_latency: Option<Duration>,
    pub tool_result_tokens: Option<u32>,
    /// `--tools`, `--tool-choice`, `--fail-on-bad-tool-call`: tools sent with chat requests.
    pub tools: Option<PathBuf>,
    pub tool_choice: Option<serde_json::Value>,
    pub fail_on_bad_tool_call: Option<bool>,
}

/// Sweep plan choices given on the command line.
#[derive(Debug, Clone, Default)]
pub struct SweepOverrides {
    pub plan: Option<String>,
    pub concurrency: Option<Vec<u32>>,
    pub run: RunOverrides,
}

/// The flags every run takes, sweep or search.
#[derive(Debug, Clone, Default)]
pub struct RunOverrides {
    pub requests: Option<u32>,
    pub warmup: Option<u32>,
    pub timeout: Option<Duration>,
    /// `--preflight-timeout`: how long the pre-flight check waits for the endpoint.
    pub preflight_timeout: Option<Duration>,
    pub out: Option<PathBuf>,
    /// `--max-error-rate`: the error-rate limit when no error-rate SLA is given.
    pub max_error_rate: Option<f64>,
    /// `--telemetry-interval`: how often the server's `/metrics` is sampled (0: never).
    pub telemetry_interval: Option<Duration>,
    /// `--gpu-metrics`: the GPUs' exporter to sample with the server.
    pub gpu_metrics: Option<String>,
    /// `--arrival`, `--burstiness`, `--max-in-flight`, `--window`: how open-loop levels send.
    pub open: crate::workload::arrivals::OpenSettings,
    /// `--workers`, `--worker-backend`, `--controller-listen`: a distributed run.
    pub fleet: Option<FleetChoice>,
    /// `--prefix-cache keep|reset`: the server's prefix cache before each level.
    pub prefix_cache: Option<crate::record::PrefixCachePolicy>,
    /// `--prefix-cache-reset-url`: a POST that empties it instead of the server's own.
    pub prefix_cache_reset_url: Option<String>,
}

/// A distributed run as asked (`docs/distributed.md`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FleetChoice {
    /// Workers that run each level's shares.
    pub workers: u32,
    pub backend: WorkerBackend,
    /// Where the controller listens for them (default: loopback for local workers,
    /// `0.0.0.0:7077` for external ones).
    pub listen: Option<String>,
}

/// Who starts the workers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkerBackend {
    /// Processes of this binary on this machine.
    Local,
    /// Started by someone else (a Kubernetes Job, `rightsize k8s render`): the controller
    /// waits for them.
    External,
}

/// Where the load goes.
#[derive(Debug, Clone)]
pub enum EndpointTarget {
    /// Start the built-in simulator in-process; `spec.base_url` is filled once it listens.
    Simulator { time_scale: f64, spec: EndpointSpec },
    /// An HTTP endpoint.
    Remote(EndpointSpec),
}

impl EndpointTarget {
    /// The endpoint spec (for the simulator, before its URL is known).
    pub fn spec(&self) -> &EndpointSpec {
        match self {
            EndpointTarget::Simulator { spec, .. } | EndpointTarget::Remote(spec) => spec,
        }
    }
}
