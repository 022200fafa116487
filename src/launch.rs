//! The launch step shared by the command line and the dashboard: a [`LaunchRequest`] (what
//! the user asked for, as flags or as the setup form give it) is resolved against the config
//! files into a [`Launch`] (settings, planner, analysis, gate), then [`prepare`]d (the
//! built-in simulator started, the gate's baseline read). Neither surface imports the other:
//! both build a request and call this.

use crate::config::file::load_layered;
use crate::config::overrides::{
    EndpointOverrides, EndpointTarget, InputError, SweepOverrides, WorkloadOverrides,
};
use crate::config::resolve::{resolve_sweep, RunSettings};
use crate::config::search::{resolve_search, SearchOverrides};
use crate::engine::{LevelPlanner, RunRequest};
use crate::plan::capacity::CapacityInputs;
use crate::plan::gate::{Answer, Gate};
use crate::plan::judge::SlaSet;
use crate::plan::{Analysis, LevelLoad, SearchPlanner, SweepPlanner};
use crate::record::sla::SlaThreshold;
use crate::report::folder::FolderSink;
use crate::workload::arrivals::LoadShape;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Which plan a run follows, with its own choices.
#[derive(Debug, Clone)]
pub enum PlanChoice {
    /// Fixed levels (`rightsize sweep`), with SLAs to judge them by.
    Sweep {
        overrides: SweepOverrides,
        refine_knee: bool,
        slas: Vec<SlaThreshold>,
        /// Open-loop levels instead of the concurrency levels.
        open: OpenChoice,
    },
    /// The highest concurrency under the SLAs (`rightsize search`).
    Search(SearchOverrides),
}

/// A sweep's open-loop levels (`docs/open-loop.md`).
#[derive(Debug, Clone, Default, PartialEq)]
pub enum OpenChoice {
    /// Concurrency levels (a closed loop).
    #[default]
    Closed,
    /// One level per rate (requests/s), in order.
    Rates(Vec<f64>),
    /// A synchronous level (concurrency 1) and a saturated one (concurrency `saturate`)
    /// find the range; then `count` rates evenly spread above the first up to the second's
    /// request rate.
    AutoRates { count: u32, saturate: u32 },
    /// One level whose rate changes over time.
    Schedule(LoadShape),
    /// One level sending a trace's records at their timestamps divided by `speedup`.
    Replay { file: PathBuf, speedup: f64 },
}

/// The CI gate as asked.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GateChoice {
    pub require_concurrency: Option<u32>,
    /// An earlier run (folder or id) whose answer the run must not fall behind.
    pub baseline: Option<String>,
    pub max_regression: Option<f64>,
}

/// A run as the user asked for it, before the config files are read.
#[derive(Debug, Clone)]
pub struct LaunchRequest {
    pub plan: PlanChoice,
    pub endpoint: EndpointOverrides,
    pub workload: WorkloadOverrides,
    /// Peak, headroom and price for the planning numbers.
    pub capacity: CapacityInputs,
    pub gate: GateChoice,
}

impl LaunchRequest {
    /// The no-argument demo: the config's `demo` sweep against the default endpoint.
    pub fn demo() -> Self {
        LaunchRequest {
            plan: PlanChoice::Sweep {
                overrides: SweepOverrides {
                    plan: Some("demo".into()),
                    ..SweepOverrides::default()
                },
                refine_knee: false,
                slas: Vec::new(),
                open: OpenChoice::Closed,
            },
            endpoint: EndpointOverrides::default(),
            workload: WorkloadOverrides::default(),
            capacity: CapacityInputs::default(),
            gate: GateChoice::default(),
        }
    }

    /// The run settings every plan carries (requests, timeout, results folder, ...).
    pub fn run(&self) -> &crate::config::overrides::RunOverrides {
        match &self.plan {
            PlanChoice::Sweep { overrides, .. } => &overrides.run,
            PlanChoice::Search(s) => &s.run,
        }
    }

    /// The same, to change.
    pub fn run_mut(&mut self) -> &mut crate::config::overrides::RunOverrides {
        match &mut self.plan {
            PlanChoice::Sweep { overrides, .. } => &mut overrides.run,
            PlanChoice::Search(s) => &mut s.run,
        }
    }

