//! `rightsize sim` flags (clap), turned into a validated [`SimConfig`].

use super::sim_config::{FaultConfig, FaultSpec, MetricNames, SimConfig, SimModel};
use super::tls::TlsFiles;

/// Serve a simulated OpenAI-compatible LLM endpoint with a continuous-batching model.
#[derive(Debug, Clone, clap::Args)]
pub struct SimArgs {
    /// TCP port on 127.0.0.1 (0 = let the OS pick a free port).
    #[arg(long, default_value_t = 8000)]
    pub port: u16,
    /// Served model name (listed by /v1/models; requests naming another model get 404).
    #[arg(long, default_value = "sim-moe-30b-a3b")]
    pub model: String,
    /// Seed for output text, natural output lengths, noise and probabilistic faults.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Run the model F times faster than real time (all model durations divided by F).
    #[arg(long, value_name = "F", default_value_t = 1.0)]
    pub time_scale: f64,
    /// Multiplicative step-time noise: a slow factor (lognormal, sigma F, drawn again every
    /// --noise-period-ms of model time) times a small per-step jitter. 0 = deterministic timing.
    #[arg(long, value_name = "F", default_value_t = 0.0)]
    pub noise: f64,
    /// How long the noise's slow factor lasts, in model milliseconds: shorter than a level,
    /// the server's speed moves within it; longer, between levels.
    #[arg(long, value_name = "MS", default_value_t = 2000.0)]
    pub noise_period_ms: f64,
    /// Batch slots: the most sequences running at once.
    #[arg(long, default_value_t = 256)]
    pub max_num_seqs: u32,
    /// Token budget per step: each decoding sequence takes one, prefill chunks take the rest.
    #[arg(long, default_value_t = 8192)]
    pub max_num_batched_tokens: u32,
    /// KV-cache capacity in tokens; when it runs out the newest running sequence is preempted.
    #[arg(long, default_value_t = 400_000)]
    pub kv_cache_tokens: u64,
    /// Longest waiting queue; further requests get HTTP 503. Default: unbounded.
    #[arg(long, value_name = "N")]
    pub max_waiting: Option<u64>,
    /// Fixed time of one step, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 10.0)]
    pub decode_base_ms: f64,
    /// Extra step time per running sequence, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 0.12)]
    pub decode_per_seq_ms: f64,
    /// Extra step time per prefilled (uncached) input token, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 0.02)]
    pub prefill_per_token_ms: f64,
    /// Prefix-cache block size in tokens (only whole blocks are cached).
    #[arg(long, default_value_t = 16)]
    pub block_size: u32,
    /// Prefix-cache capacity in blocks, least recently used evicted first (0 disables it).
    #[arg(long, default_value_t = 25_000)]
    pub prefix_cache_blocks: u64,
    /// Refuse POST /reset_prefix_cache with a 404, as vLLM does outside its development
    /// mode (VLLM_SERVER_DEV_MODE unset)
    #[arg(long)]
    pub refuse_prefix_cache_reset: bool,
    /// Longest prompt + output a request may ask for, in tokens.
    #[arg(long, default_value_t = 32_768)]
    pub max_model_len: u32,
    /// Mean natural output length in tokens when `ignore_eos` is off (exponential, clamped to
    /// [min_tokens, max_tokens]).
    #[arg(long, value_name = "TOKENS", default_value_t = 256.0)]
    pub natural_output_mean: f64,
    /// Answer HTTP 500: a probability (0-1) or `every:N` (request numbers divisible by N).
    #[arg(long, value_name = "P|every:N", default_value = "off")]
    pub fault_http500: FaultSpec,
    /// Answer HTTP 429 with `Retry-After: 1`: a probability or `every:N`.
    #[arg(long, value_name = "P|every:N", default_value = "off")]
    pub fault_http429: FaultSpec,
    /// Reset the connection after a few content chunks: a probability or `every:N`.
    #[arg(long, value_name = "P|every:N", default_value = "off")]
    pub fault_reset: FaultSpec,
    /// Stop sending after a few content chunks, keeping the connection open: a probability or
    /// `every:N`.
    #[arg(long, value_name = "P|every:N", default_value = "off")]
    pub fault_stall: FaultSpec,
    /// Send one malformed SSE event mid-stream (truncated JSON for non-streaming): a
    /// probability or `every:N`.
    #[arg(long, value_name = "P|every:N", default_value = "off")]
    pub fault_malformed: FaultSpec,
    /// Send an error object inside a 200 stream, then `data: [DONE]`: a probability or
    /// `every:N`.
    #[arg(long, value_name = "P|every:N", default_value = "off")]
    pub fault_in_stream_error: FaultSpec,
    /// Chat requests with tools (tool_choice auto or none given): the share of answers that
    /// are tool calls, streamed as vLLM streams them (tool_choice required or a function
    /// name: every answer; none: never)
    #[arg(long, value_name = "SHARE", default_value_t = 1.0, value_parser = crate::values::parse_fraction)]
    pub tool_call_share: f64,
    /// The share of tool calls whose arguments are cut short (not valid JSON)
    #[arg(long, value_name = "SHARE", default_value_t = 0.0, value_parser = crate::values::parse_fraction)]
    pub tool_call_broken_share: f64,
    /// Count prompt tokens with this tokenizer (approx, o200k, cl100k or a tokenizer.json
    /// path); the prefix cache then works on its token ids.
    #[arg(long, value_name = "NAME|FILE", default_value = "approx")]
    pub tokenizer: String,
    /// Tokens a chat template adds to every chat request (reported in usage.prompt_tokens).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub template_overhead: u32,
    /// Whose metric names /metrics speaks: vllm (with vllm:cache_config_info) or llamacpp
    /// (llama-server's llamacpp:* names, and its /props with the slot count). The modelled
    /// GPU's DCGM exporter is at /dcgm/metrics either way
    #[arg(long, value_enum, value_name = "NAMES", default_value = "vllm")]
    pub metric_names: MetricNames,
    /// The modelled GPU's power at rest, in watts (its exporter's energy counter grows at it
    /// between requests); a step draws from 259 W (a lone sequence) to 700 W
    #[arg(long, value_name = "W", default_value_t = 70.0)]
    pub gpu_idle_watts: f64,
    /// Write every completion request the model takes on (its body as received) and the
    /// answer generated for it to FILE, one JSON line each
    #[arg(long, value_name = "FILE")]
    pub request_log: Option<std::path::PathBuf>,
    /// Serve HTTPS (HTTP/1.1 over TLS) with this PEM certificate chain, for every API on the
    /// port (OpenAI and SageMaker); needs --tls-key. Clients trust a self-signed one through
    /// SSL_CERT_FILE
    #[arg(long, value_name = "FILE")]
    pub tls_cert: Option<std::path::PathBuf>,
    /// The PEM private key of --tls-cert
    #[arg(long, value_name = "FILE")]
    pub tls_key: Option<std::path::PathBuf>,
    /// SageMaker API (/endpoints/NAME/invocations[-response-stream]): require every request
    /// to be SigV4-signed with this access key id and the secret in the environment variable
    /// RIGHTSIZE_SIM_AWS_SECRET_ACCESS_KEY
    #[cfg(feature = "sagemaker")]
    #[arg(long, value_name = "ID")]
    pub sagemaker_access_key_id: Option<String>,
    /// SageMaker API: refuse every invocation this way (access-denied, expired-token,
    /// no-endpoint, not-in-service, no-component, no-streaming, throttled)
    #[cfg(feature = "sagemaker")]
    #[arg(long, value_name = "KIND", value_parser = parse_refusal)]
    pub sagemaker_refuse: Option<super::sagemaker::Refusal>,
    /// SageMaker API: break the second event-stream frame of every streamed answer
    /// (bad-prelude-crc, bad-message-crc, truncated)
    #[cfg(feature = "sagemaker")]
    #[arg(long, value_name = "KIND", value_parser = parse_frame_fault)]
    pub sagemaker_frame_fault: Option<super::sagemaker::FrameFault>,
    /// SageMaker API: largest payload part in bytes; parts are cut at random sizes up to it
    #[cfg(feature = "sagemaker")]
    #[arg(long, value_name = "BYTES", default_value_t = super::sagemaker::DEFAULT_MAX_PART_BYTES)]
    pub sagemaker_max_part_bytes: usize,
}

