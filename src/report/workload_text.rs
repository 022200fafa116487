//! Text for what a run recorded about its workload: tokenizer, dataset (with its sha256),
//! sampling and calibration, read from `run.json`; and the per-level input and output lengths
//! (target, client, server) side by side. Used by `rightsize show`.

use std::fmt::Write as _;

use serde_json::Value;

use crate::metrics::LevelSummary;

fn short_hash(v: &Value) -> Option<String> {
    v.as_str().map(|h| h.chars().take(12).collect())
}

/// The workload's source lines under `show`'s header (indented like it); empty for runs
/// recorded before tokenizers were chosen.
pub fn workload_details(echo: &Value) -> String {
    let w = &echo["workload"];
    let mut out = String::new();
    if let Some(t) = w["tokenizer"].as_str() {
        let sha = short_hash(&w["tokenizer_sha256"])
            .map(|h| format!(" (sha256 {h}...)"))
            .unwrap_or_default();
        let _ = writeln!(out, "  tokenizer {t}{sha}");
    }
    let d = &w["dataset"];
    if let Some(path) = d["path"].as_str() {
        let mut parts = vec![d["format"].as_str().unwrap_or("?").to_string()];
        if let Some(n) = d["records"].as_u64() {
            parts.push(format!("{n} records"));
        }
        if let Some(skipped) = d["skipped"].as_object() {
            let total: u64 = skipped.values().filter_map(Value::as_u64).sum();
            if total > 0 {
                parts.push(format!("{total} skipped"));
            }
        }
        if let Some(s) = d["sampling"].as_str() {
            parts.push(format!("sampling {}", s.replace('_', "-")));
        }
        if d["format"] == "mooncake" {
            parts.push(format!("{} tokens a block", d["block_tokens"]));
        }
        if let Some(h) = short_hash(&d["sha256"]) {
            parts.push(format!("sha256 {h}..."));
        }
        let _ = writeln!(out, "  dataset   {path} ({})", parts.join(", "));
    }
    let c = &w["calibration"];
    if c.is_object() {
        let points = c["points"].as_array().map_or(0, Vec::len);
        let line = match (
            c["fit"]["server_per_client"].as_f64(),
            c["fit"]["overhead_tokens"].as_f64(),
        ) {
            (Some(a), Some(b)) => format!(
                "server = {a:.3} x client {} {:.1} tokens ({points} requests){}",
                if b < 0.0 { "-" } else { "+" },
                b.abs(),
                if c["applied"] == true {
                    ", applied"
                } else {
                    ""
                }
            ),
            _ => "no fit".to_string(),
        };
        let note = c["note"]
            .as_str()
            .map(|n| format!("; {n}"))
            .unwrap_or_default();
        let _ = writeln!(out, "  calibration {line}{note}");
    } else if w["calibrate"] == false && w["tokenizer"].is_string() {
        let _ = writeln!(out, "  calibration off");
    }
    if let Some(line) = traffic_line(&echo["traffic"]) {
        let _ = writeln!(out, "  traffic   {line}");
    }
    out
}

/// A replay's recorded traffic in one line (`workload::traffic`): requests, span, the peak
/// minute and second, and the suggested `--peak-rps`.
fn traffic_line(t: &Value) -> Option<String> {
    let requests = t["requests"].as_u64()?;
    Some(format!(
        "{requests} requests over {:.0} s; peak minute {:.3} req/s, peak second {}; suggested \
         --peak-rps {}",
        t["span_s"].as_f64()?,
        t["peak_minute"]["rps"].as_f64()?,
        t["peak_second"]["requests"].as_u64()?,
        crate::values::fmt_rps(t["suggested"]["peak_rps"].as_f64()?)
    ))
}

