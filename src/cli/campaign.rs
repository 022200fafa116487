//! `rightsize campaign FILE | --plan NAME | --resume DIR`: several candidates, one SLA search
//! each, ranked by cost per million output tokens at the answer (docs/campaigns.md).

use crate::campaign::campaign_file::{is_campaign_dir, CampaignRecord, CampaignSource};
use crate::campaign::rank::RankBy;
use crate::campaign::runner::{CampaignEnd, CampaignRun};
use crate::campaign::spec::{
    entry_from_config, resolve, CampaignFlags, CampaignSpec, CandidateSource,
};
use crate::config::campaign::CampaignEntry;
use crate::engine::fleet::{Fleet, Lent};
use crate::headless::exit::{BadInput, EXIT_GATE, EXIT_INTERRUPTED, EXIT_RUN_FAILED};
use crate::launch::Prepared;
use crate::values::{parse_positive, parse_timeout};
use clap::Args;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// Flags of `rightsize campaign`.
#[derive(Debug, Clone, Args)]
#[command(
    after_help = "Example: rightsize campaign --plan demo   (three simulated candidates)\n\
The candidates run one after another, each an ordinary SLA search saved in the campaign \
folder; campaign.json there records their states, and --resume DIR goes on from the first \
unfinished one. docs/campaigns.md describes the file and the ranking."
)]
pub struct CampaignArgs {
    /// A campaign file: the keys of one [campaigns.NAME] at the top level
    #[arg(value_name = "FILE", conflicts_with_all = ["plan", "resume"], required_unless_present_any = ["plan", "resume"])]
    pub file: Option<PathBuf>,
    /// A [campaigns.NAME] from the config (`demo`: three simulated candidates)
    #[arg(long, value_name = "NAME", conflicts_with = "resume")]
    pub plan: Option<String>,
    /// Go on with an interrupted campaign from its first unfinished candidate
    #[arg(long, value_name = "DIR")]
    pub resume: Option<PathBuf>,
    /// What the ranking sorts by
    #[arg(long, value_enum, default_value = "cost-per-million")]
    pub rank_by: RankBy,
    /// CI gate: exit 3 when no candidate's cost per million output tokens is at most X
    #[arg(long, value_name = "X", value_parser = parse_cost)]
    pub max_cost_per_million: Option<f64>,
    /// Requests per level, for every candidate (over the search plan's)
    #[arg(short = 'n', long, value_name = "N", value_parser = parse_positive)]
    pub requests: Option<u32>,
    /// Per-request timeout, e.g. 90s or 10m
    #[arg(long, value_name = "DURATION", value_parser = parse_timeout)]
    pub timeout: Option<std::time::Duration>,
    /// Folder the campaign folder goes in (default: the runs folder)
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Simulated candidates: run their model this many times faster than real time (over
    /// each candidate's own time_scale)
    #[arg(long, value_name = "F")]
    pub sim_time_scale: Option<f64>,
    /// Print the campaign record (states and ranking) as JSON on stdout
    #[arg(long)]
    pub json: bool,
    /// Stay headless even when stdout is a terminal (progress on stderr, ranking on stdout)
    #[arg(long)]
    pub no_tui: bool,
    /// Serve the campaign while it goes on, at IP:PORT (127.0.0.1:0 takes a free port,
    /// printed): `rightsize watch http://ADDR` shows its view, Prometheus reads /metrics
    /// (docs/watch.md). Beyond loopback it needs a token in RIGHTSIZE_SERVE_TOKEN. A served
    /// campaign runs headless
    #[arg(long, value_name = "ADDR", value_parser = crate::serve::parse_addr)]
    pub serve: Option<std::net::SocketAddr>,
    /// One set of workers runs every candidate's levels, one candidate after another
    #[command(flatten)]
    pub fleet: super::run_args::FleetArgs,
}

fn parse_cost(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(format!("`{s}` is not a cost (a number >= 0)")),
    }
}

