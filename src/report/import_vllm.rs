//! `rightsize import vllm FILE...`: the results `vllm bench serve --save-result` writes, one
//! JSON object per level (`--append-result` puts several in one file, one a line), brought
//! into a run folder so they can be listed, shown, charted, compared and planned from like a
//! run recorded here.
//!
//! A level sits at its `max_concurrency`. A file without one (a rate with no concurrency
//! limit) is refused: vLLM records neither the concurrency it reached nor the rate it sent,
//! so the level has no place on either of rightsize's axes. vLLM's summary keys
//! (`mean_ttft_ms`, `median_ttft_ms`, `std_ttft_ms`, `p99_ttft_ms`, ..., in ms) are read
//! first; the per-request arrays a `--save-detailed` file holds (`ttfts`, `itls`,
//! `latencies`, `output_lens`, `input_lens`, `errors`, in seconds) give what the summary lacks,
//! computed as vLLM computes its own.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::metrics::{LevelSummary, Scalar, Stats, UNIT_MS, UNIT_TOKENS};
use crate::report::import_run::{
    files_and_heads, files_under, import_levels, imported_level, level_notes, not_this_tool,
    number_by_concurrency, read_limited, workload_name, ImportError, ImportNames, ImportOutcome,
    ImportedEcho, ImportedLevel,
};
use crate::report::import_stats::{errors_by_kind, group_errors, stats_from, Sample};

/// vLLM's metric names and ours: `ttft` is TTFT, `tpot` (per request (e2e - TTFT) / (output
/// tokens - 1)) our inter-token latency, `itl` (every gap between streamed chunks) our
/// inter-chunk latency, `e2el` our request latency.
pub const METRICS: [(&str, &str); 4] = [
    ("ttft", "time_to_first_token"),
    ("tpot", "inter_token_latency"),
    ("itl", "inter_chunk_latency"),
    ("e2el", "request_latency"),
];

/// What vLLM records that rightsize has no place for, or lacks: said once per run.
pub const DROPPED: [&str; 3] = [
    "vLLM's total_token_throughput, max_output_tokens_per_s, max_concurrent_requests, \
     client queue times, generated_texts and speculative-decoding figures are not imported",
    "vLLM records no start time (its `date` is the local time the level ended), no achieved \
     concurrency, no steady-state window, no per-user token throughput and no server \
     telemetry: those are absent, and every level counts as held",
    "inter_chunk_latency: vLLM's itl has one value per streamed chunk; without the per-request \
     itls its count is taken as the successful requests",
];

fn num(v: Option<&Value>) -> Option<f64> {
    v?.as_f64().filter(|x| x.is_finite())
}

/// Every result file under `paths`: files as given, folders' `.json` files (at any depth,
/// except vLLM's `.pytorch.json` copies), in path order.
pub fn result_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, ImportError> {
    let mut out = Vec::new();
    for p in paths {
        if !p.exists() {
            return Err(ImportError::NotFound(p.clone()));
        }
        if p.is_dir() {
            let found = files_under(p, &|f| {
                let name = f.to_string_lossy();
                name.ends_with(".json") && !name.ends_with(".pytorch.json")
            })?;
            if found.is_empty() {
                return Err(ImportError::NoFiles {
                    path: p.clone(),
                    what: "no .json file found (give the files vllm bench serve --save-result \
                           wrote, or a folder of them)"
                        .into(),
                });
            }
            out.extend(found);
        } else {
            out.push(p.clone());
        }
    }
    Ok(out)
}

/// The objects of one file: one, or one a line (`--append-result`).
pub fn parse_objects(source: &str, text: &str) -> Result<Vec<(String, Value)>, ImportError> {
    let mut out = Vec::new();
    for (i, v) in serde_json::Deserializer::from_str(text)
        .into_iter::<Value>()
        .enumerate()
    {
        let name = if i == 0 {
            source.to_string()
        } else {
            format!("{source}#{}", i + 1)
        };
        let v = v.map_err(|e| ImportError::Bad {
            source_name: name.clone(),
            message: format!("not JSON: {e}"),
        })?;
        out.push((name, v));
    }
    if out.is_empty() {
        return Err(ImportError::Bad {
            source_name: source.to_string(),
            message: "empty: no result in it".into(),
        });
    }
    Ok(out)
}

/// The per-request arrays of a `--save-detailed` result, successful requests only: which
/// requests succeeded is known from `errors` (an empty one), or when nothing failed.
struct PerRequest<'a> {
    obj: &'a Value,
    ok: Vec<bool>,
}

