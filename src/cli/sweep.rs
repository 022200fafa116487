//! `rightsize sweep`: a concurrency sweep run headless, progress on stderr, the table (or
//! JSON) on stdout. Also the no-argument demo, which sweeps the built-in simulator.

use super::args::{duration_arg, EndpointArgs, WorkloadArgs};
use super::exit::{BadInput, EXIT_INTERRUPTED};
use super::headless;
use crate::config::file::load_layered;
use crate::config::resolve::{resolve_sweep, EndpointTarget, SweepOverrides};
use crate::config::values::{parse_concurrency, parse_positive};
use crate::engine::{self, LevelPlanner, RunRequest, SweepPlanner};
use clap::Args;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

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
    /// Requests per level
    #[arg(short = 'n', long, value_name = "N", value_parser = parse_positive)]
    pub requests: Option<u32>,
    /// Warmup requests per level, sent first at the same concurrency and not counted
    #[arg(long, value_name = "N")]
    pub warmup: Option<u32>,
    /// Per-request timeout, e.g. 90s or 10m
    #[arg(long, value_name = "DURATION", value_parser = duration_arg)]
    pub timeout: Option<Duration>,
    /// Folder to keep runs in (default: the platform data dir's rightsize/runs)
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Print the summary as JSON on stdout instead of the table
    #[arg(long)]
    pub json: bool,
    /// Stay headless even when stdout is a terminal (progress on stderr, table on stdout)
    #[arg(long)]
    pub no_tui: bool,
    /// Ask the simulator to stamp each chunk with its send time (timing ground truth)
    #[arg(long, hide = true)]
    pub sim_timing: bool,
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
            },
            plan: Some("demo".into()),
            concurrency: None,
            requests: None,
            warmup: None,
            timeout: None,
            out: None,
            json: false,
            no_tui: true,
            sim_timing: false,
        }
    }
}

/// A run ready to start: the engine's request and planner, and the in-process simulator
/// when the endpoint is the built-in one (shut it down after the run).
pub struct PreparedRun {
    pub req: RunRequest,
    pub planner: Box<dyn LevelPlanner>,
    pub sim: Option<crate::sim::SimServer>,
    /// The simulator's time scale, when it runs in-process.
    pub sim_time_scale: Option<f64>,
}

/// Resolves config and flags and starts the simulator if asked: shared by the headless run
/// and the dashboard.
pub async fn prepare(args: &SweepArgs, config: Option<&Path>) -> anyhow::Result<PreparedRun> {
    let (cfg, sources) = load_layered(config)?;
    let mut endpoint_overrides = args.endpoint.overrides();
    endpoint_overrides.sim_timing = args.sim_timing;
    let spec = resolve_sweep(
        &cfg,
        sources,
        &endpoint_overrides,
        &args.workload.overrides(),
        &SweepOverrides {
            plan: args.plan.clone(),
            concurrency: args.concurrency.clone(),
            requests: args.requests,
            warmup: args.warmup,
            timeout: args.timeout,
            out: args.out.clone(),
        },
    )?;
    let results_root = match spec.results_root.clone() {
        Some(r) => r,
        None => crate::report::default_root()
            .ok_or_else(|| BadInput("no data directory on this platform; pass --out DIR".into()))?,
    };

    let (endpoint, sim) = match &spec.endpoint {
        EndpointTarget::Remote(s) => (s.clone(), None),
        EndpointTarget::Simulator { time_scale, spec } => {
            let server = crate::sim::start(crate::sim::SimConfig::fast(*time_scale)).await?;
            let mut s = spec.clone();
            s.base_url = server.base_url.clone();
            if s.model.is_empty() {
                s.model = server.model.clone();
            }
            (s, Some(server))
        }
    };
    let req = RunRequest {
        kind: "sweep".into(),
        endpoint,
        workload: spec.workload.clone(),
        request_count: spec.request_count,
        warmup: spec.warmup,
        timeout: spec.timeout,
        results_root,
        in_process_sim: sim.is_some(),
        config_sources: spec.config_sources.clone(),
    };
    let planner = Box::new(SweepPlanner {
        levels: spec.levels.clone(),
    });
    let sim_time_scale = match &spec.endpoint {
        EndpointTarget::Simulator { time_scale, .. } => Some(*time_scale),
        EndpointTarget::Remote(_) => None,
    };
    Ok(PreparedRun {
        req,
        planner,
        sim,
        sim_time_scale,
    })
}

/// Resolves, starts the simulator if asked, runs, prints. Returns the exit code.
pub async fn execute(args: SweepArgs, config: Option<&Path>) -> anyhow::Result<ExitCode> {
    let PreparedRun {
        req,
        planner,
        sim,
        sim_time_scale,
    } = prepare(&args, config).await?;
    if let Some(f) = sim_time_scale {
        eprintln!(
            "note: the built-in simulator runs {f}x faster than real time: its token rates \
             are {f}x, and its latencies 1/{f}, of the GPU it models"
        );
    }
    let cancel = CancellationToken::new();
    let ctrl_c = cancel.clone();
    let signal_task = tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            ctrl_c.cancel();
        }
    });
    let (tx, rx) = tokio::sync::mpsc::channel(256);
    let printer = tokio::spawn(headless::print_progress(rx));
    let result = engine::run(req, planner, tx, cancel.clone()).await;
    signal_task.abort();
    let state = printer.await.unwrap_or_default();
    if let Some(server) = sim {
        server.shutdown();
    }
    let outcome = result?;
    headless::print_final(&state, &outcome, args.json)?;
    Ok(if outcome.interrupted {
        ExitCode::from(EXIT_INTERRUPTED)
    } else {
        ExitCode::SUCCESS
    })
}
