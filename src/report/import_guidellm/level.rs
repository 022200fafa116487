//! One GuideLLM 0.8 benchmark (an entry of a benchmarks file's `benchmarks[]`) read into a
//! [`LevelSummary`]. GuideLLM summarizes each metric per request status
//! (`successful`, `errored`, `incomplete`, `total`) as `{mean, median, std_dev, min, max,
//! count, total_sum, percentiles: {p001, p01, p05, .., p99, p999}}`; the level takes the
//! successful requests' summary, as rightsize keeps failed requests out of its percentiles.
//! Latencies named `_ms` are in milliseconds, `request_latency` in seconds.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::metrics::{ErrorSummaryEntry, LevelSummary, Scalar, Stats};
use crate::metrics::{UNIT_MS, UNIT_TOKENS};
use crate::record::ErrorKind;
use crate::report::import_run::imported_level;
use crate::report::import_stats::{errors_by_kind, group_errors, stats_from, time_text};

/// Our statistic names and GuideLLM's (`avg` is its `mean`, `p1` its `percentiles.p01`).
const NAMES: [(&str, &str); 14] = [
    ("avg", "mean"),
    ("min", "min"),
    ("max", "max"),
    ("std", "std_dev"),
    ("count", "count"),
    ("p1", "percentiles/p01"),
    ("p5", "percentiles/p05"),
    ("p10", "percentiles/p10"),
    ("p25", "percentiles/p25"),
    ("p50", "percentiles/p50"),
    ("p75", "percentiles/p75"),
    ("p90", "percentiles/p90"),
    ("p95", "percentiles/p95"),
    ("p99", "percentiles/p99"),
];

/// Each distribution we read: GuideLLM's name, ours, our unit, and the factor from its unit
/// to ours.
pub const DISTRIBUTIONS: [(&str, &str, &str, f64); 5] = [
    (
        "time_to_first_token_ms",
        "time_to_first_token",
        UNIT_MS,
        1.0,
    ),
    (
        "inter_token_latency_ms",
        "inter_token_latency",
        UNIT_MS,
        1.0,
    ),
    ("request_latency", "request_latency", UNIT_MS, 1000.0),
    (
        "output_token_count",
        "output_sequence_length",
        UNIT_TOKENS,
        1.0,
    ),
    (
        "prompt_token_count",
        "input_sequence_length",
        UNIT_TOKENS,
        1.0,
    ),
];

fn num(v: Option<&Value>) -> Option<f64> {
    v?.as_f64().filter(|x| x.is_finite())
}

/// `metrics[name][status]`, when it summarizes at least one value.
fn status<'a>(metrics: &'a Value, name: &str, status: &str) -> Option<&'a Value> {
    let s = metrics.get(name)?.get(status)?;
    (num(s.get("count")).unwrap_or(0.0) > 0.0).then_some(s)
}

/// The successful requests' summary of GuideLLM's `name` as [`Stats`] in `unit`, its values
/// multiplied by `factor` (counts and the standard deviation scale like the values, `count`
/// does not).
pub fn stats(
    metrics: &Value,
    name: &str,
    ours: &str,
    unit: &str,
    factor: f64,
    notes: &mut Vec<String>,
) -> Option<Stats> {
    let s = status(metrics, name, "successful")?;
    let get = |k: &str| {
        let (_, theirs) = NAMES.iter().find(|(o, _)| *o == k)?;
        let v = num(s.pointer(&format!("/{theirs}")))?;
        Some(if k == "count" { v } else { v * factor })
    };
    stats_from(ours, unit, get, 0, notes)
}

/// The successful requests' mean of a rate or concurrency GuideLLM summarizes over time.
fn mean(metrics: &Value, name: &str, of: &str) -> Option<f64> {
    num(status(metrics, name, of)?.get("mean"))
}

