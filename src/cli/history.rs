//! `rightsize runs`, `show RUN` and `compare RUN RUN`: past runs read back from the results
//! folder. RUN is a run id, a unique prefix of one, or a run folder's path.

use crate::config::file::load_layered;
use crate::headless::exit::BadInput;
use crate::report::history::{list_run_infos, load_run, resolve_run, RunData, RunLookupError};
use crate::report::history_text::{render_compare, render_runs, render_show};
use clap::Args;
use serde_json::json;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Where past runs are kept.
#[derive(Debug, Clone, Args)]
pub struct RunsDirArgs {
    /// Folder the runs are kept in (default: the config's `results_dir`, else the platform
    /// data dir's rightsize/runs)
    #[arg(long, value_name = "DIR")]
    pub runs_dir: Option<PathBuf>,
}

impl RunsDirArgs {
    /// The results root: the flag, the config file's `results_dir`, or the platform default.
    pub fn root(&self, config: Option<&Path>) -> anyhow::Result<PathBuf> {
        if let Some(d) = &self.runs_dir {
            return Ok(d.clone());
        }
        let (cfg, _) = load_layered(config)?;
        if let Some(d) = cfg.defaults.results_dir {
            return Ok(d);
        }
        crate::report::default_root().ok_or_else(|| {
            BadInput("no data directory on this platform; pass --runs-dir DIR".into()).into()
        })
    }

    /// The run folder RUN names; a RUN that names none is bad input (exit 2), with close
    /// matches in the message.
    pub fn resolve(&self, config: Option<&Path>, run: &str) -> anyhow::Result<PathBuf> {
        let root = self.root(config)?;
        resolve_run(&root, run).map_err(|e| match e {
            RunLookupError::Io(io) => {
                anyhow::Error::new(io).context(format!("cannot read {}", root.display()))
            }
            other => BadInput(other.to_string()).into(),
        })
    }
}

impl RunsDirArgs {
    /// The campaign folder RUN names (a path, or a folder name under the results root), if
    /// it names one.
    pub fn campaign(&self, config: Option<&Path>, run: &str) -> Option<PathBuf> {
        use crate::campaign::campaign_file::is_campaign_dir;
        let given = PathBuf::from(run);
        if is_campaign_dir(&given) {
            return Some(given);
        }
        let under = self.root(config).ok()?.join(run);
        is_campaign_dir(&under).then_some(under)
    }
}

fn read_campaign(dir: &Path) -> anyhow::Result<crate::campaign::campaign_file::CampaignRecord> {
    crate::campaign::campaign_file::CampaignRecord::read(dir)
        .map_err(|e| anyhow::anyhow!("cannot read the campaign in {}: {e}", dir.display()))
}

/// Flags of `rightsize runs`.
#[derive(Debug, Clone, Args)]
pub struct RunsArgs {
    #[command(flatten)]
    pub dir: RunsDirArgs,
    /// Print the list as JSON
    #[arg(long)]
    pub json: bool,
}

/// Flags of `rightsize show`.
#[derive(Debug, Clone, Args)]
pub struct ShowArgs {
    /// The run: an id, a unique prefix of one, or a run folder's path; or a campaign folder
    /// (its candidates and ranking)
    pub run: String,
    #[command(flatten)]
    pub dir: RunsDirArgs,
    /// Print the run (echo, levels, summary) as JSON
    #[arg(long)]
    pub json: bool,
}

/// Flags of `rightsize compare`.
#[derive(Debug, Clone, Args)]
pub struct CompareArgs {
    /// The first run (A): an id, a unique prefix of one, or a path; or a campaign folder
    /// (then B is one too: their rankings candidate by candidate)
    pub a: String,
    /// The second run (B), compared against A
    pub b: String,
    #[command(flatten)]
    pub dir: RunsDirArgs,
    /// Print both runs as JSON
    #[arg(long)]
    pub json: bool,
}

/// Writes to stdout; a closed pipe (`| head`) is not an error.
pub fn print(text: &str) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        r => Ok(r?),
    }
}

fn pretty(v: &serde_json::Value) -> anyhow::Result<String> {
    Ok(serde_json::to_string_pretty(v)? + "\n")
}

fn run_json(r: &RunData) -> serde_json::Value {
    json!({
        "info": r.info,
        "run": r.echo,
        "levels": crate::report::export::levels_json(&r.levels),
        "summary": r.summary,
        "knee": r.knee(),
    })
}

fn read(dir: &Path) -> anyhow::Result<RunData> {
    load_run(dir).map_err(|e| anyhow::anyhow!("cannot read the run in {}: {e}", dir.display()))
}

/// `rightsize runs`.
pub fn runs(args: RunsArgs, config: Option<&Path>) -> anyhow::Result<ExitCode> {
    let root = args.dir.root(config)?;
    let infos = list_run_infos(&root)
        .map_err(|e| anyhow::anyhow!("cannot list runs in {}: {e}", root.display()))?;
    if args.json {
        print(&pretty(&serde_json::to_value(&infos)?)?)?;
    } else {
        print(&render_runs(&infos))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `rightsize show RUN`.
pub fn show(args: ShowArgs, config: Option<&Path>) -> anyhow::Result<ExitCode> {
    if let Some(dir) = args.dir.campaign(config, &args.run) {
        let rec = read_campaign(&dir)?;
        print(&if args.json {
            pretty(&serde_json::to_value(&rec)?)?
        } else {
            crate::campaign::ranking_text::render_campaign(&rec)
        })?;
        return Ok(ExitCode::SUCCESS);
    }
    let run = read(&args.dir.resolve(config, &args.run)?)?;
    if args.json {
        print(&pretty(&run_json(&run))?)?;
    } else {
        print(&render_show(&run))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `rightsize compare A B`.
pub fn compare(args: CompareArgs, config: Option<&Path>) -> anyhow::Result<ExitCode> {
    match (
        args.dir.campaign(config, &args.a),
        args.dir.campaign(config, &args.b),
    ) {
        (Some(a), Some(b)) => {
            let (a, b) = (read_campaign(&a)?, read_campaign(&b)?);
            print(&if args.json {
                pretty(&json!({"a": a, "b": b}))?
            } else {
                crate::campaign::ranking_text::render_campaign_compare(&a, &b)
            })?;
            return Ok(ExitCode::SUCCESS);
        }
        (None, None) => {}
        _ => {
            return Err(BadInput(
                "compare takes two runs or two campaign folders, not one of each".into(),
            )
            .into())
        }
    }
    let a = read(&args.dir.resolve(config, &args.a)?)?;
    let b = read(&args.dir.resolve(config, &args.b)?)?;
    if args.json {
        print(&pretty(&json!({"a": run_json(&a), "b": run_json(&b)}))?)?;
    } else {
        print(&render_compare(&a, &b))?;
    }
    Ok(ExitCode::SUCCESS)
}
