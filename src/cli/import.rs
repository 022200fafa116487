//! `rightsize import aiperf|guidellm|vllm|benchmark-report ...`: results made elsewhere brought into a run
//! folder (docs/formats.md).

use super::history::{print, RunsDirArgs};
use crate::headless::exit::BadInput;
use crate::report::benchmark_report::import::import_benchmark_reports;
use crate::report::import_aiperf::import_aiperf;
use crate::report::import_guidellm::import_guidellm;
use crate::report::import_run::{ImportError, ImportNames, ImportOutcome};
use crate::report::import_vllm::import_vllm;
use clap::{Args, Subcommand};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// What can be imported.
#[derive(Debug, Clone, Subcommand)]
pub enum ImportCommand {
    /// AIPerf exports: one profile_export_aiperf.json per level, a folder of them, or the
    /// .tar.gz a SageMaker benchmark job writes
    Aiperf(AiperfArgs),
    /// A GuideLLM 0.8 benchmarks file (guidellm run --output kind=json,path=FILE): one level
    /// per benchmark; concurrent ones at their streams, rate and throughput ones at the
    /// concurrency GuideLLM measured
    Guidellm(GuidellmArgs),
    /// vllm bench serve --save-result files: one JSON file per level, placed at its
    /// max_concurrency (a result without one is refused), or folders of them; a file written
    /// with --append-result holds one level per line
    Vllm(VllmArgs),
    /// llm-d-benchmark Benchmark Report v0.2 files (JSON), one per level, or a folder of them
    #[command(name = "benchmark-report")]
    BenchmarkReport(BenchmarkReportArgs),
}

/// The names an import records, and where the run goes.
#[derive(Debug, Clone, Args)]
pub struct NameArgs {
    /// Endpoint name to record (default: the URL the file names, else the tool's name)
    #[arg(long, value_name = "NAME")]
    pub endpoint: Option<String>,
    /// Model name to record (default: the file's model)
    #[arg(long, value_name = "NAME")]
    pub model: Option<String>,
    /// Workload name to record (default: the tool's name and the file's token counts)
    #[arg(long, value_name = "NAME")]
    pub workload: Option<String>,
    #[command(flatten)]
    pub dir: RunsDirArgs,
}

impl NameArgs {
    fn names(&self) -> ImportNames {
        ImportNames {
            endpoint: self.endpoint.clone(),
            model: self.model.clone(),
            workload: self.workload.clone(),
        }
    }
}

/// Flags of `rightsize import guidellm`.
#[derive(Debug, Clone, Args)]
pub struct GuidellmArgs {
    /// The benchmarks JSON file GuideLLM wrote
    pub file: PathBuf,
    #[command(flatten)]
    pub names: NameArgs,
}

/// Flags of `rightsize import vllm`.
#[derive(Debug, Clone, Args)]
pub struct VllmArgs {
    /// Result files (one per level), or folders holding them (every .json inside)
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    #[command(flatten)]
    pub names: NameArgs,
}

/// Flags of `rightsize import aiperf`.
#[derive(Debug, Clone, Args)]
pub struct AiperfArgs {
    /// An export file, a folder of them, or a .tar.gz holding one per concurrency level
    pub path: PathBuf,
    #[command(flatten)]
    pub names: NameArgs,
}

/// Flags of `rightsize import benchmark-report`. Defaults of the names: the endpoint is the
/// report's first stack component's label, the model its
/// `scenario.stack[0].standardized.model.name`, the workload its
/// `scenario.load.metadata.description`.
#[derive(Debug, Clone, Args)]
pub struct BenchmarkReportArgs {
    /// A report (JSON), or a folder searched for benchmark_report_v0.2* files
    pub path: PathBuf,
    #[command(flatten)]
    pub names: NameArgs,
}

/// Runs an import command: prints the new run's id, folder and level table.
pub fn execute(cmd: ImportCommand, config: Option<&Path>) -> anyhow::Result<ExitCode> {
    let (tool, args) = match &cmd {
        ImportCommand::Aiperf(a) => ("aiperf", &a.names),
        ImportCommand::Guidellm(a) => ("guidellm", &a.names),
        ImportCommand::Vllm(a) => ("vllm", &a.names),
        ImportCommand::BenchmarkReport(a) => ("benchmark-report", &a.names),
    };
    let root = args.dir.root(config)?;
    let names = args.names();
    let outcome = match &cmd {
        ImportCommand::Aiperf(a) => import_aiperf(&a.path, &root, &names),
        ImportCommand::Guidellm(a) => import_guidellm(&a.file, &root, &names),
        ImportCommand::Vllm(a) => import_vllm(&a.files, &root, &names),
        ImportCommand::BenchmarkReport(a) => import_benchmark_reports(&a.path, &root, &names),
    };
    let outcome: ImportOutcome = outcome.map_err(|e| {
        if e.is::<ImportError>() {
            BadInput(format!("import {tool}: {e}")).into()
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
    text += &crate::report::render_table(&outcome.levels, &[]);
    for n in &outcome.notes {
        eprintln!("note: {n}");
    }
    print(&text)?;
    Ok(ExitCode::SUCCESS)
}
