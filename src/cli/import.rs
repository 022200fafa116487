//! `rightsize import aiperf|benchmark-report PATH`: results made elsewhere brought into a run
//! folder.

use super::history::{print, RunsDirArgs};
use crate::headless::exit::BadInput;
use crate::report::benchmark_report::import::import_benchmark_reports;
use crate::report::import_aiperf::{import_aiperf, ImportError, ImportNames};
use crate::report::import_run::ImportOutcome;
use clap::{Args, Subcommand};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// What can be imported.
#[derive(Debug, Clone, Subcommand)]
pub enum ImportCommand {
    /// AIPerf exports: one profile_export_aiperf.json per level, a folder of them, or the
    /// .tar.gz a SageMaker benchmark job writes
    Aiperf(AiperfArgs),
    /// llm-d-benchmark Benchmark Report v0.2 files (JSON), one per level, or a folder of them
    #[command(name = "benchmark-report")]
    BenchmarkReport(BenchmarkReportArgs),
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

/// Flags of `rightsize import benchmark-report`.
#[derive(Debug, Clone, Args)]
pub struct BenchmarkReportArgs {
    /// A report (JSON), or a folder searched for benchmark_report_v0.2* files
    pub path: PathBuf,
    /// Endpoint name to record (default: the report's first stack component's label)
    #[arg(long, value_name = "NAME")]
    pub endpoint: Option<String>,
    /// Model name to record (default: the report's scenario.stack[0].standardized.model.name)
    #[arg(long, value_name = "NAME")]
    pub model: Option<String>,
    /// Workload name to record (default: the report's scenario.load.metadata.description)
    #[arg(long, value_name = "NAME")]
    pub workload: Option<String>,
    #[command(flatten)]
    pub dir: RunsDirArgs,
}

/// Runs an import command: prints the new run's id, folder and level table.
pub fn execute(cmd: ImportCommand, config: Option<&Path>) -> anyhow::Result<ExitCode> {
    let (what, outcome) = match cmd {
        ImportCommand::Aiperf(a) => {
            let names = ImportNames {
                endpoint: a.endpoint,
                model: a.model,
                workload: a.workload,
            };
            let root = a.dir.root(config)?;
            ("aiperf", import_aiperf(&a.path, &root, &names))
        }
        ImportCommand::BenchmarkReport(a) => {
            let names = ImportNames {
                endpoint: a.endpoint,
                model: a.model,
                workload: a.workload,
            };
            let root = a.dir.root(config)?;
            (
                "benchmark-report",
                import_benchmark_reports(&a.path, &root, &names),
            )
        }
    };
    report(what, outcome)
}

/// Prints what an import made; a file it could not read is bad input (exit 2).
fn report(what: &str, outcome: anyhow::Result<ImportOutcome>) -> anyhow::Result<ExitCode> {
    let outcome = outcome.map_err(|e| {
        if e.is::<ImportError>() {
            BadInput(format!("import {what}: {e}")).into()
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