/// Whether the server's counts equal what was aimed at: the input target (or, without one,
/// the client's count) and `max_tokens`, where the server reported them.
fn as_aimed(c: &crate::metrics::TokenCounts) -> bool {
    let same = |got: Option<f64>, want: Option<f64>| match (got, want) {
        (Some(g), Some(w)) => (g - w).abs() <= 0.0005 * w.max(1.0),
        _ => true,
    };
    let target = c.input_target_mean.or(Some(c.input_client_mean));
    c.warnings.is_empty()
        && same(c.input_server_mean, target)
        && same(c.output_server_mean, c.output_requested_mean)
}

/// Input lengths (target, client, server) and output lengths (asked, server) per level, with
/// the levels' length warnings; one line when every level's server counts are what was aimed
/// at; empty when no level recorded them.
pub fn lengths_table(levels: &[LevelSummary]) -> String {
    let counted: Vec<_> = levels
        .iter()
        .filter_map(|l| l.workload.token_counts.as_ref())
        .collect();
    if !counted.is_empty() && counted.iter().all(|c| as_aimed(c)) {
        let reported = counted.iter().any(|c| c.input_server_reported > 0);
        return if reported {
            "token lengths: the server counted what was aimed at, at every level\n".into()
        } else {
            "token lengths: the server reported no usage to check them against\n".into()
        };
    }
    let f1 = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.1}"));
    let rows: Vec<Vec<String>> = levels
        .iter()
        .filter_map(|l| {
            let c = l.workload.token_counts.as_ref()?;
            let diff = match (c.input_server_mean, c.input_target_mean) {
                (Some(s), Some(t)) if t > 0.0 => format!("{:+.1}%", (s - t) / t * 100.0),
                _ => "-".into(),
            };
            Some(vec![
                l.concurrency.to_string(),
                f1(c.input_target_mean),
                f1(Some(c.input_client_mean)),
                f1(c.input_server_mean),
                diff,
                f1(c.output_requested_mean),
                f1(c.output_server_mean),
                c.output_short_count.to_string(),
            ])
        })
        .collect();
    if rows.is_empty() {
        return String::new();
    }
    let headers = [
        "concurrency",
        "in target",
        "in client",
        "in server",
        "server vs target",
        "out asked",
        "out server",
        "ended early",
    ];
    let mut out = String::from("token lengths (mean per request)\n");
    out += &crate::report::table::grid(&headers, &rows, 0);
    for l in levels {
        for w in l.workload.token_counts.iter().flat_map(|c| &c.warnings) {
            let _ = writeln!(out, "  concurrency {}: {w}", l.concurrency);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_replay_shows_its_traffic() {
        let echo = serde_json::json!({"traffic": {"requests": 500, "span_s": 598.2,
            "peak_minute": {"rps": 2.0833}, "peak_second": {"requests": 6},
            "suggested": {"peak_rps": 2.09}}});
        assert_eq!(
            workload_details(&echo),
            "  traffic   500 requests over 598 s; peak minute 2.083 req/s, peak second 6; \
             suggested --peak-rps 2.09\n"
        );
    }

    #[test]
    fn details_name_tokenizer_dataset_and_calibration() {
        let echo = serde_json::json!({"workload": {
            "tokenizer": "o200k_base",
            "calibrate": true,
            "dataset": {"path": "trace.jsonl", "format": "mooncake", "records": 200,
                        "sampling": "in_order", "block_tokens": 512,
                        "sha256": "0123456789abcdef0123"},
            "calibration": {"points": [{}, {}, {}],
                            "fit": {"server_per_client": 1.0, "overhead_tokens": 37.0},
                            "applied": false,
                            "note": "measured only: a dataset's prompts are sent as the file has them"}
        }});
        assert_eq!(
            workload_details(&echo),
            "  tokenizer o200k_base\n  dataset   trace.jsonl (mooncake, 200 records, sampling \
             in-order, 512 tokens a block, sha256 0123456789ab...)\n  calibration server = \
             1.000 x client + 37.0 tokens (3 requests); measured only: a dataset's prompts are \
             sent as the file has them\n"
        );
        assert_eq!(workload_details(&Value::Null), "");
    }
}
