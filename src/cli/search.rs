//! `rightsize search`: the highest concurrency that meets every SLA, found by the planner in
//! `plan::search`, headless. The iteration table prints on stdout row by row as levels finish;
//! the answer, knee and planning numbers follow.

use super::open_args::{parse_rate, OpenLoopArgs};
use super::run_args::{EndpointArgs, PlanningArgs, RunArgs, SlaArgs, WorkloadArgs};
use crate::config::search::SearchOverrides;
use crate::headless;
use crate::headless::exit::BadInput;
use crate::launch::{LaunchRequest, PlanChoice};
use crate::values::{parse_concurrency, parse_positive};
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
    /// Most levels to run (default 10); a level measured again counts once
    #[arg(long, value_name = "N", value_parser = parse_positive)]
    pub max_iterations: Option<u32>,
    /// Do not measure the bracket's two ends a second time once it is within 5 % (saves
    /// two levels; noise can then go unnoticed)
    #[arg(long)]
    pub no_confirm: bool,
    /// Most requests one level may run while a verdict is uncertain (default: 8 x its first
    /// batch, and at least 4 x what the SLAs need to be decided, e.g. 368 requests for p99)
    #[arg(long, value_name = "N", value_parser = parse_level_requests)]
    pub max_requests_per_level: Option<u32>,
    /// What to search: the highest concurrency (a closed loop), or with `rate` the highest
    /// request rate (an open loop; bounds --min-rate, --max-rate)
    #[arg(long, value_enum, default_value = "concurrency")]
    pub by: SearchBy,
    /// With --by rate: the first rate, in requests/s (default 1)
    #[arg(long, value_name = "RPS", value_parser = parse_rate)]
    pub min_rate: Option<f64>,
    /// With --by rate: the highest rate to try, in requests/s (default 1000)
    #[arg(long, value_name = "RPS", value_parser = parse_rate)]
    pub max_rate: Option<f64>,
    #[command(flatten)]
    pub open: OpenLoopArgs,
    #[command(flatten)]
    pub run: RunArgs,
    #[command(flatten)]
    pub planning: PlanningArgs,
}

/// `--by` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SearchBy {
    /// Requests in flight (closed loop)
    Concurrency,
    /// Requests per second (open loop)
    Rate,
}

impl SearchArgs {
    /// The run these flags ask for.
    pub fn request(&self) -> Result<LaunchRequest, BadInput> {
        let by_rate = self.by == SearchBy::Rate;
        if !by_rate && self.open.given() {
            return Err(BadInput(
                "--arrival, --burstiness, --max-in-flight, --window and --level-duration go \
                 with --by rate"
                    .into(),
            ));
        }
        let mut run = self.run.overrides();
        run.open = self.open.settings().map_err(BadInput)?;
        Ok(LaunchRequest {
            plan: PlanChoice::Search(SearchOverrides {
                plan: self.plan.clone(),
                slas: self.sla.thresholds(),
                min: self.min,
                max: self.max,
                max_iterations: self.max_iterations,
                no_confirm: self.no_confirm,
                max_requests_per_level: self.max_requests_per_level,
                run,
                by_rate,
                min_rate: self.min_rate,
                max_rate: self.max_rate,
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
    headless::launch(launch, args.run.json, true, args.run.serve_options()?).await
}

/// `--max-requests-per-level`: a positive count, at most a level's bound
/// ([`crate::workload::bounds::MAX_REQUESTS`], docs/limits.md).
fn parse_level_requests(s: &str) -> Result<u32, String> {
    let n = parse_positive(s)?;
    let most = crate::workload::bounds::MAX_REQUESTS;
    if n > most {
        return Err(format!("{n}: at most {most} per level"));
    }
    Ok(n)
}
