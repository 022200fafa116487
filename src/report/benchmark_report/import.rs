//! `rightsize import benchmark-report PATH`: Benchmark Report v0.2 documents (JSON), one per
//! level, brought into a run folder. PATH is one report or a folder searched for
//! `benchmark_report_v0.2*` (and the results store's `report_v0.2*`) files at any depth.
//!
//! Each report is checked field by field (a bad one is refused naming its file and the field),
//! turned into the shape of an AIPerf export with rightsize's names and units, and read by the
//! AIPerf import's [`parse_level`], so both imports fill in what a file lacks the same way.

use std::path::Path;

use serde_json::{json, Map, Value};

use super::{
    UnitFactor, DISTRIBUTIONS, REQUEST_RATE_UNITS, STAT_FIELDS, TOKEN_RATE_UNITS, VERSION,
};
use crate::metrics::LevelSummary;
use crate::report::import_aiperf::{concurrency_in_path, parse_level};
use crate::report::import_run::{
    files_under, read_limited, write_imported_run, ImportError, ImportNames, ImportOutcome,
};

/// The versions read: 0.2, and 0.2.1, which only adds optional fields.
const VERSIONS: [&str; 2] = [VERSION, "0.2.1"];

/// Where a report's request counts, distributions and throughputs are.
const AGGREGATE: &str = "results.request_performance.aggregate";
/// Where a report's load is.
const LOAD: &str = "scenario.load.standardized";

/// The files a folder is searched for: llm-d-benchmark's `benchmark_report_v0.2,_*` (the
/// name rightsize's export gives too) and the results store's `report_v0.2*`.
fn is_report_name(name: &str) -> bool {
    name.starts_with("benchmark_report_v0.2") || name.starts_with("report_v0.2")
}

/// `doc` at a dotted path (a number picks an array's item); `None` for a missing or `null`
/// member.
fn at<'a>(doc: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.')
        .try_fold(doc, |v, k| match k.parse::<usize>() {
            Ok(i) => v.get(i),
            Err(_) => v.get(k),
        })
        .filter(|v| !v.is_null())
}

/// An ISO 8601 duration (`PT4.73S`, `PT1H2M`, `P1DT2H`) in seconds.
fn iso_duration_s(text: &str) -> Option<f64> {
    let rest = text.strip_prefix('P')?;
    let (date, time) = rest.split_once('T').unwrap_or((rest, ""));
    let mut total = 0.0;
    for (part, units) in [
        (date, &[('W', 604_800.0), ('D', 86_400.0)][..]),
        (time, &[('H', 3_600.0), ('M', 60.0), ('S', 1.0)][..]),
    ] {
        let mut number = String::new();
        for c in part.chars() {
            if c.is_ascii_digit() || c == '.' {
                number.push(c);
            } else {
                let factor = units.iter().find(|(u, _)| *u == c)?.1;
                total += number.parse::<f64>().ok()? * factor;
                number.clear();
            }
        }
        if !number.is_empty() {
            return None;
        }
    }
    Some(total)
}

/// The `Statistics` object at `path` as an AIPerf metric object in rightsize's `unit` (its
/// values times the factor of the units it states), with `count` values; `None` when absent.
fn statistics(
    doc: &Value,
    path: &str,
    units: &[UnitFactor],
    unit: &str,
    count: u64,
) -> Result<Option<Value>, String> {
    let Some(v) = at(doc, path) else {
        return Ok(None);
    };
    let m = v
        .as_object()
        .ok_or_else(|| format!("`{path}` is {v}, not a Statistics object"))?;
    let stated = m
        .get("units")
        .and_then(Value::as_str)
        .ok_or_else(|| format!("`{path}.units` is missing"))?;
    let factor = units
        .iter()
        .find(|(name, _)| *name == stated)
        .map(|(_, f)| *f)
        .ok_or_else(|| {
            let allowed: Vec<&str> = units.iter().map(|(name, _)| *name).collect();
            format!(
                "`{path}.units` is \"{stated}\": it must be {}",
                allowed.join(" or ")
            )
        })?;
    let mut out = Map::new();
    out.insert("unit".into(), json!(unit));
    out.insert("count".into(), json!(count));
    for (theirs, ours) in STAT_FIELDS {
        let Some(x) = m.get(theirs).filter(|x| !x.is_null()) else {
            continue;
        };
        let x = x
            .as_f64()
            .filter(|x| x.is_finite())
            .ok_or_else(|| format!("`{path}.{theirs}` is {x}, not a number"))?;
        if x < 0.0 {
            return Err(format!("`{path}.{theirs}` is {x}: it cannot be negative"));
        }
        out.insert(ours.into(), json!(x * factor));
    }
    if !out.contains_key("avg") {
        return Err(format!("`{path}.mean` is missing"));
    }
    Ok(Some(Value::Object(out)))
}

