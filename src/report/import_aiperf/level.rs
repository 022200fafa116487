//! One AIPerf `profile_export_aiperf.json` object read into a [`LevelSummary`], field by
//! field as docs/export.md names them. Anything may be absent: a missing percentile is interpolated
//! from its neighbours (and said so in the notes), a missing scalar is derived from what is
//! there (throughput from totals and duration, errors from `error_summary`).

use std::collections::BTreeMap;

use serde_json::Value;

use crate::metrics::{ErrorDetails, ErrorSummaryEntry, LevelSummary, Scalar, Stats, DISTRIBUTIONS};
use crate::record::ErrorKind;
use crate::report::import_run::imported_level;
pub use crate::report::import_stats::time_text;
use crate::report::import_stats::{errors_by_kind, stats_from};

fn num(v: &Value) -> Option<f64> {
    v.as_f64().filter(|x| x.is_finite())
}

/// `obj[name]["avg"]`, or `obj[name]` when it is a bare number.
pub fn scalar(obj: &Value, name: &str) -> Option<f64> {
    let v = obj.get(name)?;
    num(v).or_else(|| num(v.get("avg")?))
}

/// A metric object as [`Stats`]; `None` when it has no value at all. Filled-in fields are
/// named in `notes`.
fn stats(
    obj: &Value,
    name: &str,
    unit: &str,
    count: u64,
    notes: &mut Vec<String>,
) -> Option<Stats> {
    let m = obj.get(name)?.as_object()?;
    let unit = m.get("unit").and_then(Value::as_str).unwrap_or(unit);
    let s = stats_from(name, unit, |k| m.get(k).and_then(num), count, notes)?;
    Some(Stats {
        // an AIPerf export has no histogram to read order statistics from; a rightsize
        // export carries its intervals
        ci95: m
            .get("ci95")
            .and_then(|v| serde_json::from_value(v.clone()).ok()),
        past_limit: m
            .get("past_limit")
            .and_then(|v| serde_json::from_value(v.clone()).ok()),
        ..s
    })
}

fn error_summary(obj: &Value) -> Vec<ErrorSummaryEntry> {
    let Some(list) = obj.get("error_summary").and_then(Value::as_array) else {
        return Vec::new();
    };
    list.iter()
        .filter_map(|e| {
            let d = e.get("error_details").unwrap_or(&Value::Null);
            let text = |k: &str| match d.get(k) {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Null) | None => String::new(),
                Some(other) => other.to_string(),
            };
            Some(ErrorSummaryEntry {
                error_details: ErrorDetails {
                    code: d
                        .get("code")
                        .and_then(Value::as_u64)
                        .and_then(|c| u16::try_from(c).ok()),
                    kind: text("type"),
                    message: text("message"),
                },
                count: e.get("count")?.as_u64()?,
            })
        })
        .collect()
}

/// What a level file holds besides its summary.
#[derive(Debug, Clone, PartialEq)]
pub struct LevelExtras {
    /// `input_config` echo, `Null` when absent.
    pub input_config: Value,
    /// Fields filled in because the export lacked them.
    pub notes: Vec<String>,
}

