//! A campaign's exports (docs/campaigns.md): the Pareto chart and the overlay of every
//! candidate's curves (PNG, SVG), and the ranking as CSV.

use super::campaign_file::{CampaignRecord, CandidateState};
use super::rank::RankedRow;
use crate::report::chart::pareto::{ParetoPoint, ParetoSpec};
use crate::report::chart::{render_pareto_png, render_pareto_svg, render_png, render_svg};
use std::path::{Path, PathBuf};

/// The Pareto chart of the ranked candidates that have an answer.
pub fn pareto_spec(rec: &CampaignRecord) -> ParetoSpec {
    let points = rec
        .ranking
        .iter()
        .filter_map(|r| {
            let n = &r.numbers;
            let (x, y) = (n.sla_at_answer?, n.cost_per_million?);
            Some(ParetoPoint {
                label: n.label.clone(),
                x: x.value,
                x_range: (x.range[0], x.range[1]),
                y: y.value,
                y_range: (y.range[0], y.range[1]),
            })
        })
        .collect();
    let stat = rec
        .ranking
        .iter()
        .find_map(|r| r.numbers.binding_sla.clone())
        .map(|b| b.split(" <=").next().unwrap_or_default().to_string())
        .unwrap_or_else(|| "SLA statistic".into());
    ParetoSpec {
        title: format!(
            "campaign {}: cost per million output tokens at the SLA",
            rec.name
        ),
        subtitle: format!(
            "{}started {}",
            rec.description
                .as_deref()
                .map_or(String::new(), |d| format!("{d}; ")),
            rec.started_at.get(..16).unwrap_or(&rec.started_at)
        ),
        x_label: format!("{stat} at the answer (ms)"),
        points,
    }
}

/// The candidates' runs overlaid on the run charts, each labelled with its candidate.
pub fn overlay_spec(rec: &CampaignRecord) -> anyhow::Result<crate::report::chart::ChartSpec> {
    let mut labels = Vec::new();
    let mut runs = Vec::new();
    for c in &rec.candidates {
        if let (CandidateState::Done, Some(dir)) = (c.state, &c.run_dir) {
            let run = crate::report::load_run(dir)
                .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", dir.display()))?;
            labels.push(c.label.clone());
            runs.push(run);
        }
    }
    let refs: Vec<&crate::report::RunData> = runs.iter().collect();
    let mut spec = crate::report::run_chart::chart_spec(&refs);
    for (run, label) in spec.runs.iter_mut().zip(labels) {
        run.label = label;
    }
    spec.title = format!("campaign {}: every candidate's curves", rec.name);
    Ok(spec)
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The ranking as CSV: one row per candidate, every number with its range (columns in
/// docs/campaigns.md).
pub fn ranking_csv(rows: &[RankedRow]) -> String {
    let mut out = String::from(
        "rank,tied,candidate,price_per_hour,gpus,answer,answer_low,answer_high,output_tps,\
         output_tps_low,output_tps_high,cost_per_million,cost_per_million_low,\
         cost_per_million_high,instances,instances_low,instances_high,fleet_cost_per_hour,\
         binding_sla,sla_at_answer,sla_at_answer_low,sla_at_answer_high,knee,failure\n",
    );
    let num = |v: Option<f64>| v.map_or(String::new(), |v| format!("{v}"));
    for r in rows {
        let n = &r.numbers;
        let three = |x: Option<super::rank::Ranged>| {
            [
                num(x.map(|x| x.value)),
                num(x.map(|x| x.range[0])),
                num(x.map(|x| x.range[1])),
            ]
            .join(",")
        };
        out += &format!(
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n",
            r.rank.map_or(String::new(), |k| k.to_string()),
            r.tied,
            csv_field(&n.label),
            n.price_per_hour,
            n.gpus.map_or(String::new(), |g| g.to_string()),
            three(n.answer),
            three(n.output_tps),
            three(n.cost_per_million),
            three(n.instances),
            num(n.fleet_cost_per_hour.map(|x| x.value)),
            csv_field(n.binding_sla.as_deref().unwrap_or_default()),
            three(n.sla_at_answer),
            n.knee.map_or(String::new(), |k| k.to_string()),
            csv_field(n.failure.as_deref().unwrap_or_default()),
        );
    }
    out
}

/// Where a chart goes: `path` itself when it ends in `.EXT` (its stem gets `-NAME`), else
/// `path/NAME.EXT` (the folder made if missing).
fn target(path: &Path, name: &str, ext: &str) -> std::io::Result<PathBuf> {
    if path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case(ext))
    {
        let stem = path
            .file_stem()
            .map_or("campaign".into(), |s| s.to_string_lossy().into_owned());
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent)?;
        }
        return Ok(path.with_file_name(format!("{stem}-{name}.{ext}")));
    }
    std::fs::create_dir_all(path)?;
    Ok(path.join(format!("{name}.{ext}")))
}

/// What `export CAMPAIGN` writes.
#[derive(Debug, Clone, Default)]
pub struct CampaignExport {
    pub png: Option<PathBuf>,
    pub svg: Option<PathBuf>,
    pub csv: Option<PathBuf>,
    pub size: (u32, u32),
}

/// Writes the asked files; returns their paths.
pub fn export(rec: &CampaignRecord, req: &CampaignExport) -> anyhow::Result<Vec<PathBuf>> {
    let mut written = Vec::new();
    let pareto = pareto_spec(rec);
    if pareto.points.is_empty() && (req.png.is_some() || req.svg.is_some()) {
        anyhow::bail!(
            "campaign {}: no candidate has an answer yet, so there is nothing to chart",
            rec.name
        );
    }
    let overlay = if req.png.is_some() || req.svg.is_some() {
        Some(overlay_spec(rec)?)
    } else {
        None
    };
    let write = |path: PathBuf, bytes: &[u8], written: &mut Vec<PathBuf>| -> anyhow::Result<()> {
        std::fs::write(&path, bytes)
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
        written.push(path);
        Ok(())
    };
    if let (Some(p), Some(o)) = (&req.svg, &overlay) {
        let svg = render_pareto_svg(&pareto, req.size)?;
        write(target(p, "pareto", "svg")?, svg.as_bytes(), &mut written)?;
        let svg = render_svg(o, req.size)?;
        write(target(p, "overlay", "svg")?, svg.as_bytes(), &mut written)?;
    }
    if let (Some(p), Some(o)) = (&req.png, &overlay) {
        let png = render_pareto_png(&pareto, req.size)?;
        write(target(p, "pareto", "png")?, &png, &mut written)?;
        let png = render_png(o, req.size)?;
        write(target(p, "overlay", "png")?, &png, &mut written)?;
    }
    if let Some(p) = &req.csv {
        let path = if p.extension().is_some_and(|e| e.eq_ignore_ascii_case("csv")) {
            p.clone()
        } else {
            std::fs::create_dir_all(p)?;
            p.join("ranking.csv")
        };
        write(path, ranking_csv(&rec.ranking).as_bytes(), &mut written)?;
    }
    Ok(written)
}
