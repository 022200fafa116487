//! Command-line definitions and dispatch: `run(cli)` is the whole program, testable without a
//! process; `main` only parses, calls it and turns the result into an exit code.

pub mod campaign;
pub mod export;
pub mod history;
pub mod import;
pub mod k8s;
pub mod open_args;
pub mod replay;
pub mod run_args;
pub mod search;
pub mod session_args;
pub mod sweep;
pub mod traffic;
pub mod watch;
pub mod worker;
pub mod workload_args;

use clap::{Parser, Subcommand};
use std::io::IsTerminal;
use std::path::PathBuf;

/// How much traffic can your LLM endpoint carry before latency breaks its SLA?
///
/// With no command, rightsize opens the dashboard in a terminal (pick an endpoint, workload
/// and plan, press s); when stdout is not a terminal it runs a short demo sweep against its
/// built-in simulator and prints the table.
#[derive(Debug, Parser)]
#[command(name = "rightsize", version)]
pub struct Cli {
    /// Config file to use instead of the user's (default: the platform config dir's
    /// rightsize.toml, if present, on top of the shipped defaults)
    #[arg(long, global = true, value_name = "FILE")]
    pub config: Option<PathBuf>,
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a concurrency sweep: fixed levels, one after another, N requests each
    Sweep(sweep::SweepArgs),
    /// Find the highest concurrency that meets every SLA (max-concurrency-under-sla)
    Search(search::SearchArgs),
    /// Replay a timestamped trace (Mooncake or {timestamp, text} JSON lines) or a SageMaker
    /// Data Capture open-loop
    Replay(replay::ReplayArgs),
    /// Print a capture's or trace's traffic: rates over time, peaks, lengths, and the
    /// --peak-rps and --speedup to plan and replay it with
    Traffic(traffic::TrafficArgs),
    /// Rank candidates (instance types, serving configurations) by cost per million output
    /// tokens at the SLA: one search each, one after another
    Campaign(campaign::CampaignArgs),
    /// Serve the simulated OpenAI-compatible endpoint
    Sim(crate::sim::SimArgs),
    /// Print where the user's config file goes and which files are read
    ConfigPath,
    /// List past runs: id, date, endpoint, model, workload, kind, answer
    Runs(history::RunsArgs),
    /// Print a finished run's level table and planning numbers
    Show(history::ShowArgs),
    /// Print two runs side by side, level by level
    Compare(history::CompareArgs),
    /// Export a run's charts (PNG, SVG), levels (CSV), run (JSON) or AIPerf files
    Export(export::ExportArgs),
    /// Bring results made elsewhere into a run (AIPerf / SageMaker benchmark exports, GuideLLM,
    /// vllm bench serve; docs/formats.md)
    #[command(subcommand)]
    Import(import::ImportCommand),
    /// Run as a worker of a distributed run: take shares of its levels from the controller
    /// at URL and send back every request's record (docs/distributed.md)
    Worker(worker::WorkerArgs),
    /// Watch a run served elsewhere (`--serve`) in the dashboard, read-only: its levels,
    /// curves and live figures from its start, as its own dashboard would show them
    /// (docs/watch.md)
    Watch(watch::WatchArgs),
    /// Kubernetes: `k8s render` prints the objects of a distributed run (controller Job,
    /// Service, token Secret, Indexed Job of workers) for kubectl apply
    #[command(subcommand)]
    K8s(k8s::K8sCommand),
}

/// Runs the program. Errors are returned for `main` to print and map to exit codes.
pub async fn run(cli: Cli) -> anyhow::Result<std::process::ExitCode> {
    match cli.command {
        None if std::io::stdout().is_terminal() => {
            crate::tui::run_dashboard(cli.config, None).await
        }
        None => sweep::execute(sweep::SweepArgs::demo(), cli.config.as_deref()).await,
        Some(Command::Sweep(args)) if args.run.wants_dashboard() => {
            let start = args.request()?;
            crate::tui::run_dashboard(cli.config, Some(start)).await
        }
        Some(Command::Sweep(args)) => sweep::execute(args, cli.config.as_deref()).await,
        Some(Command::Search(args)) if args.run.wants_dashboard() => {
            let start = args.request()?;
            crate::tui::run_dashboard(cli.config, Some(start)).await
        }
        Some(Command::Search(args)) => search::execute(args, cli.config.as_deref()).await,
        Some(Command::Replay(args)) if args.run.wants_dashboard() => {
            let start = args.request()?;
            crate::tui::run_dashboard(cli.config, Some(start)).await
        }
        Some(Command::Replay(args)) => replay::execute(args, cli.config.as_deref()).await,
        Some(Command::Traffic(args)) => traffic::execute(args),
        Some(Command::Campaign(args)) => campaign::execute(args, cli.config.as_deref()).await,
        Some(Command::Sim(args)) => {
            let cfg = args
                .into_config()
                .map_err(crate::headless::exit::BadInput)?;
            crate::sim::serve_forever(cfg).await?;
            Ok(std::process::ExitCode::SUCCESS)
        }
        Some(Command::Runs(args)) => history::runs(args, cli.config.as_deref()),
        Some(Command::Show(args)) => history::show(args, cli.config.as_deref()),
        Some(Command::Compare(args)) => history::compare(args, cli.config.as_deref()),
        Some(Command::Export(args)) => export::execute(args, cli.config.as_deref()),
        Some(Command::Import(cmd)) => import::execute(cmd, cli.config.as_deref()),
        Some(Command::Worker(args)) => worker::execute(args).await,
        Some(Command::Watch(args)) => watch::execute(args, cli.config.as_deref()).await,
        Some(Command::K8s(cmd)) => k8s::execute(cmd),
        Some(Command::ConfigPath) => {
            match crate::config::file::user_config_path() {
                Some(p) => println!(
                    "{}{}",
                    p.display(),
                    if p.exists() { "" } else { " (not present)" }
                ),
                None => println!("no config directory on this platform"),
            }
            Ok(std::process::ExitCode::SUCCESS)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_definition_is_consistent() {
        Cli::command().debug_assert();
    }
}
