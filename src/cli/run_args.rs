//! Flag groups shared by the commands that send load (`sweep`, later `search`).

use crate::config::overrides::{EndpointOverrides, WorkloadOverrides};
use crate::endpoint::Api;
use crate::plan::capacity::{CapacityInputs, Peak};
use crate::record::sla::{SlaMetric, SlaThreshold};
use crate::values::{parse_fraction, parse_positive, parse_timeout};
use clap::{Args, ValueEnum};
use std::time::Duration;

/// `--api` values.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ApiArg {
    /// POST /v1/chat/completions
    Chat,
    /// POST /v1/completions
    Completions,
}

/// Where the load goes.
#[derive(Debug, Clone, Args)]
pub struct EndpointArgs {
    /// Endpoint: a name from the config (`sim` is the built-in simulator), a base URL such
    /// as http://127.0.0.1:8000/v1, or sagemaker:ENDPOINT-NAME (Amazon SageMaker AI)
    #[arg(short, long, value_name = "NAME|URL")]
    pub endpoint: Option<String>,
    /// Model name to send (default: the config's, else the only one /v1/models lists)
    #[arg(short, long)]
    pub model: Option<String>,
    /// Which OpenAI API to call
    #[arg(long, value_enum)]
    pub api: Option<ApiArg>,
    /// Extra request header, `Name: value` (repeatable). Put secrets in --api-key-env instead
    #[arg(long = "header", value_name = "NAME: VALUE", value_parser = parse_header)]
    pub headers: Vec<(String, String)>,
    /// Environment variable holding a bearer token (its value is never written anywhere)
    #[arg(long, value_name = "VAR")]
    pub api_key_env: Option<String>,
    /// Do not send ignore_eos/min_tokens (for servers that reject them); output lengths then
    /// vary with the model's own stopping
    #[arg(long)]
    pub no_exact_length: bool,
    /// Simulator only: run its model this many times faster than real time
    #[arg(long, value_name = "F")]
    pub sim_time_scale: Option<f64>,
    /// SageMaker only: AWS region (default: AWS_REGION or the profile's region)
    #[arg(long, value_name = "REGION")]
    pub region: Option<String>,
    /// SageMaker only: AWS named profile for credentials (default: the SDK's chain)
    #[arg(long, value_name = "NAME")]
    pub aws_profile: Option<String>,
    /// SageMaker only: the inference component to invoke
    #[arg(long, value_name = "NAME")]
    pub inference_component: Option<String>,
    /// SageMaker only: the production variant to invoke (X-Amzn-SageMaker-Target-Variant)
    #[arg(long, value_name = "NAME")]
    pub target_variant: Option<String>,
    /// SageMaker only: the container's payload format (openai-chat, openai-completions, tgi,
    /// custom)
    #[arg(long, value_name = "FORMAT", value_parser = parse_sagemaker_format)]
    pub sagemaker_format: Option<crate::endpoint::SageMakerFormat>,
    /// SageMaker custom format: the request body as JSON, or @FILE to read it from a file;
    /// "{prompt}", "{max_tokens}" and "{stream}" in its strings are filled in as JSON values,
    /// e.g. '{"inputs": "{prompt}", "parameters": {"max_new_tokens": "{max_tokens}"}}'
    #[arg(long, value_name = "JSON|@FILE")]
    pub sagemaker_request_template: Option<String>,
    /// SageMaker custom format: JSON pointer (RFC 6901) to the text in each streamed event (or
    /// in the whole answer with --no-stream), e.g. /token/text
    #[arg(long, value_name = "POINTER")]
    pub sagemaker_text_pointer: Option<String>,
    /// SageMaker custom format: JSON pointer to the server's output token count, e.g.
    /// /details/generated_tokens (default: the tokenizer counts the text)
    #[arg(long, value_name = "POINTER")]
    pub sagemaker_token_count_pointer: Option<String>,
}

fn parse_sagemaker_format(s: &str) -> Result<crate::endpoint::SageMakerFormat, String> {
    crate::endpoint::SageMakerFormat::parse(s.trim()).ok_or_else(|| {
        format!(
            "`{s}` is not a SageMaker payload format; use one of: {}",
            crate::endpoint::SageMakerFormat::NAMES.join(", ")
        )
    })
}

