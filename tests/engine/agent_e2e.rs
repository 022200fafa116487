//! Agent loops end to end against the simulator (`--agent --turns 6 --tool-result-tokens
//! 500`, every answer a tool call): each session's requests carry the history so far, the
//! assistant's tool calls and one result per call, so the context grows turn by turn; the
//! simulator's prefix cache holds the previous turn's prompt, which it reports as
//! `usage.prompt_tokens_details.cached_tokens`, so from turn 2 on more than 80 % of a prompt
//! is a cache hit; the per-turn TTFT is there for turns 1 to 6; and broken arguments at the
//! simulator's set share are counted within their exact binomial interval (the loop goes on
//! with them, as sent).
//!
//! The hit rates are the simulator's own counts, decided by its model (no chat template
//! tokens): turn 1 is 4,000 tokens no other session shares, so none is cached; turn k + 1
//! adds the tool call (its name and arguments) and a 500-token result to turn k's prompt,
//! whose whole blocks of 16 tokens it finds cached.

use rightsize::metrics::LevelSummary;
use rightsize::sim::SimConfig;
use rightsize::workload::session_spec::{AgentSpec, SessionSpec};
use rightsize::workload::tools::ToolsSpec;
use rightsize::workload::WorkloadSpec;

use crate::tools_e2e::{binomial_999, sweep, TOOLS};

fn agent(input: u32, output: u32, turns: u32, result_tokens: u32) -> WorkloadSpec {
    WorkloadSpec {
        tools: Some(ToolsSpec::parse("tools.json", TOOLS, None).expect("tools parse")),
        sessions: Some(SessionSpec {
            turns,
            turn_input_tokens: None,
            think_time_ms: 0,
            agent: Some(AgentSpec {
                tool_latency_ms: 5,
                tool_result_tokens: result_tokens,
            }),
        }),
        ..WorkloadSpec::fixed(input, output)
    }
}

