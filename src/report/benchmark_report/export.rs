//! One level of a run as a Benchmark Report v0.2 document. What each field holds, and what
//! the format has no place for, is in `docs/formats.md` ("llm-d Benchmark Report v0.2").
//! Fields rightsize does not know are left out, never guessed; the endpoint's URL is stored
//! with its secrets masked.

use serde_json::{json, Map, Value};

use super::{DISTRIBUTIONS, FILE_PREFIX, STAT_FIELDS, VERSION};
use crate::metrics::{LevelSummary, Stats};
use crate::report::folder::level_stem;
use crate::report::history::RunData;
use crate::workload::arrivals::LoadShape;
use crate::workload::tokenizer::sha256_hex;

/// The file a level is written to: `benchmark_report_v0.2,_level-001-c0016.json`.
pub fn file_name(level: &LevelSummary) -> String {
    format!("{FILE_PREFIX}{}.json", level_stem(level))
}

/// A `Statistics` object in `units` (rightsize's own units: no conversion).
fn statistics(s: &Stats, units: &str) -> Value {
    let fields = serde_json::to_value(s).unwrap_or_default();
    let mut out = Map::new();
    out.insert("units".into(), json!(units));
    for (theirs, ours) in STAT_FIELDS {
        if let Some(x) = fields.get(ours).filter(|x| x.is_number()) {
            out.insert(theirs.into(), x.clone());
        }
    }
    Value::Object(out)
}

/// A `Statistics` object holding one value.
fn single(units: &str, mean: f64) -> Value {
    json!({"units": units, "mean": mean})
}

/// `v` without its `null` members, at any depth: the format's optional fields are left out,
/// as llm-d-benchmark's own writer does.
fn without_nulls(v: Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.into_iter()
                .filter(|(_, x)| !x.is_null())
                .map(|(k, x)| (k, without_nulls(x)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.into_iter().map(without_nulls).collect()),
        other => other,
    }
}

/// An RFC 3339 time as the format's `datetime` reads it; `None` for anything else (an
/// imported run's time it could not read is left out rather than written unreadable).
fn datetime(t: &str) -> Option<&str> {
    let b = t.as_bytes();
    let shaped = b.len() >= 20 && b[4] == b'-' && b[7] == b'-' && b[10] == b'T' && b[13] == b':';
    shaped.then_some(t)
}

/// A requested length: `fixed`, or `gaussian` with its standard deviation.
fn length(mean: &Value, stddev: &Value) -> Option<Value> {
    let value = mean.is_number().then(|| mean.clone())?;
    Some(match stddev.as_f64().filter(|s| *s > 0.0) {
        Some(sd) => json!({"distribution": "gaussian", "value": value, "std_dev": sd}),
        None => json!({"distribution": "fixed", "value": value}),
    })
}

/// `scenario.stack`: the endpoint as one `generic` component (the format's `inference_engine`
/// needs the accelerator, its count and the replicas, which a client does not know). Its
/// `model.name` is where llm-d's tools look for the model.
fn stack(run: &RunData) -> Value {
    let e = &run.echo;
    let redact = |v: &Value| v.as_str().map(crate::secrets::redact_url);
    let native = without_nulls(json!({
        "base_url": redact(&e["endpoint"]["base_url"]),
        "api": e["endpoint"]["api"],
        "stream": e["endpoint"]["stream"],
        "server": e["server"],
        "serving_config": e["serving_config"],
    }));
    let server = &e["server"];
    let tool = server["owned_by"]
        .as_str()
        .or(server["server_header"].as_str())
        .unwrap_or("");
    let label = e["endpoint"]["name"]
        .as_str()
        .unwrap_or(&run.info.endpoint)
        .to_string();
    json!([{
        "metadata": {
            "schema_version": "0.0.1",
            "label": crate::secrets::redact_url(&label),
            "cfg_id": sha256_hex(native.to_string().as_bytes()),
        },
        "standardized": {
            "kind": "generic",
            "tool": tool,
            "tool_version": "",
            "model": {"name": e["endpoint"]["model"].as_str().unwrap_or(&run.info.model)},
        },
        "native": {"config": native},
    }])
}

