//! The simulator's configuration: every model, fault and server parameter, with the defaults
//! of one 80 GB GPU serving a 30B-total / 3B-active MoE model in FP8 (see `docs/simulator.md`).

use std::fmt;
use std::str::FromStr;

/// The fastest the model runs against real time: at 10,000x a 10 ms decode step takes 1 µs,
/// below what a thread can be woken for, so a faster scale would only say a figure the
/// simulator cannot keep.
pub const MAX_TIME_SCALE: f64 = 10_000.0;

/// When a fault hits a request: never, with a probability, or on every Nth request.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum FaultSpec {
    /// The fault never fires.
    #[default]
    Off,
    /// Each request is hit independently with this probability (0-1), seeded by `--seed`.
    Probability(f64),
    /// Requests whose number (1, 2, 3... in arrival order) is divisible by N are hit.
    Every(u64),
}

impl FaultSpec {
    /// Whether request number `n` (1-based) is hit; `salt` keeps different faults independent.
    pub fn hits(&self, n: u64, seed: u64, salt: u64) -> bool {
        match *self {
            FaultSpec::Off => false,
            FaultSpec::Every(every) => every > 0 && n % every == 0,
            FaultSpec::Probability(p) => {
                let h = crate::rng::mix64(seed ^ crate::rng::mix64(salt ^ n.rotate_left(17)));
                ((h >> 11) as f64 / (1u64 << 53) as f64) < p
            }
        }
    }
}

impl FromStr for FaultSpec {
    type Err = String;

    /// Parses `P` (a probability in 0-1), `every:N` (N >= 1), or `off`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        if s.eq_ignore_ascii_case("off") {
            return Ok(FaultSpec::Off);
        }
        if let Some(n) = s.strip_prefix("every:") {
            return match n.trim().parse::<u64>() {
                Ok(0) | Err(_) => Err(format!("`{s}`: every:N needs a whole number N >= 1")),
                Ok(n) => Ok(FaultSpec::Every(n)),
            };
        }
        match s.parse::<f64>() {
            Ok(p) if (0.0..=1.0).contains(&p) => Ok(if p == 0.0 {
                FaultSpec::Off
            } else {
                FaultSpec::Probability(p)
            }),
            _ => Err(format!(
                "`{s}`: expected a probability between 0 and 1, `every:N` or `off`"
            )),
        }
    }
}

impl fmt::Display for FaultSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FaultSpec::Off => write!(f, "off"),
            FaultSpec::Probability(p) => write!(f, "{p}"),
            FaultSpec::Every(n) => write!(f, "every:{n}"),
        }
    }
}

/// The faults the simulator can inject, one [`FaultSpec`] each. HTTP-status faults are checked
/// first and such requests never reach the scheduler; then at most one stream fault applies,
/// in the order the fields are listed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FaultConfig {
    /// Answer HTTP 500 with an OpenAI-style JSON error.
    pub http500: FaultSpec,
    /// Answer HTTP 429 with `Retry-After: 1` and a JSON error.
    pub http429: FaultSpec,
    /// Reset the connection mid-stream (after a few content chunks).
    pub reset: FaultSpec,
    /// Stop sending mid-stream without closing the connection.
    pub stall: FaultSpec,
    /// Send one malformed SSE event mid-stream, then continue normally.
    pub malformed: FaultSpec,
    /// Send an error object inside the 200 stream, then `data: [DONE]`.
    pub in_stream_error: FaultSpec,
}

/// Whose metric names the simulator's `/metrics` speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum MetricNames {
    /// vLLM's (`vllm:num_requests_running`, ..., and `vllm:cache_config_info`).
    #[default]
    Vllm,
    /// llama.cpp server's (`llamacpp:requests_processing`, ...), with its `/props`.
    Llamacpp,
}