/// What each request looks like.
#[derive(Debug, Clone, Args)]
pub struct WorkloadArgs {
    /// Workload profile from the config (`rag`: 1024 in / 256 out; `chat`)
    #[arg(short, long)]
    pub profile: Option<String>,
    /// Mean input tokens per request
    #[arg(long, value_name = "N", value_parser = parse_positive)]
    pub input_tokens: Option<u32>,
    /// Standard deviation of input tokens
    #[arg(long, value_name = "N")]
    pub input_stddev: Option<u32>,
    /// Mean output tokens per request (sent as max_tokens)
    #[arg(long, value_name = "N", value_parser = parse_positive)]
    pub output_tokens: Option<u32>,
    /// Standard deviation of output tokens
    #[arg(long, value_name = "N")]
    pub output_stddev: Option<u32>,
    /// Stream responses (SSE); needed for TTFT and inter-token latency
    #[arg(long, overrides_with = "no_stream")]
    pub stream: bool,
    /// Do not stream: only end-to-end latency is measured
    #[arg(long)]
    pub no_stream: bool,
    /// Tokens of a shared system-prompt prefix
    #[arg(long, value_name = "N")]
    pub prefix_tokens: Option<u32>,
    /// Share (0-1) of requests that reuse the shared prefix
    #[arg(long, value_name = "F", value_parser = parse_fraction)]
    pub prefix_share: Option<f64>,
    /// Seed for prompt text, lengths and dataset sampling
    #[arg(long)]
    pub seed: Option<u64>,
    #[command(flatten)]
    pub source: super::workload_args::WorkloadSourceArgs,
    #[command(flatten)]
    pub sessions: super::session_args::SessionArgs,
}

/// SLA thresholds (`rightsize search`, and `sweep` for pass/fail and the breaking point).
#[derive(Debug, Clone, Default, Args)]
pub struct SlaArgs {
    /// End-to-end latency SLA, `[STAT:]DURATION` (default statistic p99), e.g. 50s
    #[arg(long, value_name = "[STAT:]DURATION", value_parser = |s: &str| SlaThreshold::parse(SlaMetric::E2e, s))]
    pub e2e_sla: Option<SlaThreshold>,
    /// Time-to-first-token SLA (default p95), e.g. 1.5s or p99:800ms; needs streaming
    #[arg(long, value_name = "[STAT:]DURATION", value_parser = |s: &str| SlaThreshold::parse(SlaMetric::Ttft, s))]
    pub ttft_sla: Option<SlaThreshold>,
    /// Time-per-output-token SLA (default p95), e.g. 50ms; needs streaming
    #[arg(long, value_name = "[STAT:]DURATION", value_parser = |s: &str| SlaThreshold::parse(SlaMetric::Tpot, s))]
    pub tpot_sla: Option<SlaThreshold>,
    /// Error-rate SLA: the largest tolerated fraction of failed requests, e.g. 0.01
    #[arg(long, value_name = "[STAT:]FRACTION", value_parser = |s: &str| SlaThreshold::parse(SlaMetric::ErrorRate, s))]
    pub error_rate_sla: Option<SlaThreshold>,
}

impl SlaArgs {
    /// The thresholds given, in a fixed order.
    pub fn thresholds(&self) -> Vec<SlaThreshold> {
        [
            self.e2e_sla,
            self.ttft_sla,
            self.tpot_sla,
            self.error_rate_sla,
        ]
        .into_iter()
        .flatten()
        .collect()
    }
}