/// A count at `path`: a whole number of at least 0; `None` when absent.
fn count(doc: &Value, path: &str) -> Result<Option<u64>, String> {
    at(doc, path)
        .map(|v| {
            v.as_u64()
                .ok_or_else(|| format!("`{path}` is {v}: it must be a whole number of at least 0"))
        })
        .transpose()
}

/// The level's concurrency: the report's, else one its file name states (`-c0016`).
fn concurrency(doc: &Value, source: &str) -> Result<u32, String> {
    let path = format!("{LOAD}.concurrency");
    if let Some(v) = at(doc, &path) {
        return v
            .as_u64()
            .and_then(|c| u32::try_from(c).ok())
            .filter(|c| *c >= 1)
            .ok_or_else(|| format!("`{path}` is {v}: it must be a whole number of at least 1"));
    }
    if let Some(c) = concurrency_in_path(source) {
        return Ok(c);
    }
    Err(match at(doc, &format!("{LOAD}.rate_qps")) {
        Some(rate) => format!(
            "`{path}` is missing: the report sends {rate} queries/s without a concurrency, \
             which this import cannot place on a concurrency axis"
        ),
        None => format!("`{path}` is missing, and the file's name states none (e.g. -c0016)"),
    })
}

/// A note of the AIPerf reader (`request_latency: p1, std not in the export`) in the
/// report's names (`...latency.request_latency: p1, stddev not in the report`).
fn in_report_names(note: &str) -> String {
    DISTRIBUTIONS
        .iter()
        .find_map(|(ours, group, theirs, _)| {
            let fields = note
                .strip_prefix(ours)?
                .strip_prefix(": ")?
                .strip_suffix(" not in the export")?;
            let fields: Vec<&str> = fields
                .split(", ")
                .map(|f| {
                    STAT_FIELDS
                        .iter()
                        .find(|(_, o)| *o == f)
                        .map_or(f, |(t, _)| *t)
                })
                .collect();
            Some(format!(
                "{AGGREGATE}.{group}.{theirs}: {} not in the report",
                fields.join(", ")
            ))
        })
        .unwrap_or_else(|| note.to_string())
}

/// One report read.
struct ReadReport {
    source: String,
    doc: Value,
    summary: LevelSummary,
    notes: Vec<String>,
}

