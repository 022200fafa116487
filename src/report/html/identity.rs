//! What was measured, and with what: one column per run (endpoint with secrets masked,
//! model, server, workload, tokenizer or dataset, plan and SLAs, tool version, dates), and the
//! server telemetry section.

use std::fmt::Write as _;

use serde_json::Value;

use super::esc;
use crate::plan::RunAnalysis;
use crate::report::history::RunData;
use crate::report::history_text::{warmup_line, workload_line};

fn text(v: &Value) -> String {
    match v {
        Value::Null => "-".into(),
        Value::String(s) if s.is_empty() => "-".into(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The plan in a few words: `search 16 to 256`, `sweep 2, 8, 32`, with its SLAs.
fn plan_line(echo: &Value, a: &RunAnalysis) -> String {
    let p = &echo["plan"];
    let kind = p["kind"].as_str().unwrap_or("-");
    let mut s = kind.to_string();
    if kind == "search" {
        let ax = a.axis;
        if let (Some(lo), Some(hi)) = (p["concurrency_min"].as_u64(), p["concurrency_max"].as_u64())
        {
            let _ = write!(s, " from {} to {}", ax.load(lo as u32), ax.load(hi as u32));
        }
    } else if let Some(c) = p["concurrency"].as_array().filter(|c| !c.is_empty()) {
        let list: Vec<String> = c.iter().map(text).collect();
        let _ = write!(s, " at concurrency {}", list.join(", "));
    } else if !p["rates"].is_null() {
        let _ = write!(s, " at rates {}", text(&p["rates"]));
    }
    let slas: Vec<String> = a.slas.0.iter().map(|t| t.describe()).collect();
    if !slas.is_empty() {
        let _ = write!(s, "; SLA {}", slas.join(", "));
    }
    let _ = write!(s, "; error rate at most {:.1} %", a.max_error_rate * 100.0);
    s
}

/// The identity rows of one run.
fn rows(run: &RunData, a: &RunAnalysis) -> Vec<(&'static str, String)> {
    let e = &run.echo;
    let url = crate::secrets::redact_url(e["endpoint"]["base_url"].as_str().unwrap_or(""));
    let endpoint = if url.is_empty() || url == run.info.endpoint {
        crate::secrets::redact_url(&run.info.endpoint)
    } else {
        format!("{} ({url})", crate::secrets::redact_url(&run.info.endpoint))
    };
    let w = &e["workload"];
    let source = match w["dataset"]["path"].as_str() {
        Some(p) => format!("dataset {p}"),
        None => format!("generated prompts, tokenizer {}", text(&w["tokenizer"])),
    };
    let server = e["server"]["owned_by"]
        .as_str()
        .or(e["server"]["server_header"].as_str())
        .unwrap_or("-");
    vec![
        ("run", run.info.id.clone()),
        ("endpoint", endpoint),
        ("model", run.info.model.clone()),
        ("server", server.to_string()),
        ("workload", workload_line(e)),
        ("prompts", source),
        ("plan", plan_line(e, a)),
        ("requests per level", text(&e["request_count"])),
        ("level start", warmup_line(e).unwrap_or_else(|| "-".into())),
        (
            "tool",
            format!("{} {}", text(&e["tool"]), text(&e["version"])),
        ),
        ("started", text(&e["started_at"])),
        ("ended", text(&e["ended_at"])),
        (
            "interrupted",
            if run.info.interrupted { "yes" } else { "no" }.into(),
        ),
    ]
}

/// The identity table: one row per field, one column per run.
pub fn identity_table(runs: &[&RunData], reports: &[RunAnalysis]) -> String {
    let cols: Vec<Vec<(&str, String)>> =
        runs.iter().zip(reports).map(|(r, a)| rows(r, a)).collect();
    let mut h = String::from("<table class=\"identity\"><tbody>");
    for (i, (key, _)) in cols[0].iter().enumerate() {
        let _ = write!(h, "<tr><th class=\"l\">{key}</th>");
        for c in &cols {
            let _ = write!(h, "<td class=\"l\">{}</td>", esc(&c[i].1));
        }
        h += "</tr>";
    }
    h + "</tbody></table>"
}

/// Server telemetry: per run, the serving configuration the server stated (`run.json`'s
/// `serving_config`) and a table of what its `/metrics` said at each level (the level files'
/// `server`); a run without them says so.
pub fn telemetry(runs: &[&RunData], reports: &[RunAnalysis]) -> String {
    let mut h = String::new();
    for (r, a) in runs.iter().zip(reports) {
        let models = r.echo["server"]["models"]
            .as_array()
            .map(|m| m.iter().map(text).collect::<Vec<_>>().join(", "))
            .unwrap_or_else(|| "-".into());
        let _ = write!(h, "<p>{}: serves {}</p>", esc(&r.info.id), esc(&models));
        if let Some(config) = r.echo["serving_config"].as_object() {
            let settings: Vec<String> = config
                .iter()
                .map(|(k, v)| format!("{k} {}", text(v)))
                .collect();
            let _ = write!(
                h,
                "<p>Serving configuration: {}</p>",
                esc(&settings.join(", "))
            );
        }
        let rows: Vec<String> = r
            .levels
            .iter()
            .filter_map(|l| Some((l, l.server.as_ref()?)))
            .map(|(l, s)| {
                let mm = |m: Option<crate::record::MeanMax>, pct: bool| match m {
                    Some(m) if pct => format!("{:.1} % / {:.1} %", m.mean * 100.0, m.max * 100.0),
                    Some(m) => format!("{:.1} / {:.0}", m.mean, m.max),
                    None => "-".into(),
                };
                let opt = |v: Option<f64>, f: fn(f64) -> String| v.map_or("-".into(), f);
                format!(
                    "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
                     <td>{}</td></tr>",
                    esc(&crate::metrics::summary::load_label(l)),
                    mm(s.running, false),
                    mm(s.waiting, false),
                    mm(s.kv_cache_usage, true),
                    opt(s.prefix_cache_hit_rate, |v| format!("{:.0} %", v * 100.0)),
                    opt(s.preemptions, |v| format!("{v:.0}")),
                    s.samples
                )
            })
            .collect();
        if let Some(b) = &a.bound {
            let sentence = crate::plan::analysis_text::bound_sentence(b);
            let _ = write!(h, "<p>What bounds the server: {}</p>", esc(&sentence));
        }
        if rows.is_empty() {
            h += "<p>No server metrics were recorded for this run (the server exposes no \
                  <code>/metrics</code> rightsize knows, or the run predates recording them).</p>";
        } else {
            h +=
                "<div class=\"scroll\"><table><thead><tr><th>level</th><th>running mean / max</th>\
                  <th>waiting mean / max</th><th>KV cache mean / max</th><th>prefix hits</th>\
                  <th>preemptions</th><th>samples</th></tr></thead><tbody>";
            h += &rows.concat();
            h += "</tbody></table></div>";
        }
    }
    h
}
