//! The simulator's OpenAI API over real HTTP on loopback: shapes, lengths, usage, errors, and
//! its prefix-cache reset (`POST /reset_prefix_cache`).

use crate::support::sim_util;

use std::time::Duration;

use rightsize::sim::SimConfig;
use rightsize::workload::tokenizer::approx_token_count;
use serde_json::{json, Value};
use sim_util::*;

fn fast() -> SimConfig {
    SimConfig::fast(50.0)
}

#[tokio::test]
async fn streaming_chat_has_role_first_exact_length_then_usage_and_done() {
    let sim = start(fast()).await;
    let p = prompt(100, 1);
    let r = post(sim.addr, "/v1/chat/completions", &chat_body(&p, 37, true)).await;
    assert_eq!(r.status, 200);
    assert!(r.complete);
    assert_eq!(r.header("content-type"), Some("text/event-stream"));
    let c = r.chunks();
    assert_eq!(
        c[0]["choices"][0]["delta"],
        json!({"role": "assistant", "content": ""})
    );
    let content: Vec<&Value> = c[1..c.len() - 1].iter().collect();
    assert_eq!(content.len(), 37);
    let text: String = content
        .iter()
        .map(|v| v["choices"][0]["delta"]["content"].as_str().unwrap())
        .collect();
    assert_eq!(approx_token_count(&text), 37);
    assert!(content[..36]
        .iter()
        .all(|v| v["choices"][0]["finish_reason"].is_null()));
    assert_eq!(content[36]["choices"][0]["finish_reason"], "length");
    let usage = c.last().unwrap();
    assert_eq!(usage["choices"], json!([]));
    assert_eq!(usage["usage"]["completion_tokens"], 37);
    assert_eq!(usage["usage"]["prompt_tokens"], 100);
    assert_eq!(usage["usage"]["total_tokens"], 137);
    assert_eq!(c[1]["object"], "chat.completion.chunk");
    assert_eq!(c[1]["model"], "sim-moe-30b-a3b");
    assert!(c[1].get("sim_sent_ns").is_none());
    sim.shutdown();
}

/// `usage.prompt_tokens_details.cached_tokens` is the prefix cache's hit on the prompt: none
/// the first time, the prompt's whole 16-token blocks the second, and a longer prompt that
/// extends it finds those blocks; no field with the cache off.
#[tokio::test]
async fn usage_says_the_cached_prompt_tokens() {
    let sim = start(fast()).await;
    let p = prompt(100, 7);
    let cached = |v: &Value| v["usage"]["prompt_tokens_details"]["cached_tokens"].clone();
    let r = post(sim.addr, "/v1/chat/completions", &chat_body(&p, 3, true)).await;
    assert_eq!(cached(r.chunks().last().unwrap()), json!(0));
    let r = post(sim.addr, "/v1/chat/completions", &chat_body(&p, 3, true)).await;
    assert_eq!(cached(r.chunks().last().unwrap()), json!(96));
    let longer = format!("{p} {}", prompt(40, 8));
    let r = post(
        sim.addr,
        "/v1/chat/completions",
        &chat_body(&longer, 3, true),
    )
    .await;
    let last = r.chunks().last().unwrap().clone();
    assert_eq!(last["usage"]["prompt_tokens"], 140);
    assert_eq!(cached(&last), json!(96));
    sim.shutdown();
    let off = start(SimConfig {
        prefix_cache_blocks: 0,
        ..fast()
    })
    .await;
    let r = post(off.addr, "/v1/chat/completions", &chat_body(&p, 3, true)).await;
    let usage = r.chunks().last().unwrap()["usage"].clone();
    assert_eq!(usage["prompt_tokens"], 100);
    assert!(usage.get("prompt_tokens_details").is_none(), "{usage}");
    off.shutdown();
}

#[tokio::test]
async fn streaming_completions_use_text_and_natural_stops_respect_min_and_max() {
    let sim = start(fast()).await;
    let mut lengths = Vec::new();
    for salt in 0..12 {
        let body = json!({"model": "sim-moe-30b-a3b", "prompt": prompt(20, salt),
            "max_tokens": 40, "min_tokens": 5, "stream": true,
            "stream_options": {"include_usage": true}});
        let r = post(sim.addr, "/v1/completions", &body).await;
        let c = r.chunks();
        let content = &c[..c.len() - 1];
        assert!(content.iter().all(|v| v["object"] == "text_completion"));
        let text: String = content
            .iter()
            .map(|v| v["choices"][0]["text"].as_str().unwrap())
            .collect();
        let n = content.len() as u64;
        assert_eq!(approx_token_count(&text) as u64, n);
        assert_eq!(c.last().unwrap()["usage"]["completion_tokens"], n);
        let reason = &content.last().unwrap()["choices"][0]["finish_reason"];
        assert_eq!(reason, if n == 40 { "length" } else { "stop" });
        lengths.push(n);
    }
    assert!(lengths.iter().all(|n| (5..=40).contains(n)), "{lengths:?}");
    assert!(lengths.iter().any(|n| *n < 40), "{lengths:?}");
    sim.shutdown();
}