impl<'a> PerRequest<'a> {
    fn new(obj: &'a Value, failed: u64) -> Option<PerRequest<'a>> {
        let n = obj.get("latencies").or(obj.get("ttfts"))?.as_array()?.len();
        let ok = match obj.get("errors").and_then(Value::as_array) {
            Some(errors) if errors.len() == n => errors
                .iter()
                .map(|e| e.as_str().is_none_or(str::is_empty))
                .collect(),
            _ if failed == 0 => vec![true; n],
            _ => return None,
        };
        Some(PerRequest { obj, ok })
    }

    /// `key[i]` of each successful request i.
    fn values(&self, key: &str) -> Option<Vec<&'a Value>> {
        let a = self.obj.get(key)?.as_array()?;
        (a.len() == self.ok.len()).then(|| {
            a.iter()
                .zip(&self.ok)
                .filter(|(_, ok)| **ok)
                .map(|(v, _)| v)
                .collect()
        })
    }

    fn numbers(&self, key: &str, factor: f64) -> Option<Vec<f64>> {
        let v = self.values(key)?;
        v.iter().map(|x| x.as_f64().map(|x| x * factor)).collect()
    }

    /// Milliseconds of vLLM's `metric`, one value per request (per chunk for `itl`).
    fn sample(&self, metric: &str) -> Option<Sample> {
        match metric {
            "ttft" => Sample::new(self.numbers("ttfts", 1000.0)?),
            "e2el" => Sample::new(self.numbers("latencies", 1000.0)?),
            "itl" => Sample::new(
                self.values("itls")?
                    .into_iter()
                    .filter_map(Value::as_array)
                    .flatten()
                    .filter_map(Value::as_f64)
                    .map(|x| x * 1000.0),
            ),
            "tpot" => {
                let lat = self.numbers("latencies", 1000.0)?;
                let ttft = self.numbers("ttfts", 1000.0)?;
                let out = self.numbers("output_lens", 1.0)?;
                Sample::new(
                    lat.iter()
                        .zip(&ttft)
                        .zip(&out)
                        .filter(|(_, n)| **n > 1.0)
                        .map(|((l, t), n)| (l - t) / (n - 1.0)),
                )
            }
            _ => None,
        }
    }