/// Reads one report: its fields checked, then shaped as an AIPerf export and parsed.
fn read_report(source: &str, text: &str) -> Result<ReadReport, String> {
    let doc: Value = serde_json::from_str(text).map_err(|e| {
        let lower = source.to_ascii_lowercase();
        if lower.ends_with(".yaml")
            || lower.ends_with(".yml")
            || !text.trim_start().starts_with('{')
        {
            "not JSON: rightsize reads Benchmark Reports as JSON only (it has no YAML parser); \
             convert the file first, e.g. python3 -c 'import json,sys,yaml; \
             json.dump(yaml.safe_load(open(sys.argv[1])), sys.stdout)' FILE > FILE.json"
                .to_string()
        } else {
            format!("not JSON: {e}")
        }
    })?;
    if !doc.is_object() {
        return Err("not a Benchmark Report: the top level is not an object".into());
    }
    match at(&doc, "version").map(|v| (v, v.as_str())) {
        Some((_, Some(v))) if VERSIONS.contains(&v) => {}
        Some((v, _)) => {
            return Err(format!(
                "`version` is {v}: this import reads Benchmark Report 0.2 (and 0.2.1)"
            ))
        }
        None => return Err("`version` is missing: not a Benchmark Report v0.2".into()),
    }
    let concurrency = concurrency(&doc, source)?;
    let requests = format!("{AGGREGATE}.requests");
    let total = count(&doc, &format!("{requests}.total"))?.ok_or_else(|| {
        format!("`{requests}.total` is missing: the report holds no request counts")
    })?;
    let mut notes = Vec::new();
    let failures = count(&doc, &format!("{requests}.failures"))?.unwrap_or_else(|| {
        notes.push(format!("{requests}.failures not in the report: taken as 0"));
        0
    });
    let incomplete = count(&doc, &format!("{requests}.incomplete"))?.unwrap_or(0);
    let ok = total.checked_sub(failures + incomplete).ok_or_else(|| {
        format!(
            "`{requests}`: failures ({failures}) and incomplete ({incomplete}) are more \
                 than the total ({total})"
        )
    })?;
    // a rightsize export's own record of the level and its run
    let native = at(&doc, "scenario.load.native.config").unwrap_or(&Value::Null);
    let level = &native["level"];
    let mut obj = json!({
        "request_count": {"unit": "requests", "avg": ok},
        "error_request_count": {"unit": "requests", "avg": failures},
        "start_time": at(&doc, "run.time.start"),
        "end_time": at(&doc, "run.time.end"),
        "input_config": {"loadgen": {
            "concurrency": concurrency,
            "request_count": level["planned_requests"].as_u64().unwrap_or(total),
        }},
        "requests_asked": level["requests_asked"],
        "held": level["held"],
        "was_cancelled": level["partial"],
    });
    if incomplete > 0 {
        obj["error_summary"] = json!([{
            "error_details": {"code": null, "type": "cancelled", "message": ""},
            "count": incomplete,
        }]);
    }
    for (ours, group, theirs, units) in DISTRIBUTIONS {
        let unit = crate::metrics::DISTRIBUTIONS
            .iter()
            .find(|(name, _)| *name == ours)
            .map_or("", |(_, u)| *u);
        let path = format!("{AGGREGATE}.{group}.{theirs}");
        if let Some(s) = statistics(&doc, &path, units, unit, ok)? {
            obj[ours] = s;
        }
    }
    for (ours, theirs, units, unit) in [
        (
            "output_token_throughput",
            "output_token_rate",
            &TOKEN_RATE_UNITS[..],
            "tokens/sec",
        ),
        (
            "request_throughput",
            "request_rate",
            &REQUEST_RATE_UNITS[..],
            "requests/sec",
        ),
    ] {
        let path = format!("{AGGREGATE}.throughput.{theirs}");
        if let Some(s) = statistics(&doc, &path, units, unit, ok)? {
            obj[ours] = json!({"unit": unit, "avg": s["avg"]});
        }
    }
    match at(&doc, "run.time.duration") {
        Some(d) => {
            let secs = d
                .as_str()
                .and_then(iso_duration_s)
                .ok_or_else(|| format!("`run.time.duration` is {d}, not an ISO 8601 duration"))?;
            obj["benchmark_duration"] = json!({"unit": "sec", "avg": secs});
        }
        None => notes.push("run.time.duration not in the report".into()),
    }
    let (summary, extras) = parse_level(&obj, concurrency);
    notes.extend(extras.notes.iter().map(|n| in_report_names(n)));
    Ok(ReadReport {
        source: source.to_string(),
        doc,
        summary,
        notes,
    })
}

