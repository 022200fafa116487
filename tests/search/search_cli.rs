//! `rightsize search` end to end through the binary: the iteration table row by row, the
//! answer and planning numbers, `summary.json`, bad input (exit 2) and the CI gate (exit 3).

use crate::support::common;
use common::{bin, on_sim_at, only_run_dir, read_json, stderr, stdout, tmpdir};
use serde_json::Value;
use std::path::Path;

/// A search that passes at every level it tries: 16, 32, 64 (the max), answer 64. The mean
/// e2e SLA and a 5 % error limit are decided with a hundred-odd requests per level (a p99
/// needs 368): each level grows from 32 requests until its verdict is decided. 64-token
/// answers at 10x take ~80 ms, long beside the client's own time between two requests in a
/// debug build on a busy machine, so every level holds its concurrency.
fn quick_search(out: &Path, extra: &[&str]) -> std::process::Output {
    on_sim_at("search", 64, 64, 10.0)
        .args([
            "-n",
            "32",
            "--max-error-rate",
            "0.05",
            "--e2e-sla",
            "avg:60s",
            "--max",
            "64",
            "--out",
            out.to_str().unwrap(),
        ])
        .args(extra)
        .output()
        .unwrap()
}

/// A fake earlier run whose summary says `answer`.
fn baseline(concurrency: u32, output_tps: f64) -> std::path::PathBuf {
    let dir = tmpdir("baseline");
    std::fs::write(
        dir.join("summary.json"),
        serde_json::json!({"answer": {"concurrency": concurrency, "output_tps": output_tps}})
            .to_string(),
    )
    .unwrap();
    dir
}

#[test]
fn search_prints_the_iteration_table_and_saves_the_result() {
    let out = tmpdir("search");
    let o = quick_search(
        &out,
        &["--peak-concurrency", "500", "--price-per-hour", "4"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0].starts_with("iter  concurrency  output tok/s"),
        "{text}"
    );
    assert!(lines[0].contains("avg e2e <= 60.0 s"), "{text}");
    assert!(lines[0].contains("avg error rate <= 5.0 %"), "{text}");
    // 16 and 32 are screens whose one batch (32 and 64 requests) cannot decide the 5 % error
    // limit (73 needed): they lean pass; 64's 128 requests decide it
    for (line, c, result) in [(16, "~within"), (32, "~within"), (64, "pass")]
        .iter()
        .zip(&lines[1..4])
        .map(|((c, r), l)| (l, c, r))
    {
        let cols: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(cols[1], c.to_string(), "{line}");
        assert!(line.contains(&format!("  {result}  exponential")), "{line}");
    }
    assert!(
        text.contains("answer: 64 concurrent requests at "),
        "{text}"
    );
    assert!(
        text.contains("confidence: every level passed up to concurrency_max 64"),
        "{text}"
    );
    // one instance carries the ideal balance: the passing level with the best throughput
    assert!(
        text.contains("instances for a peak of 500 concurrent with 20 % headroom"),
        "{text}"
    );
    // the right-size spreads the peak over its instances: a warning, if any, speaks of one
    // instance's share, never of the whole peak against one level
    assert!(!text.contains("below the declared peak"), "{text}");
    if let Some(w) = text.lines().find(|l| l.contains("share of the peak")) {
        assert!(
            w.contains("instances) is above the highest level measured (64)"),
            "{w}"
        );
    }

    // what deciding costs: said before the first level, and timed after it; the screens
    // run their one batch
    let err = stderr(&o);
    assert!(
        err.contains(
            "warning: a verdict can be decided only on enough requests (avg error rate <= 5.0 % \
             on 73), and --requests is 32: the levels that steer the search run one batch of 32 \
             each (a screen: it leans by what it observed, undecided), and the levels the \
             answer rests on (the bracket's ends) run batches of 32 until their verdict is \
             decided: a pass needs at least 3 batches, 96 requests, up to 292 requests \
             (--max-requests-per-level)\n"
        ),
        "{err}"
    );
    assert!(
        err.contains("level 1: concurrency 16, 16 warmup then 32 requests\n"),
        "{err}"
    );
    assert!(
        err.contains("level 3: concurrency 64, 64 warmup then 128 requests\n"),
        "{err}"
    );
    assert!(
        err.contains("warning: level 1 (c=16) ran 32 requests in "),
        "{err}"
    );
    assert_eq!(
        err.matches("at that pace a level decided on 73 requests")
            .count(),
        1,
        "{err}"
    );

    let s = read_json(&only_run_dir(&out).join("summary.json"));
    assert_eq!(s["search"]["max_passing"], 64);
    assert_eq!(s["search"]["reason"], "max_passes");
    assert_eq!(s["answer"]["concurrency"], 64);
    assert_eq!(s["iterations"].as_array().unwrap().len(), 3);
    assert_eq!(s["iterations"][2]["why"], "exponential");
    assert_eq!(s["iterations"][0]["slas"][0]["metric"], "e2e");
    assert_eq!(s["iterations"][0]["slas"][0]["stat"], "avg");
    // the screens ran their one batch and stayed undecided; 64, the answer, is decided
    let rows = s["iterations"].as_array().unwrap();
    for (it, requests, screen) in [
        (&rows[0], 32, true),
        (&rows[1], 64, true),
        (&rows[2], 128, false),
    ] {
        assert_eq!(it["requests"], requests, "{it}");
        assert_eq!(it["screen"].as_bool().unwrap_or(false), screen, "{it}");
        assert_eq!(
            it["verdict"],
            if screen { "uncertain" } else { "pass" },
            "{it}"
        );
    }
    assert_eq!(s["iterations"][0]["slas"][0]["limit"], 60000.0);
    let ideal = s["planning"]["ideal"]["concurrency"].as_f64().unwrap();
    let n = (500.0 * 1.2 / ideal - 1e-9).ceil();
    assert_eq!(s["planning"]["right_size"]["instances"].as_f64(), Some(n));
    assert_eq!(
        s["planning"]["right_size"]["cost_per_hour"].as_f64(),
        Some(4.0 * n)
    );
    assert_eq!(s["planning"]["ideal_basis"], "sla");
    assert_eq!(s["planning"]["breaking_point"], Value::Null);
    let run = read_json(&only_run_dir(&out).join("run.json"));
    assert_eq!(run["plan"]["kind"], "search");
    assert_eq!(run["plan"]["concurrency_max"], 64);
}

