//! The command line that runs a recorded run again, rebuilt from its `run.json` (endpoint,
//! workload, plan, SLAs, requests): what the report prints under "Reproduce". The endpoint is
//! the recorded URL with any secret masked (`sim` for the built-in simulator, whose port was
//! the OS's choice); headers and API keys are never recorded, so they are not in it either.

use serde_json::Value;

/// `v` quoted for a POSIX shell when it needs it.
fn quote(v: &str) -> String {
    let plain = !v.is_empty()
        && v.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:,=@%+".contains(c));
    if plain {
        v.to_string()
    } else {
        format!("'{}'", v.replace('\'', r"'\''"))
    }
}

/// A number as a flag takes it: `400`, `0.5` (no trailing zeros).
fn num(v: f64) -> String {
    let s = format!("{v:.6}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// `--e2e-sla p95:400ms` and the like for each recorded SLA.
fn sla_flags(plan: &Value, out: &mut Vec<String>) {
    for t in plan["slas"].as_array().into_iter().flatten() {
        let (Some(metric), Some(stat), Some(limit)) = (
            t["metric"].as_str(),
            t["stat"].as_str(),
            t["limit"].as_f64(),
        ) else {
            continue;
        };
        let value = if metric == "error_rate" {
            num(limit)
        } else {
            format!("{}ms", num(limit))
        };
        out.push(format!("--{}-sla", metric.replace('_', "-")));
        out.push(format!("{stat}:{value}"));
    }
}

fn plan_flags(plan: &Value, out: &mut Vec<String>) {
    let mut push = |k: &str, v: String| {
        out.push(k.to_string());
        out.push(v);
    };
    let load = |k: &str| plan[k].as_f64();
    if plan["kind"] == "search" {
        if plan["by"] == "rate" {
            push("--by", "rate".into());
            // a rate search records its bounds in hundredths of a request/s
            if let Some(v) = load("concurrency_min") {
                push("--min-rate", num(v / 100.0));
            }
            if let Some(v) = load("concurrency_max") {
                push("--max-rate", num(v / 100.0));
            }
        } else {
            if let Some(v) = load("concurrency_min") {
                push("--min", num(v));
            }
            if let Some(v) = load("concurrency_max") {
                push("--max", num(v));
            }
        }
        if let Some(v) = load("search_max_iterations") {
            push("--max-iterations", num(v));
        }
        if let Some(v) = load("max_requests_per_level") {
            push("--max-requests-per-level", num(v));
        }
        if plan["confirm"] == false {
            out.push("--no-confirm".into());
        }
        return;
    }
    let list = |k: &str| -> Option<String> {
        let items: Vec<String> = plan[k]
            .as_array()?
            .iter()
            .filter_map(|v| v.as_f64().map(num).or_else(|| v.as_str().map(String::from)))
            .collect();
        (!items.is_empty()).then(|| items.join(","))
    };
    if plan["rates"] == "auto" {
        push("--rates", "auto".into());
    } else if let Some(r) = list("rates") {
        push("--rates", r);
    } else if let Some(c) = list("concurrency") {
        push("-c", c);
    }
    for s in plan["schedules"].as_array().into_iter().flatten() {
        if let Some(s) = s.as_str() {
            push("--schedule", s.to_string());
        }
    }
    if plan["refine_knee"] == true {
        out.push("--refine-knee".into());
    }
}

fn workload_flags(w: &Value, out: &mut Vec<String>) {
    let mut push = |k: &str, v: String| {
        out.push(k.to_string());
        out.push(v);
    };
    let n = |k: &str| w[k].as_f64().filter(|v| *v != 0.0);
    if let Some(path) = w["dataset"]["path"].as_str() {
        push("--dataset", path.to_string());
    } else {
        if let Some(v) = n("input_tokens") {
            push("--input-tokens", num(v));
        }
        if let Some(v) = n("output_tokens") {
            push("--output-tokens", num(v));
        }
    }
    if let Some(v) = n("input_tokens_stddev") {
        push("--input-stddev", num(v));
    }
    if let Some(v) = n("output_tokens_stddev") {
        push("--output-stddev", num(v));
    }
    if let Some(v) = n("shared_prefix_tokens") {
        push("--prefix-tokens", num(v));
    }
    if let Some(v) = n("shared_prefix_share") {
        push("--prefix-share", num(v));
    }
    if let Some(v) = n("seed") {
        push("--seed", num(v));
    }
    if let Some(t) = w["tokenizer"].as_str().filter(|t| !t.starts_with("approx")) {
        push("--tokenizer", t.to_string());
    }
    match w["stream"].as_bool() {
        Some(true) => out.push("--stream".into()),
        Some(false) => out.push("--no-stream".into()),
        None => {}
    }
    let sessions = &w["sessions"];
    if let Some(v) = sessions["turns"].as_f64() {
        out.push("--turns".into());
        out.push(num(v));
        if let Some(v) = sessions["turn_input_tokens"].as_f64().filter(|v| *v > 0.0) {
            out.push("--turn-input-tokens".into());
            out.push(num(v));
        }
        if let Some(v) = sessions["think_time_ms"].as_f64().filter(|v| *v > 0.0) {
            out.push("--think-time".into());
            out.push(format!("{}ms", num(v)));
        }
    }
}

/// `--calibrate` or `--no-calibrate` when the run differs from the default for its endpoint
/// (on for real endpoints, off for the simulator).
fn calibrate_flag(w: &Value, sim: bool, out: &mut Vec<String>) {
    match (w["calibrate"].as_bool(), sim) {
        (Some(true), true) => out.push("--calibrate".into()),
        (Some(false), false) => out.push("--no-calibrate".into()),
        _ => {}
    }
}

/// The command that runs the recorded run again, or `None` for a run no command made (an
/// import).
pub fn command_line(echo: &Value) -> Option<String> {
    let plan = &echo["plan"];
    let kind = plan["kind"].as_str()?;
    if kind != "sweep" && kind != "search" {
        return None;
    }
    let mut args: Vec<String> = vec!["rightsize".into(), kind.into()];
    let e = &echo["endpoint"];
    let name = e["name"].as_str().unwrap_or("");
    args.push("-e".into());
    args.push(if name == "sim" {
        "sim".into()
    } else {
        crate::secrets::redact_url(e["base_url"].as_str().unwrap_or(name))
    });
    if name != "sim" {
        if let Some(m) = e["model"].as_str() {
            args.extend(["-m".into(), m.into()]);
        }
    }
    if e["api"].as_str().is_some_and(|a| a != "chat") {
        args.extend(["--api".into(), e["api"].as_str().unwrap_or("").into()]);
    }
    if e["exact_output_length"] == false {
        args.push("--no-exact-length".into());
    }
    workload_flags(&echo["workload"], &mut args);
    calibrate_flag(&echo["workload"], name == "sim", &mut args);
    plan_flags(plan, &mut args);
    sla_flags(plan, &mut args);
    if let Some(v) = plan["max_error_rate"].as_f64() {
        args.extend(["--max-error-rate".into(), num(v)]);
    }
    let o = &echo["open_loop"];
    if let Some(a) = o["arrival"].as_str() {
        args.extend(["--arrival".into(), a.to_lowercase()]);
    }
    // an open-loop run without a cap (older runs had none by default) says so
    match o["max_in_flight"].as_f64() {
        Some(v) => args.extend(["--max-in-flight".into(), num(v)]),
        None if o.is_object() => args.extend(["--max-in-flight".into(), "none".into()]),
        None => {}
    }
    if let Some(v) = o["level_s"].as_f64() {
        args.extend(["--level-duration".into(), format!("{}s", num(v))]);
    }
    if let Some(v) = echo["request_count"].as_f64() {
        args.extend(["-n".into(), num(v)]);
    }
    // a count was given (0 included: cold levels, the default before levels started warm);
    // `"round"` is the default and an open loop has none
    if let Some(v) = echo["warmup"].as_f64().filter(|_| !o.is_object()) {
        args.extend(["--warmup".into(), num(v)]);
    }
    if let Some(v) = echo["timeout_s"].as_f64().filter(|v| *v != 600.0) {
        args.extend(["--timeout".into(), format!("{}s", num(v))]);
    }
    Some(args.iter().map(|a| quote(a)).collect::<Vec<_>>().join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_search_is_rebuilt_flag_by_flag() {
        let echo = json!({
            "endpoint": {"name": "prod", "base_url": "https://user:pw@llm.example/v1",
                         "model": "m 1", "api": "chat", "exact_output_length": true},
            "workload": {"input_tokens": 64, "output_tokens": 32, "stream": true,
                         "tokenizer": "approx-4c", "seed": 0},
            "plan": {"kind": "search", "by": "concurrency", "concurrency_min": 16,
                     "concurrency_max": 256, "search_max_iterations": 10, "confirm": true,
                     "max_requests_per_level": null, "max_error_rate": 0.05,
                     "slas": [{"metric": "e2e", "stat": "p95", "limit": 400.0}]},
            "request_count": 48, "warmup": 0, "timeout_s": 600.0,
        });
        let line = command_line(&echo).unwrap();
        assert_eq!(
            line,
            "rightsize search -e 'https://user:***@llm.example/v1' -m 'm 1' --input-tokens 64 \
             --output-tokens 32 --stream --min 16 --max 256 --max-iterations 10 \
             --e2e-sla p95:400ms --max-error-rate 0.05 -n 48 --warmup 0"
        );
        // the default warmup (one round) is left out
        let mut echo = echo;
        echo["warmup"] = json!("round");
        assert!(command_line(&echo).unwrap().ends_with("-n 48"));
        assert!(!line.contains("pw@"), "{line}");
    }

    #[test]
    fn a_sweep_on_the_simulator_and_an_import() {
        let echo = json!({
            "endpoint": {"name": "sim", "base_url": "http://127.0.0.1:4000/v1"},
            "workload": {"input_tokens": 64, "output_tokens": 16, "stream": false},
            "plan": {"kind": "sweep", "concurrency": [2, 8], "rates": [], "slas": []},
            "request_count": 24,
        });
        assert_eq!(
            command_line(&echo).unwrap(),
            "rightsize sweep -e sim --input-tokens 64 --output-tokens 16 --no-stream -c 2,8 -n 24"
        );
        assert_eq!(
            command_line(&json!({"plan": {"kind": "import-aiperf"}})),
            None
        );
    }

    #[test]
    fn sessions_and_calibration_are_rebuilt() {
        let echo = json!({
            "endpoint": {"name": "vllm", "base_url": "http://10.0.0.5:8000/v1", "model": "m"},
            "workload": {"input_tokens": 512, "output_tokens": 64, "stream": true,
                         "calibrate": false,
                         "sessions": {"turns": 5, "turn_input_tokens": 32, "think_time_ms": 1500}},
            "plan": {"kind": "sweep", "concurrency": [4], "slas": []},
            "request_count": 40,
        });
        assert_eq!(
            command_line(&echo).unwrap(),
            "rightsize sweep -e http://10.0.0.5:8000/v1 -m m --input-tokens 512 \
             --output-tokens 64 --stream --turns 5 --turn-input-tokens 32 --think-time 1500ms \
             --no-calibrate -c 4 -n 40"
        );
        // the defaults are left out: calibration on for a server, off for the simulator
        let mut echo = echo;
        echo["workload"]["calibrate"] = json!(true);
        echo["workload"]["sessions"] = json!({"turns": 2});
        assert!(command_line(&echo)
            .unwrap()
            .ends_with("--stream --turns 2 -c 4 -n 40"));
        echo["endpoint"]["name"] = json!("sim");
        assert!(command_line(&echo)
            .unwrap()
            .contains("--turns 2 --calibrate -c 4"));
    }
}
