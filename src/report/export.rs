//! Exports of finished levels: an AIPerf-compatible `profile_export_aiperf.json` object per
//! level, and a CSV with one row per level for spreadsheets.

use std::fmt::Write as _;

use serde_json::{Map, Value};

use crate::metrics::{LevelSummary, Stats};

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

const CSV_HEADER: &str = "index,concurrency,partial,request_count,error_request_count,\
error_rate,cancelled_count,request_throughput_rps,output_token_throughput_tps,\
output_token_throughput_steady_tps,achieved_concurrency,benchmark_duration_s,\
ttft_p50_ms,ttft_p95_ms,ttft_p99_ms,itl_p50_ms,itl_p95_ms,itl_p99_ms,\
e2e_p50_ms,e2e_p90_ms,e2e_p95_ms,e2e_p99_ms,osl_avg_tokens,isl_avg_tokens";

fn opt(v: Option<f64>) -> String {
    v.map(|x| x.to_string()).unwrap_or_default()
}

fn pct(s: &Option<Stats>, q: f64) -> String {
    opt(s.as_ref().and_then(|s| s.percentile(q)))
}

/// The levels as CSV (header plus one row per level, `\n` line ends); missing metrics are
/// empty cells. Values are written at full precision.
pub fn levels_csv(levels: &[LevelSummary]) -> String {
    let mut out = String::from(CSV_HEADER);
    out.push('\n');
    for l in levels {
        let cells = [
            l.index.to_string(),
            l.concurrency.to_string(),
            l.partial.to_string(),
            l.ok_count().to_string(),
            l.error_count().to_string(),
            l.error_rate.to_string(),
            l.cancelled_count.to_string(),
            l.request_throughput.avg.to_string(),
            l.output_token_throughput.avg.to_string(),
            opt(l.output_token_throughput_steady.as_ref().map(|s| s.avg)),
            opt(l.achieved_concurrency),
            l.benchmark_duration.avg.to_string(),
            pct(&l.time_to_first_token, 50.0),
            pct(&l.time_to_first_token, 95.0),
            pct(&l.time_to_first_token, 99.0),
            pct(&l.inter_token_latency, 50.0),
            pct(&l.inter_token_latency, 95.0),
            pct(&l.inter_token_latency, 99.0),
            pct(&l.request_latency, 50.0),
            pct(&l.request_latency, 90.0),
            pct(&l.request_latency, 95.0),
            pct(&l.request_latency, 99.0),
            opt(l.output_sequence_length.as_ref().map(|s| s.avg)),
            opt(l.input_sequence_length.as_ref().map(|s| s.avg)),
        ];
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
        assert!(row.starts_with("2,64,true,0,0,0,0,0,0,,,0,,"));
        assert!(lines.next().is_none());
    }
}
