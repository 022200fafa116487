//! `rightsize sweep`: a concurrency sweep run headless, progress on stderr, the table (or
//! JSON) on stdout. Also the no-argument demo, which sweeps the built-in simulator.

use super::args::{EndpointArgs, PlanningArgs, RunArgs, SlaArgs, WorkloadArgs};
use super::exit::{BadInput, EXIT_GATE, EXIT_INTERRUPTED};
use super::headless;
use crate::config::file::load_layered;
use crate::config::resolve::{resolve_sweep, EndpointTarget, RunSettings, SweepOverrides};
use crate::config::values::parse_concurrency;
use crate::engine::{self, LevelPlanner, RunRequest};
use crate::plan::gate::{self, Answer, Gate};
use crate::plan::sla::SlaSet;
use crate::plan::{Analysis, SweepPlanner};
use clap::Args;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
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

/// Resolves, starts the simulator if asked, runs, prints. Returns the exit code.
pub async fn execute(args: SweepArgs, config: Option<&Path>) -> anyhow::Result<ExitCode> {
    launch(resolve(&args, config)?).await
}

/// Config files plus flags into a run ready to launch (shared with the dashboard).
pub(crate) fn resolve(args: &SweepArgs, config: Option<&Path>) -> anyhow::Result<Launch> {
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
            run: args.run.overrides(),
        },
    )?;
    let slas = SlaSet(args.sla.thresholds());
    if let Some(m) = slas.streaming_error(spec.run.workload.stream) {
        return Err(BadInput(m).into());
    }
    let analysis = Analysis {
        slas,
        max_error_rate: spec.run.max_error_rate,
        search: None,
        capacity: args.planning.capacity().map_err(BadInput)?,
    };
    let planner = SweepPlanner {
        levels: spec.levels.clone(),
        refine_knee: args.refine_knee,
        analysis: analysis.clone(),
    };
    Ok(Launch {
        kind: "sweep",
        run: spec.run,
        planner: Box::new(planner),
        analysis,
        planning: args.planning.clone(),
        json: args.run.json,
        rows: false,
    })
}

/// One headless run, sweep or search, resolved.
pub(crate) struct Launch {
    pub kind: &'static str,
    pub run: RunSettings,
    pub planner: Box<dyn LevelPlanner>,
    pub analysis: Analysis,
    pub planning: PlanningArgs,
    pub json: bool,
    /// Print the iteration table on stdout row by row as levels finish.
    pub rows: bool,
}

/// A run ready to start: the engine's request and planner, how to read the result, and the
/// in-process simulator when the endpoint is the built-in one (shut it down after the run).
pub(crate) struct Prepared {
    pub req: RunRequest,
    pub planner: Box<dyn LevelPlanner>,
    pub analysis: Analysis,
    pub gate: Gate,
    pub sim: Option<crate::sim::SimServer>,
    /// The simulator's time scale, when it runs in-process.
    pub sim_time_scale: Option<f64>,
}

/// Loads the gate's baseline and starts the simulator if asked.
pub(crate) async fn prepare(l: Launch) -> anyhow::Result<Prepared> {
    let results_root = match l.run.results_root.clone() {
        Some(r) => r,
        None => crate::report::default_root()
            .ok_or_else(|| BadInput("no data directory on this platform; pass --out DIR".into()))?,
    };
    let gate = Gate {
        require_concurrency: l.planning.require_concurrency,
        baseline: match &l.planning.baseline {
            Some(run) => Some(load_baseline(&results_root, run)?),
            None => None,
        },
        max_regression: l.planning.max_regression.unwrap_or(0.1),
    };
    let (endpoint, sim, sim_time_scale) = match &l.run.endpoint {
        EndpointTarget::Remote(s) => (s.clone(), None, None),
        EndpointTarget::Simulator { time_scale, spec } => {
            // the simulator counts prompts with the run's tokenizer, as a real server would
            let cfg = crate::sim::SimConfig {
                tokenizer: l.run.workload.tokenizer.clone(),
                ..crate::sim::SimConfig::fast(*time_scale)
            };
            let server = crate::sim::start(cfg).await?;
            let mut s = spec.clone();
            s.base_url = server.base_url.clone();
            if s.model.is_empty() {
                s.model = server.model.clone();
            }
            (s, Some(server), Some(*time_scale))
        }
    };
    let req = RunRequest {
        kind: l.kind.into(),
        endpoint,
        workload: l.run.workload.clone(),
        request_count: l.run.request_count,
        warmup: l.run.warmup,
        timeout: l.run.timeout,
        results_root,
        in_process_sim: sim.is_some(),
        config_sources: l.run.config_sources.clone(),
    };
    Ok(Prepared {
        req,
        planner: l.planner,
        analysis: l.analysis,
        gate,
        sim,
        sim_time_scale,
    })
}

/// Starts the simulator if asked, runs the plan, prints, applies the gate.
pub(crate) async fn launch(l: Launch) -> anyhow::Result<ExitCode> {
    let (json, rows) = (l.json, l.rows);
    let Prepared {
        req,
        planner,
        analysis,
        gate,
        sim,
        sim_time_scale,
    } = prepare(l).await?;
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
    let row_analysis = (rows && !json).then(|| analysis.clone());
    let printer = tokio::spawn(headless::print_progress(rx, row_analysis));
    let result = engine::run(req, planner, tx, cancel.clone()).await;
    signal_task.abort();
    let state = printer.await.unwrap_or_default();
    if let Some(server) = sim {
        server.shutdown();
    }
    let outcome = result?;
    let analysis = crate::plan::analyse(&analysis, &outcome.levels);
    headless::print_final(&state, &outcome, &analysis, json, rows)?;
    if outcome.interrupted {
        return Ok(ExitCode::from(EXIT_INTERRUPTED));
    }
    let failures = gate::check(analysis.answer.as_ref(), &gate);
    for f in &failures {
        eprintln!("gate failed: {f}");
    }
    Ok(if failures.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_GATE)
    })
}

/// The answer of an earlier run: a run folder, or a run id under the results root.
fn load_baseline(root: &Path, run: &str) -> anyhow::Result<Answer> {
    let given = PathBuf::from(run);
    let dir = if given.is_dir() {
        given
    } else {
        root.join(run)
    };
    let path = dir.join("summary.json");
    let text = std::fs::read_to_string(&path).map_err(|e| {
        BadInput(format!(
            "--baseline {run}: cannot read {}: {e}",
            path.display()
        ))
    })?;
    let v: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| BadInput(format!("--baseline {run}: {}: {e}", path.display())))?;
    serde_json::from_value::<Answer>(v["answer"].clone()).map_err(|_| {
        BadInput(format!(
            "--baseline {run}: {} has no answer to compare with",
            path.display()
        ))
        .into()
    })
}