/// The errored requests GuideLLM kept (`requests.errored[]`), grouped by class and status.
fn error_summary(bench: &Value) -> Vec<ErrorSummaryEntry> {
    let errored = bench
        .pointer("/requests/errored")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    group_errors(errored.iter().map(|r| {
        r.pointer("/info/error")
            .and_then(Value::as_str)
            .unwrap_or("")
    }))
}

/// A benchmark's strategy for people: `concurrent@4`, `poisson@3.00`, `synchronous`, as
/// GuideLLM names it.
pub fn strategy_label(strategy: &Value) -> String {
    let kind = strategy.get("type_").and_then(Value::as_str).unwrap_or("?");
    match kind {
        "concurrent" => format!(
            "concurrent@{}",
            strategy.get("streams").unwrap_or(&Value::Null)
        ),
        "throughput" => match strategy.get("max_concurrency").and_then(Value::as_u64) {
            Some(c) => format!("throughput@{c}"),
            None => "throughput".into(),
        },
        "constant" | "poisson" | "async" => match num(strategy.get("rate")) {
            Some(r) => format!("{kind}@{r:.2}"),
            None => kind.into(),
        },
        other => other.into(),
    }
}

/// Where a benchmark goes on the concurrency axis: a concurrent benchmark's streams, a
/// synchronous one's 1, and for the others (rates, throughput) the concurrency GuideLLM
/// measured (its `request_concurrency` mean over all requests), rounded; with a note saying so.
pub fn place(strategy: &Value, metrics: &Value) -> Result<(u32, Option<String>), String> {
    let kind = strategy.get("type_").and_then(Value::as_str).unwrap_or("");
    let positive = |v: Option<&Value>| {
        v.and_then(Value::as_u64)
            .and_then(|c| u32::try_from(c).ok())
            .filter(|c| *c > 0)
    };
    match kind {
        "concurrent" => positive(strategy.get("streams"))
            .map(|c| (c, None))
            .ok_or_else(|| "a concurrent benchmark without config.strategy.streams".into()),
        "synchronous" => Ok((1, None)),
        _ => {
            let measured = mean(metrics, "request_concurrency", "total").ok_or_else(|| {
                format!(
                    "a {kind} benchmark without metrics.request_concurrency.total.mean: it has \
                     no place on the concurrency axis"
                )
            })?;
            let c = (measured.round() as u32).max(1);
            Ok((
                c,
                Some(format!(
                    "placed at concurrency {c}: the mean concurrency GuideLLM measured \
                     ({measured:.2}, request_concurrency), a {kind} benchmark having no \
                     concurrency of its own"
                )),
            ))
        }
    }
}

