//! `rightsize search`: the highest concurrency that meets every SLA, found by the planner in
//! `plan::search`, headless. The iteration table prints on stdout row by row as levels finish;
//! the answer, knee and planning numbers follow.

use super::args::{EndpointArgs, PlanningArgs, RunArgs, SlaArgs, WorkloadArgs};
use super::exit::BadInput;
use super::headless;
use crate::config::search::SearchOverrides;
use crate::config::values::{parse_concurrency, parse_positive};
use crate::launch::{LaunchRequest, PlanChoice};
use clap::Args;
use std::path::Path;
use std::process::ExitCode;

/// Flags of `rightsize search`.
#[derive(Debug, Clone, Args)]
pub struct SearchArgs {
    #[command(flatten)]
    pub endpoint: EndpointArgs,
    #[command(flatten)]
    pub workload: WorkloadArgs,
    #[command(flatten)]
    pub sla: SlaArgs,
    /// A search plan from the config (`reference`: p99 e2e < 50 s, 16 to 4096, 10 levels)
    #[arg(long, value_name = "NAME")]
    pub plan: Option<String>,
    /// Lowest concurrency (the first level; default 16)
    #[arg(long, value_name = "N", value_parser = parse_concurrency)]
    pub min: Option<u32>,
    /// Highest concurrency (default 4096)
    #[arg(long, value_name = "N", value_parser = parse_concurrency)]
    pub max: Option<u32>,
    /// Most levels to run, re-measurements included (default 10)
    #[arg(long, value_name = "N", value_parser = parse_positive)]
    pub max_iterations: Option<u32>,
    /// Do not measure the bracket's two ends a second time once it is within 5 % (saves
    /// two levels; noise can then go unnoticed)
    #[arg(long)]
    pub no_confirm: bool,
    /// Most requests one level may run while a verdict is uncertain (default: 8 x its first
    /// batch, and at least 4 x what the SLAs need to be decided, e.g. 368 requests for p99)
    #[arg(long, value_name = "N", value_parser = parse_positive)]
    pub max_requests_per_level: Option<u32>,
    #[command(flatten)]
    pub run: RunArgs,
    #[command(flatten)]
    pub planning: PlanningArgs,
}

impl SearchArgs {
    /// The run these flags ask for.
    pub fn request(&self) -> Result<LaunchRequest, BadInput> {
        Ok(LaunchRequest {
            plan: PlanChoice::Search(SearchOverrides {
                plan: self.plan.clone(),
                slas: self.sla.thresholds(),
                min: self.min,
                max: self.max,
                max_iterations: self.max_iterations,
                no_confirm: self.no_confirm,
                max_requests_per_level: self.max_requests_per_level,
                run: self.run.overrides(),
            }),
            endpoint: self.endpoint.overrides(),
            workload: self.workload.overrides(),
            capacity: self.planning.capacity().map_err(BadInput)?,
            gate: self.planning.gate(),
        })
    }
}

/// Resolves, runs the search, prints, applies the gate. Returns the exit code.
pub async fn execute(args: SearchArgs, config: Option<&Path>) -> anyhow::Result<ExitCode> {
    let launch = crate::launch::resolve(&args.request()?, config)?;
    headless::launch(launch, args.run.json, true).await
}