/// Everything the simulator needs: server, model and fault parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct SimConfig {
    /// TCP port on 127.0.0.1; 0 lets the OS pick a free one.
    pub port: u16,
    /// The served model name (what `/v1/models` lists and requests must name).
    pub model: String,
    /// Seed for output text, natural output lengths, noise and probabilistic faults.
    pub seed: u64,
    /// Run the model this many times faster than real time (all model durations divided by it).
    pub time_scale: f64,
    /// Sigma of the multiplicative step-time noise (0 = none).
    pub noise: f64,
    /// How long the noise's slow factor lasts before it is drawn again, in model ms.
    pub noise_period_ms: f64,
    /// Batch slots: the most sequences running at once.
    pub max_num_seqs: u32,
    /// Token budget of one step (decode tokens first, prefill chunks take the rest).
    pub max_num_batched_tokens: u32,
    /// KV-cache capacity, in tokens.
    pub kv_cache_tokens: u64,
    /// Longest waiting queue before new requests get HTTP 503; `None` = unbounded.
    pub max_waiting: Option<u64>,
    /// Fixed time of one step, in model milliseconds.
    pub decode_base_ms: f64,
    /// Extra step time per running sequence, in model milliseconds.
    pub decode_per_seq_ms: f64,
    /// Extra step time per prefilled (uncached) input token, in model milliseconds.
    pub prefill_per_token_ms: f64,
    /// Prefix-cache block size, in tokens.
    pub block_size: u32,
    /// Prefix-cache capacity, in blocks (0 disables the prefix cache).
    pub prefix_cache_blocks: u64,
    /// Longest prompt + output a request may ask for, in tokens.
    pub max_model_len: u32,
    /// Mean natural output length when `ignore_eos` is off, in tokens (exponentially
    /// distributed, then clamped to `[min_tokens, max_tokens]`).
    pub natural_output_mean: f64,
    /// Fault injection.
    pub faults: FaultConfig,
    /// Answers to chat requests with `tools`: the share that are tool calls (`tool_choice`
    /// `auto` or none given; `required` or a named function always call, `none` never), and
    /// the share of tool calls whose arguments are cut short (not JSON).
    pub tool_call_share: f64,
    pub tool_call_broken_share: f64,
    /// Tokenizer that counts prompt tokens: `approx` (the shared approximation), `o200k`,
    /// `cl100k` or the path of a `tokenizer.json`.
    pub tokenizer: String,
    /// Tokens a chat template adds to every chat request's prompt (counted in `usage` and
    /// in the prefix cache, before the messages).
    pub template_overhead: u32,
    /// Whose names `/metrics` uses.
    pub metric_names: MetricNames,
    /// The modelled GPU's power with nothing to run, watts.
    pub gpu_idle_w: f64,
    /// Write each completion request taken on, and its answer, to this file (JSON lines).
    pub request_log: Option<std::path::PathBuf>,
    /// Answer `POST /reset_prefix_cache` with a 404, as vLLM outside its development mode.
    pub refuse_prefix_cache_reset: bool,
    /// Serve HTTPS with this certificate and key (`--tls-cert`, `--tls-key`); `None` = plain
    /// http.
    pub tls: Option<super::tls::TlsFiles>,
    /// The SageMaker runtime API's settings (test credentials, refusals, framing faults).
    #[cfg(feature = "sagemaker")]
    pub sagemaker: super::sagemaker::SageMakerSim,
}

impl Default for SimConfig {
    fn default() -> Self {
        Self {
            port: 8000,
            model: "sim-moe-30b-a3b".to_string(),
            seed: 0,
            time_scale: 1.0,
            noise: 0.0,
            noise_period_ms: 2000.0,
            max_num_seqs: 256,
            max_num_batched_tokens: 8192,
            kv_cache_tokens: 400_000,
            max_waiting: None,
            decode_base_ms: 10.0,
            decode_per_seq_ms: 0.12,
            prefill_per_token_ms: 0.02,
            block_size: 16,
            prefix_cache_blocks: 25_000,
            max_model_len: 32_768,
            natural_output_mean: 256.0,
            faults: FaultConfig::default(),
            tool_call_share: 1.0,
            tool_call_broken_share: 0.0,
            tokenizer: "approx".to_string(),
            template_overhead: 0,
            metric_names: MetricNames::Vllm,
            gpu_idle_w: super::gpu::IDLE_W,
            request_log: None,
            refuse_prefix_cache_reset: false,
            tls: None,
            #[cfg(feature = "sagemaker")]
            sagemaker: super::sagemaker::SageMakerSim {
                max_part_bytes: super::sagemaker::DEFAULT_MAX_PART_BYTES,
                ..Default::default()
            },
        }
    }
}