/// The campaign's definition, and where it came from.
fn definition(
    args: &CampaignArgs,
    config: Option<&Path>,
) -> anyhow::Result<(
    String,
    CampaignEntry,
    CampaignSource,
    Option<CampaignRecord>,
)> {
    let config_path = config.map(Path::to_path_buf);
    if let Some(dir) = &args.resume {
        if !is_campaign_dir(dir) {
            return Err(BadInput(format!(
                "--resume {}: not a campaign folder (no campaign.json)",
                dir.display()
            ))
            .into());
        }
        let rec = CampaignRecord::read(dir)
            .map_err(|e| BadInput(format!("--resume {}: {e}", dir.display())))?;
        let (name, entry) = match &rec.source {
            CampaignSource::Plan { name, config } => {
                (name.clone(), entry_from_config(config.as_deref(), name)?.0)
            }
            CampaignSource::File { path, .. } => (rec.name.clone(), CampaignEntry::read(path)?),
        };
        let source = rec.source.clone();
        return Ok((name, entry, source, Some(rec)));
    }
    if let Some(name) = &args.plan {
        let (entry, _) = entry_from_config(config, name)?;
        let source = CampaignSource::Plan {
            name: name.clone(),
            config: config_path,
        };
        return Ok((name.clone(), entry, source, None));
    }
    let file = args
        .file
        .clone()
        .ok_or_else(|| BadInput("give a campaign FILE, --plan NAME or --resume DIR".into()))?;
    let entry = CampaignEntry::read(&file)?;
    let name = file
        .file_stem()
        .map_or("campaign".into(), |s| s.to_string_lossy().into_owned());
    let path = std::fs::canonicalize(&file).unwrap_or(file);
    Ok((
        name,
        entry,
        CampaignSource::File {
            path,
            config: config_path,
        },
        None,
    ))
}

/// Resolves, pre-flights every candidate, runs them, prints the ranking, applies the gate.
pub async fn execute(args: CampaignArgs, config: Option<&Path>) -> anyhow::Result<ExitCode> {
    // a refused --serve is said before the campaign's folder is made
    let serve = args
        .serve
        .map(crate::serve::ServeOptions::from_flag)
        .transpose()?;
    let (run, resuming) = open_campaign(&args, config)?;
    eprintln!(
        "campaign {}: {} candidates\n  saving to {}",
        run.record.name,
        run.record.candidates.len(),
        run.dir.display()
    );
    let cancel = CancellationToken::new();
    let signals = crate::headless::signals::watch(cancel.clone());
    let checked = tokio::select! {
        p = run.check_all() => p,
        _ = cancel.cancelled() => {
            if !resuming {
                let _ = std::fs::remove_dir(&run.dir);
            }
            eprintln!("interrupted before any load was sent");
            return Ok(ExitCode::from(signals.caught().map_or(EXIT_INTERRUPTED, |s| s.exit_code())));
        }
    };
    let mut prepared = match checked {
        Ok(p) => p,
        Err(e) => {
            leave_nothing_behind(&run, resuming);
            return Err(e);
        }
    };
    let simulated = note_simulated(&run.spec);
    let fleet = match start_fleet(&args.fleet, simulated, &mut prepared).await {
        Ok(f) => f,
        Err(e) => {
            leave_nothing_behind(&run, resuming);
            return Err(e);
        }
    };
    let (run, end) = run_candidates(run, prepared, cancel, &args, serve.as_ref()).await?;
    if let Some(fleet) = fleet {
        for note in fleet.finish().await {
            eprintln!("{note}");
        }
    }
    let end = end?;
    print_ranking(&run, args.json)?;
    Ok(match end {
        CampaignEnd::Interrupted => {
            eprintln!(
                "interrupted: finished candidates are kept; go on with `rightsize campaign \
                 --resume {}`",
                run.dir.display()
            );
            ExitCode::from(signals.caught().map_or(EXIT_INTERRUPTED, |s| s.exit_code()))
        }
        CampaignEnd::Finished { failed } => {
            if gate_fails(&run.record, args.max_cost_per_million) {
                ExitCode::from(EXIT_GATE)
            } else if failed > 0 {
                ExitCode::from(EXIT_RUN_FAILED)
            } else {
                ExitCode::SUCCESS
            }
        }
    })
}

/// The campaign resolved from its definition, in a new folder or the one it resumes;
/// `true` with it when it resumes.
fn open_campaign(
    args: &CampaignArgs,
    config: Option<&Path>,
) -> anyhow::Result<(CampaignRun, bool)> {
    let (name, entry, source, resumed) = definition(args, config)?;
    let config = source.config().map(Path::to_path_buf);
    let flags = CampaignFlags {
        run: crate::config::overrides::RunOverrides {
            requests: args.requests,
            timeout: args.timeout,
            ..Default::default()
        },
        sim_time_scale: args.sim_time_scale,
    };
    let spec = resolve(&name, &entry, config.as_deref(), &flags)?;
    if args.rank_by == RankBy::FleetCost && spec.capacity.peak.is_none() {
        return Err(BadInput(format!(
            "--rank-by fleet-cost needs a peak: campaign {name} has no peak_concurrency, \
             peak_rps or peak_output_tps"
        ))
        .into());
    }
    let resuming = resumed.is_some();
    let run = match resumed {
        Some(mut rec) => {
            rec.rank_by = args.rank_by;
            let dir = args.resume.clone().unwrap_or_default();
            CampaignRun::resume(&dir, spec, rec)?
        }
        None => {
            let root = results_root(args, config.as_deref())?;
            CampaignRun::create(spec, source, &root, args.rank_by)?
        }
    };
    Ok((run, resuming))
}

