//! `rightsize export RUN`: charts (PNG, SVG), the one-file HTML report, CSV, JSON, AIPerf and
//! llm-d Benchmark Report files of a finished run, optionally overlaying other runs (`--compare`).

use super::history::{print, RunsDirArgs};
use crate::headless::exit::BadInput;
use crate::report::chart::{MAX_SIZE, MIN_SIZE};
use crate::report::export_run::{export_run, run_json_text, ExportRequest, DEFAULT_SIZE};
use crate::report::{levels_csv, load_run};
use clap::Args;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Flags of `rightsize export`.
#[derive(Debug, Clone, Args)]
pub struct ExportArgs {
    /// The run: an id, a unique prefix of one, or a run folder's path; or a campaign folder
    /// (--png/--svg write its Pareto chart and overlay, --csv its ranking)
    pub run: String,
    /// Write the charts as PNG to this file, or into this folder as <run>.png
    #[arg(long, value_name = "PATH")]
    pub png: Option<PathBuf>,
    /// Write the charts as SVG to this file, or into this folder as <run>.svg
    #[arg(long, value_name = "PATH")]
    pub svg: Option<PathBuf>,
    /// Write the one-file HTML report (answer, charts, levels, errors, warnings, the command
    /// that reproduces the run) to this file, or into this folder as <run>.html
    #[arg(long, value_name = "PATH")]
    pub html: Option<PathBuf>,
    /// Write one CSV row per level (columns in docs/export.md) to this file or folder, or to
    /// stdout with -
    #[arg(long, value_name = "PATH")]
    pub csv: Option<PathBuf>,
    /// Write the run (echo, levels, summary) as JSON to this file or folder, or to stdout
    /// with -
    #[arg(long, value_name = "PATH")]
    pub json: Option<PathBuf>,
    /// Write one AIPerf profile_export_aiperf.json per level into this folder
    #[arg(long, value_name = "DIR")]
    pub aiperf: Option<PathBuf>,
    /// Write one llm-d Benchmark Report v0.2 (JSON) per level into this folder, as
    /// benchmark_report_v0.2,_level-NNN-cCCCC.json
    #[arg(long, value_name = "DIR")]
    pub benchmark_report: Option<PathBuf>,
    /// Overlay these runs (ids, prefixes or paths) on the charts; the HTML report sets them
    /// side by side
    #[arg(long, value_name = "RUN", num_args = 1..)]
    pub compare: Vec<String>,
    /// Chart size in pixels, WIDTHxHEIGHT
    #[arg(long, value_name = "WxH", default_value = "1600x900", value_parser = parse_size)]
    pub size: (u32, u32),
    #[command(flatten)]
    pub dir: RunsDirArgs,
}

/// Parses `1600x900`.
pub fn parse_size(s: &str) -> Result<(u32, u32), String> {
    let bad = || {
        format!(
            "'{s}' is not a size: give WIDTHxHEIGHT in pixels, e.g. {}x{}, between {}x{} and {}x{}",
            DEFAULT_SIZE.0, DEFAULT_SIZE.1, MIN_SIZE.0, MIN_SIZE.1, MAX_SIZE.0, MAX_SIZE.1
        )
    };
    let (w, h) = s
        .to_ascii_lowercase()
        .split_once('x')
        .map(|(w, h)| (w.trim().to_string(), h.trim().to_string()))
        .ok_or_else(bad)?;
    let (w, h): (u32, u32) = (w.parse().map_err(|_| bad())?, h.parse().map_err(|_| bad())?);
    if w < MIN_SIZE.0 || h < MIN_SIZE.1 || w > MAX_SIZE.0 || h > MAX_SIZE.1 {
        return Err(bad());
    }
    Ok((w, h))
}