/// `scenario.load`: the workload and the level's load; its `native.config` is the run's
/// workload and plan as `run.json` records them, and the level's own counts, so a rightsize
/// import reads the SLAs, requests and held flag back.
fn load(run: &RunData, level: &LevelSummary) -> Value {
    let e = &run.echo;
    let w = &e["workload"];
    let dataset = w["dataset"].is_object();
    let measured_in = level.input_sequence_length.as_ref().map(|s| s.avg);
    let input = match (
        dataset,
        length(&w["input_tokens"], &w["input_tokens_stddev"]),
    ) {
        (false, Some(l)) => l,
        // a dataset's lengths are its records': what the level measured (0 when nothing
        // succeeded: the format requires a value)
        _ => json!({"distribution": "other", "value": measured_in.unwrap_or(0.0)}),
    };
    let output = (!dataset)
        .then(|| length(&w["output_tokens"], &w["output_tokens_stddev"]))
        .flatten();
    let turns = w["sessions"]["turns"]
        .as_u64()
        .map(|t| json!({"enabled": true, "max_turns": {"distribution": "fixed", "value": t}}));
    let (concurrency, rate) = match level.open_loop.rate.as_ref().map(|r| &r.shape) {
        None => (Some(level.concurrency).filter(|c| *c >= 1), None),
        Some(LoadShape::Rate { rps }) => (None, Some(*rps).filter(|r| *r > 0.0)),
        Some(_) => (None, None),
    };
    let source = &e["source"];
    let (tool, tool_version) = match source["tool"].as_str() {
        // an imported run: the tool that made the load
        Some(t) => (t, source["tool_version"].as_str().unwrap_or("")),
        None => match source["format"].as_str() {
            Some(f) => (f, ""),
            None => ("rightsize", e["version"].as_str().unwrap_or("")),
        },
    };
    let kind = if source.is_object() {
        source["load_source"].as_str().unwrap_or("unknown")
    } else if dataset {
        "sampled"
    } else {
        "random"
    };
    let native = without_nulls(json!({
        "workload": w,
        "plan": e["plan"],
        "open_loop": e["open_loop"],
        "request_count": e["request_count"],
        "warmup": e["warmup"],
        "timeout_s": e["timeout_s"],
        "level": {
            "index": level.index,
            "planned_requests": level.planned_requests,
            "requests_asked": level.requests_asked,
            "held": level.held,
            "partial": level.partial,
        },
    }));
    without_nulls(json!({
        "metadata": {
            "schema_version": "0.0.1",
            "cfg_id": sha256_hex(native.to_string().as_bytes()),
            "description": crate::report::history_text::workload_line(e),
        },
        "standardized": {
            "tool": tool,
            "tool_version": tool_version,
            "source": kind,
            "stage": level.index,
            "input_seq_len": input,
            "output_seq_len": output,
            "multi_turn": turns,
            "rate_qps": rate,
            "concurrency": concurrency,
        },
        "native": {"config": native},
    }))
}

/// `results.request_performance.aggregate`: counts, the distributions and the throughputs.
fn aggregate(level: &LevelSummary) -> Value {
    let mut groups: Map<String, Value> = Map::new();
    let (ok, errors, cancelled) = (level.ok_count(), level.error_count(), level.cancelled_count);
    groups.insert(
        "requests".into(),
        json!({"total": ok + errors + cancelled, "failures": errors, "incomplete": cancelled}),
    );
    for (ours, group, theirs, units) in DISTRIBUTIONS {
        if let Some(s) = level.distribution(ours) {
            let g = groups.entry(group.to_string()).or_insert_with(|| json!({}));
            g[theirs] = statistics(s, units[0].0);
        }
    }
    let duration = level.benchmark_duration.avg;
    let per_sec = |total: f64| (duration > 0.0).then(|| total / duration);
    groups.insert(
        "throughput".into(),
        without_nulls(json!({
            "output_token_rate": single("tokens/s", level.output_tps()),
            "request_rate": single("queries/s", level.requests_per_sec()),
            "input_token_rate": per_sec(level.total_isl.avg).map(|r| single("tokens/s", r)),
            "total_token_rate": per_sec(level.total_isl.avg + level.total_osl.avg)
                .map(|r| single("tokens/s", r)),
        })),
    );
    Value::Object(groups)
}