impl SimConfig {
    /// The default model on a free port, running `time_scale` times faster than real time:
    /// the usual starting point for tests.
    pub fn fast(time_scale: f64) -> Self {
        Self {
            port: 0,
            time_scale,
            ..Self::default()
        }
    }

    /// The one way to a validated configuration, for the `rightsize sim` flags and a
    /// campaign's simulated candidate alike: the defaults with `m`'s parameters over them,
    /// every parameter checked. The rest (port, faults, TLS, ...) the caller sets after.
    pub fn with_model(m: &SimModel) -> Result<SimConfig, SimConfigError> {
        let d = SimConfig::default();
        let cfg = SimConfig {
            model: m.model.clone().unwrap_or(d.model.clone()),
            seed: m.seed.unwrap_or(d.seed),
            time_scale: m.time_scale.unwrap_or(d.time_scale),
            noise: m.noise.unwrap_or(d.noise),
            noise_period_ms: m.noise_period_ms.unwrap_or(d.noise_period_ms),
            max_num_seqs: m.max_num_seqs.unwrap_or(d.max_num_seqs),
            max_num_batched_tokens: m.max_num_batched_tokens.unwrap_or(d.max_num_batched_tokens),
            kv_cache_tokens: m.kv_cache_tokens.unwrap_or(d.kv_cache_tokens),
            max_waiting: m.max_waiting.or(d.max_waiting),
            decode_base_ms: m.decode_base_ms.unwrap_or(d.decode_base_ms),
            decode_per_seq_ms: m.decode_per_seq_ms.unwrap_or(d.decode_per_seq_ms),
            prefill_per_token_ms: m.prefill_per_token_ms.unwrap_or(d.prefill_per_token_ms),
            block_size: m.block_size.unwrap_or(d.block_size),
            prefix_cache_blocks: m.prefix_cache_blocks.unwrap_or(d.prefix_cache_blocks),
            max_model_len: m.max_model_len.unwrap_or(d.max_model_len),
            natural_output_mean: m.natural_output_mean.unwrap_or(d.natural_output_mean),
            ..d
        };
        cfg.validate()?;
        Ok(cfg)
    }

    /// Checks every model parameter; the error names the offending one.
    pub fn validate(&self) -> Result<(), SimConfigError> {
        let bad = |key: &'static str, problem: String| Err(SimConfigError { key, problem });
        let finite_nonneg = |v: f64, key: &'static str| {
            if v.is_finite() && v >= 0.0 {
                Ok(())
            } else {
                bad(key, format!("must be a finite number >= 0, got {v}"))
            }
        };
        if !(self.time_scale > 0.0 && self.time_scale <= MAX_TIME_SCALE) {
            return bad(
                "time_scale",
                format!(
                    "must be above 0 and at most {MAX_TIME_SCALE}, got {}",
                    self.time_scale
                ),
            );
        }
        finite_nonneg(self.noise, "noise")?;
        if !(self.noise_period_ms.is_finite() && self.noise_period_ms >= 1.0) {
            return bad(
                "noise_period_ms",
                format!(
                    "must be a finite number of model ms >= 1, got {}",
                    self.noise_period_ms
                ),
            );
        }
        finite_nonneg(self.decode_base_ms, "decode_base_ms")?;
        finite_nonneg(self.decode_per_seq_ms, "decode_per_seq_ms")?;
        finite_nonneg(self.prefill_per_token_ms, "prefill_per_token_ms")?;
        if !(self.natural_output_mean.is_finite() && self.natural_output_mean >= 1.0) {
            return bad(
                "natural_output_mean",
                format!(
                    "must be a finite number >= 1, got {}",
                    self.natural_output_mean
                ),
            );
        }
        let positive: [(&'static str, u64); 5] = [
            ("max_num_seqs", self.max_num_seqs as u64),
            ("max_num_batched_tokens", self.max_num_batched_tokens as u64),
            ("kv_cache_tokens", self.kv_cache_tokens),
            ("block_size", self.block_size as u64),
            ("max_model_len", self.max_model_len as u64),
        ];
        for (key, v) in positive {
            if v == 0 {
                return bad(key, "must be at least 1".to_string());
            }
        }
        if self.model.trim().is_empty() {
            return bad("model", "must not be empty".to_string());
        }
        Ok(())
    }
}