    /// The SLAs given (a sweep's or a search's).
    pub fn slas(&self) -> &[SlaThreshold] {
        match &self.plan {
            PlanChoice::Sweep { slas, .. } => slas,
            PlanChoice::Search(s) => &s.slas,
        }
    }
}

/// A run resolved against the config: ready to prepare.
pub struct Launch {
    /// `sweep` or `search`.
    pub kind: &'static str,
    pub run: RunSettings,
    pub planner: Box<dyn LevelPlanner>,
    pub analysis: Analysis,
    pub gate: GateChoice,
    /// The simulator's model when the endpoint is the built-in simulator and the run asks for
    /// its own (a campaign's simulated candidate); `None`: the default model.
    pub sim_model: Option<crate::sim::SimConfig>,
    /// A replay's traffic as recorded (`workload::traffic`), for `run.json`.
    pub traffic: Option<crate::workload::traffic::Traffic>,
}

/// Config files plus the request into a run ready to launch.
pub fn resolve(req: &LaunchRequest, config: Option<&Path>) -> anyhow::Result<Launch> {
    let (cfg, sources) = load_layered(config)?;
    match &req.plan {
        PlanChoice::Sweep {
            overrides,
            refine_knee,
            slas,
            open,
        } => {
            let spec = resolve_sweep(&cfg, sources, &req.endpoint, &req.workload, overrides)?;
            check_bounds(&spec.run, open)?;
            if *open != OpenChoice::Closed {
                sessions_need_closed_loop(&spec.run.workload)?;
            }
            let slas = SlaSet(slas.clone());
            if let Some(m) = slas.streaming_error(spec.run.workload.stream) {
                return Err(InputError(m).into());
            }
            let analysis = Analysis {
                slas,
                max_error_rate: spec.run.max_error_rate,
                search: None,
                capacity: req.capacity,
            };
            let planner = match open {
                OpenChoice::Closed => SweepPlanner {
                    levels: spec.levels.clone(),
                    refine_knee: *refine_knee,
                    analysis: analysis.clone(),
                    open: Vec::new(),
                    auto_rates: None,
                },
                other => open_planner(other, analysis.clone(), &spec.run.workload)?,
            };
            let traffic = match open {
                OpenChoice::Replay { file, .. } => {
                    let tok = &*spec.run.workload.loaded().tokenizer.tokenizer;
                    Some(crate::workload::traffic::of_file(file, tok).map_err(InputError)?)
                }
                _ => None,
            };
            Ok(Launch {
                kind: match open {
                    OpenChoice::Replay { .. } => "replay",
                    _ => "sweep",
                },
                run: spec.run,
                planner: Box::new(planner),
                analysis,
                gate: req.gate.clone(),
                sim_model: None,
                traffic,
            })
        }
        PlanChoice::Search(overrides) => {
            let spec = resolve_search(&cfg, sources, &req.endpoint, &req.workload, overrides)?;
            check_bounds(&spec.run, &OpenChoice::Closed)?;
            let analysis = Analysis {
                slas: spec.slas.clone(),
                max_error_rate: spec.run.max_error_rate,
                search: Some(spec.config),
                capacity: req.capacity,
            };
            if spec.by_rate {
                check_rate_peak(&req.capacity)?;
                sessions_need_closed_loop(&spec.run.workload)?;
            }
            let planner = if spec.by_rate {
                SearchPlanner::by_rate(spec.config, analysis.clone())
            } else {
                SearchPlanner::new(spec.config, analysis.clone())
            };
            Ok(Launch {
                kind: "search",
                run: spec.run,
                planner: Box::new(planner),
                analysis,
                gate: req.gate.clone(),
                sim_model: None,
                traffic: None,
            })
        }
    }
}