/// The variable holding the secret of `--sagemaker-access-key-id`.
#[cfg(feature = "sagemaker")]
pub const SIM_SECRET_ENV: &str = "RIGHTSIZE_SIM_AWS_SECRET_ACCESS_KEY";

#[cfg(feature = "sagemaker")]
fn parse_refusal(s: &str) -> Result<super::sagemaker::Refusal, String> {
    super::sagemaker::Refusal::parse(s).ok_or_else(|| {
        format!(
            "`{s}` is not a refusal; use one of: {}",
            super::sagemaker::Refusal::NAMES.join(", ")
        )
    })
}

#[cfg(feature = "sagemaker")]
fn parse_frame_fault(s: &str) -> Result<super::sagemaker::FrameFault, String> {
    super::sagemaker::FrameFault::parse(s).ok_or_else(|| {
        format!(
            "`{s}` is not a frame fault; use one of: {}",
            super::sagemaker::FrameFault::NAMES.join(", ")
        )
    })
}

impl SimArgs {
    /// The validated configuration; the error message names the offending flag.
    pub fn into_config(self) -> Result<SimConfig, String> {
        let model = SimModel {
            model: Some(self.model),
            seed: Some(self.seed),
            time_scale: Some(self.time_scale),
            noise: Some(self.noise),
            noise_period_ms: Some(self.noise_period_ms),
            max_num_seqs: Some(self.max_num_seqs),
            max_num_batched_tokens: Some(self.max_num_batched_tokens),
            kv_cache_tokens: Some(self.kv_cache_tokens),
            max_waiting: self.max_waiting,
            decode_base_ms: Some(self.decode_base_ms),
            decode_per_seq_ms: Some(self.decode_per_seq_ms),
            prefill_per_token_ms: Some(self.prefill_per_token_ms),
            block_size: Some(self.block_size),
            prefix_cache_blocks: Some(self.prefix_cache_blocks),
            max_model_len: Some(self.max_model_len),
            natural_output_mean: Some(self.natural_output_mean),
        };
        let cfg = SimConfig::with_model(&model).map_err(|e| e.to_string())?;
        Ok(SimConfig {
            port: self.port,
            faults: FaultConfig {
                http500: self.fault_http500,
                http429: self.fault_http429,
                reset: self.fault_reset,
                stall: self.fault_stall,
                malformed: self.fault_malformed,
                in_stream_error: self.fault_in_stream_error,
            },
            tool_call_share: self.tool_call_share,
            tool_call_broken_share: self.tool_call_broken_share,
            tokenizer: self.tokenizer,
            template_overhead: self.template_overhead,
            metric_names: self.metric_names,
            gpu_idle_w: if self.gpu_idle_watts.is_finite()
                && (0.0..=super::gpu::MAX_W).contains(&self.gpu_idle_watts)
            {
                self.gpu_idle_watts
            } else {
                return Err(format!(
                    "--gpu-idle-watts: must be between 0 and {} W, got {}",
                    super::gpu::MAX_W,
                    self.gpu_idle_watts
                ));
            },
            request_log: self.request_log,
            refuse_prefix_cache_reset: self.refuse_prefix_cache_reset,
            tls: match (self.tls_cert, self.tls_key) {
                (None, None) => None,
                (Some(_), None) => {
                    return Err(
                        "--tls-cert needs --tls-key (the certificate's private key, \
                                PEM)"
                            .to_string(),
                    )
                }
                (None, Some(_)) => {
                    return Err(
                        "--tls-key needs --tls-cert (the certificate chain, PEM)".to_string()
                    )
                }
                (Some(cert), Some(key)) => {
                    let files = TlsFiles { cert, key };
                    // read now, so a bad file is a bad flag rather than a failed start
                    super::tls::acceptor(&files)?;
                    Some(files)
                }
            },
            #[cfg(feature = "sagemaker")]
            sagemaker: super::sagemaker::SageMakerSim {
                credentials: match self.sagemaker_access_key_id {
                    None => None,
                    Some(id) => match std::env::var(SIM_SECRET_ENV) {
                        Ok(secret) if !secret.is_empty() => Some((id, secret)),
                        _ => {
                            return Err(format!(
                                "--sagemaker-access-key-id needs the secret in the environment \
                                 variable {SIM_SECRET_ENV}"
                            ))
                        }
                    },
                },
                refuse: self.sagemaker_refuse,
                frame_fault: self.sagemaker_frame_fault,
                max_part_bytes: self.sagemaker_max_part_bytes,
            },
            ..cfg
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        sim: SimArgs,
    }

    #[test]
    fn defaults_match_sim_config_default() {
        let cli = Cli::parse_from(["x"]);
        assert_eq!(cli.sim.into_config(), Ok(SimConfig::default()));
    }

    #[test]
    fn flags_parse_and_bad_values_name_the_flag() {
        let cli = Cli::parse_from(["x", "--port", "0", "--fault-reset", "every:3"]);
        let cfg = cli.sim.into_config().unwrap();
        assert_eq!(cfg.faults.reset, FaultSpec::Every(3));
        let cli = Cli::parse_from(["x", "--max-num-seqs", "0"]);
        assert!(cli
            .sim
            .into_config()
            .unwrap_err()
            .contains("--max-num-seqs"));
        assert!(Cli::try_parse_from(["x", "--fault-stall", "2"]).is_err());
    }

    #[test]
    fn tls_flags_come_in_pairs_and_name_the_file() {
        let alone = Cli::parse_from(["x", "--tls-cert", "c.pem"])
            .sim
            .into_config();
        assert!(alone.unwrap_err().contains("--tls-key"));
        let alone = Cli::parse_from(["x", "--tls-key", "k.pem"])
            .sim
            .into_config();
        assert!(alone.unwrap_err().contains("--tls-cert"));
        let missing = "/nonexistent/rightsize-cert.pem";
        let e = Cli::parse_from(["x", "--tls-cert", missing, "--tls-key", "k.pem"])
            .sim
            .into_config()
            .unwrap_err();
        assert!(e.contains("--tls-cert") && e.contains(missing), "{e}");
    }
}