#[tokio::test]
async fn non_streaming_bodies_carry_text_and_usage_and_text_repeats_with_the_seed() {
    let sim = start(fast()).await;
    let body = json!({"messages": [{"role": "user", "content": prompt(30, 9)}],
        "max_completion_tokens": 12, "ignore_eos": true});
    let a = post(sim.addr, "/v1/chat/completions", &body).await.json();
    let b = post(sim.addr, "/v1/chat/completions", &body).await.json();
    assert_eq!(a["object"], "chat.completion");
    let text = a["choices"][0]["message"]["content"].as_str().unwrap();
    assert_eq!(approx_token_count(text), 12);
    assert_eq!(a["usage"]["completion_tokens"], 12);
    assert_eq!(
        text,
        b["choices"][0]["message"]["content"].as_str().unwrap()
    );
    let c = post(
        sim.addr,
        "/v1/completions",
        &json!({"prompt": "x y z", "max_tokens": 3, "ignore_eos": true}),
    )
    .await
    .json();
    assert_eq!(c["usage"]["prompt_tokens"], 3);
    assert_eq!(
        approx_token_count(c["choices"][0]["text"].as_str().unwrap()),
        3
    );
    sim.shutdown();
    // another seed, another text
    let other = start(SimConfig { seed: 99, ..fast() }).await;
    let d = post(other.addr, "/v1/chat/completions", &body).await.json();
    assert_ne!(
        text,
        d["choices"][0]["message"]["content"].as_str().unwrap()
    );
}

#[tokio::test]
async fn timing_header_stamps_every_chunk_between_send_and_receive() {
    let sim = start(fast()).await;
    let t0 = rightsize::clock::now_ns();
    let r = post_with(
        sim.addr,
        "/v1/chat/completions",
        &[("x-rightsize-sim-timing", "1")],
        &chat_body(&prompt(10, 3), 8, true),
        Duration::from_secs(10),
    )
    .await;
    let t1 = rightsize::clock::now_ns();
    let stamps: Vec<u64> = r
        .chunks()
        .iter()
        .map(|c| c["sim_sent_ns"].as_u64().expect("stamped"))
        .collect();
    assert_eq!(stamps.len(), 10); // role + 8 content + usage
    assert!(stamps.windows(2).all(|w| w[0] <= w[1]));
    assert!(t0 < stamps[0] && *stamps.last().unwrap() < t1);
    let whole = post_with(
        sim.addr,
        "/v1/completions",
        &[("x-rightsize-sim-timing", "1")],
        &json!({"prompt": "a b", "max_tokens": 2}),
        Duration::from_secs(10),
    )
    .await
    .json();
    assert!(whole["sim_sent_ns"].as_u64().is_some());
    sim.shutdown();
}

#[tokio::test]
async fn errors_are_openai_json() {
    let sim = start(fast()).await;
    let r = post(
        sim.addr,
        "/v1/chat/completions",
        &json!({"model": "gpt-9",
        "messages": [{"role": "user", "content": "hi"}]}),
    )
    .await;
    assert_eq!(r.status, 404);
    assert_eq!(
        r.json(),
        json!({"error": {"message": "The model `gpt-9` does not exist.",
            "type": "NotFoundError", "param": null, "code": 404}})
    );
    let r = request(
        sim.addr,
        "POST",
        "/v1/chat/completions",
        &[],
        "{\"messages\": [",
        Duration::from_secs(5),
    )
    .await;
    assert_eq!(r.status, 400);
    let msg = r.json()["error"]["message"].as_str().unwrap().to_string();
    assert!(msg.contains("EOF while parsing"), "{msg}");
    let r = post(
        sim.addr,
        "/v1/chat/completions",
        &json!({"model": "sim-moe-30b-a3b"}),
    )
    .await;
    assert_eq!(r.status, 400);
    assert!(
        r.text().contains("missing field `messages`"),
        "{}",
        r.text()
    );
    let r = get(sim.addr, "/v1/nope").await;
    assert_eq!(
        (r.status, r.json()["error"]["code"].clone()),
        (404, json!(404))
    );
    let r = get(sim.addr, "/v1/chat/completions").await;
    assert_eq!(r.status, 405);
    assert_eq!(r.header("allow"), Some("POST"));
    assert_eq!(r.json()["error"]["code"], 405);
    sim.shutdown();
}