/// Counts and fixed-rate levels within what the machine can hold (`workload::bounds`),
/// before anything is started.
fn check_bounds(run: &RunSettings, open: &OpenChoice) -> Result<(), InputError> {
    use crate::workload::bounds;
    let available = bounds::available_memory();
    // one round is the level's concurrency, fewer than its requests (at least two rounds)
    let warmup = run.warmup.explicit().unwrap_or(0);
    bounds::check_counts(
        run.request_count,
        run.request_count_from,
        warmup,
        (run.workload.input_tokens, run.workload.input_tokens_stddev),
        available,
    )
    .map_err(InputError)?;
    if let OpenChoice::Rates(rates) = open {
        for r in rates {
            bounds::check_rate_level(*r, run.open.level_s, run.open.requests)
                .map_err(InputError)?;
        }
    }
    Ok(())
}

/// Multi-turn sessions run on concurrency levels only: a turn waits for the previous answer,
/// which an arrival schedule of independent requests cannot.
fn sessions_need_closed_loop(w: &crate::workload::WorkloadSpec) -> Result<(), InputError> {
    match &w.sessions {
        Some(s) if s.agent.is_some() => Err(InputError(
            "--agent: agent loops run at concurrency levels (each request waits for the tool \
             calls of the previous answer); open-loop rates send independent requests. Use \
             --concurrency, or leave out --agent"
                .to_string(),
        )),
        Some(s) => Err(InputError(format!(
            "--turns {}: multi-turn sessions run at concurrency levels (each turn waits for \
             the previous answer); open-loop rates send independent requests. Use \
             --concurrency, or leave out --turns",
            s.turns
        ))),
        None => Ok(()),
    }
}

/// A sweep planner for open-loop levels.
fn open_planner(
    open: &OpenChoice,
    analysis: Analysis,
    workload: &crate::workload::WorkloadSpec,
) -> anyhow::Result<SweepPlanner> {
    if matches!(open, OpenChoice::Rates(_) | OpenChoice::AutoRates { .. }) {
        check_rate_peak(&analysis.capacity)?;
    }
    Ok(match open {
        OpenChoice::Closed => unreachable!("closed sweeps have their own planner"),
        OpenChoice::Rates(rates) => SweepPlanner::open(
            rates
                .iter()
                .map(|r| LevelLoad::Open(LoadShape::Rate { rps: *r }))
                .collect(),
            analysis,
        ),
        OpenChoice::AutoRates { count, saturate } => SweepPlanner {
            auto_rates: Some(*count),
            ..SweepPlanner::open(Vec::new(), analysis).with_probes(vec![1, *saturate])
        },
        OpenChoice::Schedule(shape) => {
            SweepPlanner::open(vec![LevelLoad::Open(shape.clone())], analysis)
        }
        OpenChoice::Replay { file, speedup } => {
            let times =
                crate::workload::trace::read_send_times(file, *speedup).map_err(InputError)?;
            replay_matches_dataset(file, times.len(), workload)?;
            let shape = LoadShape::Replay {
                records: times.len() as u64,
                span_s: times.last().copied().unwrap_or(0) as f64 / 1e9,
                speedup: *speedup,
            };
            SweepPlanner::open(
                vec![LevelLoad::Replay {
                    times: std::sync::Arc::new(times),
                    shape,
                }],
                analysis,
            )
        }
    })
}

/// Record `i` of a replay is sent at time `i`: a dataset read of the trace that left records
/// out (a length filter, an empty answer) would pair prompts with other records' times.
fn replay_matches_dataset(
    file: &Path,
    timed: usize,
    workload: &crate::workload::WorkloadSpec,
) -> Result<(), InputError> {
    let Some(d) = &workload.dataset else {
        return Ok(());
    };
    match d.records {
        Some(kept) if kept != timed as u64 => Err(InputError(format!(
            "{}: {timed} records have send times but the prompts read from it are {kept} ({}); \
             a replay sends every timed record, so drop the --dataset-min/max filters",
            file.display(),
            d.skipped
                .iter()
                .map(|(k, v)| format!("{v} {k}"))
                .collect::<Vec<_>>()
                .join(", ")
        ))),
        _ => Ok(()),
    }
}