/// The folder a new campaign's folder goes in: `--out`, the config's, or the platform's.
fn results_root(args: &CampaignArgs, config: Option<&Path>) -> anyhow::Result<PathBuf> {
    if let Some(d) = args.out.clone() {
        return Ok(d);
    }
    let (cfg, _) = crate::config::file::load_layered(config)?;
    Ok(match cfg.defaults.results_dir {
        Some(d) => d,
        None => crate::report::default_root()
            .ok_or_else(|| BadInput("no data directory on this platform; pass --out DIR".into()))?,
    })
}

/// A new campaign's folder is still empty when it fails before any load: leave nothing behind.
fn leave_nothing_behind(run: &CampaignRun, resuming: bool) {
    if !resuming {
        let _ = std::fs::remove_dir(&run.dir);
    }
}

/// Whether any candidate is simulated, saying what that means for its cost when one is.
fn note_simulated(spec: &CampaignSpec) -> bool {
    let simulated = spec.candidates.iter().any(|c| {
        matches!(
            &c.source,
            CandidateSource::Live {
                sim_model: Some(_),
                ..
            }
        )
    });
    if simulated {
        eprintln!(
            "note: simulated candidates run faster than real time: their throughput, and so \
             their cost per token, is the simulator's, not a GPU's"
        );
    }
    simulated
}

/// One controller and one set of workers for the whole campaign, when the flags ask for them:
/// each candidate's run hands them its endpoint and workload, and they wait between
/// candidates.
async fn start_fleet(
    flags: &super::run_args::FleetArgs,
    simulated: bool,
    prepared: &mut [Option<Prepared>],
) -> anyhow::Result<Option<Arc<dyn Fleet>>> {
    let Some(choice) = flags.choice() else {
        return Ok(None);
    };
    let (fleet, note) = crate::launch::start_fleet(&choice, simulated).await?;
    eprintln!("{note}");
    for p in prepared.iter_mut().flatten() {
        p.req.fleet = Some(Arc::new(Lent(fleet.clone())));
    }
    Ok(Some(fleet))
}

/// Runs the candidates under the campaign view when stdout is a terminal (and none of
/// `--no-tui`, `--json` and `--serve` is given), headless otherwise; served with `serve`.
async fn run_candidates(
    mut run: CampaignRun,
    prepared: Vec<Option<Prepared>>,
    cancel: CancellationToken,
    args: &CampaignArgs,
    serve: Option<&crate::serve::ServeOptions>,
) -> anyhow::Result<(CampaignRun, anyhow::Result<CampaignEnd>)> {
    let dashboard = {
        use std::io::IsTerminal;
        std::io::stdout().is_terminal() && !args.no_tui && !args.json && serve.is_none()
    };
    if dashboard {
        return crate::tui::campaign_loop::run_campaign_view(run, prepared, cancel).await;
    }
    let (tx, rx) = tokio::sync::mpsc::channel(256);
    let served = match serve {
        Some(o) => Some(crate::campaign::served::serve(o, cancel.clone(), &run).await?),
        None => None,
    };
    let rx = crate::serve::Served::announce_and_tee(served.as_ref(), rx);
    let printer = tokio::spawn(crate::campaign::printer::print_campaign(
        rx,
        run.candidate_lines(),
    ));
    let end = run.run_all(prepared, cancel, tx).await;
    let _ = printer.await;
    if let Some(s) = served {
        s.finish().await;
    }
    Ok((run, end))
}

/// The ranking on stdout: the campaign record as JSON, or the ranked table.
fn print_ranking(run: &CampaignRun, json: bool) -> anyhow::Result<()> {
    let text = if json {
        serde_json::to_string_pretty(&run.record)? + "\n"
    } else {
        format!(
            "\ncampaign {} ({}), ranked by {}:\n{}",
            run.record.name,
            run.dir.display(),
            run.record.rank_by.label(),
            crate::campaign::ranking_text::render_ranking(&run.record.ranking)
        )
    };
    super::history::print(&text)
}

/// `--max-cost-per-million`'s gate: fails, saying so, when no candidate's cost per million
/// output tokens is at most `max`.
fn gate_fails(record: &CampaignRecord, max: Option<f64>) -> bool {
    let Some(max) = max else {
        return false;
    };
    let best = record
        .ranking
        .iter()
        .filter_map(|r| r.numbers.cost_per_million.map(|c| c.value))
        .fold(f64::INFINITY, f64::min);
    if best <= max {
        return false;
    }
    eprintln!(
        "gate failed: no candidate costs at most {max} per million output tokens at the SLA{}",
        if best.is_finite() {
            format!(" (the cheapest: {best:.3})")
        } else {
            " (none has an answer)".into()
        }
    );
    true
}