    fn errors(&self) -> Vec<&'a str> {
        self.obj
            .get("errors")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .filter(|e| !e.is_empty())
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// vLLM's `metric` as [`Stats`] in `unit`: its summary keys (`mean_M_ms`, `median_M_ms`,
/// `std_M_ms`, `pN_M_ms`), else what the per-request values say; the notes name what came
/// from where.
fn metric_stats(
    obj: &Value,
    metric: &str,
    ours: &str,
    detail: Option<&PerRequest>,
    count: u64,
    notes: &mut Vec<String>,
) -> Option<Stats> {
    let summary = |k: &str| -> Option<f64> {
        let key = match k {
            "avg" => format!("mean_{metric}_ms"),
            "std" => format!("std_{metric}_ms"),
            "p50" => {
                return num(obj.get(format!("median_{metric}_ms")))
                    .or_else(|| num(obj.get(format!("p50_{metric}_ms"))))
            }
            p if p.starts_with('p') => format!("{p}_{metric}_ms"),
            _ => return None,
        };
        num(obj.get(&key))
    };
    let sample = detail.and_then(|d| d.sample(metric));
    let from_sample: Vec<&str> = [
        "avg", "min", "max", "std", "count", "p1", "p5", "p10", "p25",
    ]
    .into_iter()
    .chain(["p50", "p75", "p90", "p95", "p99"])
    .filter(|k| summary(k).is_none() && sample.as_ref().and_then(|s| s.get(k)).is_some())
    .collect();
    let get = |k: &str| summary(k).or_else(|| sample.as_ref()?.get(k));
    let s = stats_from(ours, UNIT_MS, get, count, notes)?;
    if !from_sample.is_empty() {
        notes.push(format!(
            "{ours}: {} computed from the per-request values (as vLLM computes its own)",
            from_sample.join(", ")
        ));
    }
    Some(s)
}

/// `20250101-120000` (vLLM's `date`, local time) as `2025-01-01T12:00:00`.
fn date_text(v: Option<&Value>) -> String {
    let Some(d) = v.and_then(Value::as_str) else {
        return String::new();
    };
    let digits: Vec<char> = d.chars().filter(char::is_ascii_digit).collect();
    if digits.len() != 14 {
        return d.to_string();
    }
    let s: String = digits.iter().collect();
    format!(
        "{}-{}-{}T{}:{}:{}",
        &s[0..4],
        &s[4..6],
        &s[6..8],
        &s[8..10],
        &s[10..12],
        &s[12..14]
    )
}

/// Reads one result object into a level; the error says what is wrong with it.
pub fn parse_result(obj: &Value) -> Result<(LevelSummary, Vec<String>), String> {
    if !obj.is_object() {
        return Err("not a vllm bench serve result: the top level is not an object".into());
    }
    let completed = num(obj.get("completed")).ok_or_else(|| {
        not_this_tool(
            obj,
            "a vllm bench serve result: no `completed` (write one with --save-result)",
        )
    })?;
    let rate = obj.get("request_rate");
    let finite_rate = num(rate);
    let concurrency = obj
        .get("max_concurrency")
        .and_then(Value::as_u64)
        .and_then(|c| u32::try_from(c).ok())
        .filter(|c| *c > 0)
        .ok_or_else(|| {
            let sent = match (finite_rate, obj.get("ramp_up_strategy")) {
                (Some(r), _) => format!("at request_rate {r} req/s"),
                (None, Some(ramp)) => format!("at a rate ramped up ({ramp})"),
                (None, None) => "all at once (request_rate inf)".into(),
            };
            format!(
                "max_concurrency is null: the level was sent {sent} with no concurrency limit, \
                 and vLLM records neither the concurrency it reached nor the rate it sent, so \
                 it has no place on rightsize's concurrency axis; run vllm bench serve with \
                 --max-concurrency N (the rate may stay)"
            )
        })?;
    let mut notes = Vec::new();
    if let Some(r) = finite_rate {
        notes.push(format!(
            "sent at request_rate {r} req/s (burstiness {}), at most {concurrency} in flight: \
             placed at concurrency {concurrency}",
            obj.get("burstiness").unwrap_or(&Value::Null)
        ));
    }
    if let Some(s) = obj.get("ramp_up_strategy").and_then(Value::as_str) {
        notes.push(format!(
            "the rate ramped up ({s}, from {} to {} req/s)",
            obj.get("ramp_up_start_rps").unwrap_or(&Value::Null),
            obj.get("ramp_up_end_rps").unwrap_or(&Value::Null)
        ));
    }
    let num_prompts = num(obj.get("num_prompts"));
    let failed = match num(obj.get("failed")) {
        Some(f) => f,
        None => {
            let f = (num_prompts.unwrap_or(completed) - completed).max(0.0);
            notes.push(format!(
                "no `failed` count: taken as num_prompts - completed = {f}"
            ));
            f
        }
    };
    let detail = PerRequest::new(obj, failed as u64);
    let ok = completed as u64;
    let mut stats =
        |metric: &str, ours: &str| metric_stats(obj, metric, ours, detail.as_ref(), ok, &mut notes);
    let [ttft, tpot, itl, e2el] = METRICS.map(|(m, o)| stats(m, o));
    let lengths = |key: &str, ours: &str, notes: &mut Vec<String>| {
        let s = Sample::new(detail.as_ref()?.numbers(key, 1.0)?)?;
        stats_from(ours, UNIT_TOKENS, |k| s.get(k), ok, notes)
    };
    let osl = lengths("output_lens", "output_sequence_length", &mut notes);
    let isl = lengths("input_lens", "input_sequence_length", &mut notes);
    let error_list = detail
        .as_ref()
        .map(|d| group_errors(d.errors()))
        .unwrap_or_default();
    let summary = LevelSummary {
        requests_asked: num_prompts.map_or((completed + failed) as u64, |n| n as u64),
        end_time: date_text(obj.get("date")),
        time_to_first_token: ttft,
        inter_token_latency: tpot,
        inter_chunk_latency: itl,
        request_latency: e2el,
        output_sequence_length: osl,
        input_sequence_length: isl,
        output_token_throughput: Scalar::new(
            "tokens/sec",
            num(obj.get("output_throughput")).unwrap_or(0.0),
        ),
        request_throughput: Scalar::new(
            "requests/sec",
            num(obj.get("request_throughput")).unwrap_or(0.0),
        ),
        benchmark_duration: Scalar::new("sec", num(obj.get("duration")).unwrap_or(0.0)),
        total_osl: Scalar::new("tokens", num(obj.get("total_output_tokens")).unwrap_or(0.0)),
        total_isl: Scalar::new("tokens", num(obj.get("total_input_tokens")).unwrap_or(0.0)),
        goodput: num(obj.get("request_goodput")).map(|v| Scalar::new("requests/sec", v)),
        errors_by_kind: errors_by_kind(&error_list),
        error_summary: error_list,
        ..imported_level(concurrency, completed, failed)
    };
    Ok((summary, notes))
}

/// Parses every result under `paths` into levels, sorted by concurrency then date, numbered
/// 0.. .
pub fn parse_results(paths: &[PathBuf]) -> Result<Vec<ImportedLevel>, ImportError> {
    let mut levels = Vec::new();
    for file in result_files(paths)? {
        let source = file.display().to_string();
        for (name, obj) in parse_objects(&source, &read_limited(&file)?)? {
            let (summary, notes) = parse_result(&obj).map_err(|message| ImportError::Bad {
                source_name: name.clone(),
                message,
            })?;
            let head: serde_json::Map<String, Value> = [
                "date",
                "backend",
                "label",
                "model_id",
                "tokenizer_id",
                "num_prompts",
                "request_rate",
                "burstiness",
                "max_concurrency",
            ]
            .into_iter()
            .filter_map(|k| Some((k.to_string(), obj.get(k)?.clone())))
            .collect();
            levels.push(ImportedLevel {
                source: name,
                summary,
                notes,
                head: Value::Object(head),
                config: Value::Null,
            });
        }
    }
    number_by_concurrency(&mut levels);
    Ok(levels)
}

/// The `run.json` of an imported vLLM run. vLLM saves no URL and no requested lengths: the
/// endpoint is named `vllm` and the workload `vllm` unless given.
pub fn import_echo(
    paths: &[PathBuf],
    levels: &[ImportedLevel],
    names: &ImportNames,
) -> ImportedEcho {
    let first = levels.first().map(|l| &l.head).unwrap_or(&Value::Null);
    ImportedEcho {
        tool: "vllm",
        path: paths
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(" "),
        endpoint: names.endpoint.clone().unwrap_or_else(|| "vllm".into()),
        base_url: json!(""),
        model: names.model.clone().unwrap_or_else(|| {
            first
                .get("model_id")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        }),
        stream: None,
        workload: workload_name(&names.workload, "vllm", None, None),
        input_tokens: None,
        output_tokens: None,
        request_count: first.get("num_prompts").cloned().unwrap_or(Value::Null),
        slas: json!([]),
        max_error_rate: Value::Null,
        source: files_and_heads(levels, "results"),
        notes: level_notes(levels, &DROPPED),
    }
}

/// Reads the results under `paths` and writes them as a new run under `root`.
pub fn import_vllm(
    paths: &[PathBuf],
    root: &Path,
    names: &ImportNames,
) -> anyhow::Result<ImportOutcome> {
    let levels = parse_results(paths)?;
    import_levels(root, &levels, &import_echo(paths, &levels, names))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mapping_of_names_and_units() {
        let obj = json!({
            "date": "20261204-231500", "backend": "vllm", "model_id": "m", "num_prompts": 10,
            "request_rate": "inf", "burstiness": 1.0, "max_concurrency": 4,
            "duration": 2.5, "completed": 9, "failed": 1,
            "total_input_tokens": 1152, "total_output_tokens": 576,
            "request_throughput": 3.6, "request_goodput": null, "output_throughput": 230.4,
            "mean_ttft_ms": 20.0, "median_ttft_ms": 18.0, "std_ttft_ms": 4.0,
            "p90_ttft_ms": 26.0, "p99_ttft_ms": 30.0,
            "mean_tpot_ms": 10.0, "median_tpot_ms": 9.5, "std_tpot_ms": 1.0, "p99_tpot_ms": 14.0,
            "mean_itl_ms": 10.5, "median_itl_ms": 9.0, "std_itl_ms": 2.0, "p99_itl_ms": 30.0,
            "mean_e2el_ms": 650.0, "median_e2el_ms": 640.0, "std_e2el_ms": 20.0,
            "p99_e2el_ms": 700.0, "p99.9_e2el_ms": 710.0
        });
        let (l, notes) = parse_result(&obj).unwrap();
        assert_eq!(l.concurrency, 4);
        let ttft = l.time_to_first_token.as_ref().unwrap();
        assert_eq!(
            (
                ttft.unit.as_str(),
                ttft.avg,
                ttft.p50,
                ttft.p90,
                ttft.p99,
                ttft.std,
                ttft.count
            ),
            ("ms", 20.0, 18.0, 26.0, 30.0, 4.0, 9)
        );
        // vLLM's tpot is our inter-token latency, its itl our inter-chunk latency
        assert_eq!(l.inter_token_latency.as_ref().unwrap().p50, 9.5);
        assert_eq!(l.inter_chunk_latency.as_ref().unwrap().p99, 30.0);
        let e2e = l.request_latency.as_ref().unwrap();
        assert_eq!((e2e.avg, e2e.p50, e2e.p99), (650.0, 640.0, 700.0));
        // no per-request values: the lengths are absent, not zero
        assert_eq!(l.output_sequence_length, None);
        assert_eq!(
            (l.ok_count(), l.error_count(), l.planned_requests),
            (9, 1, 10)
        );
        assert_eq!(l.error_rate, 0.1);
        assert_eq!(l.output_tps(), 230.4);
        assert_eq!(l.requests_per_sec(), 3.6);
        assert_eq!(l.total_isl.avg, 1152.0);
        assert_eq!(l.goodput, None);
        assert_eq!(l.end_time, "2026-12-04T23:15:00");
        assert_eq!(
            notes[0],
            "time_to_first_token: min, max, p1, p5, p10, p25, p75, p95, count not in the export"
        );
    }

    #[test]
    fn per_request_values_fill_what_the_summary_lacks() {
        let obj = json!({
            "completed": 3, "failed": 1, "num_prompts": 4, "max_concurrency": 2,
            "request_rate": "inf", "mean_ttft_ms": 15.0, "p99_ttft_ms": 20.0,
            "ttfts": [0.01, 0.0, 0.02, 0.015], "latencies": [0.5, 0.0, 0.7, 0.6],
            "output_lens": [11, 0, 21, 1], "input_lens": [100, 100, 100, 100],
            "itls": [[0.04], [], [0.03, 0.05], []],
            "errors": ["", "Internal Server Error", "", ""]
        });
        let (l, notes) = parse_result(&obj).unwrap();
        let ttft = l.time_to_first_token.as_ref().unwrap();
        // the summary's mean and p99 are kept; the rest is numpy's over the 3 successes
        assert_eq!(
            (ttft.avg, ttft.p99, ttft.min, ttft.max),
            (15.0, 20.0, 10.0, 20.0)
        );
        assert_eq!(ttft.p50, 15.0);
        let e2e = l.request_latency.as_ref().unwrap();
        assert_eq!((e2e.p50, e2e.max, e2e.count), (600.0, 700.0, 3));
        // (500 - 10) / 10 and (700 - 20) / 20; the one-token request has none
        let tpot = l.inter_token_latency.as_ref().unwrap();
        assert_eq!((tpot.min, tpot.max, tpot.count), (34.0, 49.0, 2));
        assert_eq!(l.inter_chunk_latency.as_ref().unwrap().count, 3);
        assert_eq!(l.output_sequence_length.as_ref().unwrap().avg, 11.0);
        assert_eq!(
            l.error_summary[0].error_details.kind,
            "Internal Server Error"
        );
        assert!(
            notes.contains(
                &"request_latency: avg, min, max, std, count, p1, p5, p10, p25, p50, p75, p90, \
                  p95, p99 computed from the per-request values (as vLLM computes its own)"
                    .to_string()
            ),
            "{notes:?}"
        );
    }

    #[test]
    fn a_rate_without_a_concurrency_is_refused_saying_why() {
        let obj = json!({"completed": 3, "request_throughput": 1.0, "request_rate": 4.0,
            "max_concurrency": null});
        let e = parse_result(&obj).unwrap_err();
        assert!(
            e.starts_with("max_concurrency is null: the level was sent at request_rate 4 req/s"),
            "{e}"
        );
        let at_once = json!({"completed": 3, "request_rate": "inf", "max_concurrency": null});
        assert!(parse_result(&at_once).unwrap_err().starts_with(
            "max_concurrency is null: the level was sent all at once (request_rate inf) \
                 with no concurrency limit"
        ));
        let guidellm = json!({"benchmarks": []});
        assert_eq!(
            parse_result(&guidellm).unwrap_err(),
            "not a vllm bench serve result: no `completed` (write one with --save-result): it \
             looks like guidellm's output; use `rightsize import guidellm`"
        );
    }
}