/// A rate run sizes by request rate or token rate: a peak in requests in flight has no
/// rate level to be compared with.
fn check_rate_peak(c: &CapacityInputs) -> Result<(), InputError> {
    match c.peak {
        Some(crate::plan::capacity::Peak::Concurrency(_)) => Err(InputError(
            "--peak-concurrency needs concurrency levels; a rate run sizes by --peak-rps (or \
             --peak-output-tps)"
                .into(),
        )),
        _ => Ok(()),
    }
}

/// A run ready to start: the engine's request and planner, how to read the result, and the
/// in-process simulator when the endpoint is the built-in one (shut it down after the run).
pub struct Prepared {
    pub req: RunRequest,
    pub planner: Box<dyn LevelPlanner>,
    pub analysis: Analysis,
    pub gate: Gate,
    pub sim: Option<crate::sim::SimServer>,
    /// The simulator's time scale, when it runs in-process.
    pub sim_time_scale: Option<f64>,
    /// A distributed run: where its controller listens for how many workers.
    pub fleet_note: Option<String>,
}

/// The most local worker processes a run starts: each is a process of this binary with its
/// own runtime and sockets; more belong on other machines (`--worker-backend external`).
pub const MAX_LOCAL_WORKERS: u32 = 256;

/// Refuses a worker count past the ceiling of its backend, or (a closed-loop plan, whose
/// `max_concurrency` is not 0) past the plan's highest concurrency, where a worker would hold
/// no stream: before anything is started.
pub fn check_workers(
    choice: &crate::config::overrides::FleetChoice,
    max_concurrency: u32,
) -> Result<(), InputError> {
    use crate::config::overrides::WorkerBackend;
    let n = choice.workers;
    let ceiling = match choice.backend {
        WorkerBackend::Local => MAX_LOCAL_WORKERS,
        WorkerBackend::External => crate::k8s::MAX_WORKERS,
    };
    if n > ceiling {
        return Err(InputError(match choice.backend {
            WorkerBackend::Local => format!(
                "--workers {n}: at most {ceiling} local worker processes (each is a process of \
                 this binary); for more, start them on other machines with \
                 --worker-backend external (docs/distributed.md)"
            ),
            WorkerBackend::External => format!("--workers {n}: at most {ceiling} workers"),
        }));
    }
    if max_concurrency > 0 && n > max_concurrency {
        return Err(InputError(format!(
            "--workers {n}: more workers than the plan's highest concurrency \
             ({max_concurrency}), so some would hold no stream; use at most {max_concurrency}"
        )));
    }
    Ok(())
}

/// A distributed run's controller, listening, with its local workers started: the run
/// waits for them (and, for external workers, for them to be started elsewhere). The note
/// says where it listens. `in_process_sim`: the run's endpoint is the built-in simulator
/// (which workers elsewhere cannot reach).
pub async fn start_fleet(
    choice: &crate::config::overrides::FleetChoice,
    in_process_sim: bool,
) -> anyhow::Result<(Arc<dyn crate::engine::fleet::Fleet>, String)> {
    use crate::config::overrides::WorkerBackend;
    check_workers(choice, 0)?;
    let n = choice.workers as usize;
    let (token, listen) = match choice.backend {
        WorkerBackend::Local => (
            crate::secrets::random_token(),
            choice
                .listen
                .clone()
                .unwrap_or_else(|| "127.0.0.1:0".into()),
        ),
        WorkerBackend::External => {
            if in_process_sim {
                return Err(InputError(
                    "--worker-backend external: the built-in simulator runs inside this \
                     process on 127.0.0.1, where other machines' workers cannot reach it; \
                     pass the URL of an endpoint they can reach with --endpoint, or use \
                     --worker-backend local"
                        .into(),
                )
                .into());
            }
            let token = std::env::var(crate::secrets::WORKER_TOKEN_ENV)
                .ok()
                .filter(|t| !t.trim().is_empty())
                .ok_or_else(|| {
                    InputError(format!(
                        "--worker-backend external needs the run's token in {}: the workers \
                         present it (the Secret `rightsize k8s render` makes holds one)",
                        crate::secrets::WORKER_TOKEN_ENV
                    ))
                })?;
            (
                token.trim().to_string(),
                choice
                    .listen
                    .clone()
                    .unwrap_or_else(|| "0.0.0.0:7077".into()),
            )
        }
    };
    let controller = crate::fleet::Controller::start(&listen, n, token.clone())
        .await
        .map_err(|e| InputError(e.to_string()))?;
    let note = match choice.backend {
        WorkerBackend::Local => format!(
            "controller on {}: starting {n} local workers",
            controller.addr()
        ),
        WorkerBackend::External => format!(
            "controller on {}: waiting for {n} workers (`rightsize worker --controller \
             http://HOST:{}` with the run's token in {})",
            controller.addr(),
            controller.addr().port(),
            crate::secrets::WORKER_TOKEN_ENV
        ),
    };
    if choice.backend == WorkerBackend::Local {
        let url = format!("http://{}", controller.addr());
        let losses = controller.losses();
        let lose = move |index, why| losses.lose(index, why);
        let children = crate::fleet::local::start(&url, n, &token, lose)
            .map_err(|e| anyhow::anyhow!("cannot start the local workers: {e}"))?;
        controller.adopt(children);
    }
    Ok((Arc::new(controller), note))
}

