//! Text for multi-turn runs: the session settings `run.json` recorded, and each level's
//! metrics per turn index (requests, errors, TTFT, end-to-end latency, input length), where
//! the prefix cache's work shows as TTFT falling while the history grows. Used by
//! `rightsize show`. See `docs/workloads.md`.

use serde_json::Value;

use crate::metrics::LevelSummary;

/// The sessions line under `show`'s header (indented like it); empty for single-turn runs.
pub fn sessions_line(echo: &Value) -> String {
    let s = &echo["workload"]["sessions"];
    let Some(turns) = s["turns"].as_u64() else {
        return String::new();
    };
    let mut parts = vec![format!("{turns} turns")];
    if let Some(n) = s["turn_input_tokens"].as_u64() {
        parts.push(format!("later turns add {n} tokens"));
    }
    let think = s["think_time_ms"].as_u64().unwrap_or(0);
    parts.push(if think > 0 {
        format!("think time {think} ms")
    } else {
        "no think time".into()
    });
    format!("  sessions  {}\n", parts.join(", "))
}

/// Per level and turn: successful and failed requests, TTFT p50 and mean, e2e p50, mean
/// input length. Empty when no level ran sessions.
pub fn turns_table(levels: &[LevelSummary]) -> String {
    let ms = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.1}"));
    let mut rows: Vec<Vec<String>> = Vec::new();
    for l in levels {
        for t in &l.workload.turns {
            let ttft = t.time_to_first_token.as_ref();
            rows.push(vec![
                l.concurrency.to_string(),
                t.turn.to_string(),
                t.request_count.to_string(),
                t.error_request_count.to_string(),
                ms(ttft.map(|s| s.p50)),
                ms(ttft.map(|s| s.avg)),
                ms(t.request_latency.as_ref().map(|s| s.p50)),
                ms(t.input_sequence_length_mean),
            ]);
        }
    }
    if rows.is_empty() {
        return String::new();
    }
    let headers = [
        "concurrency",
        "turn",
        "ok",
        "errors",
        "TTFT p50 ms",
        "TTFT mean ms",
        "e2e p50 ms",
        "input mean",
    ];
    let mut widths: Vec<usize> = headers.iter().map(|h| h.len()).collect();
    for r in &rows {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.len());
        }
    }
    let line = |cells: Vec<String>| -> String {
        let cells: Vec<String> = cells
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:>w$}"))
            .collect();
        cells.join("  ") + "\n"
    };
    let mut out = String::from("per turn (multi-turn sessions)\n");
    out += &line(headers.iter().map(|h| h.to_string()).collect());
    out += &line(widths.iter().map(|w| "-".repeat(*w)).collect());
    for r in rows {
        out += &line(r);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sessions_line_says_turns_length_and_think_time() {
        let echo = serde_json::json!({"workload": {"sessions":
            {"turns": 5, "turn_input_tokens": 64, "think_time_ms": 500}}});
        assert_eq!(
            sessions_line(&echo),
            "  sessions  5 turns, later turns add 64 tokens, think time 500 ms\n"
        );
        let dataset = serde_json::json!({"workload": {"sessions":
            {"turns": 3, "think_time_ms": 0}}});
        assert_eq!(
            sessions_line(&dataset),
            "  sessions  3 turns, no think time\n"
        );
        assert_eq!(sessions_line(&serde_json::json!({"workload": {}})), "");
    }
}