/// Reads one export object; `concurrency` comes from the caller (the `input_config`, or the
/// file's path). The level's `index` is 0: the caller numbers levels once they are sorted.
pub fn parse_level(obj: &Value, concurrency: u32) -> (LevelSummary, LevelExtras) {
    let mut notes = Vec::new();
    let cfg = obj.get("input_config").cloned().unwrap_or(Value::Null);
    let errors_list = error_summary(obj);
    let errors_by_kind = errors_by_kind(&errors_list);
    let cancelled = errors_by_kind
        .get(&ErrorKind::Cancelled)
        .copied()
        .unwrap_or(0);
    let ok = scalar(obj, "request_count")
        .or_else(|| obj.get("request_latency")?.get("count").and_then(num))
        .unwrap_or(0.0);
    let errors = scalar(obj, "error_request_count").unwrap_or_else(|| {
        let n: u64 = errors_list.iter().map(|e| e.count).sum();
        n.saturating_sub(cancelled) as f64
    });
    let count = ok as u64;
    let mut metrics: BTreeMap<&str, Stats> = BTreeMap::new();
    // read as [`Stats`], with the unit assumed when the object has none
    for (name, unit) in DISTRIBUTIONS {
        if let Some(s) = stats(obj, name, unit, count, &mut notes) {
            metrics.insert(name, s);
        }
    }
    let start_time = time_text(obj.get("start_time").unwrap_or(&Value::Null));
    let end_time = time_text(obj.get("end_time").unwrap_or(&Value::Null));
    let duration = scalar(obj, "benchmark_duration").unwrap_or(0.0);
    let avg_of = |m: &str| metrics.get(m).map(|s| s.avg);
    let total = |name: &str, metric: &str| {
        scalar(obj, name).unwrap_or_else(|| avg_of(metric).map_or(0.0, |a| a * ok))
    };
    let total_osl = total("total_osl", "output_sequence_length");
    let total_isl = total("total_isl", "input_sequence_length");
    let per_sec = |v: f64| if duration > 0.0 { v / duration } else { 0.0 };
    let output_tps = scalar(obj, "output_token_throughput").unwrap_or_else(|| {
        notes.push("output_token_throughput: derived from total_osl / benchmark_duration".into());
        per_sec(total_osl)
    });
    let rps = scalar(obj, "request_throughput").unwrap_or_else(|| per_sec(ok));
    let planned = cfg
        .pointer("/loadgen/request_count")
        .and_then(Value::as_u64)
        .unwrap_or(count + errors as u64);
    let mut take = |name: &str| metrics.remove(name);
    let summary = LevelSummary {
        planned_requests: planned,
        requests_asked: obj
            .get("requests_asked")
            .and_then(Value::as_u64)
            .unwrap_or(planned),
        // an AIPerf export does not say how much concurrency it held: taken as held
        held: obj.get("held").and_then(Value::as_bool).unwrap_or(true),
        start_time,
        end_time,
        partial: obj
            .get("was_cancelled")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        time_to_first_token: take("time_to_first_token"),
        inter_token_latency: take("inter_token_latency"),
        inter_chunk_latency: take("inter_chunk_latency"),
        request_latency: take("request_latency"),
        output_sequence_length: take("output_sequence_length"),
        input_sequence_length: take("input_sequence_length"),
        output_token_throughput_per_user: take("output_token_throughput_per_user"),
        output_token_throughput: Scalar::new("tokens/sec", output_tps),
        output_token_throughput_steady: scalar(obj, "output_token_throughput_steady")
            .map(|v| Scalar::new("tokens/sec", v)),
        // rightsize's own exports carry it (what the knee reads) with its interval; AIPerf's
        // do not
        output_token_throughput_sustained: scalar(obj, "output_token_throughput_sustained").map(
            |v| Scalar {
                ci95: obj
                    .get("output_token_throughput_sustained")
                    .and_then(|s| s.get("ci95"))
                    .and_then(|c| serde_json::from_value(c.clone()).ok()),
                ..Scalar::new("tokens/sec", v)
            },
        ),
        request_throughput: Scalar::new("requests/sec", rps),
        benchmark_duration: Scalar::new("sec", duration),
        total_osl: Scalar::new("tokens", total_osl),
        total_isl: Scalar::new("tokens", total_isl),
        goodput: scalar(obj, "goodput").map(|v| Scalar::new("requests/sec", v)),
        error_summary: errors_list,
        errors_by_kind,
        cancelled_count: cancelled,
        // AIPerf 0.13 reports the concurrency it kept as `effective_concurrency`
        achieved_concurrency: obj
            .get("achieved_concurrency")
            .and_then(num)
            .or_else(|| scalar(obj, "effective_concurrency")),
        mean_in_flight: obj.get("mean_in_flight").and_then(num),
        slot_to_send: take("slot_to_send"),
        // AIPerf records no server telemetry
        ..imported_level(concurrency, ok, errors)
    };
    (
        summary,
        LevelExtras {
            input_config: cfg,
            notes,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn errors_come_from_the_summary_when_not_counted() {
        let obj = json!({"request_count": {"unit": "requests", "avg": 9},
        "error_summary": [
            {"error_details": {"code": 500, "type": "HTTPError", "message": "boom"}, "count": 1},
            {"error_details": {"code": null, "type": "cancelled", "message": ""}, "count": 2}
        ]});
        let (l, _) = parse_level(&obj, 4);
        assert_eq!(l.error_count(), 1);
        assert_eq!(l.cancelled_count, 2);
        assert_eq!(l.errors_by_kind[&ErrorKind::HttpStatus], 1);
        assert!((l.error_rate - 0.1).abs() < 1e-12);
    }
}
