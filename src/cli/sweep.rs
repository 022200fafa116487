//! `rightsize sweep`: a concurrency sweep run headless, progress on stderr, the table (or
//! JSON) on stdout. Also the no-argument demo, which sweeps the built-in simulator.

use super::args::{EndpointArgs, PlanningArgs, RunArgs, SlaArgs, WorkloadArgs};
use super::exit::BadInput;
use super::headless;
use crate::config::resolve::SweepOverrides;
use crate::config::values::parse_concurrency;
use crate::launch::{LaunchRequest, PlanChoice};
use clap::Args;
use std::path::Path;
use std::process::ExitCode;

/// Flags of `rightsize sweep`.
#[derive(Debug, Clone, Args)]
pub struct SweepArgs {
    #[command(flatten)]
    pub endpoint: EndpointArgs,
    #[command(flatten)]
    pub workload: WorkloadArgs,
    /// A sweep plan from the config (`reference`: 64, 256, 1024 with 1024 requests each)
    #[arg(long, value_name = "NAME")]
    pub plan: Option<String>,
    /// Concurrency levels, comma-separated, run one after another
    #[arg(short, long, value_name = "LIST", value_delimiter = ',', allow_negative_numbers = true,
          value_parser = parse_concurrency)]
    pub concurrency: Option<Vec<u32>>,
    #[command(flatten)]
    pub run: RunArgs,
    /// Ask the simulator to stamp each chunk with its send time (timing ground truth)
    #[arg(long, hide = true)]
    pub sim_timing: bool,
    /// After the levels, add up to 3 between the two that bracket the knee, until they are
    /// within 1.25x of each other
    #[arg(long)]
    pub refine_knee: bool,
    #[command(flatten)]
    pub sla: SlaArgs,
    #[command(flatten)]
    pub planning: PlanningArgs,
}

impl SweepArgs {
    /// The no-argument demo: the `demo` plan against the default endpoint (the simulator).
    pub fn demo() -> Self {
        SweepArgs {
            endpoint: EndpointArgs {
                endpoint: None,
                model: None,
                api: None,
                headers: vec![],
                api_key_env: None,
                no_exact_length: false,
                sim_time_scale: None,
            },
            workload: WorkloadArgs {
                profile: None,
                input_tokens: None,
                input_stddev: None,
                output_tokens: None,
                output_stddev: None,
                stream: false,
                no_stream: false,
                prefix_tokens: None,
                prefix_share: None,
                seed: None,
                source: Default::default(),
            },
            plan: Some("demo".into()),
            concurrency: None,
            run: RunArgs {
                no_tui: true,
                ..RunArgs::default()
            },
            sim_timing: false,
            refine_knee: false,
            sla: SlaArgs::default(),
            planning: PlanningArgs::default(),
        }
    }
}

impl SweepArgs {
    /// The run these flags ask for.
    pub fn request(&self) -> Result<LaunchRequest, BadInput> {
        let mut endpoint = self.endpoint.overrides();
        endpoint.sim_timing = self.sim_timing;
        Ok(LaunchRequest {
            plan: PlanChoice::Sweep {
                overrides: SweepOverrides {
                    plan: self.plan.clone(),
                    concurrency: self.concurrency.clone(),
                    run: self.run.overrides(),
                },
                refine_knee: self.refine_knee,
                slas: self.sla.thresholds(),
            },
            endpoint,
            workload: self.workload.overrides(),
            capacity: self.planning.capacity().map_err(BadInput)?,
            gate: self.planning.gate(),
        })
    }
}

/// Resolves, starts the simulator if asked, runs, prints. Returns the exit code.
pub async fn execute(args: SweepArgs, config: Option<&Path>) -> anyhow::Result<ExitCode> {
    let launch = crate::launch::resolve(&args.request()?, config)?;
    headless::launch(launch, args.run.json, false).await
}