/// `rightsize export RUN`.
pub fn execute(args: ExportArgs, config: Option<&Path>) -> anyhow::Result<ExitCode> {
    if let Some(dir) = args.dir.campaign(config, &args.run) {
        return export_campaign(&dir, args);
    }
    let run_dir = args.dir.resolve(config, &args.run)?;
    let compare = args
        .compare
        .iter()
        .map(|spec| args.dir.resolve(config, spec))
        .collect::<Result<Vec<_>, _>>()?;
    let to_stdout = |p: &Option<PathBuf>| p.as_deref() == Some(Path::new("-"));
    let (csv_out, json_out) = (to_stdout(&args.csv), to_stdout(&args.json));
    if csv_out && json_out {
        return Err(BadInput("only one of --csv and --json can be - (stdout)".into()).into());
    }
    let req = ExportRequest {
        png: args.png,
        svg: args.svg,
        html: args.html,
        csv: args.csv.filter(|_| !csv_out),
        json: args.json.filter(|_| !json_out),
        aiperf: args.aiperf,
        benchmark_report: args.benchmark_report,
        compare,
        size: args.size,
    };
    if req.is_empty() && !csv_out && !json_out {
        return Err(BadInput(
            "nothing to export: give at least one of --png, --svg, --html, --csv, --json, --aiperf, \
             --benchmark-report (each a file or a folder; --csv and --json also take - for stdout)"
                .into(),
        )
        .into());
    }
    let written = if req.is_empty() {
        Vec::new()
    } else {
        export_run(&run_dir, &req)?
    };
    let mut paths = String::new();
    for p in &written {
        paths += &format!("{}\n", p.display());
    }
    if csv_out || json_out {
        // stdout carries the data: the list of files goes to stderr
        eprint!("{paths}");
        let run = load_run(&run_dir)
            .map_err(|e| anyhow::anyhow!("cannot read the run in {}: {e}", run_dir.display()))?;
        if csv_out {
            print(&levels_csv(&run.levels))?;
        } else {
            print(&run_json_text(&run)?)?;
        }
    } else {
        print(&paths)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `rightsize export CAMPAIGN`: the Pareto chart and the overlay (PNG, SVG) and the ranking
/// (CSV) of a campaign folder.
fn export_campaign(dir: &Path, args: ExportArgs) -> anyhow::Result<ExitCode> {
    if args.html.is_some()
        || args.json.is_some()
        || args.aiperf.is_some()
        || args.benchmark_report.is_some()
        || !args.compare.is_empty()
    {
        return Err(BadInput(
            "a campaign folder exports --png, --svg (its Pareto chart and the overlay of its \
             candidates' curves) and --csv (its ranking); export a candidate's run for the rest"
                .into(),
        )
        .into());
    }
    let rec = crate::campaign::campaign_file::CampaignRecord::read(dir)
        .map_err(|e| anyhow::anyhow!("cannot read the campaign in {}: {e}", dir.display()))?;
    let to_stdout = args.csv.as_deref() == Some(Path::new("-"));
    let req = crate::campaign::chart::CampaignExport {
        png: args.png,
        svg: args.svg,
        csv: args.csv.filter(|_| !to_stdout),
        size: args.size,
    };
    if req.png.is_none() && req.svg.is_none() && req.csv.is_none() && !to_stdout {
        return Err(BadInput(
            "nothing to export: give --png, --svg or --csv (a file or a folder; --csv - for \
             stdout)"
                .into(),
        )
        .into());
    }
    let written = crate::campaign::chart::export(&rec, &req)?;
    let paths: String = written
        .iter()
        .map(|p| format!("{}\n", p.display()))
        .collect();
    if to_stdout {
        eprint!("{paths}");
        print(&crate::campaign::chart::ranking_csv(&rec.ranking))?;
    } else {
        print(&paths)?;
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("800x450"), Ok((800, 450)));
        assert_eq!(parse_size("1600X900"), Ok((1600, 900)));
        assert!(parse_size("800").is_err());
        assert!(parse_size("10x10").unwrap_err().contains("between"));
    }
}
