//! `rightsize replay FILE`: sends a recorded trace's requests (or a SageMaker Data Capture's)
//! at their timestamps (divided by `--speedup`), open-loop, headless or on the dashboard;
//! metrics for the whole trace and per time window, and the trace's own traffic in `run.json`.
//! The trace is also the workload: record `i` is request `i` (see `workload::trace`,
//! `workload::capture` and `docs/open-loop.md`).

use super::open_args::OpenLoopArgs;
use super::run_args::{EndpointArgs, PlanningArgs, RunArgs, SlaArgs, WorkloadArgs};
use crate::config::overrides::SweepOverrides;
use crate::headless;
use crate::headless::exit::BadInput;
use crate::launch::{LaunchRequest, OpenChoice, PlanChoice};
use crate::workload::dataset::Sampling;
use clap::Args;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Flags of `rightsize replay`.
#[derive(Debug, Clone, Args)]
pub struct ReplayArgs {
    /// The trace: JSON lines with `timestamp` in ms and either Mooncake's `input_length`,
    /// `output_length`, `hash_ids`, or `text` (optional `output_length`); or a SageMaker Data
    /// Capture: a file, the folder `aws s3 sync` leaves, or s3://BUCKET/PREFIX (read with the
    /// AWS SDK's credentials and region)
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Send the trace this many times faster than recorded (timestamps divided by it)
    #[arg(long, value_name = "F", default_value_t = 1.0)]
    pub speedup: f64,
    #[command(flatten)]
    pub endpoint: EndpointArgs,
    #[command(flatten)]
    pub workload: WorkloadArgs,
    #[command(flatten)]
    pub open: OpenLoopArgs,
    #[command(flatten)]
    pub run: RunArgs,
    #[command(flatten)]
    pub sla: SlaArgs,
    #[command(flatten)]
    pub planning: PlanningArgs,
}

impl ReplayArgs {
    /// The run these flags ask for.
    pub fn request(&self) -> Result<LaunchRequest, BadInput> {
        if self.workload.source.dataset.is_some() {
            return Err(BadInput(format!(
                "a replay reads its prompts from the trace ({}); drop --dataset",
                self.file.display()
            )));
        }
        if matches!(self.workload.source.sampling, Some(s) if s != Sampling::InOrder) {
            return Err(BadInput(
                "a replay sends the trace's records in file order; drop --sampling".into(),
            ));
        }
        if self.open.arrival.is_some() || self.open.burstiness.is_some() {
            return Err(BadInput(
                "a replay sends at the trace's timestamps; --arrival and --burstiness do not \
                 apply"
                    .into(),
            ));
        }
        if !(self.speedup.is_finite() && self.speedup > 0.0) {
            return Err(BadInput(format!(
                "--speedup {}: must be above 0 (e.g. 1, 10)",
                self.speedup
            )));
        }
        let mut workload = self.workload.overrides();
        workload.dataset = Some(self.file.clone());
        workload.sampling = Some(Sampling::InOrder);
        let mut run = self.run.overrides();
        run.open = self.open.settings().map_err(BadInput)?;
        Ok(LaunchRequest {
            plan: PlanChoice::Sweep {
                overrides: SweepOverrides {
                    plan: None,
                    // a placeholder: the replay is the only level
                    concurrency: Some(vec![1]),
                    run,
                },
                refine_knee: false,
                slas: self.sla.thresholds(),
                open: OpenChoice::Replay {
                    file: self.file.clone(),
                    speedup: self.speedup,
                },
            },
            endpoint: self.endpoint.overrides(),
            workload,
            capacity: self.planning.capacity().map_err(BadInput)?,
            gate: self.planning.gate(),
        })
    }
}

/// Resolves, replays, prints. Returns the exit code.
pub async fn execute(args: ReplayArgs, config: Option<&Path>) -> anyhow::Result<ExitCode> {
    let launch = crate::launch::resolve(&args.request()?, config)?;
    headless::launch(launch, args.run.json, false, args.run.serve_options()?).await
}