/// `results.observability`: what the server's `/metrics` (and the GPUs' exporter) said while
/// the level ran, as mean and max, under the stack component's label.
fn observability(level: &LevelSummary, label: &Value) -> Option<Value> {
    let s = level.server.as_ref()?;
    let mean_max = |units: &str, m: &Option<crate::record::MeanMax>| {
        m.as_ref()
            .map(|m| json!({"units": units, "mean": m.mean, "max": m.max}))
    };
    let gpu = s.gpu.as_ref();
    let metrics = without_nulls(json!({
        "running_requests": mean_max("count", &s.running),
        "waiting_requests": mean_max("count", &s.waiting),
        "kv_cache_usage": mean_max("fraction", &s.kv_cache_usage),
        "cache_hit_rate": s.prefix_cache_hit_rate.map(|r| single("fraction", r)),
        "preemptions": s.preemptions.map(|n| single("count", n)),
        "gpu_utilization": gpu.and_then(|g| mean_max("percent", &g.utilization_pct)),
        "gpu_memory_usage": gpu.and_then(|g| mean_max("MiB", &g.memory_used_mib)),
        "power_consumption": gpu.and_then(|g| mean_max("Watts", &g.power_w)),
    }));
    (!metrics.as_object()?.is_empty())
        .then(|| json!({"components": [{"component_label": label, "aggregate": metrics}]}))
}

/// One level of `run` as a Benchmark Report v0.2 document.
pub fn report(run: &RunData, level: &LevelSummary) -> Value {
    let stack = stack(run);
    let model = stack[0]["standardized"]["model"]["name"]
        .as_str()
        .unwrap_or("");
    let id = &run.info.id;
    let mut results = json!({"request_performance": {"aggregate": aggregate(level)}});
    if let Some(o) = observability(level, &stack[0]["metadata"]["label"]) {
        results["observability"] = o;
    }
    without_nulls(json!({
        "version": VERSION,
        "run": {
            "uid": format!("{id}-{}", level_stem(level)),
            "eid": id,
            "time": {
                "start": datetime(&level.start_time),
                "end": datetime(&level.end_time),
                "duration": format!("PT{}S", level.benchmark_duration.avg),
            },
            // llm-d's viewers read the description as the run's label: `<model> [<id>]`, as
            // llm-d-benchmark's own default
            "description": if model.is_empty() { format!("[{id}]") } else { format!("{model} [{id}]") },
        },
        "scenario": {"stack": stack, "load": load(run, level)},
        "results": results,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nulls_are_left_out_at_any_depth() {
        let v = without_nulls(json!({"a": null, "b": {"c": null, "d": [1, {"e": null}]}}));
        assert_eq!(v, json!({"b": {"d": [1, {}]}}));
    }

    #[test]
    fn lengths_and_times() {
        assert_eq!(
            length(&json!(1024), &json!(0)),
            Some(json!({"distribution": "fixed", "value": 1024}))
        );
        assert_eq!(
            length(&json!(1024), &json!(64)),
            Some(json!({"distribution": "gaussian", "value": 1024, "std_dev": 64.0}))
        );
        assert_eq!(length(&Value::Null, &json!(64)), None);
        assert_eq!(
            datetime("2026-12-04T08:15:26.139Z"),
            Some("2026-12-04T08:15:26.139Z")
        );
        assert_eq!(datetime("1764405012"), None);
        assert_eq!(datetime(""), None);
    }
}
