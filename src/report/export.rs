//! Exports of finished levels: an AIPerf-compatible `profile_export_aiperf.json` object per
//! level, and a CSV with one row per level for spreadsheets.

use std::fmt::Write as _;

use serde_json::{Map, Value};

use crate::metrics::{LevelSummary, Stats, DISTRIBUTIONS, UNIT_TOKENS_PER_SEC_PER_USER};
use crate::record::ErrorKind;

/// One level as an AIPerf `profile_export_aiperf.json` object: the level's metric objects and
/// `error_summary`, plus `start_time`, `end_time`, `was_cancelled` and the caller's
/// `input_config` echo (e.g. `{"endpoint": {"model_names": [..], "streaming": true},
/// "loadgen": {"concurrency": 64, "request_count": 1024}}`). rightsize's own fields stay in
/// the object; AIPerf readers ignore keys they do not know.
pub fn aiperf_export(level: &LevelSummary, input_config: Value) -> Value {
    let mut obj = match serde_json::to_value(level) {
        Ok(Value::Object(map)) => map,
        _ => Map::new(),
    };
    obj.insert("was_cancelled".into(), Value::Bool(level.partial));
    obj.insert("input_config".into(), input_config);
    Value::Object(obj)
}

/// The keys a level file holds its throughputs under, which the JSON exports replace by the
/// two names every surface uses (docs/formats.md, "The level's throughput").
const RAW_THROUGHPUT_KEYS: [&str; 3] = [
    "output_token_throughput",
    "output_token_throughput_steady",
    "output_token_throughput_sustained",
];

/// One level as the JSON exports (`export --json`, `show --json`, a headless run's `--json`)
/// hold it: the level file's object with its three throughput keys replaced by `output_tps`
/// (the level's throughput, [`LevelSummary::sustained_tps`], with its 95 % interval where
/// recorded) and `whole_level_output_tps` (output tokens over first start to last end).
pub fn level_json(level: &LevelSummary) -> Value {
    let mut obj = match serde_json::to_value(level) {
        Ok(Value::Object(map)) => map,
        _ => Map::new(),
    };
    // the interval of the figure `sustained_tps` reads, when it reads the sustained one
    let ci = level
        .output_token_throughput_sustained
        .as_ref()
        .filter(|_| level.held && level.open_loop.rate.is_none())
        .and_then(|s| s.ci95);
    for k in RAW_THROUGHPUT_KEYS {
        obj.remove(k);
    }
    let mut tps = serde_json::json!({"unit": "tokens/sec", "avg": level.sustained_tps()});
    if let Some(ci) = ci {
        tps["ci95"] = serde_json::to_value(ci).unwrap_or(Value::Null);
    }
    obj.insert("output_tps".into(), tps);
    obj.insert(
        "whole_level_output_tps".into(),
        serde_json::json!({"unit": "tokens/sec", "avg": level.output_tps()}),
    );
    Value::Object(obj)
}

/// [`level_json`] of each level, in order.
pub fn levels_json(levels: &[LevelSummary]) -> Value {
    Value::Array(levels.iter().map(level_json).collect())
}

/// The unit suffix of a distribution's CSV columns: its unit, with `tps` for tokens/sec/user.
fn csv_unit(unit: &str) -> &str {
    if unit == UNIT_TOKENS_PER_SEC_PER_USER {
        "tps"
    } else {
        unit
    }
}

/// The statistics written for each metric of [`DISTRIBUTIONS`], in column order.
pub const CSV_STATS: [&str; 14] = [
    "avg", "min", "max", "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99", "std",
    "count",
];

/// The columns before the metric statistics, in order.
const CSV_HEAD: [&str; 18] = [
    "index",
    "concurrency",
    "partial",
    "start_time",
    "end_time",
    "planned_requests",
    "request_count",
    "error_request_count",
    "error_rate",
    "cancelled_count",
    "request_throughput_rps",
    // the level's throughput (output tok/s on every surface), then the whole-level figure
    "output_tps",
    "whole_level_output_tps",
    "goodput_rps",
    "achieved_concurrency",
    "benchmark_duration_s",
    "total_osl_tokens",
    "total_isl_tokens",
];

/// Every CSV column name, in order: [`CSV_HEAD`], then `<metric>_<stat>_<unit>` for each of
/// [`DISTRIBUTIONS`] and [`CSV_STATS`] (`count` has no unit suffix), then `errors_<kind>` for
/// each error kind, then [`CSV_TAIL`]. New columns are only ever appended (the two throughput
/// columns were renamed in place once: see docs/export.md).
pub fn csv_columns() -> Vec<String> {
    let mut cols: Vec<String> = CSV_HEAD.iter().map(|s| s.to_string()).collect();
    for (metric, unit) in DISTRIBUTIONS {
        let unit = csv_unit(unit);
        for stat in CSV_STATS {
            cols.push(if stat == "count" {
                format!("{metric}_count")
            } else {
                format!("{metric}_{stat}_{unit}")
            });
        }
    }
    for kind in CSV_ERROR_KINDS {
        cols.push(format!("errors_{}", kind.as_str()));
    }
    cols.extend(CSV_TAIL.iter().map(|s| s.to_string()));
    cols
}

/// The columns added after the error kinds (columns are only ever appended).
const CSV_TAIL: [&str; 5] = [
    "requests_asked",
    "held",
    "verdict",
    "errors_bad_tool_call",
    "tool_call_errors",
];

