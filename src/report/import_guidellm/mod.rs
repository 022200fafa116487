//! `rightsize import guidellm FILE`: the benchmarks file GuideLLM 0.8 writes
//! (`guidellm run ... --output kind=json,path=FILE`: `metadata`, `config`, `benchmarks[]`)
//! brought into a run folder, one level per benchmark, so it can be listed, shown, charted,
//! compared and planned from like a run recorded here.
//!
//! A concurrent benchmark is placed at its streams, a synchronous one at 1; rate benchmarks
//! (constant, poisson) and throughput ones at the concurrency GuideLLM measured for them,
//! which the notes say ([`level::place`]). Levels are numbered by concurrency.

pub mod level;

use std::path::Path;

use serde_json::{json, Value};

use crate::report::import_run::{
    endpoint_name, import_levels, level_notes, not_this_tool, number_by_concurrency, parse_json,
    read_limited, workload_name, ImportError, ImportNames, ImportOutcome, ImportedEcho,
    ImportedLevel,
};

/// What GuideLLM records that rightsize has no place for, or lacks: said once per run.
pub const DROPPED: [&str; 5] = [
    "time_per_output_token_ms (GuideLLM's TPOT: latency over all output tokens, the first \
     included) has no rightsize metric: not imported; rightsize's inter_token_latency is \
     GuideLLM's inter_token_latency_ms",
    "inter_token_latency: GuideLLM weighs each request by its output tokens after the first, \
     so its percentiles are over tokens; its count is taken as the requests with a first token",
    "time_to_first_output_token_ms, request_dispatch_delay, request_scheduled_latency, the \
     per-request records and the confidence intervals (mean_ci, percentile_cis) are not \
     imported",
    "GuideLLM records no inter-chunk latency, per-user token throughput, steady-state window, \
     achieved concurrency over such a window, nor server telemetry: those are absent; its \
     mean concurrency over the benchmark is the level's mean_in_flight",
    "GuideLLM does not judge whether a benchmark held its load: every level counts as held",
];

/// Parses a benchmarks file (`source` names it in errors) into levels, sorted by concurrency
/// then start time, numbered 0.. .
pub fn parse_report(source: &str, obj: &Value) -> Result<Vec<ImportedLevel>, ImportError> {
    let bad = |message: String| ImportError::Bad {
        source_name: source.to_string(),
        message,
    };
    let list = obj
        .get("benchmarks")
        .and_then(Value::as_array)
        .ok_or_else(|| {
            bad(not_this_tool(
                obj,
                "a GuideLLM benchmarks file: no `benchmarks` list (GuideLLM 0.8 writes one with \
             --output kind=json,path=FILE)",
            ))
        })?;
    if list.is_empty() {
        return Err(bad(
            "`benchmarks` is empty: the GuideLLM run finished no benchmark".into(),
        ));
    }
    let mut out = Vec::new();
    for (i, bench) in list.iter().enumerate() {
        let strategy = bench
            .pointer("/config/strategy")
            .filter(|s| s.is_object())
            .ok_or_else(|| {
                bad(format!(
                    "benchmarks[{i}] has no config.strategy (is this a GuideLLM 0.8 file?)"
                ))
            })?;
        let label = level::strategy_label(strategy);
        let metrics = bench
            .get("metrics")
            .filter(|m| m.get("request_totals").is_some())
            .ok_or_else(|| {
                bad(format!(
                    "benchmarks[{i}] ({label}) has no metrics.request_totals (is this a \
                     GuideLLM 0.8 file?)"
                ))
            })?;
        let (concurrency, place_note) = level::place(strategy, metrics)
            .map_err(|m| bad(format!("benchmarks[{i}] ({label}): {m}")))?;
        let mut notes: Vec<String> = place_note.into_iter().collect();
        let summary = level::parse_benchmark(bench, concurrency, &mut notes);
        out.push(ImportedLevel {
            source: format!("{label} (c={concurrency})"),
            head: json!({
                "index": i,
                "label": label,
                "strategy": strategy,
                "id": bench.pointer("/config/id_"),
            }),
            summary,
            notes,
            config: Value::Null,
        });
    }
    number_by_concurrency(&mut out);
    Ok(out)
}

/// The `run.json` of an imported GuideLLM run: names from the file's `config.spec` (its
/// backend's target and model, the synthetic data's token counts).
pub fn import_echo(
    path: &Path,
    report: &Value,
    levels: &[ImportedLevel],
    names: &ImportNames,
) -> ImportedEcho {
    let spec = report.pointer("/config/spec").unwrap_or(&Value::Null);
    let base_url = spec
        .pointer("/backend/target")
        .cloned()
        .unwrap_or(json!(""));
    let tokens = |k: &str| {
        spec.pointer(&format!("/data/0/{k}"))
            .and_then(Value::as_u64)
    };
    let (input_tokens, output_tokens) = (tokens("prompt_tokens"), tokens("output_tokens"));
    let max_requests = spec
        .get("constraints")
        .and_then(Value::as_array)
        .and_then(|cs| {
            cs.iter()
                .find(|c| c.get("kind").and_then(Value::as_str) == Some("max_requests"))
        })
        .and_then(|c| c.get("count"))
        .cloned()
        .unwrap_or(Value::Null);
    let mut source = serde_json::Map::new();
    source.insert(
        "guidellm_version".into(),
        report
            .pointer("/metadata/guidellm_version")
            .cloned()
            .unwrap_or(Value::Null),
    );
    source.insert(
        "profile".into(),
        spec.get("profile").cloned().unwrap_or(Value::Null),
    );
    source.insert(
        "benchmarks".into(),
        json!(levels.iter().map(|l| l.head.clone()).collect::<Vec<_>>()),
    );
    ImportedEcho {
        tool: "guidellm",
        path: path.display().to_string(),
        endpoint: endpoint_name(&names.endpoint, &base_url, "guidellm"),
        base_url,
        model: names.model.clone().unwrap_or_else(|| {
            spec.pointer("/backend/model")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        }),
        stream: spec.pointer("/backend/stream").and_then(Value::as_bool),
        workload: workload_name(&names.workload, "guidellm", input_tokens, output_tokens),
        input_tokens,
        output_tokens,
        request_count: max_requests,
        slas: json!([]),
        max_error_rate: Value::Null,
        source,
        notes: level_notes(levels, &DROPPED),
    }
}

/// Reads the benchmarks file at `path` and writes it as a new run under `root`.
pub fn import_guidellm(
    path: &Path,
    root: &Path,
    names: &ImportNames,
) -> anyhow::Result<ImportOutcome> {
    if !path.exists() {
        return Err(ImportError::NotFound(path.to_path_buf()).into());
    }
    if path.is_dir() {
        return Err(ImportError::NoFiles {
            path: path.to_path_buf(),
            what: "a folder: give the benchmarks JSON file GuideLLM wrote (--output \
                   kind=json,path=FILE)"
                .into(),
        }
        .into());
    }
    let source = path.display().to_string();
    let report = parse_json(&source, &read_limited(path)?)?;
    let levels = parse_report(&source, &report)?;
    import_levels(root, &levels, &import_echo(path, &report, &levels, names))
}