/// Planning numbers and the CI gate.
#[derive(Debug, Clone, Default, Args)]
pub struct PlanningArgs {
    /// Peak traffic as requests in flight: right-size the fleet for it
    #[arg(long, value_name = "N", group = "peak")]
    pub peak_concurrency: Option<f64>,
    /// Peak traffic as requests per second, or `from:FILE`: the peak minute's rate of a Data
    /// Capture or trace (as `rightsize traffic FILE` suggests it)
    #[arg(long, value_name = "R|from:FILE", group = "peak", value_parser = parse_peak_rps)]
    pub peak_rps: Option<f64>,
    /// Peak traffic as output tokens per second
    #[arg(long, value_name = "T", group = "peak")]
    pub peak_output_tps: Option<f64>,
    /// Spare capacity on top of the peak: 20% or 0.2 (default 20%)
    #[arg(long, value_name = "PCT", value_parser = parse_share)]
    pub headroom: Option<f64>,
    /// Price of one instance per hour, for cost per hour and per million output tokens
    #[arg(long, value_name = "P", value_parser = parse_nonneg)]
    pub price_per_hour: Option<f64>,
    /// CI gate: exit 3 when the answer is below N
    #[arg(long, value_name = "N", value_parser = parse_positive)]
    pub require_concurrency: Option<u32>,
    /// CI gate: exit 3 when the answer or the throughput at it fell by more than
    /// --max-regression against this earlier run (a run folder or a run id)
    #[arg(long, value_name = "RUN")]
    pub baseline: Option<String>,
    /// Largest tolerated drop against --baseline: 10% or 0.1 (default 10%)
    #[arg(long, value_name = "PCT", value_parser = parse_share)]
    pub max_regression: Option<f64>,
}

impl PlanningArgs {
    /// The CI gate as the flags ask for it.
    pub fn gate(&self) -> crate::launch::GateChoice {
        crate::launch::GateChoice {
            require_concurrency: self.require_concurrency,
            baseline: self.baseline.clone(),
            max_regression: self.max_regression,
        }
    }

    /// The capacity inputs (peak, headroom, price).
    pub fn capacity(&self) -> Result<CapacityInputs, String> {
        let peak = match (self.peak_concurrency, self.peak_rps, self.peak_output_tps) {
            (Some(v), _, _) => Some(Peak::Concurrency(v)),
            (_, Some(v), _) => Some(Peak::Rps(v)),
            (_, _, Some(v)) => Some(Peak::OutputTps(v)),
            _ => None,
        };
        if let Some(Peak::Concurrency(v) | Peak::Rps(v) | Peak::OutputTps(v)) = peak {
            if !(v.is_finite() && v > 0.0) {
                return Err(format!("the peak must be a positive number, got {v}"));
            }
        }
        Ok(CapacityInputs {
            peak,
            headroom: self.headroom.unwrap_or(0.2),
            price_per_hour: self.price_per_hour,
        })
    }
}

/// `--peak-rps`: a rate, or `from:FILE` for the suggested peak of a capture or trace.
pub fn parse_peak_rps(s: &str) -> Result<f64, String> {
    match s.trim().strip_prefix("from:") {
        Some(file) => crate::workload::traffic::peak_rps_of(std::path::Path::new(file)),
        None => s
            .trim()
            .parse::<f64>()
            .map_err(|_| format!("`{s}` is not a rate (req/s) or from:FILE")),
    }
}

/// `20%` or `0.2`: a non-negative share.
pub fn parse_share(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let v = match t.strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().map(|v| v / 100.0),
        None => t.parse::<f64>(),
    }
    .map_err(|_| format!("`{s}` is not a share (use e.g. 20% or 0.2)"))?;
    if v.is_finite() && v >= 0.0 {
        Ok(v)
    } else {
        Err(format!("`{s}` must not be negative"))
    }
}

fn parse_nonneg(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(format!("`{s}` is not a non-negative number")),
    }
}

fn parse_header(s: &str) -> Result<(String, String), String> {
    let (k, v) = s
        .split_once(':')
        .ok_or_else(|| format!("`{}` is not `Name: value`", s.escape_debug()))?;
    let k = k.trim();
    if k.is_empty() || k.contains(char::is_whitespace) {
        return Err(format!(
            "header name `{}` is empty or has spaces",
            k.escape_debug()
        ));
    }
    let v = v.trim();
    if v.chars().any(|c| c.is_control() && c != '\t') {
        // no value is shown: it may be a credential
        return Err(format!(
            "header {k}: the value holds a line break or another control character, which \
             would split the request"
        ));
    }
    Ok((k.to_string(), v.to_string()))
}

