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
    let agent = &s["agent"];
    if let Some(n) = agent["tool_result_tokens"].as_u64() {
        let latency = agent["tool_latency_ms"].as_u64().unwrap_or(0);
        parts.push(format!(
            "agent loop: tool results of {n} tokens after {latency} ms"
        ));
    } else {
        parts.push(if think > 0 {
            format!("think time {think} ms")
        } else {
            "no think time".into()
        });
    }
    format!("  sessions  {}\n", parts.join(", "))
}

/// One line of a level's TTFT p50 by turn (and the failed turns, if any), for the progress
/// printed as a level ends; `None` for a single-turn level.
pub fn turns_line(s: &LevelSummary) -> Option<String> {
    if s.workload.turns.is_empty() {
        return None;
    }
    let parts: Vec<String> = s
        .workload
        .turns
        .iter()
        .map(|t| {
            let ttft = t
                .time_to_first_token
                .as_ref()
                .map_or("-".to_string(), |x| format!("{:.0} ms", x.p50));
            match t.error_request_count {
                0 => format!("{}: {ttft}", t.turn),
                e => format!("{}: {ttft} ({e} failed)", t.turn),
            }
        })
        .collect();
    Some(format!("TTFT p50 by turn  {}", parts.join(", ")))
}

/// Per level and turn: successful and failed requests, TTFT p50 and mean, e2e p50, mean
/// input length; with agent loops also the input p95 and the prefix-cache hit rate. Empty
/// when no level ran sessions.
pub fn turns_table(levels: &[LevelSummary]) -> String {
    let ms = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.1}"));
    let agent = levels
        .iter()
        .flat_map(|l| &l.workload.turns)
        .any(|t| t.input_sequence_length_p95.is_some());
    let mut rows: Vec<Vec<String>> = Vec::new();
    for l in levels {
        for t in &l.workload.turns {
            let ttft = t.time_to_first_token.as_ref();
            let mut row = vec![
                l.concurrency.to_string(),
                t.turn.to_string(),
                t.request_count.to_string(),
                t.error_request_count.to_string(),
                ms(ttft.map(|s| s.p50)),
                ms(ttft.map(|s| s.avg)),
                ms(t.request_latency.as_ref().map(|s| s.p50)),
                ms(t.input_sequence_length_mean),
            ];
            if agent {
                row.push(ms(t.input_sequence_length_p95));
                row.push(
                    t.prefix_cache_hit_rate
                        .map_or("-".to_string(), |r| format!("{:.1} %", r * 100.0)),
                );
            }
            rows.push(row);
        }
    }
    if rows.is_empty() {
        return String::new();
    }
    let mut headers = vec![
        "concurrency",
        "turn",
        "ok",
        "errors",
        "TTFT p50 ms",
        "TTFT mean ms",
        "e2e p50 ms",
        "input mean",
    ];
    if agent {
        headers.extend(["input p95", "cache hit"]);
    }
    let mut out = String::from("per turn (multi-turn sessions)\n");
    out += &crate::report::table::grid(&headers, &rows, 0);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::turns::TurnMetrics;

    #[test]
    fn the_progress_line_gives_ttft_by_turn_and_failures() {
        let stats = |p50: f64| {
            let mut h = crate::metrics::histogram::Histogram::latency();
            h.record_value(p50);
            h.stats()
        };
        let turn = |turn, ttft: Option<f64>, errors| TurnMetrics {
            turn,
            request_count: 1,
            error_request_count: errors,
            time_to_first_token: ttft.and_then(stats),
            request_latency: None,
            input_sequence_length_mean: None,
            input_sequence_length_p95: None,
            prefix_cache_hit_rate: None,
        };
        let mut s = crate::metrics::fixtures::level(0, 4, 8, 10, 20, 4, None);
        assert_eq!(turns_line(&s), None);
        s.workload.turns = vec![
            turn(1, Some(215.0), 0),
            turn(2, Some(12.0), 1),
            turn(3, None, 2),
        ];
        assert_eq!(
            turns_line(&s).as_deref(),
            Some("TTFT p50 by turn  1: 215 ms, 2: 12 ms (1 failed), 3: - (2 failed)")
        );
    }

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
        let agent = serde_json::json!({"workload": {"sessions": {"turns": 6, "think_time_ms": 0,
            "agent": {"tool_latency_ms": 200, "tool_result_tokens": 500}}}});
        assert_eq!(
            sessions_line(&agent),
            "  sessions  6 turns, agent loop: tool results of 500 tokens after 200 ms\n"
        );
    }

    #[test]
    fn agent_turns_add_the_input_p95_and_the_cache_hit_rate() {
        let turn = |turn, p95: Option<f64>, hit: Option<f64>| TurnMetrics {
            turn,
            request_count: 2,
            error_request_count: 0,
            time_to_first_token: None,
            request_latency: None,
            input_sequence_length_mean: Some(1000.0 * f64::from(turn)),
            input_sequence_length_p95: p95,
            prefix_cache_hit_rate: hit,
        };
        let mut l = crate::metrics::fixtures::level(0, 4, 8, 10, 20, 4, None);
        l.workload.turns = vec![turn(1, None, None), turn(2, None, None)];
        let plain = turns_table(std::slice::from_ref(&l));
        assert!(!plain.contains("cache hit"), "{plain}");
        l.workload.turns = vec![
            turn(1, Some(1000.0), Some(0.0)),
            turn(2, Some(2010.0), Some(0.877)),
        ];
        let table = turns_table(std::slice::from_ref(&l));
        let lines: Vec<&str> = table.lines().collect();
        assert!(
            lines[1].ends_with("input mean  input p95  cache hit"),
            "{table}"
        );
        assert!(
            lines[3].ends_with("1000.0     1000.0      0.0 %"),
            "{table}"
        );
        assert!(
            lines[4].ends_with("2000.0     2010.0     87.7 %"),
            "{table}"
        );
    }
}