#[test]
fn search_json_carries_the_result() {
    let out = tmpdir("search-json");
    let o = quick_search(&out, &["--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).expect("stdout is JSON only");
    assert_eq!(v["search"]["max_passing"], 64);
    assert_eq!(v["levels"].as_array().unwrap().len(), 3);
}

#[test]
fn the_gate_exits_3() {
    let _turn = crate::support::search_support::MACHINE.take(2);
    let out = tmpdir("gate");
    let o = quick_search(&out, &["--require-concurrency", "64"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = quick_search(&out, &["--require-concurrency", "65"]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(stderr(&o).contains("gate failed: the answer 64 is below the required 65"));

    let b = baseline(128, 1.0);
    let o = quick_search(&out, &["--baseline", b.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(
        stderr(&o)
            .contains("gate failed: the answer fell from 128 to 64 (50.0 % down, more than 10 %)"),
        "{}",
        stderr(&o)
    );
    let b = baseline(64, 1e9);
    let o = quick_search(&out, &["--baseline", b.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(stderr(&o).contains("gate failed: throughput at the answer fell from"));
    // within --max-regression: passes
    let b = baseline(70, 1.0);
    let o = quick_search(
        &out,
        &["--baseline", b.to_str().unwrap(), "--max-regression", "10%"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // a real earlier run as the baseline, by its folder
    let first = tmpdir("gate-first");
    assert_eq!(quick_search(&first, &[]).status.code(), Some(0));
    let run = only_run_dir(&first);
    let o = quick_search(
        &out,
        &[
            "--baseline",
            run.to_str().unwrap(),
            "--max-regression",
            "90%",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn bad_searches_exit_2() {
    let out = tmpdir("bad");
    let o = bin()
        .args(["search", "--out", out.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("a search needs at least one SLA"),
        "{}",
        stderr(&o)
    );
    let o = bin()
        .args(["search", "--ttft-sla", "1s", "--no-stream"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("ttft_sla_ms needs streamed responses"),
        "{}",
        stderr(&o)
    );
    let o = bin()
        .args(["search", "--e2e-sla", "p42:1s"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("`p42` is not a statistic"),
        "{}",
        stderr(&o)
    );
    let o = bin()
        .args([
            "search",
            "--e2e-sla",
            "1s",
            "--baseline",
            "/nonexistent-run",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--baseline /nonexistent-run: cannot read"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn sweep_prints_knee_and_planning_numbers() {
    let _turn = crate::support::search_support::MACHINE.take(2);
    let out = tmpdir("sweep-plan");
    // 400 requests per level: enough for a p99 and the 1 % error limit to be decided
    let o = on_sim_at("sweep", 64, 64, 10.0)
        .args([
            "-n",
            "400",
            "-c",
            "4,8",
            "--e2e-sla",
            "60s",
            "--peak-rps",
            "1000",
            "--out",
            out.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("ideal balance: "), "{text}");
    assert!(text.contains("right-size: "), "{text}");
    let s = read_json(&only_run_dir(&out).join("summary.json"));
    assert_eq!(s["iterations"].as_array().unwrap().len(), 2);
    assert_eq!(s["iterations"][1]["verdict"], "pass");
    assert_eq!(s["iterations"][1]["held"], true);
    // each limit with its observed value, interval and verdict
    let e2e = &s["iterations"][1]["slas"][0];
    assert_eq!(
        (&e2e["metric"], &e2e["verdict"]),
        (&"e2e".into(), &"pass".into())
    );
    let ci = e2e["ci"].as_array().unwrap();
    assert!(ci[0].as_f64().unwrap() <= e2e["observed"].as_f64().unwrap());
    assert!(ci[1].as_f64().unwrap() >= e2e["observed"].as_f64().unwrap());
    assert_eq!(s["iterations"][1]["slas"][1]["metric"], "error_rate");
    // the level file carries the same checks
    let level = read_json(&only_run_dir(&out).join("level-002-c0008.json"));
    assert_eq!(level["slas"], s["iterations"][1]["slas"]);
    assert_eq!(level["verdict"], "pass");
    assert!(s["planning"]["right_size"]["instances"].as_u64().unwrap() >= 1);
}

/// A search that converges measures each bracket end again (confirmation): the new requests
/// join the level's earlier ones, so every concurrency is one level with one verdict, and the
/// JSON, the level files and the request log say so.
#[test]
fn a_level_measured_again_is_one_level_with_all_its_requests() {
    let _turn = crate::support::search_support::MACHINE.alone_after_the_rest();
    let out = tmpdir("pooled");
    // the simulator's mean e2e crosses 625 ms between 128 and 256 (about 190). At 4x, not
    // 10x: the simulator runs in the run's own (unoptimised) process, and at 10x its ~50k
    // token events a second beside another search test saturated two cores, so latencies
    // doubled, levels near the limit stayed uncertain and the budget ran out before the
    // search converged (twice in one day's full runs; alone it passed)
    let o = on_sim_at("search", 64, 64, 4.0)
        .args([
            "-n",
            "256",
            "--e2e-sla",
            "avg:625ms",
            "--max-error-rate",
            "0.05",
        ])
        .args(["--min", "64", "--max", "512", "--json"])
        .args(["--out", out.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).expect("stdout is JSON only");
    let s = &v["search"];
    assert_eq!(s["reason"], "converged", "{s}");
    let levels = v["levels"].as_array().unwrap();
    let mut seen: Vec<u64> = levels
        .iter()
        .map(|l| l["concurrency"].as_u64().unwrap())
        .collect();
    seen.sort_unstable();
    seen.dedup();
    assert_eq!(
        seen.len(),
        levels.len(),
        "a concurrency appears twice: {seen:?}"
    );
    assert_eq!(v["iterations"].as_array().unwrap().len(), levels.len());
    let n = |x: &Value| x.as_u64().unwrap();
    // every level's requests and batches add up over its measurements
    let mut measured = 0;
    for level in levels {
        let m = level["measurements"].as_array().unwrap();
        measured += m.len() as u64;
        let sum: u64 = m.iter().map(|m| n(&m["requests"])).sum();
        assert_eq!(n(&level["planned_requests"]), sum, "{level}");
        let batches: u64 = m.iter().map(|m| n(&m["batches"])).sum();
        match level.get("sampling") {
            Some(sampling) => assert_eq!(n(&sampling["batches"]), batches, "{level}"),
            // a screen that could not grow: one batch
            None => assert_eq!(batches, m.len() as u64, "{level}"),
        }
    }
    // the budget counts levels; the measurements are said beside them
    assert_eq!(n(&s["levels_used"]), levels.len() as u64);
    assert_eq!(n(&s["measurements"]), measured);
    assert!(measured > levels.len() as u64);
    // each end was measured twice (confirmed, with room in the budget) and is one level
    for (end, count) in [
        ("max_passing", "max_passing_requests"),
        ("first_failing", "first_failing_requests"),
    ] {
        let c = n(&s[end]);
        let level = levels.iter().find(|l| n(&l["concurrency"]) == c).unwrap();
        assert_eq!(
            level["measurements"].as_array().unwrap().len(),
            2,
            "{level}"
        );
        let sum = n(&level["planned_requests"]);
        assert_eq!(n(&s[count]), sum);
        let row = v["iterations"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| n(&r["concurrency"]) == c)
            .unwrap();
        assert_eq!((n(&row["requests"]), n(&row["measurements"])), (sum, 2));
    }
    // one level file per level, and the request log numbers a pooled level's requests on
    let run = only_run_dir(&out);
    let files = std::fs::read_dir(&run)
        .unwrap()
        .filter(|e| {
            let name = e.as_ref().unwrap().file_name();
            name.to_string_lossy().starts_with("level-")
        })
        .count();
    assert_eq!(files, levels.len());
    let log = std::fs::read_to_string(run.join("requests.jsonl")).unwrap();
    let mut keys: Vec<(u64, u64)> = log
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|r| r.get("warmup").is_none() && r.get("cooldown").is_none())
        .map(|r| (n(&r["level"]), n(&r["index"])))
        .collect();
    let all = keys.len();
    keys.sort_unstable();
    keys.dedup();
    assert_eq!(keys.len(), all, "a request index repeats within a level");
}
