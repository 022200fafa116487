//! `rightsize traffic FILE`: the traffic a SageMaker Data Capture (a file, an `aws s3 sync`
//! folder or `s3://bucket/prefix`) or a timestamped trace holds, and the `--peak-rps` and `--speedup` to plan and
//! replay it with (`workload::traffic`, `docs/open-loop.md`, "Your own traffic").

use crate::headless::exit::BadInput;
use crate::workload::tokenizer;
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

/// Flags of `rightsize traffic`.
#[derive(Debug, Clone, Args)]
pub struct TrafficArgs {
    /// A Data Capture (a file, the folder `aws s3 sync` leaves, or s3://BUCKET/PREFIX read
    /// with the AWS SDK's credentials), or a trace of JSON lines with `timestamp` (ms)
    #[arg(value_name = "CAPTURE|TRACE")]
    pub file: PathBuf,
    /// Tokenizer that counts prompt and answer lengths: approx, o200k, cl100k or a
    /// tokenizer.json (default: approx)
    #[arg(long, value_name = "NAME|FILE", default_value = "approx")]
    pub tokenizer: String,
    /// Print the figures as JSON (the `traffic` object a replay's run.json holds)
    #[arg(long)]
    pub json: bool,
}

/// Reads the file, prints its traffic.
pub fn execute(args: TrafficArgs) -> anyhow::Result<ExitCode> {
    let tok = tokenizer::load(&args.tokenizer).map_err(|e| BadInput(e.to_string()))?;
    let t = crate::workload::traffic::of_file(&args.file, &*tok.tokenizer).map_err(BadInput)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&t)?);
    } else {
        print!("{}", crate::report::traffic_text::traffic_text(&t));
    }
    Ok(ExitCode::SUCCESS)
}