#[tokio::test]
async fn models_and_health() {
    let sim = start(SimConfig {
        model: "my-model".into(),
        ..fast()
    })
    .await;
    assert!(sim.base_url.starts_with("http://127.0.0.1:") && sim.base_url.ends_with("/v1"));
    let m = get(sim.addr, "/v1/models").await.json();
    assert_eq!(m["object"], "list");
    assert_eq!(m["data"][0]["id"], "my-model");
    assert_eq!(get(sim.addr, "/health").await.status, 200);
    sim.shutdown();
}

/// Polls `done` until it holds (a bound of 30 s fails the test: a broken simulator, not a
/// slow one).
async fn wait_until(done: impl Fn() -> bool) {
    let t = std::time::Instant::now();
    while !done() {
        assert!(
            t.elapsed() < Duration::from_secs(30),
            "the simulator never got there"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

#[tokio::test]
async fn a_full_waiting_queue_answers_503() {
    // one slot, a queue of one: the third concurrent request is turned away
    let cfg = SimConfig {
        max_num_seqs: 1,
        max_waiting: Some(1),
        ..SimConfig::fast(1.0)
    };
    let sim = start(cfg).await;
    let addr = sim.addr;
    // long enough to hold its slot through the test (it is dropped at the end, not awaited)
    let long = tokio::spawn(async move {
        post(
            addr,
            "/v1/chat/completions",
            &chat_body("a b c", 20_000, true),
        )
        .await
    });
    wait_until(|| sim.stats().running == 1).await;
    let queued = tokio::spawn(async move {
        post(addr, "/v1/chat/completions", &chat_body("d e f", 2, true)).await
    });
    wait_until(|| sim.stats().waiting == 1).await;
    let r = post(addr, "/v1/chat/completions", &chat_body("g h i", 2, true)).await;
    assert_eq!(r.status, 503);
    assert_eq!(r.json()["error"]["type"], "ServiceUnavailableError");
    let st = sim.stats();
    assert_eq!((st.running, st.waiting), (1, 1), "{st:?}");
    long.abort();
    queued.abort();
    sim.shutdown();
}

#[tokio::test]
async fn a_client_that_goes_away_frees_its_slot() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let sim = start(SimConfig::fast(5.0)).await;
    let body = chat_body("a b c", 5000, true).to_string();
    let mut s = tokio::net::TcpStream::connect(sim.addr).await.unwrap();
    let req = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    s.write_all(req.as_bytes()).await.unwrap();
    // read until the first content chunk, so the sequence is surely running
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    while !String::from_utf8_lossy(&seen).contains("\"content\":\" ") {
        let n = s.read(&mut buf).await.unwrap();
        assert!(n > 0);
        seen.extend_from_slice(&buf[..n]);
    }
    assert_eq!(sim.stats().running, 1);
    drop(s);
    wait_until(|| sim.stats().running == 0).await;
    let st = sim.stats();
    assert_eq!(
        (st.running, st.kv_used_tokens, st.requests_aborted),
        (0, 0, 1),
        "{st:?}"
    );
    assert!(st.generation_tokens_total < 5000);
    sim.shutdown();
}

/// One sequence decodes one token per scheduler step, at any time scale (the real duration
/// of a step is the scheduler thread's unit tests and `cargo bench --bench sim_pacing`).
#[tokio::test]
async fn a_sequence_decodes_one_token_per_step() {
    let sim = start(SimConfig::fast(25.0)).await;
    let r = post(
        sim.addr,
        "/v1/completions",
        &json!({"prompt": "a b c", "max_tokens": 200,
        "ignore_eos": true}),
    )
    .await;
    assert_eq!(r.json()["usage"]["completion_tokens"], 200);
    assert_eq!(sim.stats().steps_total, 200);
    sim.shutdown();
}

const TOOLS: &str = r#"[{"type":"function","function":{"name":"lookup","parameters":{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}}}]"#;

/// With tools the answer is a tool call streamed as vLLM streams it: the id, type and name
/// with empty arguments first, then one arguments fragment per token, `tool_calls` as the
/// finish reason, usage as usual; the arguments put together are the JSON object of the
/// tool's required string. Not streamed: `message.tool_calls` with the same arguments.
#[tokio::test]
async fn chat_with_tools_answers_with_a_tool_call_streamed_as_vllm_does() {
    let sim = start(fast()).await;
    let p = prompt(50, 3);
    let mut body = chat_body(&p, 5, true);
    body["tools"] = serde_json::from_str(TOOLS).unwrap();
    let r = post(sim.addr, "/v1/chat/completions", &body).await;
    assert_eq!(r.status, 200);
    let c = r.chunks();
    // role, 5 tokens, usage
    assert_eq!(c.len(), 7);
    assert_eq!(
        c[1]["choices"][0]["delta"],
        json!({"tool_calls": [{"index": 0, "id": "chatcmpl-tool-sim-1",
            "type": "function", "function": {"name": "lookup", "arguments": ""}}]})
    );
    let mut args = String::new();
    for (i, chunk) in c[2..6].iter().enumerate() {
        let call = &chunk["choices"][0]["delta"]["tool_calls"][0];
        assert_eq!(call["index"], 0);
        assert!(call.get("id").is_none() && call["function"].get("name").is_none());
        args.push_str(call["function"]["arguments"].as_str().unwrap());
        let finish = &chunk["choices"][0]["finish_reason"];
        assert_eq!(finish.as_str(), (i == 3).then_some("tool_calls"), "{chunk}");
    }
    let v: Value = serde_json::from_str(&args).expect("the arguments are JSON");
    let words = v["q"].as_str().unwrap();
    assert_eq!(words.split(' ').count(), 4, "{args}");
    assert_eq!(c[6]["usage"]["completion_tokens"], 5);

    body["stream"] = json!(false);
    let whole = post(sim.addr, "/v1/chat/completions", &body).await.json();
    let m = &whole["choices"][0]["message"];
    assert_eq!(m["content"], Value::Null);
    assert_eq!(m["tool_calls"][0]["function"]["name"], "lookup");
    assert_eq!(m["tool_calls"][0]["function"]["arguments"], args.as_str());
    assert_eq!(whole["choices"][0]["finish_reason"], "tool_calls");
    assert_eq!(whole["usage"]["completion_tokens"], 5);

    // tool_choice none: text as without tools
    body["tool_choice"] = json!("none");
    let text = post(sim.addr, "/v1/chat/completions", &body).await.json();
    assert!(text["choices"][0]["message"]["content"].is_string());
    assert!(text["choices"][0]["message"].get("tool_calls").is_none());
    sim.shutdown();
}

/// `--tool-call-broken-share 1`: every call's arguments are cut short.
#[tokio::test]
async fn a_broken_share_of_one_cuts_every_call_short() {
    let sim = start(SimConfig {
        tool_call_broken_share: 1.0,
        ..fast()
    })
    .await;
    let mut body = chat_body(&prompt(50, 4), 6, true);
    body["tools"] = serde_json::from_str(TOOLS).unwrap();
    body["stream"] = json!(false);
    let whole = post(sim.addr, "/v1/chat/completions", &body).await.json();
    let args = whole["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(args.starts_with("{\"q\": \""), "{args}");
    assert!(serde_json::from_str::<Value>(&args).is_err(), "{args}");
    sim.shutdown();
}

#[tokio::test]
async fn a_reset_empties_the_prefix_cache_and_a_refusing_sim_answers_404() {
    let sim = start(fast()).await;
    let text = prompt(200, 7);
    let body = chat_body(&text, 2, true);
    let ask = || post(sim.addr, "/v1/chat/completions", &body);
    let hits = || sim.stats().prefix_cache_hits_total;
    assert_eq!(ask().await.status, 200);
    assert_eq!(hits(), 0);
    // the same prompt again: its whole blocks are cached
    assert_eq!(ask().await.status, 200);
    let warm = hits();
    assert!(warm > 0);
    let reset = |method| {
        request(
            sim.addr,
            method,
            "/reset_prefix_cache",
            &[],
            "",
            Duration::from_secs(5),
        )
    };
    let r = reset("POST").await;
    assert_eq!((r.status, r.text()), (200, String::new()));
    // after the reset the prompt hits nothing; the counters go on
    assert_eq!(ask().await.status, 200);
    assert_eq!(hits(), warm);
    let r = reset("GET").await;
    assert_eq!((r.status, r.header("allow")), (405, Some("POST")));
    sim.shutdown();

    let refusing = start(SimConfig {
        refuse_prefix_cache_reset: true,
        ..fast()
    })
    .await;
    let r = request(
        refusing.addr,
        "POST",
        "/reset_prefix_cache",
        &[],
        "",
        Duration::from_secs(5),
    )
    .await;
    assert_eq!((r.status, r.json()), (404, json!({"detail": "Not Found"})));
    refusing.shutdown();
}