/// The per-turn table as the level file writes it.
fn turns_json(l: &LevelSummary) -> Vec<serde_json::Value> {
    let v = serde_json::to_value(l).expect("a level serializes");
    v["turns"].as_array().expect("a turns table").clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn context_grows_per_turn_and_the_prefix_cache_serves_it() {
    // one session at a time: 12 requests are 2 whole sessions of 6 turns
    let (out, sink) = sweep(SimConfig::fast(50.0), vec![1], 12, agent(4000, 16, 6, 500)).await;
    let l = &out.levels[0];
    assert_eq!((l.ok_count(), l.error_count()), (12, 0));
    assert_eq!(l.workload.tools.tool_call_answer_share, Some(1.0));
    let turns = turns_json(l);
    let numbers: Vec<u64> = turns.iter().map(|t| t["turn"].as_u64().unwrap()).collect();
    assert_eq!(numbers, [1, 2, 3, 4, 5, 6]);
    let mut previous_mean = 0.0;
    for t in &turns {
        let turn = t["turn"].as_u64().unwrap();
        assert_eq!(t["request_count"], 2, "turn {turn}");
        assert_eq!(t["error_request_count"], 0, "turn {turn}");
        let ttft = &t["time_to_first_token"];
        assert_eq!(ttft["count"], 2, "turn {turn}: {ttft}");
        let mean = t["input_sequence_length_mean"].as_f64().unwrap();
        assert!(
            mean > previous_mean,
            "turn {turn}: {mean} after {previous_mean}"
        );
        previous_mean = mean;
        assert!(t["input_sequence_length_p95"].as_f64().unwrap() >= mean.floor());
        let hit = t["prefix_cache_hit_rate"].as_f64().unwrap();
        if turn == 1 {
            assert_eq!(hit, 0.0, "turn 1");
        } else {
            assert!(hit > 0.8, "turn {turn}: hit rate {hit}");
        }
    }
    let first = turns[0]["input_sequence_length_mean"].as_f64().unwrap();
    assert_eq!(first, 4000.0);
    let got = sink.recorded();
    let mut records: Vec<_> = got
        .records
        .iter()
        .map(|(_, r)| r)
        .filter(|r| r.counted())
        .collect();
    assert_eq!(records.len(), 12);
    records.sort_by_key(|r| (r.detail.session, r.detail.turn));
    for r in &records {
        assert!(r.detail.agent);
        assert_eq!(r.detail.tool_calls, 1);
        let turn = r.detail.turn.unwrap();
        // the server counted the history as the client did, tool calls and results included
        assert_eq!(r.detail.server_input_tokens, Some(r.input_tokens));
        assert_eq!(r.detail.tool_wait_ns.is_some(), turn > 1, "turn {turn}");
        let cached = r.detail.cached_tokens.expect("the simulator says");
        if turn > 1 {
            // the whole blocks of the previous turn's prompt
            let prev = records
                .iter()
                .find(|p| p.detail.session == r.detail.session && p.detail.turn == Some(turn - 1))
                .unwrap();
            let prev_prompt = prev.detail.server_input_tokens.unwrap();
            assert_eq!(cached, prev_prompt / 16 * 16, "turn {turn}");
            // and the 500-token result and the call it answers
            assert!(r.input_tokens > prev_prompt + 500, "turn {turn}");
        } else {
            assert_eq!(cached, 0);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn broken_arguments_in_agent_loops_are_counted_within_their_binomial_interval() {
    let sim = SimConfig {
        tool_call_broken_share: 0.2,
        seed: 5,
        ..SimConfig::fast(50.0)
    };
    let (out, _) = sweep(sim, vec![8], 400, agent(64, 6, 6, 50)).await;
    let l = &out.levels[0];
    assert_eq!((l.ok_count(), l.error_count()), (400, 0));
    let t = &l.workload.tools;
    assert_eq!(t.tool_call_answers, Some(400));
    let broken = t.tool_call_errors.expect("tool-call figures");
    let (lo, hi) = binomial_999(400, 0.2);
    assert!((lo..=hi).contains(&broken), "{broken} outside [{lo}, {hi}]");
    // every turn of the six is there
    let turns = turns_json(l);
    assert_eq!(turns.len(), 6);
}

/// The real binary: `--agent` from the command line, its settings in `run.json`, the level
/// file's per-turn context and hit rate, and each request's record with its turn, its tool
/// call, `agent` and `cached_tokens`.
#[test]
fn the_binary_runs_agent_loops_and_writes_what_they_did() {
    use crate::support::common::{bin, only_run_dir, read_json, stderr, tmpdir};
    let dir = tmpdir("agent");
    let tools = dir.join("tools.json");
    std::fs::write(&tools, TOOLS).unwrap();
    let out = dir.join("out");
    let o = bin()
        .args(["sweep", "-e", "sim", "--warmup", "0", "-c", "1", "-n", "8"])
        .args([
            "--tools",
            tools.to_str().unwrap(),
            "--agent",
            "--turns",
            "4",
        ])
        .args(["--tool-result-tokens", "300", "--tool-latency", "10ms"])
        .args(["--input-tokens", "1000", "--output-tokens", "12"])
        .args(["--out", out.to_str().unwrap(), "--json"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let run = only_run_dir(&out);
    let echo = read_json(&run.join("run.json"));
    assert_eq!(
        echo["workload"]["sessions"],
        serde_json::json!({"turns": 4, "think_time_ms": 0,
            "agent": {"tool_latency_ms": 10, "tool_result_tokens": 300}})
    );
    let level = read_json(&run.join("level-001-c0001.json"));
    assert_eq!(level["tool_call_answer_share"], 1.0);
    let turns = level["turns"].as_array().unwrap();
    assert_eq!(turns.len(), 4);
    for t in turns {
        assert_eq!(t["request_count"], 2, "{t}");
        assert!(t["input_sequence_length_p95"].is_number(), "{t}");
        assert!(t["prefix_cache_hit_rate"].is_number(), "{t}");
    }
    let text = std::fs::read_to_string(run.join("requests.jsonl")).unwrap();
    let recs: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .filter(|r: &serde_json::Value| r["cooldown"] != true)
        .collect();
    assert_eq!(recs.len(), 8);
    for r in &recs {
        assert_eq!(
            (&r["agent"], &r["tool_calls"]),
            (&serde_json::json!(true), &serde_json::json!(1))
        );
        assert!(r["turn"].is_u64() && r["cached_tokens"].is_u64(), "{r}");
        assert_eq!(r["tool_wait_ns"].is_u64(), r["turn"] != 1, "{r}");
    }
}