/// Reads one benchmark; `concurrency` comes from [`place`]. The level's `index` is 0: the
/// caller numbers levels once they are sorted. GuideLLM does not judge whether a benchmark
/// held its load: taken as held.
pub fn parse_benchmark(bench: &Value, concurrency: u32, notes: &mut Vec<String>) -> LevelSummary {
    let empty = Value::Null;
    let metrics = bench.get("metrics").unwrap_or(&empty);
    let count = |k: &str| num(metrics.pointer(&format!("/request_totals/{k}"))).unwrap_or(0.0);
    let (ok, errors, incomplete) = (count("successful"), count("errored"), count("incomplete"));
    let mut dists: BTreeMap<&str, Stats> = BTreeMap::new();
    for (theirs, ours, unit, factor) in DISTRIBUTIONS {
        if let Some(s) = stats(metrics, theirs, ours, unit, factor, notes) {
            dists.insert(ours, s);
        }
    }
    // GuideLLM weighs each request's inter-token latency by its tokens after the first: its
    // count is tokens; the level counts requests
    if let (Some(itl), Some(ttft)) = (
        dists.get("inter_token_latency").map(|s| s.count),
        dists.get("time_to_first_token").map(|s| s.count),
    ) {
        dists.get_mut("inter_token_latency").expect("read").count = ttft.min(itl);
    }
    let total_sum = |name: &str| num(status(metrics, name, "successful")?.get("total_sum"));
    let error_list = error_summary(bench);
    let mut errors_by_kind = errors_by_kind(&error_list);
    if incomplete > 0.0 {
        errors_by_kind.insert(ErrorKind::Cancelled, incomplete as u64);
    }
    let listed: u64 = error_list.iter().map(|e| e.count).sum();
    if listed < errors as u64 {
        notes.push(format!(
            "{errors} errored requests, {listed} of them kept in requests.errored: the error \
             list covers those"
        ));
    }
    let planned = (ok + errors + incomplete) as u64;
    LevelSummary {
        planned_requests: planned,
        requests_asked: planned,
        start_time: time_text(bench.get("start_time").unwrap_or(&empty)),
        end_time: time_text(bench.get("end_time").unwrap_or(&empty)),
        time_to_first_token: dists.remove("time_to_first_token"),
        inter_token_latency: dists.remove("inter_token_latency"),
        request_latency: dists.remove("request_latency"),
        output_sequence_length: dists.remove("output_sequence_length"),
        input_sequence_length: dists.remove("input_sequence_length"),
        output_token_throughput: Scalar::new(
            "tokens/sec",
            mean(metrics, "output_tokens_per_second", "successful").unwrap_or(0.0),
        ),
        request_throughput: Scalar::new(
            "requests/sec",
            mean(metrics, "requests_per_second", "successful").unwrap_or(0.0),
        ),
        benchmark_duration: Scalar::new("sec", num(bench.get("duration")).unwrap_or(0.0)),
        total_osl: Scalar::new("tokens", total_sum("output_token_count").unwrap_or(0.0)),
        total_isl: Scalar::new("tokens", total_sum("prompt_token_count").unwrap_or(0.0)),
        goodput: mean(metrics, "request_goodput", "successful")
            .map(|v| Scalar::new("requests/sec", v)),
        error_summary: error_list,
        errors_by_kind,
        cancelled_count: incomplete as u64,
        mean_in_flight: mean(metrics, "request_concurrency", "total"),
        ..imported_level(concurrency, ok, errors)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A GuideLLM status summary with the given mean and p50.
    fn summary(mean: f64, p50: f64, count: u64) -> Value {
        json!({"mean": mean, "median": p50, "std_dev": 0.5, "min": p50 / 2.0,
            "max": p50 * 2.0, "count": count, "total_sum": mean * count as f64,
            "percentiles": {"p001": 0.1, "p01": 1.0, "p05": 5.0, "p10": 10.0, "p25": 25.0,
                "p50": p50, "p75": 75.0, "p90": 90.0, "p95": 95.0, "p99": 99.0, "p999": 99.9}})
    }

    #[test]
    fn the_mapping_of_names_and_units() {
        let zero = json!({"count": 0, "mean": 0.0});
        let bench = json!({
            "start_time": 1_764_405_012.0, "end_time": 1_764_405_014.5, "duration": 2.5,
            "metrics": {
                "request_totals": {"successful": 8, "errored": 1, "incomplete": 1, "total": 10},
                "time_to_first_token_ms": {"successful": summary(12.5, 11.0, 8)},
                "inter_token_latency_ms": {"successful": summary(4.0, 3.5, 504)},
                "request_latency": {"successful": summary(0.25, 0.2, 8), "errored": zero},
                "output_token_count": {"successful": summary(64.0, 64.0, 8)},
                "prompt_token_count": {"successful": summary(128.0, 128.0, 8)},
                "requests_per_second": {"successful": {"mean": 3.2, "count": 8}},
                "output_tokens_per_second": {"successful": {"mean": 204.8, "count": 512}},
                "request_concurrency": {"total": {"mean": 2.75, "count": 10},
                    "successful": {"mean": 2.5, "count": 8}},
                "request_goodput": null
            },
            "requests": {"errored": [{"info": {"error":
                "HTTPStatusError(\"Server error '503 Service Unavailable' for url 'x'\")"}}]}
        });
        let mut notes = Vec::new();
        let l = parse_benchmark(&bench, 4, &mut notes);
        assert_eq!(notes, Vec::<String>::new());
        let ttft = l.time_to_first_token.as_ref().unwrap();
        assert_eq!(
            (
                ttft.unit.as_str(),
                ttft.avg,
                ttft.p1,
                ttft.p50,
                ttft.p99,
                ttft.count
            ),
            ("ms", 12.5, 1.0, 11.0, 99.0, 8)
        );
        // seconds to milliseconds, the standard deviation too
        let e2e = l.request_latency.as_ref().unwrap();
        assert_eq!(
            (e2e.avg, e2e.p50, e2e.p90, e2e.min, e2e.max, e2e.std),
            (250.0, 200.0, 90_000.0, 100.0, 400.0, 500.0)
        );
        // counted in requests, not in GuideLLM's tokens
        let itl = l.inter_token_latency.as_ref().unwrap();
        assert_eq!((itl.avg, itl.p50, itl.count), (4.0, 3.5, 8));
        assert_eq!(l.output_sequence_length.as_ref().unwrap().avg, 64.0);
        assert_eq!(l.input_sequence_length.as_ref().unwrap().unit, "tokens");
        assert_eq!(l.inter_chunk_latency, None);
        assert_eq!(l.output_token_throughput_per_user, None);
        assert_eq!(
            (l.ok_count(), l.error_count(), l.cancelled_count),
            (8, 1, 1)
        );
        assert_eq!(l.planned_requests, 10);
        assert_eq!(l.error_rate, 1.0 / 9.0);
        assert_eq!(l.output_tps(), 204.8);
        assert_eq!(l.requests_per_sec(), 3.2);
        assert_eq!(l.mean_in_flight, Some(2.75));
        assert_eq!(l.achieved_concurrency, None);
        assert_eq!(l.goodput, None);
        assert_eq!(l.total_osl.avg, 512.0);
        assert_eq!(l.total_isl.avg, 1024.0);
        assert_eq!(l.benchmark_duration.avg, 2.5);
        assert_eq!(l.start_time, "2025-11-29T08:30:12.000Z");
        assert_eq!(l.errors_by_kind[&ErrorKind::HttpStatus], 1);
        assert_eq!(l.errors_by_kind[&ErrorKind::Cancelled], 1);
        assert_eq!(l.error_summary[0].error_details.code, Some(503));
        assert_eq!(l.error_summary[0].error_details.kind, "HTTPStatusError");
    }

    #[test]
    fn where_a_benchmark_goes_on_the_concurrency_axis() {
        let m = json!({"request_concurrency": {"total": {"mean": 2.297, "count": 20}}});
        let at = |s: Value| place(&s, &m).map(|(c, n)| (c, n.is_some()));
        assert_eq!(
            at(json!({"type_": "concurrent", "streams": 8})),
            Ok((8, false))
        );
        assert_eq!(at(json!({"type_": "synchronous"})), Ok((1, false)));
        assert_eq!(at(json!({"type_": "poisson", "rate": 3.0})), Ok((2, true)));
        assert_eq!(
            at(json!({"type_": "throughput", "max_concurrency": 512})),
            Ok((2, true))
        );
        let (_, note) = place(&json!({"type_": "constant", "rate": 3.0}), &m).unwrap();
        assert_eq!(
            note.unwrap(),
            "placed at concurrency 2: the mean concurrency GuideLLM measured (2.30, \
             request_concurrency), a constant benchmark having no concurrency of its own"
        );
        assert!(place(&json!({"type_": "poisson"}), &json!({})).is_err());
        assert_eq!(
            strategy_label(&json!({"type_": "poisson", "rate": 3.0})),
            "poisson@3.00"
        );
        assert_eq!(
            strategy_label(&json!({"type_": "concurrent", "streams": 4})),
            "concurrent@4"
        );
    }
}
