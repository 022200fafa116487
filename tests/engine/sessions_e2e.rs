//! Multi-turn sessions end to end, the real binary against the simulator on loopback, which
//! logs every request it takes on (`--request-log`) with the answer it generated:
//! - the history sent at turn k holds the server's own answers to turns 1..k-1, with one
//!   worker and with three interleaving;
//! - the per-turn TTFT falls once the prefix cache holds the history (turn 1 prefills the
//!   whole first message, later turns only what is new), and without the cache every turn
//!   stays slow;
//! - a failed turn ends its session, and the per-turn counts say so exactly;
//! - bad session flags are bad input naming the flag.
//!
//! Timings are decided by the simulator's deterministic model (no noise, real time): turn 1
//! prefills 2,048 tokens at 0.1 ms a token, so its first token cannot come before 206.8 ms
//! (model time is a floor); a later turn with the cache prefills at most 55 tokens (7.5 ms of
//! model time), so its TTFT is below turn 1's, and the simulator's own prefix-cache count
//! says why. No assertion bounds a measured time from above: how fast the client turns
//! around is a benchmark's question.

use crate::support::common;
use common::{bin, only_run_dir, read_json, stderr, tmpdir, SimProcess};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn json_lines(p: &Path) -> Vec<Value> {
    std::fs::read_to_string(p)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The client's records of the measured requests (a cooldown request that ended before the
/// level settled is recorded too, marked).
fn measured(run: &Path) -> Vec<Value> {
    json_lines(&run.join("requests.jsonl"))
        .into_iter()
        .filter(|r| r["cooldown"] != true)
        .collect()
}

/// A simulator with a deterministic, prefill-heavy model, logging requests to its own file.
fn logging_sim(cache_blocks: &str, extra: &[&str]) -> (SimProcess, PathBuf) {
    let log = tmpdir("sim-log").join("requests.jsonl");
    let mut args = vec![
        "--decode-base-ms",
        "2",
        "--decode-per-seq-ms",
        "0",
        "--prefill-per-token-ms",
        "0.1",
        "--prefix-cache-blocks",
        cache_blocks,
        "--request-log",
        log.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    (SimProcess::start(&args), log)
}

/// A 5-turn session sweep at `concurrency` with `n` requests: 2,048 tokens first, 32 new
/// tokens a later turn, 8 out.
fn session_sweep(url: &str, concurrency: u32, n: u32, extra: &[&str]) -> (PathBuf, Value) {
    let out = tmpdir("sessions");
    let o = bin()
        .args(["sweep", "-e", url, "--no-calibrate", "--warmup", "0"])
        .args(["-c", &concurrency.to_string(), "-n", &n.to_string()])
        .args(["--input-tokens", "2048", "--output-tokens", "8"])
        .args(["--turns", "5", "--turn-input-tokens", "32"])
        .args(["--out", out.to_str().unwrap(), "--json"])
        .args(extra)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let run = only_run_dir(&out);
    let level = read_json(&run.join(format!("level-001-c{concurrency:04}.json")));
    (run, level)
}

/// Checks every logged chat request of a session: its messages alternate user and assistant,
/// and each assistant message is exactly the answer the server generated for the request
/// that sent the messages before it (that request is in the log). Returns how many requests
/// were seen at each turn.
fn histories_hold_the_servers_answers(log: &Path) -> BTreeMap<usize, usize> {
    let entries = json_lines(log);
    let messages = roles_and_contents;
    let answer_to: BTreeMap<Vec<(String, String)>, String> = entries
        .iter()
        .map(|e| (messages(e), e["answer"].as_str().unwrap().to_string()))
        .collect();
    let mut turns = BTreeMap::new();
    for e in &entries {
        let m = messages(e);
        assert_eq!(m.len() % 2, 1, "a turn ends with a user message: {m:?}");
        let turn = m.len().div_ceil(2);
        *turns.entry(turn).or_insert(0) += 1;
        for (i, (role, content)) in m.iter().enumerate() {
            if i % 2 == 0 {
                assert_eq!(role, "user");
                continue;
            }
            assert_eq!(role, "assistant");
            let asked = &m[..i];
            let answered = answer_to
                .get(asked)
                .unwrap_or_else(|| panic!("turn {} was never sent: {asked:?}", i.div_ceil(2)));
            assert_eq!(content, answered, "turn {turn}, message {}", i + 1);
        }
    }
    turns
}

/// Mean TTFT (ms) of each turn in a level file, in turn order.
fn ttft_by_turn(level: &Value) -> Vec<(u64, u64, f64)> {
    level["turns"]
        .as_array()
        .expect("the level has per-turn metrics")
        .iter()
        .map(|t| {
            (
                t["turn"].as_u64().unwrap(),
                t["request_count"].as_u64().unwrap(),
                t["time_to_first_token"]["avg"].as_f64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn a_five_turn_session_sends_the_servers_answers_and_its_ttft_falls_as_the_cache_warms() {
    let (sim, log) = logging_sim("25000", &[]);
    let (run, level) = session_sweep(&sim.url, 1, 20, &[]);

    // the history: four sessions of five turns, each turn carrying the answers before it
    let mut turns = histories_hold_the_servers_answers(&log);
    // turn 1: the four sessions' and the pre-flight request's, and the first turns of any
    // sessions the worker started as cooldown requests from when the 20th ended until the
    // level settled (dropped then, but the server may have taken them on)
    let first = turns.remove(&1).unwrap_or(0);
    assert!(first >= 5, "{first} first turns");
    assert_eq!(turns, BTreeMap::from([(2, 4), (3, 4), (4, 4), (5, 4)]));

    // the client's records: session, turn and the growing input (2048 + 40 a turn)
    let mut recs = measured(&run);
    recs.sort_by_key(|r| r["index"].as_u64());
    let got: Vec<(u64, u64, u64)> = recs
        .iter()
        .map(|r| {
            (
                r["session"].as_u64().unwrap(),
                r["turn"].as_u64().unwrap(),
                r["input_tokens"].as_u64().unwrap(),
            )
        })
        .collect();
    let want: Vec<(u64, u64, u64)> = (0..20)
        .map(|i| (i / 5, i % 5 + 1, 2048 + 40 * (i % 5)))
        .collect();
    assert_eq!(got, want);

    // TTFT: turn 1 prefills 2,048 tokens (>= 206.8 ms of model time); later turns find the
    // history cached and prefill at most 55 tokens
    let ttft = ttft_by_turn(&level);
    assert_eq!(ttft.len(), 5, "{ttft:?}");
    let (_, n1, first) = ttft[0];
    assert_eq!(n1, 4);
    assert!(first >= 200.0, "turn 1 TTFT {first:.1} ms: {ttft:?}");
    for (turn, n, t) in &ttft[1..] {
        assert_eq!(*n, 4, "turn {turn}");
        assert!(*t < first, "turn {turn} TTFT {t:.1} ms: {ttft:?}");
    }
    // why it falls, in the server's own count: each of the sixteen later turns found at least
    // the first message's 2,048 tokens in the cache (whole blocks of at most 16 tokens)
    let hits = common::prometheus_value(
        &common::http_get(&sim.url, "/metrics"),
        "vllm:prefix_cache_hits_total",
    );
    assert!(hits >= 16.0 * (2048.0 - 16.0), "{hits} prefix-cache hits");

    // show prints the sessions and the per-turn table
    let shown = bin()
        .args(["show", run.to_str().unwrap()])
        .output()
        .unwrap();
    let text = common::stdout(&shown);
    assert!(
        text.contains("  sessions  5 turns, later turns add 32 tokens, no think time\n"),
        "{text}"
    );
    assert!(text.contains("per turn (multi-turn sessions)"), "{text}");
    let echo = read_json(&run.join("run.json"));
    assert_eq!(
        echo["workload"]["sessions"],
        serde_json::json!({"turns": 5, "turn_input_tokens": 32, "think_time_ms": 0})
    );
}

#[test]
fn without_a_prefix_cache_every_turn_prefills_its_whole_history() {
    // three workers interleave their sessions: each history is still its own
    let (sim, log) = logging_sim("0", &[]);
    let (_, level) = session_sweep(&sim.url, 3, 15, &[]);
    let turns = histories_hold_the_servers_answers(&log);
    // a worker that ran five of the fifteen requests took one session through all its turns
    assert!(turns.get(&5).is_some_and(|n| *n >= 1), "{turns:?}");
    for (turn, _, t) in ttft_by_turn(&level) {
        // at least 2,048 tokens prefilled at 0.1 ms each, whatever else shares the step
        assert!(t >= 200.0, "turn {turn} TTFT {t:.1} ms");
    }
}

#[test]
fn a_failed_turn_ends_its_session() {
    // the server fails requests 4, 8, 12, ... in arrival order; the pre-flight request is 1,
    // so the run's request i is the server's i + 2
    let (sim, _log) = logging_sim("25000", &["--fault-http500", "every:4"]);
    let (run, level) = session_sweep(&sim.url, 1, 12, &[]);
    let mut recs = measured(&run);
    recs.sort_by_key(|r| r["index"].as_u64());
    let got: Vec<(u64, u64, bool)> = recs
        .iter()
        .map(|r| {
            (
                r["session"].as_u64().unwrap(),
                r["turn"].as_u64().unwrap(),
                r["error"].is_object(),
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            (0, 1, false),
            (0, 2, false),
            (0, 3, true),
            (1, 1, false),
            (1, 2, false),
            (1, 3, false),
            (1, 4, true),
            (2, 1, false),
            (2, 2, false),
            (2, 3, false),
            (2, 4, true),
            (3, 1, false),
        ]
    );
    let per_turn: Vec<(u64, u64, u64)> = level["turns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["turn"].as_u64().unwrap(),
                t["request_count"].as_u64().unwrap(),
                t["error_request_count"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(per_turn, vec![(1, 4, 0), (2, 3, 0), (3, 2, 1), (4, 0, 2)]);
    assert_eq!(level["error_request_count"]["avg"], 3.0);
}

#[test]
fn bad_session_flags_are_bad_input_naming_the_flag() {
    let cases: [(&[&str], &str); 5] = [
        (
            &["--turns", "0"],
            "a session has at least 1 turn (`0`); --turns 1 sends single requests",
        ),
        (
            &["--turn-input-tokens", "64"],
            "--turn-input-tokens sizes the new message of turns 2 and later: give --turns N \
             (N of 2 or more) too, or leave it out",
        ),
        (
            &["--think-time", "500ms"],
            "--think-time is the pause between the turns of a session: give --turns N (N of 2 \
             or more) too, or leave it out",
        ),
        (
            &["--turns", "3", "--think-time", "soon"],
            "`soon` is not a duration (use e.g. 800ms, 1.5s, 2m)",
        ),
        (
            &["--turns", "3", "--rate", "5"],
            "--turns 3: multi-turn sessions run at concurrency levels (each turn waits for the \
             previous answer); open-loop rates send independent requests. Use --concurrency, \
             or leave out --turns",
        ),
    ];
    for (flags, want) in cases {
        let o = bin()
            .args(["sweep", "-e", "sim", "-n", "4"])
            .args(flags)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{flags:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(want), "{flags:?}: {}", stderr(&o));
    }
}

#[test]
fn a_thinking_session_holds_its_slot_and_records_its_think_time() {
    let (sim, _log) = logging_sim("25000", &[]);
    let out = tmpdir("think");
    let o = bin()
        .args(["sweep", "-e", &sim.url, "--no-calibrate", "--warmup", "0"])
        .args(["-c", "2", "-n", "12", "--input-tokens", "64"])
        .args([
            "--output-tokens",
            "4",
            "--turns",
            "3",
            "--think-time",
            "100ms",
        ])
        .args(["--out", out.to_str().unwrap(), "--json"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let run = only_run_dir(&out);
    for r in json_lines(&run.join("requests.jsonl")) {
        let think = r["think_ns"].as_u64();
        match r["turn"].as_u64() {
            Some(1) => assert_eq!(think, None, "{r}"),
            _ => assert!(think.is_some_and(|t| t >= 100_000_000), "{r}"),
        }
    }
    // the requests take ~10 ms and the think time 100 ms: only because a thinking session
    // keeps its slot busy does the level hold its two sessions
    let level = read_json(&run.join("level-001-c0002.json"));
    assert_eq!(level["held"], true, "{}", level["achieved_concurrency"]);
    let echo = read_json(&run.join("run.json"));
    assert_eq!(echo["workload"]["sessions"]["think_time_ms"], 100);
}

/// Writes `text` to `name` in a fresh folder.
fn data_file(name: &str, text: &str) -> PathBuf {
    let p = tmpdir("session-data").join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// A run over `dataset` with `extra` flags against a logging simulator; the log's entries.
fn dataset_run(dataset: &Path, extra: &[&str]) -> Vec<Value> {
    let (sim, log) = logging_sim("25000", &[]);
    let out = tmpdir("session-data-run");
    let o = bin()
        .args(["sweep", "-e", &sim.url, "--no-calibrate", "--warmup", "0"])
        .args(["-c", "1", "-n", "2", "--output-tokens", "3"])
        .args(["--dataset", dataset.to_str().unwrap()])
        .args(["--out", out.to_str().unwrap(), "--json"])
        .args(extra)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    drop(sim);
    // the first entry is the pre-flight request
    json_lines(&log).split_off(1)
}

fn roles_and_contents(e: &Value) -> Vec<(String, String)> {
    e["body"]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["role"].as_str().unwrap().to_string(),
                m["content"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(r, c)| (r.to_string(), c.to_string()))
        .collect()
}

#[test]
fn a_messages_record_is_sent_as_its_message_list() {
    let file = data_file(
        "messages.jsonl",
        "{\"messages\": [{\"role\": \"system\", \"content\": \"be brief\"}, \
         {\"role\": \"user\", \"content\": \"why is the sky blue\"}]}\n",
    );
    let sent = dataset_run(&file, &[]);
    // two requests, and any cooldown requests with the same record: once the level's requests
    // are handed out, the free slot sends one until the level settles, and at 25,000x a
    // request ends in microseconds, so a busy machine's collector let two through once
    assert!(sent.len() >= 2, "{sent:?}");
    for e in &sent {
        assert_eq!(
            roles_and_contents(e),
            pairs(&[("system", "be brief"), ("user", "why is the sky blue")])
        );
    }
}

#[test]
fn a_sharegpt_conversation_runs_as_a_session_with_the_servers_answers() {
    let file = data_file(
        "conversations.json",
        r#"[{"conversations": [
              {"from": "human", "value": "why is the sky blue"},
              {"from": "gpt", "value": "light scatters off the air"},
              {"from": "human", "value": "and sunsets"},
              {"from": "gpt", "value": "a longer path through air"},
              {"from": "human", "value": "thanks"},
              {"from": "gpt", "value": "welcome"}]}]"#,
    );
    let sent = dataset_run(&file, &["--turns", "2"]);
    // one session of two turns; the reference answers size max_tokens, the server's own
    // answer is what the second turn carries. Cooldown requests until the level settled may
    // have reached the server after them: the next session's first turn, the same record.
    assert!(sent.len() >= 2, "{sent:?}");
    for extra in &sent[2..] {
        assert_eq!(extra["body"], sent[0]["body"]);
    }
    assert_eq!(
        roles_and_contents(&sent[0]),
        pairs(&[("user", "why is the sky blue")])
    );
    // light scatters off the air: 2 + 2 + 1 + 1 + 1 approximate tokens
    assert_eq!(sent[0]["body"]["max_tokens"], 7);
    let answer = sent[0]["answer"].as_str().unwrap();
    assert_ne!(answer, "light scatters off the air");
    assert_eq!(
        roles_and_contents(&sent[1]),
        pairs(&[
            ("user", "why is the sky blue"),
            ("assistant", answer),
            ("user", "and sunsets"),
        ])
    );
    // a longer path through air: 1 + 2 + 1 + 2 + 1 approximate tokens
    assert_eq!(sent[1]["body"]["max_tokens"], 7);
}

#[test]
fn turns_over_a_dataset_without_conversations_is_bad_input() {
    let file = data_file("single.jsonl", "{\"text\": \"one prompt\"}\n");
    let o = bin()
        .args(["sweep", "-e", "sim", "-n", "2", "--turns", "3"])
        .args(["--dataset", file.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let want = format!(
        "--turns 3: no record of {} has more than one user turn; multi-turn sessions need \
         ShareGPT conversations or JSONL `messages` records with several user messages (or \
         leave out --turns)",
        file.display()
    );
    assert!(stderr(&o).contains(&want), "{}", stderr(&o));
    let o = bin()
        .args(["sweep", "-e", "sim", "-n", "2", "--turns", "3"])
        .args(["--turn-input-tokens", "8"])
        .args(["--dataset", file.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(
            "--turn-input-tokens does not apply with a dataset: its conversations decide each \
             turn's message (leave it out)"
        ),
        "{}",
        stderr(&o)
    );
}