/// clap value parser for the timeout (`1.5s`, `10m`; above zero).
pub fn duration_arg(s: &str) -> Result<Duration, String> {
    parse_timeout(s)
}

/// `--telemetry-interval`: a duration, or `0` / `off` for none.
fn interval_arg(s: &str) -> Result<Duration, String> {
    match s.trim() {
        "0" | "off" => Ok(Duration::ZERO),
        other => crate::values::parse_duration(other)
            .map_err(|e| format!("{e} (0 or off turns sampling off)")),
    }
}

impl EndpointArgs {
    pub fn overrides(&self) -> EndpointOverrides {
        EndpointOverrides {
            endpoint: self.endpoint.clone(),
            model: self.model.clone(),
            api: self.api.map(|a| match a {
                ApiArg::Chat => Api::Chat,
                ApiArg::Completions => Api::Completions,
            }),
            headers: self.headers.clone(),
            api_key_env: self.api_key_env.clone(),
            no_exact_length: self.no_exact_length,
            sim_time_scale: self.sim_time_scale,
            sim_timing: false,
            region: self.region.clone(),
            aws_profile: self.aws_profile.clone(),
            inference_component: self.inference_component.clone(),
            target_variant: self.target_variant.clone(),
            sagemaker_format: self.sagemaker_format,
            request_template: self.sagemaker_request_template.clone(),
            text_pointer: self.sagemaker_text_pointer.clone(),
            token_count_pointer: self.sagemaker_token_count_pointer.clone(),
        }
    }
}