/// The simulator's model parameters, each `None` for its default: what a caller may set
/// before [`SimConfig::with_model`] checks them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SimModel {
    pub model: Option<String>,
    pub seed: Option<u64>,
    pub time_scale: Option<f64>,
    pub noise: Option<f64>,
    pub noise_period_ms: Option<f64>,
    pub max_num_seqs: Option<u32>,
    pub max_num_batched_tokens: Option<u32>,
    pub kv_cache_tokens: Option<u64>,
    pub max_waiting: Option<u64>,
    pub decode_base_ms: Option<f64>,
    pub decode_per_seq_ms: Option<f64>,
    pub prefill_per_token_ms: Option<f64>,
    pub block_size: Option<u32>,
    pub prefix_cache_blocks: Option<u64>,
    pub max_model_len: Option<u32>,
    pub natural_output_mean: Option<f64>,
}

/// A model parameter out of range: which (its config key, `max_num_seqs`) and why. Shown
/// as the flag (`--max-num-seqs must be at least 1`), or with [`SimConfigError::as_key`]
/// as the key a campaign file gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimConfigError {
    pub key: &'static str,
    pub problem: String,
}

impl SimConfigError {
    /// `max_num_seqs must be at least 1`.
    pub fn as_key(&self) -> String {
        format!("{} {}", self.key, self.problem)
    }
}

impl fmt::Display for SimConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "--{} {}", self.key.replace('_', "-"), self.problem)
    }
}

impl std::error::Error for SimConfigError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fault_spec_parses_and_hits() {
        assert_eq!("every:2".parse::<FaultSpec>(), Ok(FaultSpec::Every(2)));
        assert_eq!("0".parse::<FaultSpec>(), Ok(FaultSpec::Off));
        assert_eq!(
            "0.25".parse::<FaultSpec>(),
            Ok(FaultSpec::Probability(0.25))
        );
        assert!("every:0".parse::<FaultSpec>().is_err());
        assert!("1.5".parse::<FaultSpec>().is_err());
        let every = FaultSpec::Every(2);
        let hit: Vec<u64> = (1..=6).filter(|n| every.hits(*n, 0, 0)).collect();
        assert_eq!(hit, vec![2, 4, 6]);
        let p = FaultSpec::Probability(0.3);
        let count = (1..=10_000).filter(|n| p.hits(*n, 5, 1)).count();
        assert!((2700..3300).contains(&count), "{count}");
    }

    #[test]
    fn defaults_validate() {
        assert_eq!(SimConfig::default().validate(), Ok(()));
        let bad = SimConfig {
            time_scale: 0.0,
            ..SimConfig::default()
        };
        let e = bad.validate().unwrap_err();
        assert_eq!(
            e.to_string(),
            "--time-scale must be above 0 and at most 10000, got 0"
        );
        assert_eq!(
            e.as_key(),
            "time_scale must be above 0 and at most 10000, got 0"
        );
        // past the fastest scale the simulator can keep (a 1e300 scale ran and said so)
        for scale in [10_001.0, 1e300, f64::INFINITY, f64::NAN] {
            let fast = SimConfig {
                time_scale: scale,
                ..SimConfig::default()
            };
            assert!(fast.validate().is_err(), "{scale}");
        }
        // a negative value keeps its sign in either form
        let e = SimConfig::with_model(&SimModel {
            decode_base_ms: Some(-1.5),
            ..SimModel::default()
        })
        .unwrap_err();
        assert_eq!(
            e.as_key(),
            "decode_base_ms must be a finite number >= 0, got -1.5"
        );
        assert_eq!(
            SimConfig::with_model(&SimModel::default()),
            Ok(SimConfig::default())
        );
    }
}