/// Loads the gate's baseline and starts the simulator if asked.
pub async fn prepare(l: Launch) -> anyhow::Result<Prepared> {
    if let Some(choice) = &l.run.fleet {
        check_workers(choice, l.planner.max_concurrency())?;
    }
    let results_root = match l.run.results_root.clone() {
        Some(r) => r,
        None => crate::report::default_root().ok_or_else(|| {
            InputError("no data directory on this platform; pass --out DIR".into())
        })?,
    };
    let gate = Gate {
        require_concurrency: l.gate.require_concurrency,
        baseline: match &l.gate.baseline {
            Some(run) => Some(load_baseline(&results_root, run)?),
            None => None,
        },
        max_regression: l.gate.max_regression.unwrap_or(0.1),
    };
    let (endpoint, sim, sim_time_scale) = match &l.run.endpoint {
        EndpointTarget::Remote(s) => (s.clone(), None, None),
        EndpointTarget::Simulator { time_scale, spec } => {
            // the simulator counts prompts with the run's tokenizer, as a real server would
            let model = l.sim_model.clone().unwrap_or_default();
            let cfg = crate::sim::SimConfig {
                tokenizer: l.run.workload.tokenizer.clone(),
                port: 0,
                time_scale: *time_scale,
                ..model
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
    let (fleet, fleet_note) = match &l.run.fleet {
        Some(choice) => {
            let (fleet, note) = start_fleet(choice, sim.is_some()).await?;
            (Some(fleet), Some(note))
        }
        None => (None, None),
    };
    let req = RunRequest {
        kind: l.kind.into(),
        endpoint,
        workload: l.run.workload.clone(),
        request_count: l.run.request_count,
        warmup: l.run.warmup,
        timeout: l.run.timeout,
        preflight_timeout: l.run.preflight_timeout,
        telemetry_interval: l.run.telemetry_interval,
        // the simulator's modelled GPU answers as dcgm-exporter does
        gpu_metrics: l.run.gpu_metrics.clone().or_else(|| {
            sim.as_ref()
                .map(|s| crate::telemetry::scrape::sibling_url(&s.base_url, "dcgm/metrics"))
        }),
        sink: Box::new(FolderSink::new(results_root)),
        in_process_sim: sim.is_some(),
        config_sources: l.run.config_sources.clone(),
        open: l.run.open,
        traffic: l.traffic,
        prefix_cache: l.run.prefix_cache,
        prefix_cache_reset_url: l.run.prefix_cache_reset_url.clone(),
        fleet,
    };
    Ok(Prepared {
        req,
        planner: l.planner,
        analysis: l.analysis,
        gate,
        sim,
        sim_time_scale,
        fleet_note,
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
        InputError(format!(
            "--baseline {run}: cannot read {}: {e}",
            path.display()
        ))
    })?;
    let v: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| InputError(format!("--baseline {run}: {}: {e}", path.display())))?;
    serde_json::from_value::<Answer>(v["answer"].clone()).map_err(|_| {
        InputError(format!(
            "--baseline {run}: {} has no answer to compare with",
            path.display()
        ))
        .into()
    })
}