impl WorkloadArgs {
    pub fn overrides(&self) -> WorkloadOverrides {
        let mut o = WorkloadOverrides {
            profile: self.profile.clone(),
            input_tokens: self.input_tokens,
            input_stddev: self.input_stddev,
            output_tokens: self.output_tokens,
            output_stddev: self.output_stddev,
            stream: if self.no_stream {
                Some(false)
            } else if self.stream {
                Some(true)
            } else {
                None
            },
            prefix_tokens: self.prefix_tokens,
            prefix_share: self.prefix_share,
            seed: self.seed,
            ..WorkloadOverrides::default()
        };
        self.source.apply(&mut o);
        self.sessions.apply(&mut o);
        o
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_table() {
        assert_eq!(
            parse_header("X-Team: ml").unwrap(),
            ("X-Team".into(), "ml".into())
        );
        assert_eq!(parse_header("A:b:c").unwrap(), ("A".into(), "b:c".into()));
        assert!(parse_header("nocolon").is_err());
        assert_eq!(
            parse_header("X-A: b\r\nEvil: 1").unwrap_err(),
            "header X-A: the value holds a line break or another control character, which \
             would split the request"
        );
        assert!(parse_header(": v").is_err());
    }

    #[test]
    fn shares_table() {
        assert_eq!(parse_share("20%").unwrap(), 0.2);
        assert_eq!(parse_share("0.35").unwrap(), 0.35);
        assert_eq!(parse_share(" 0 % ").unwrap(), 0.0);
        assert!(parse_share("-5%").is_err());
        assert!(parse_share("lots").is_err());
        assert_eq!(interval_arg("off"), Ok(Duration::ZERO));
        assert_eq!(interval_arg("0"), Ok(Duration::ZERO));
        assert_eq!(interval_arg("0s"), Ok(Duration::ZERO));
        assert_eq!(interval_arg("500ms"), Ok(Duration::from_millis(500)));
        assert!(interval_arg("often")
            .unwrap_err()
            .contains("0 or off turns sampling off"));
    }
}

/// How each level runs and where the results go: shared by `sweep` and `search`.
#[derive(Debug, Clone, Default, Args)]
pub struct RunArgs {
    /// Requests per level
    #[arg(short = 'n', long, value_name = "N", value_parser = parse_positive)]
    pub requests: Option<u32>,
    /// Warmup requests per closed-loop level, sent first at the same concurrency and not
    /// counted; the level takes over from them one stream at a time, so its first requests
    /// meet a loaded server. The first round asks for shorter answers in turn, so the level's
    /// streams start spread over one request's time. 0: a cold start, every stream sent at
    /// once [default: one round, the level's concurrency]
    #[arg(long, value_name = "N")]
    pub warmup: Option<u32>,
    /// Per-request timeout, e.g. 90s or 10m (a timed-out request counts as an error)
    #[arg(long, value_name = "DURATION", value_parser = duration_arg)]
    pub timeout: Option<Duration>,
    /// How long the pre-flight check waits for the endpoint before the run gives up, e.g.
    /// 10s (it says what it waits for after 5 s) [default: 60s, or --timeout when shorter]
    #[arg(long, value_name = "DURATION", value_parser = duration_arg)]
    pub preflight_timeout: Option<Duration>,
    /// How often the server's /metrics is sampled and recorded (telemetry.jsonl, each level
    /// file's `server`), e.g. 500ms or 5s; 0 turns it off [default: 1s]
    #[arg(long, value_name = "DURATION", value_parser = interval_arg)]
    pub telemetry_interval: Option<Duration>,
    /// A Prometheus endpoint of the GPUs' exporter (NVIDIA dcgm-exporter, usually
    /// http://HOST:9400/metrics, or AMD's device-metrics-exporter, :5000/metrics), sampled
    /// with the server: utilisation, memory, power and energy per output token in each level
    /// file. The built-in simulator's modelled GPU is read without it
    #[arg(long, value_name = "URL", value_parser = gpu_metrics_arg)]
    pub gpu_metrics: Option<String>,
    /// Folder to keep runs in (default: the platform data dir's rightsize/runs)
    #[arg(long, value_name = "DIR")]
    pub out: Option<std::path::PathBuf>,
    /// Print the result as JSON on stdout instead of the tables
    #[arg(long)]
    pub json: bool,
    /// Stay headless even when stdout is a terminal (progress on stderr, tables on stdout)
    #[arg(long)]
    pub no_tui: bool,
    /// Serve the run while it goes on, at IP:PORT (127.0.0.1:0 takes a free port, printed):
    /// `rightsize watch http://ADDR` shows it in the dashboard, Prometheus reads /metrics
    /// (docs/watch.md).
    /// Beyond loopback the run needs a token in RIGHTSIZE_SERVE_TOKEN. A served run runs
    /// headless
    #[arg(long, value_name = "ADDR", value_parser = crate::serve::parse_addr)]
    pub serve: Option<std::net::SocketAddr>,
    /// The server's prefix cache before each level: `keep` (what the levels before cached
    /// stays: a level may read them warm) or `reset` (emptied before every level and its
    /// warm-up through the server's own endpoint: vLLM's POST /reset_prefix_cache, SGLang's
    /// /flush_cache, llama.cpp's slot erase; docs/telemetry.md). A server that refuses is
    /// said once and the run goes on with `keep`; each level file says which
    /// [default: keep, or reset with --prefix-cache-reset-url]
    #[arg(long, value_name = "keep|reset", value_parser = crate::record::PrefixCachePolicy::parse)]
    pub prefix_cache: Option<crate::record::PrefixCachePolicy>,
    /// POST here to empty the server's prefix cache, instead of the endpoint its /metrics
    /// names (sent with the endpoint's headers and credentials); implies
    /// --prefix-cache reset
    #[arg(long, value_name = "URL", value_parser = reset_url_arg)]
    pub prefix_cache_reset_url: Option<String>,
    /// Largest share of failed requests a level may have and still pass, when no
    /// --error-rate-sla is given: 0.01 (the default) or 1%. A level cannot pass by shedding
    /// load
    #[arg(long, value_name = "SHARE", value_parser = parse_fraction_or_pct)]
    pub max_error_rate: Option<f64>,
    #[command(flatten)]
    pub fleet: FleetArgs,
}

/// The flags of a distributed run (`sweep`, `search`, `campaign`).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct FleetArgs {
    /// Run each level on N workers, merged exactly into one level (docs/distributed.md):
    /// each holds an even share of the concurrency (or of an open-loop level's arrivals)
    /// and sends back every request's record
    #[arg(long, value_name = "N", value_parser = parse_positive)]
    pub workers: Option<u32>,
    /// Who starts the workers: `local` (processes of this binary on this machine) or
    /// `external` (started elsewhere, e.g. by `rightsize k8s render`'s Job, with the run's
    /// token in RIGHTSIZE_WORKER_TOKEN; the controller waits for them)
    #[arg(long, value_enum, value_name = "BACKEND", requires = "workers")]
    pub worker_backend: Option<WorkerBackendArg>,
    /// Where the controller listens for its workers [default: 127.0.0.1:0 for local
    /// workers, 0.0.0.0:7077 for external ones]
    #[arg(long, value_name = "ADDR", requires = "workers")]
    pub controller_listen: Option<String>,
}

