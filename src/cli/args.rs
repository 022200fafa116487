//! Flag groups shared by the commands that send load (`sweep`, later `search`).

use crate::config::resolve::{EndpointOverrides, WorkloadOverrides};
use crate::config::values::{parse_duration, parse_fraction, parse_positive};
use crate::endpoint::Api;
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
    /// Endpoint: a name from the config (`sim` is the built-in simulator) or a base URL such
    /// as http://127.0.0.1:8000/v1
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
    /// Seed for prompt text and lengths
    #[arg(long)]
    pub seed: Option<u64>,
}

fn parse_header(s: &str) -> Result<(String, String), String> {
    let (k, v) = s
        .split_once(':')
        .ok_or_else(|| format!("`{s}` is not `Name: value`"))?;
    let k = k.trim();
    if k.is_empty() || k.contains(char::is_whitespace) {
        return Err(format!("`{s}`: header name is empty or has spaces"));
    }
    Ok((k.to_string(), v.trim().to_string()))
}

/// clap value parser for durations (`1.5s`, `800ms`).
pub fn duration_arg(s: &str) -> Result<Duration, String> {
    parse_duration(s)
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
        }
    }
}

impl WorkloadArgs {
    pub fn overrides(&self) -> WorkloadOverrides {
        WorkloadOverrides {
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
        }
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
        assert!(parse_header(": v").is_err());
    }
}