/// Every report under `path`, read and sorted by concurrency, stage and start, numbered.
fn read_reports(path: &Path) -> Result<Vec<ReadReport>, ImportError> {
    if !path.exists() {
        return Err(ImportError::NotFound(path.to_path_buf()));
    }
    let files = if path.is_dir() {
        files_under(path, &|p: &Path| {
            p.file_name()
                .is_some_and(|n| is_report_name(&n.to_string_lossy()))
        })?
    } else {
        vec![path.to_path_buf()]
    };
    if files.is_empty() {
        return Err(ImportError::Bad {
            source_name: path.display().to_string(),
            message: "no benchmark_report_v0.2* file in this folder (give a report, or a \
                      folder holding them)"
                .into(),
        });
    }
    let mut reports = files
        .iter()
        .map(|f| {
            let source = f.display().to_string();
            let text = read_limited(f)?;
            read_report(&source, &text).map_err(|message| ImportError::Bad {
                source_name: source,
                message,
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let stage = |r: &ReadReport| at(&r.doc, &format!("{LOAD}.stage")).and_then(Value::as_u64);
    reports.sort_by(|a, b| {
        (a.summary.concurrency, stage(a), &a.summary.start_time).cmp(&(
            b.summary.concurrency,
            stage(b),
            &b.summary.start_time,
        ))
    });
    for (i, r) in reports.iter_mut().enumerate() {
        r.summary.index = i as u32;
    }
    Ok(reports)
}

/// The `run.json` of an imported run. A rightsize export's `native.config` sections give
/// the workload, plan, endpoint and server back as they were; another tool's report gives
/// its model, lengths and load.
fn import_echo(run_id: &str, path: &Path, reports: &[ReadReport], names: &ImportNames) -> Value {
    let doc = &reports[0].doc;
    let component = at(doc, "scenario.stack.0").unwrap_or(&Value::Null);
    let endpoint = &component["native"]["config"];
    let load = at(doc, "scenario.load").unwrap_or(&Value::Null);
    let native = &load["native"]["config"];
    let std = &load["standardized"];
    let text = |v: &Value| v.as_str().map(crate::secrets::redact_url);
    let model = names
        .model
        .clone()
        .or_else(|| {
            component["standardized"]["model"]["name"]
                .as_str()
                .map(String::from)
        })
        .unwrap_or_default();
    let length = |v: &Value| v["value"].as_f64().map(|x| x.round() as u64);
    let mut workload = match &native["workload"] {
        Value::Object(w) => Value::Object(w.clone()),
        _ => json!({
            "name": text(&load["metadata"]["description"]).unwrap_or_else(|| "benchmark-report".into()),
            "input_tokens": length(&std["input_seq_len"]),
            "output_tokens": length(&std["output_seq_len"]),
        }),
    };
    if let Some(w) = &names.workload {
        workload["name"] = json!(w);
    }
    let mut notes: Vec<String> = vec![
        "the number of values behind each statistic is not in the format: taken as the \
         level's successful requests"
            .into(),
    ];
    for r in reports {
        notes.extend(r.notes.iter().map(|n| format!("{}: {n}", r.source)));
    }
    let starts = reports.iter().map(|r| r.summary.start_time.as_str());
    let ends = reports.iter().map(|r| r.summary.end_time.as_str());
    let stream = workload["stream"].clone();
    json!({
        "tool": "rightsize",
        "version": env!("CARGO_PKG_VERSION"),
        "run_id": run_id,
        "kind": "import-benchmark-report",
        "endpoint": {
            "name": names.endpoint.clone()
                .or_else(|| text(&component["metadata"]["label"]))
                .unwrap_or_else(|| "benchmark-report".into()),
            "base_url": text(&endpoint["base_url"]).unwrap_or_default(),
            "model": model,
            "api": endpoint["api"],
            "stream": endpoint.get("stream").unwrap_or(&stream),
        },
        "server": endpoint["server"],
        "serving_config": endpoint["serving_config"],
        "workload": workload,
        "plan": {
            "kind": "import",
            "concurrency": reports.iter().map(|r| r.summary.concurrency).collect::<Vec<_>>(),
            // a rightsize export carries its run's SLAs and error-rate limit
            "slas": native["plan"].get("slas").cloned().unwrap_or(json!([])),
            "max_error_rate": native["plan"]["max_error_rate"],
        },
        "request_count": native["request_count"],
        "started_at": starts.filter(|t| !t.is_empty()).min(),
        "ended_at": ends.filter(|t| !t.is_empty()).max(),
        "interrupted": false,
        "source": {
            "format": "benchmark-report",
            "path": path.display().to_string(),
            "files": reports.iter().map(|r| r.source.clone()).collect::<Vec<_>>(),
            "tool": std["tool"],
            "tool_version": std["tool_version"],
            "load_source": std["source"],
            "reports": reports.iter().map(|r| json!({
                "uid": at(&r.doc, "run.uid"),
                "eid": at(&r.doc, "run.eid"),
                "description": at(&r.doc, "run.description"),
            })).collect::<Vec<_>>(),
            "notes": notes,
        },
    })
}

/// Reads the reports under `path` and writes them as a new run under `root`.
pub fn import_benchmark_reports(
    path: &Path,
    root: &Path,
    names: &ImportNames,
) -> anyhow::Result<ImportOutcome> {
    let reports = read_reports(path)?;
    let summaries: Vec<LevelSummary> = reports.iter().map(|r| r.summary.clone()).collect();
    write_imported_run(root, "benchmark-report", &summaries, |run_id| {
        import_echo(run_id, path, &reports, names)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(aggregate: Value) -> Value {
        json!({
            "version": "0.2",
            "run": {"uid": "u", "time": {"duration": "PT2S"}},
            "scenario": {"load": {"standardized": {"concurrency": 8}}},
            "results": {"request_performance": {"aggregate": aggregate}},
        })
    }

    fn read(doc: &Value) -> Result<ReadReport, String> {
        read_report("r.json", &doc.to_string())
    }

    #[test]
    fn durations() {
        assert_eq!(iso_duration_s("PT4.737517334S"), Some(4.737517334));
        assert_eq!(iso_duration_s("PT1H2M3S"), Some(3723.0));
        assert_eq!(iso_duration_s("P1DT1S"), Some(86_401.0));
        assert_eq!(iso_duration_s("PT5"), None);
        assert_eq!(iso_duration_s("5S"), None);
    }

    #[test]
    fn seconds_become_milliseconds_and_counts_add_up() {
        let r = read(&report(json!({
            "requests": {"total": 10, "failures": 1, "incomplete": 2},
            "latency": {
                "request_latency": {"units": "s", "mean": 1.5, "p50": 1.25, "p99": 2.0},
                "time_per_output_token": {"units": "s/token", "mean": 0.02},
            },
            "throughput": {"output_token_rate": {"units": "tokens/s", "mean": 99.5}},
        })))
        .unwrap();
        let l = &r.summary;
        assert_eq!(
            (l.ok_count(), l.error_count(), l.cancelled_count),
            (7, 1, 2)
        );
        let e2e = l.request_latency.as_ref().unwrap();
        assert_eq!(
            (e2e.avg, e2e.p50, e2e.p99, e2e.count),
            (1500.0, 1250.0, 2000.0, 7)
        );
        assert_eq!(l.inter_token_latency.as_ref().unwrap().avg, 20.0);
        assert_eq!(l.output_tps(), 99.5);
        assert_eq!(l.benchmark_duration.avg, 2.0);
        assert_eq!(l.concurrency, 8);
        // a missing percentile is filled in and said, by the report's name
        assert!(
            r.notes.iter().any(|n| n
                == "results.request_performance.aggregate.latency.request_latency: min, \
                    max, p1, p5, p10, p25, p75, p90, p95, stddev not in the report"),
            "{:?}",
            r.notes
        );
    }

    #[test]
    fn bad_fields_are_named() {
        let wrong_unit = report(json!({"requests": {"total": 3},
            "latency": {"time_to_first_token": {"units": "ms/token", "mean": 5.0}}}));
        assert_eq!(
            read(&wrong_unit).err().unwrap(),
            "`results.request_performance.aggregate.latency.time_to_first_token.units` is \
             \"ms/token\": it must be ms or s"
        );
        let negative = report(json!({"requests": {"total": 3},
            "throughput": {"request_rate": {"units": "queries/s", "mean": -1.0}}}));
        assert_eq!(
            read(&negative).err().unwrap(),
            "`results.request_performance.aggregate.throughput.request_rate.mean` is -1: it \
             cannot be negative"
        );
        let no_total = report(json!({"requests": {"failures": 3}}));
        assert_eq!(
            read(&no_total).err().unwrap(),
            "`results.request_performance.aggregate.requests.total` is missing: the report \
             holds no request counts"
        );
        let mut old = report(json!({"requests": {"total": 3}}));
        old["version"] = json!("0.1");
        assert_eq!(
            read(&old).err().unwrap(),
            "`version` is \"0.1\": this import reads Benchmark Report 0.2 (and 0.2.1)"
        );
        let mut rate = report(json!({"requests": {"total": 3}}));
        rate["scenario"]["load"]["standardized"] = json!({"rate_qps": 2.5});
        assert_eq!(
            read(&rate).err().unwrap(),
            "`scenario.load.standardized.concurrency` is missing: the report sends 2.5 \
             queries/s without a concurrency, which this import cannot place on a \
             concurrency axis"
        );
        assert!(read_report("r.yaml", "version: '0.2'\n")
            .err()
            .unwrap()
            .starts_with("not JSON: rightsize reads Benchmark Reports as JSON only"));
    }
}