impl FleetArgs {
    /// The distributed run asked for, if any.
    pub fn choice(&self) -> Option<crate::config::overrides::FleetChoice> {
        use crate::config::overrides::{FleetChoice, WorkerBackend};
        self.workers.map(|workers| FleetChoice {
            workers,
            backend: match self.worker_backend {
                Some(WorkerBackendArg::External) => WorkerBackend::External,
                _ => WorkerBackend::Local,
            },
            listen: self.controller_listen.clone(),
        })
    }
}

/// `--worker-backend`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum WorkerBackendArg {
    Local,
    External,
}

/// `--gpu-metrics`: an http(s) URL.
fn gpu_metrics_arg(s: &str) -> Result<String, String> {
    match url::Url::parse(s) {
        Ok(u) if matches!(u.scheme(), "http" | "https") && u.host().is_some() => Ok(s.to_string()),
        _ => Err(format!(
            "`{s}` is not an http(s) URL; give the exporter's metrics URL, e.g. \
             http://gpu-node:9400/metrics"
        )),
    }
}

/// `--prefix-cache-reset-url`: an http(s) URL.
fn reset_url_arg(s: &str) -> Result<String, String> {
    match url::Url::parse(s) {
        Ok(u) if matches!(u.scheme(), "http" | "https") && u.host().is_some() => Ok(s.to_string()),
        _ => Err(format!(
            "`{}` is not an http(s) URL; give the URL whose POST empties the server's prefix \
             cache, e.g. http://127.0.0.1:8000/reset_prefix_cache",
            crate::secrets::redact_url(s)
        )),
    }
}

/// `1%` or `0.01`: a fraction between 0 and 1.
pub fn parse_fraction_or_pct(s: &str) -> Result<f64, String> {
    let v = parse_share(s)?;
    if v <= 1.0 {
        Ok(v)
    } else {
        Err(format!("`{s}` is above 100 %"))
    }
}

impl RunArgs {
    /// The flags the config resolution takes.
    pub fn overrides(&self) -> crate::config::overrides::RunOverrides {
        crate::config::overrides::RunOverrides {
            requests: self.requests,
            warmup: self.warmup,
            timeout: self.timeout,
            preflight_timeout: self.preflight_timeout,
            telemetry_interval: self.telemetry_interval,
            gpu_metrics: self.gpu_metrics.clone(),
            out: self.out.clone(),
            max_error_rate: self.max_error_rate,
            open: Default::default(),
            fleet: self.fleet.choice(),
            prefix_cache: self.prefix_cache,
            prefix_cache_reset_url: self.prefix_cache_reset_url.clone(),
        }
    }

    /// Opens the dashboard: stdout is a terminal and none of `--no-tui`, `--json` and
    /// `--serve` is set.
    pub fn wants_dashboard(&self) -> bool {
        use std::io::IsTerminal;
        std::io::stdout().is_terminal() && !self.no_tui && !self.json && self.serve.is_none()
    }

    /// `--serve` with its token, checked (an address beyond loopback needs one).
    pub fn serve_options(&self) -> anyhow::Result<Option<crate::serve::ServeOptions>> {
        self.serve
            .map(crate::serve::ServeOptions::from_flag)
            .transpose()
    }
}