/// The error kinds with a column before [`CSV_TAIL`]: every kind but the ones added later,
/// whose columns come after it.
const CSV_ERROR_KINDS: [ErrorKind; 7] = [
    ErrorKind::Connect,
    ErrorKind::Timeout,
    ErrorKind::HttpStatus,
    ErrorKind::InStreamError,
    ErrorKind::BrokenStream,
    ErrorKind::BadPayload,
    ErrorKind::Cancelled,
];

fn opt(v: Option<f64>) -> String {
    v.map(|x| x.to_string()).unwrap_or_default()
}

fn stat(s: &Stats, name: &str) -> String {
    match name {
        "avg" => s.avg.to_string(),
        "std" => s.std.to_string(),
        "count" => s.count.to_string(),
        "min" => s.min.to_string(),
        "max" => s.max.to_string(),
        p => opt(p
            .strip_prefix('p')
            .and_then(|q| q.parse::<f64>().ok())
            .and_then(|q| s.percentile(q))),
    }
}

/// A CSV cell: quoted when it holds a comma, quote or line break.
fn cell(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The levels as CSV (header plus one row per level, `\n` line ends), columns as
/// [`csv_columns`]; missing metrics are empty cells. Values are written at full precision.
pub fn levels_csv(levels: &[LevelSummary]) -> String {
    let mut out = csv_columns().join(",");
    out.push('\n');
    for l in levels {
        let mut cells = vec![
            l.index.to_string(),
            l.concurrency.to_string(),
            l.partial.to_string(),
            cell(&l.start_time),
            cell(&l.end_time),
            l.planned_requests.to_string(),
            l.ok_count().to_string(),
            l.error_count().to_string(),
            l.error_rate.to_string(),
            l.cancelled_count.to_string(),
            l.request_throughput.avg.to_string(),
            l.sustained_tps().to_string(),
            l.output_tps().to_string(),
            opt(l.goodput.as_ref().map(|s| s.avg)),
            opt(l.achieved_concurrency),
            l.benchmark_duration.avg.to_string(),
            l.total_osl.avg.to_string(),
            l.total_isl.avg.to_string(),
        ];
        for (name, _) in DISTRIBUTIONS {
            match l.distribution(name) {
                Some(s) => cells.extend(CSV_STATS.iter().map(|st| stat(s, st))),
                None => cells.extend(CSV_STATS.iter().map(|_| String::new())),
            }
        }
        let errors = |kind: ErrorKind| {
            l.errors_by_kind
                .get(&kind)
                .copied()
                .unwrap_or(0)
                .to_string()
        };
        for kind in CSV_ERROR_KINDS {
            cells.push(errors(kind));
        }
        cells.push(l.requests_asked.to_string());
        cells.push(l.held.to_string());
        cells.push(
            l.verdict
                .map(|v| format!("{v:?}").to_lowercase())
                .unwrap_or_default(),
        );
        cells.push(errors(ErrorKind::BadToolCall));
        cells.push(opt(l.workload.tools.tool_call_errors.map(|n| n as f64)));
        let _ = writeln!(out, "{}", cells.join(","));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::{LevelAccumulator, LevelMeta};

    fn empty(concurrency: u32) -> LevelSummary {
        LevelAccumulator::new(concurrency, 8).finish(LevelMeta {
            index: 2,
            started_at: "2026-11-29T08:30:12.000Z".into(),
            ended_at: "2026-11-29T08:30:13.000Z".into(),
            partial: true,
            lag: None,
            ..LevelMeta::default()
        })
    }

    #[test]
    fn aiperf_object_has_the_reader_keys() {
        let cfg = serde_json::json!({"loadgen": {"concurrency": 64, "request_count": 8}});
        let v = aiperf_export(&empty(64), cfg);
        assert_eq!(v["was_cancelled"], true);
        assert_eq!(v["input_config"]["loadgen"]["concurrency"], 64);
        assert_eq!(v["start_time"], "2026-11-29T08:30:12.000Z");
        assert_eq!(v["request_count"]["unit"], "requests");
        assert_eq!(v["benchmark_duration"]["unit"], "sec");
        assert!(v["error_summary"].is_array());
    }

    #[test]
    fn csv_rows_and_empty_cells() {
        let csv = levels_csv(&[empty(64)]);
        let mut lines = csv.lines();
        let header = lines.next().unwrap();
        let row = lines.next().unwrap();
        assert_eq!(header.split(',').count(), row.split(',').count());
        assert!(
            row.starts_with("2,64,true,2026-11-29T08:30:12.000Z,"),
            "{row}"
        );
        assert!(lines.next().is_none());
        let cols = csv_columns();
        assert_eq!(cols.len(), 18 + 8 * 14 + ErrorKind::ALL.len() + 4);
        // appended, never inserted: the error kinds the first columns had, then the rest
        assert_eq!(
            &cols[cols.len() - 6..],
            [
                "errors_cancelled",
                "requests_asked",
                "held",
                "verdict",
                "errors_bad_tool_call",
                "tool_call_errors"
            ]
        );
        // nothing was judged: an empty verdict cell; nothing ran: not held; no tool calls:
        // none broken, and no tool-call figures
        assert!(row.ends_with(",0,false,,0,"), "{row}");
        assert!(cols.contains(&"request_latency_p99_ms".to_string()));
        assert!(cols.contains(&"time_to_first_token_count".to_string()));
        assert!(cols.contains(&"errors_http_status".to_string()));
    }
}
