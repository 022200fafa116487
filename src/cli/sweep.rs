//! `rightsize sweep`: a concurrency sweep run headless, progress on stderr, the table (or
//! JSON) on stdout. Also the no-argument demo, which sweeps the built-in simulator.

use super::open_args::{parse_rate, parse_rates, parse_schedule, OpenLoopArgs, AUTO_SATURATE};
use super::run_args::{EndpointArgs, PlanningArgs, RunArgs, SlaArgs, WorkloadArgs};
use crate::config::overrides::SweepOverrides;
use crate::headless;
use crate::headless::exit::BadInput;
use crate::launch::{LaunchRequest, OpenChoice, PlanChoice};
use crate::values::parse_concurrency;
use crate::workload::arrivals::LoadShape;
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
    /// Open loop: request rates (requests/s), comma-separated, one level each; or `auto` /
    /// `auto:N`: a synchronous level (concurrency 1), a saturated one (concurrency 512, or
    /// -c N), then N rates (default 8) spread up to the saturated request rate
    #[arg(long, value_name = "LIST|auto[:N]", value_parser = parse_rates,
          conflicts_with_all = ["rate", "schedule"])]
    pub rates: Option<OpenChoice>,
    /// Open loop: one level at this request rate (requests/s)
    #[arg(long, value_name = "RPS", value_parser = parse_rate,
          conflicts_with_all = ["concurrency", "schedule"])]
    pub rate: Option<f64>,
    /// Open loop: one level whose rate changes over time, `steps:1,2,4,8@60s` (each rate for
    /// 60 s) or `ramp:0-20rps@10m`; metrics are reported per --window as well
    #[arg(long, value_name = "SHAPE", value_parser = parse_schedule,
          conflicts_with = "concurrency")]
    pub schedule: Option<LoadShape>,
    #[command(flatten)]
    pub open: OpenLoopArgs,
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
                region: None,
                aws_profile: None,
                inference_component: None,
                target_variant: None,
                sagemaker_format: None,
                sagemaker_request_template: None,
                sagemaker_text_pointer: None,
                sagemaker_token_count_pointer: None,
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
                sessions: Default::default(),
            },
            plan: Some("demo".into()),
            concurrency: None,
            rates: None,
            rate: None,
            schedule: None,
            open: OpenLoopArgs::default(),
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
        let mut concurrency = self.concurrency.clone();
        let open = match (&self.rates, self.rate, &self.schedule) {
            (Some(OpenChoice::AutoRates { count, .. }), ..) => {
                let saturate = match concurrency.take().as_deref() {
                    None => AUTO_SATURATE,
                    Some([c]) => *c,
                    Some(_) => {
                        return Err(BadInput(
                            "--rates auto takes one -c (the saturated level's concurrency)".into(),
                        ))
                    }
                };
                OpenChoice::AutoRates {
                    count: *count,
                    saturate,
                }
            }
            (Some(_), ..) if concurrency.is_some() => {
                return Err(BadInput(
                    "--rates and --concurrency are two kinds of level; give one (with --rates \
                     auto, -c N sets the saturated level)"
                        .into(),
                ))
            }
            (Some(r), ..) => r.clone(),
            (None, Some(r), _) => OpenChoice::Rates(vec![r]),
            (None, None, Some(s)) => OpenChoice::Schedule(s.clone()),
            (None, None, None) => OpenChoice::Closed,
        };
        if open == OpenChoice::Closed && self.open.given() {
            return Err(BadInput(
                "--arrival, --burstiness, --max-in-flight, --window and --level-duration go \
                 with --rates, --rate or --schedule"
                    .into(),
            ));
        }
        if open != OpenChoice::Closed && self.refine_knee {
            return Err(BadInput(
                "--refine-knee refines concurrency levels, not rates".into(),
            ));
        }
        let mut run = self.run.overrides();
        run.open = self.open.settings().map_err(BadInput)?;
        Ok(LaunchRequest {
            plan: PlanChoice::Sweep {
                overrides: SweepOverrides {
                    plan: self.plan.clone(),
                    concurrency,
                    run,
                },
                refine_knee: self.refine_knee,
                slas: self.sla.thresholds(),
                open,
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
    headless::launch(launch, args.run.json, false, args.run.serve_options()?).await
}
