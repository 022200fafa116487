//! `rightsize import aiperf PATH`: results made elsewhere brought into a run folder.

use super::history::{print, RunsDirArgs};
use crate::headless::exit::BadInput;
use crate::report::import_aiperf::{import_aiperf, ImportError, ImportNames};
use clap::{Args, Subcommand};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// What can be imported.
#[derive(Debug, Clone, Subcommand)]
pub enum ImportCommand {
    /// AIPerf exports: one profile_export_aiperf.json per level, a folder of them, or the
    /// .tar.gz a SageMaker benchmark job writes
    Aiperf(AiperfArgs),
}

/// Flags of `rightsize import aiperf`.
#[derive(Debug, Clone, Args)]
pub struct AiperfArgs {
    /// An export file, a folder of them, or a .tar.gz holding one per concurrency level
    pub path: PathBuf,
    /// Endpoint name to record (default: aiperf)
    #[arg(long, value_name = "NAME")]
    pub endpoint: Option<String>,
    /// Model name to record (default: the exports' input_config.endpoint.model_names)
    #[arg(long, value_name = "NAME")]
    pub model: Option<String>,
    /// Workload name to record (default: aiperf)
    #[arg(long, value_name = "NAME")]
    pub workload: Option<String>,
    #[command(flatten)]
    pub dir: RunsDirArgs,
}

/// Runs an import command: prints the new run's id, folder and level table.
pub fn execute(cmd: ImportCommand, config: Option<&Path>) -> anyhow::Result<ExitCode> {
    let ImportCommand::Aiperf(args) = cmd;
    let root = args.dir.root(config)?;
    let names = ImportNames {
        endpoint: args.endpoint,
        model: args.model,
        workload: args.workload,
    };
    let outcome = import_aiperf(&args.path, &root, &names).map_err(|e| {
        if e.is::<ImportError>() {
            BadInput(format!("import aiperf: {e}")).into()
        } else {
            e
        }
    })?;
    let mut text = format!(
        "imported {} level(s) as run {}\n  saved in {}\n\n",
        outcome.levels.len(),
        outcome.run_id,
        outcome.dir.display()
    );
    text += &crate::report::render_table(&outcome.levels);
    for n in &outcome.notes {
        eprintln!("note: {n}");
    }
    print(&text)?;
    Ok(ExitCode::SUCCESS)
}
