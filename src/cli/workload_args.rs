//! Flags that say where prompts come from and how their tokens are counted: the tokenizer,
//! a dataset and how to draw from it, server calibration, and the tools chat requests carry. See `docs/workloads.md`.

use crate::config::overrides::WorkloadOverrides;
use crate::workload::dataset::{DatasetFormat, LengthFilter, Sampling};
use clap::Args;
use std::path::PathBuf;

/// Tokenizer, dataset and calibration flags (part of the workload flags).
#[derive(Debug, Clone, Default, Args)]
pub struct WorkloadSourceArgs {
    /// Tokenizer that sizes prompts: approx (about 4 characters a token), o200k, cl100k
    /// (built in), or the path of a model's Hugging Face tokenizer.json
    #[arg(long, value_name = "NAME|FILE")]
    pub tokenizer: Option<String>,
    /// Prompts from a file instead of generated ones: JSONL ({"text"} or {"messages"}),
    /// ShareGPT JSON, a Mooncake trace, or a SageMaker Data Capture (a file, a folder, or
    /// s3://BUCKET/PREFIX) (format detected)
    #[arg(long, value_name = "FILE")]
    pub dataset: Option<PathBuf>,
    /// The dataset's format, when detection should not decide: jsonl, sharegpt, mooncake,
    /// sagemaker-capture
    #[arg(long, value_name = "FORMAT", value_parser = DatasetFormat::parse)]
    pub dataset_format: Option<DatasetFormat>,
    /// How requests draw dataset records: in-order (default), shuffle (seeded, per level) or
    /// replace (seeded draws with replacement)
    #[arg(long, value_name = "HOW", value_parser = Sampling::parse)]
    pub sampling: Option<Sampling>,
    /// Mooncake traces: tokens each hash id stands for (default 512)
    #[arg(long, value_name = "N", value_parser = crate::values::parse_positive)]
    pub block_tokens: Option<u32>,
    /// Skip dataset records with fewer input tokens
    #[arg(long, value_name = "N")]
    pub dataset_min_input: Option<u32>,
    /// Skip dataset records with more input tokens
    #[arg(long, value_name = "N")]
    pub dataset_max_input: Option<u32>,
    /// Skip dataset records that ask for fewer output tokens
    #[arg(long, value_name = "N")]
    pub dataset_min_output: Option<u32>,
    /// Skip dataset records that ask for more output tokens
    #[arg(long, value_name = "N")]
    pub dataset_max_output: Option<u32>,
    /// Before the load, learn the server's token count for our prompts (a few requests with
    /// max_tokens 1) and size prompts so the server sees the target length (default for
    /// http(s) endpoints)
    #[arg(long, overrides_with = "no_calibrate")]
    pub calibrate: bool,
    /// Send prompts at the client tokenizer's length, without calibration (default for the
    /// simulator)
    #[arg(long)]
    pub no_calibrate: bool,
    /// Send these tools with every chat request: a JSON file of OpenAI tool definitions (an
    /// array, or an object with `tools` and optionally `tool_choice`). Answers' tool calls
    /// count as output (TTFT, inter-token latency, output tokens) and their arguments are
    /// checked as JSON (tool_call_errors per level)
    #[arg(long, value_name = "FILE")]
    pub tools: Option<PathBuf>,
    /// tool_choice sent with --tools (wins over the file's): auto, none, required, or the
    /// name of one of the tools' functions
    #[arg(long, value_name = "auto|none|required|NAME", value_parser = crate::workload::tools::parse_tool_choice)]
    pub tool_choice: Option<serde_json::Value>,
    /// With --tools: a tool call whose arguments are not valid JSON fails its request
    /// (error kind bad_tool_call) instead of only being counted in tool_call_errors
    #[arg(long)]
    pub fail_on_bad_tool_call: bool,
}

impl WorkloadSourceArgs {
    /// Writes these flags into the workload overrides.
    pub fn apply(&self, o: &mut WorkloadOverrides) {
        o.tokenizer = self.tokenizer.clone();
        o.dataset = self.dataset.clone();
        o.dataset_format = self.dataset_format;
        o.sampling = self.sampling;
        o.block_tokens = self.block_tokens;
        o.filter = LengthFilter {
            min_input: self.dataset_min_input,
            max_input: self.dataset_max_input,
            min_output: self.dataset_min_output,
            max_output: self.dataset_max_output,
        };
        o.tools = self.tools.clone();
        o.tool_choice = self.tool_choice.clone();
        o.fail_on_bad_tool_call = self.fail_on_bad_tool_call.then_some(true);
        o.calibrate = if self.no_calibrate {
            Some(false)
        } else if self.calibrate {
            Some(true)
        } else {
            None
        };
    }
}
