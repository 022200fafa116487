//! `Endpoint::send` against scripted loopback servers: timing of each chunk as it arrives,
//! token counts and their source, and every failure class.
//!
//! Times are checked against the server's own stamps of its writes (on the same monotonic
//! clock), never against the length of a sleep: a chunk is timed at its arrival when its time
//! lies at or after the write that completed it and before the next write, which the server
//! makes only once the client has counted the chunk. The sleeps in the scripts only give a
//! wrong implementation room to show itself.

use crate::support::endpoint_support;

use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::Duration;

use endpoint_support::*;
use rightsize::endpoint::{Api, Endpoint, EndpointError};
use rightsize::record::{ErrorKind, TokenSource};
use rightsize::workload::RequestInput;

const TIMEOUT: Duration = Duration::from_secs(5);
/// A server's hold in these scripts (10 s) stands for "never" next to the client's limits.
const NEVER_MS: f64 = 10_000.0;

fn endpoint(spec: &rightsize::endpoint::EndpointSpec) -> Endpoint {
    Endpoint::new(spec, 8, TIMEOUT).unwrap()
}

fn kind(o: &rightsize::record::ExchangeOutcome) -> Option<ErrorKind> {
    o.error.as_ref().map(|e| e.kind)
}

#[tokio::test]
async fn stream_times_each_chunk_at_arrival() {
    let read = Arc::new(AtomicU64::new(0));
    let server = serve_one(vec![
        sse_head(),
        Step::Sleep(150),
        content("Hello"),
        Step::WaitCount(read.clone(), 1),
        Step::Sleep(60),
        content(" world"),
        Step::WaitCount(read.clone(), 2),
        Step::Sleep(60),
        usage(5, 2),
        done(),
        end(),
    ])
    .await;
    let o = endpoint(&spec(&server.base()))
        .send_counting(RequestInput::Text("hi there"), 16, read)
        .await;
    assert_eq!(o.error, None);
    // writes: head, Hello, world, usage, [DONE], end
    let w = server.written(0, 0);
    assert_eq!(w.len(), 6);
    assert_eq!(o.content_chunk_ns.len(), 2);
    assert_eq!(o.first_token_ns, Some(o.content_chunk_ns[0]));
    assert_eq!(o.last_token_ns, Some(o.content_chunk_ns[1]));
    // the first token is the first content chunk's arrival, not the head's
    let (hello, world) = (o.content_chunk_ns[0], o.content_chunk_ns[1]);
    assert!(
        (w[1]..w[2]).contains(&hello),
        "Hello at {hello}, writes {w:?}"
    );
    assert!(
        (w[2]..w[3]).contains(&world),
        "world at {world}, writes {w:?}"
    );
    // the usage chunk came after the last content chunk: not a content time
    assert!(
        o.end_ns >= w[3],
        "end {} before the usage {}",
        o.end_ns,
        w[3]
    );
    assert_eq!(o.output_tokens, Some(2));
    assert_eq!(o.output_tokens_source, TokenSource::Server);
    assert_eq!(o.server_input_tokens, Some(5));
    assert!(!o.reconnected);

    let req = &server.requests()[0];
    assert_eq!(req.method, "POST");
    assert_eq!(req.path, "/v1/chat/completions");
    assert_eq!(
        req.json(),
        serde_json::json!({
            "model": "test-model",
            "messages": [{"role": "user", "content": "hi there"}],
            "max_tokens": 16,
            "stream": true,
            "stream_options": {"include_usage": true}
        })
    );
    assert_eq!(
        req.header("content-type").as_deref(),
        Some("application/json")
    );
}

#[tokio::test]
async fn event_split_across_writes_is_timed_at_its_last_byte() {
    let ev = "data: {\"choices\":[{\"delta\":{\"content\":\"h\u{e9}llo\"}}]}\r\n\r\n";
    let bytes = ev.as_bytes();
    // cut inside the two-byte "é" and between "\r" and "\n"
    let cut1 = ev.find('\u{e9}').unwrap() + 1;
    let cut2 = bytes.len() - 3;
    let raw = |b: &[u8]| {
        let mut v = format!("{:x}\r\n", b.len()).into_bytes();
        v.extend_from_slice(b);
        v.extend_from_slice(b"\r\n");
        Step::Write(v)
    };
    let server = serve_one(vec![
        sse_head(),
        raw(&bytes[..cut1]),
        Step::Sleep(80),
        raw(&bytes[cut1..cut2]),
        Step::Sleep(80),
        raw(&bytes[cut2..]),
        done(),
        end(),
    ])
    .await;
    let o = endpoint(&spec(&server.base())).send("x", 4).await;
    assert_eq!(o.error, None);
    // writes: head, the three pieces of the event, [DONE], end
    let w = server.written(0, 0);
    assert_eq!(w.len(), 6);
    let first = o.first_token_ns.unwrap();
    assert!(
        first >= w[3],
        "timed at {first}, before its last piece {}",
        w[3]
    );
    // no usage: the client counts "héllo" (5 chars = 2 tokens)
    assert_eq!(o.output_tokens, Some(2));
    assert_eq!(o.output_tokens_source, TokenSource::Client);
    assert_eq!(o.server_input_tokens, None);
}

#[tokio::test]
async fn client_counts_tokens_without_usage_including_reasoning() {
    let server = serve_one(vec![
        sse_head(),
        event(r#"{"choices":[{"delta":{"role":"assistant","content":""}}]}"#),
        event(r#"{"choices":[{"delta":{"reasoning_content":"let me see"}}]}"#),
        content("the cat"),
        content(" sat"),
        event(r#"{"choices":[{"delta":{},"finish_reason":"stop"}]}"#),
        done(),
        end(),
    ])
    .await;
    let o = endpoint(&spec(&server.base())).send("x", 8).await;
    assert_eq!(o.error, None);
    // role-only chunk is not content; reasoning is
    assert_eq!(o.content_chunk_ns.len(), 3);
    assert_eq!(o.output_tokens, Some(3 + 3));
    assert_eq!(o.output_tokens_source, TokenSource::Client);
    // reasoning counted apart; the first answer token is the second content chunk
    assert_eq!(o.reasoning_tokens, Some(3));
    assert_eq!(o.first_token_ns, Some(o.content_chunk_ns[0]));
    assert_eq!(o.first_output_ns, Some(o.content_chunk_ns[1]));
    assert_eq!(
        (o.answer_text.as_str(), o.reasoning_text.as_str()),
        ("the cat sat", "let me see")
    );
    assert_eq!(o.max_tokens, Some(8));
}

#[tokio::test]
async fn reasoning_tokens_come_from_usage_and_the_first_answer_token_is_timed() {
    let read = Arc::new(AtomicU64::new(0));
    let server = serve_one(vec![
        sse_head(),
        event(r#"{"choices":[{"delta":{"reasoning_content":"hmm"}}]}"#),
        Step::WaitCount(read.clone(), 1),
        Step::Sleep(120),
        event(r#"{"choices":[{"delta":{"reasoning":" so"}}]}"#),
        Step::Sleep(120),
        content("Paris"),
        event(
            r#"{"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":9,"completion_tokens_details":{"reasoning_tokens":6}}}"#,
        ),
        done(),
        end(),
    ])
    .await;
    let o = endpoint(&spec(&server.base()))
        .send_counting(RequestInput::Text("capital of France?"), 32, read)
        .await;
    assert_eq!(o.error, None);
    assert_eq!(
        (o.output_tokens, o.reasoning_tokens, o.server_input_tokens),
        (Some(9), Some(6), Some(7))
    );
    // the answer is the third chunk with text; the server held it back 240 ms
    assert_eq!(o.content_chunk_ns.len(), 3);
    assert_eq!(o.first_token_ns, Some(o.content_chunk_ns[0]));
    assert_eq!(o.first_output_ns, Some(o.content_chunk_ns[2]));
    // writes: head, the reasoning chunks, the answer: the answer is timed at or after its write
    let w = server.written(0, 0);
    assert!(o.first_output_ns.unwrap() >= w[3], "writes {w:?}");
    assert!(o.first_token_ns.unwrap() < w[2], "writes {w:?}");
}

#[tokio::test]
#[cfg(feature = "exact-tokenizers")]
async fn the_runs_tokenizer_counts_answers_without_usage() {
    let server = serve_one(vec![
        sse_head(),
        event(r#"{"choices":[{"delta":{"reasoning_content":"hello world"}}]}"#),
        content("hello world"),
        done(),
        end(),
    ])
    .await;
    let o200k = rightsize::workload::tokenizer::load("o200k")
        .unwrap()
        .tokenizer;
    let o = endpoint(&spec(&server.base()))
        .with_tokenizer(o200k)
        .send("x", 8)
        .await;
    assert_eq!(o.error, None);
    // o200k: "hello world" is 2 tokens (the approximation says 4)
    assert_eq!((o.output_tokens, o.reasoning_tokens), (Some(4), Some(2)));
    assert_eq!(o.output_tokens_source, TokenSource::Client);
}

#[tokio::test]
async fn stream_without_done_is_broken() {
    let server = serve_one(vec![sse_head(), content("Hello"), usage(1, 1), end()]).await;
    let o = endpoint(&spec(&server.base())).send("x", 4).await;
    assert_eq!(kind(&o), Some(ErrorKind::BrokenStream));
    assert_eq!(o.error.unwrap().message, "the stream ended without [DONE]");
    assert!(o.first_token_ns.is_some());
}

#[tokio::test]
async fn done_without_end_of_body_still_succeeds() {
    // [DONE] came but the server keeps the body open: complete after a short grace
    let server = serve_one(vec![
        sse_head(),
        content("Hello"),
        done(),
        Step::Sleep(10_000),
    ])
    .await;
    let o = endpoint(&spec(&server.base())).send("x", 4).await;
    assert_eq!(o.error, None);
    // writes: head, Hello, [DONE]: a grace of one second after it, not the server's hold
    let done_at = server.written(0, 0)[2];
    let after_done = ms(done_at, o.end_ns);
    assert!((1000.0..NEVER_MS).contains(&after_done), "{after_done} ms");
}

#[tokio::test]
async fn abrupt_close_mid_body_is_broken() {
    let server = serve_one(vec![
        sse_head(),
        content("Hello"),
        Step::Write(b"40\r\ndata: {\"choi".to_vec()),
        Step::Close,
    ])
    .await;
    let o = endpoint(&spec(&server.base())).send("x", 4).await;
    assert_eq!(kind(&o), Some(ErrorKind::BrokenStream), "{:?}", o.error);
    assert_eq!(o.content_chunk_ns.len(), 1);
    assert!(o.end_ns >= o.start_ns);
}

#[tokio::test]
async fn in_stream_error_keeps_its_message() {
    let server = serve_one(vec![
        sse_head(),
        content("Hello"),
        event(
            r#"{"error":{"message":"CUDA out of memory","type":"InternalServerError","code":500}}"#,
        ),
        done(),
        end(),
    ])
    .await;
    let o = endpoint(&spec(&server.base())).send("x", 4).await;
    let e = o.error.unwrap();
    assert_eq!(e.kind, ErrorKind::InStreamError);
    assert_eq!(e.message, "CUDA out of memory");
}

#[tokio::test]
async fn invalid_json_chunk_is_bad_payload() {
    let server = serve_one(vec![sse_head(), event("{not json"), done(), end()]).await;
    let o = endpoint(&spec(&server.base())).send("x", 4).await;
    let e = o.error.unwrap();
    assert_eq!(e.kind, ErrorKind::BadPayload);
    assert!(
        e.message.starts_with("a chunk is not valid JSON"),
        "{}",
        e.message
    );
}

#[tokio::test]
async fn http_status_takes_the_json_error_message() {
    let server = serve_one(vec![response(
        "500 Internal Server Error",
        "application/json",
        r#"{"error":{"message":"engine dead","type":"InternalServerError","code":500}}"#,
    )])
    .await;
    let o = endpoint(&spec(&server.base())).send("x", 4).await;
    let e = o.error.unwrap();
    assert_eq!(e.kind, ErrorKind::HttpStatus);
    assert_eq!(e.status, Some(500));
    assert_eq!(e.message, "engine dead");

    let server = serve_one(vec![response(
        "429 Too Many Requests",
        "text/plain",
        "slow  down\n",
    )])
    .await;
    let e = endpoint(&spec(&server.base()))
        .send("x", 4)
        .await
        .error
        .unwrap();
    assert_eq!((e.kind, e.status), (ErrorKind::HttpStatus, Some(429)));
    assert_eq!(e.message, "HTTP 429 Too Many Requests: slow down");
}

#[tokio::test]
async fn stalled_stream_times_out() {
    let server = serve_one(vec![sse_head(), content("Hello"), Step::Sleep(10_000)]).await;
    let ep = Endpoint::new(&spec(&server.base()), 8, Duration::from_millis(300)).unwrap();
    let o = ep.send("x", 4).await;
    assert_eq!(kind(&o), Some(ErrorKind::Timeout));
    assert!(o.first_token_ns.is_some());
    let total = ms(o.start_ns, o.end_ns);
    assert!((300.0..NEVER_MS).contains(&total), "{total} ms");
}

#[tokio::test]
async fn refused_connection_is_connect() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let o = endpoint(&spec(&format!("http://{addr}/v1")))
        .send("x", 4)
        .await;
    let e = o.error.unwrap();
    assert_eq!(e.kind, ErrorKind::Connect);
    assert!(e.message.contains("refused"), "{}", e.message);
}

#[tokio::test]
async fn non_streaming_body_times_the_body_and_has_no_first_token() {
    let server = serve_one(vec![
        Step::Sleep(100),
        response(
            "200 OK",
            "application/json",
            r#"{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"Hi there"},"finish_reason":"stop"}],"usage":{"prompt_tokens":9,"completion_tokens":2,"total_tokens":11}}"#,
        ),
    ])
    .await;
    let mut s = spec(&server.base());
    s.stream = false;
    s.exact_output_length = true;
    let o = endpoint(&s).send("x", 2).await;
    assert_eq!(o.error, None);
    // a body read whole has no TTFT: no first token, only the body's time, at or after the
    // one write of the response
    assert_eq!(o.first_token_ns, None);
    let body_at = server.written(0, 0)[0];
    assert!(o.last_token_ns.unwrap() >= body_at);
    assert_eq!(o.output_tokens, Some(2));
    assert_eq!(o.output_tokens_source, TokenSource::Server);
    assert_eq!(o.server_input_tokens, Some(9));
    assert_eq!(
        server.requests()[0].json(),
        serde_json::json!({
            "model": "test-model",
            "messages": [{"role": "user", "content": "x"}],
            "max_tokens": 2,
            "stream": false,
            "ignore_eos": true,
            "min_tokens": 2
        })
    );
}

#[tokio::test]
async fn completions_api_stream_and_sim_timing() {
    let text = |t: &str, sent: u64| {
        event(&format!(
            r#"{{"object":"text_completion","choices":[{{"index":0,"text":"{t}","finish_reason":null}}],"sim_sent_ns":{sent}}}"#
        ))
    };
    let server = serve_one(vec![
        sse_head(),
        text("one", 111),
        text(" two", 222),
        text(" three", 333),
        done(),
        end(),
    ])
    .await;
    let mut s = spec(&server.base().replace("/v1", ""));
    s.api = Api::Completions;
    s.sim_timing = true;
    s.headers = vec![("X-Team".into(), "perf".into())];
    let o = endpoint(&s).send("go", 3).await;
    assert_eq!(o.error, None);
    assert_eq!(o.server_first_sent_ns, Some(111));
    assert_eq!(o.server_last_sent_ns, Some(333));
    // "three" has 5 characters: 2 tokens
    assert_eq!(o.output_tokens, Some(4));
    let req = &server.requests()[0];
    assert_eq!(req.path, "/v1/completions");
    assert_eq!(req.json()["prompt"], "go");
    assert_eq!(req.header("x-rightsize-sim-timing").as_deref(), Some("1"));
    assert_eq!(req.header("x-team").as_deref(), Some("perf"));
    assert_eq!(req.header("authorization"), None);
}

#[tokio::test]
async fn json_lines_stream_without_done_completes_on_finish_reason() {
    let line = |json: &str| chunk(&format!("{json}\n"));
    let server = serve_one(vec![
        Step::Write(
            b"HTTP/1.1 200 OK\r\ncontent-type: application/jsonlines\r\ntransfer-encoding: chunked\r\n\r\n"
                .to_vec(),
        ),
        line(r#"{"choices":[{"delta":{"content":"a b"}}]}"#),
        line(r#"{"choices":[{"delta":{},"finish_reason":"stop"}]}"#),
        end(),
    ])
    .await;
    let o = endpoint(&spec(&server.base())).send("x", 4).await;
    assert_eq!(o.error, None);
    assert_eq!(o.output_tokens, Some(2));
}

#[tokio::test]
async fn stale_keep_alive_connection_is_retried_once() {
    // Connection 0 answers its first request, then drops the second one unanswered (a
    // server that closed an idle keep-alive connection); connection 1 answers normally.
    let server = serve(|conn, n, _| {
        if conn == 0 && n == 1 {
            vec![Step::Close]
        } else {
            good_stream()
        }
    })
    .await;
    let ep = endpoint(&spec(&server.base()));
    let first = ep.send("x", 4).await;
    assert_eq!(first.error, None);
    assert!(!first.reconnected);
    let second = ep.send("x", 4).await;
    assert_eq!(second.error, None, "{:?}", second.error);
    assert!(second.reconnected);
    assert_eq!(second.output_tokens, Some(2));
    let conns: Vec<usize> = server.requests().iter().map(|r| r.conn).collect();
    assert_eq!(conns, vec![0, 0, 1]);
}

#[tokio::test]
async fn bearer_token_is_sent_but_never_shown() {
    const SECRET: &str = "sk-test-very-secret-value-42";
    std::env::set_var("RIGHTSIZE_TEST_KEY_EXCHANGE", SECRET);
    let server = serve_one(vec![response(
        "401 Unauthorized",
        "application/json",
        r#"{"error":{"message":"Invalid API key","type":"invalid_request_error"}}"#,
    )])
    .await;
    let mut s = spec(&server.base());
    s.api_key_env = Some("RIGHTSIZE_TEST_KEY_EXCHANGE".into());
    let ep = endpoint(&s);
    let o = ep.send("x", 4).await;
    let req = &server.requests()[0];
    assert_eq!(
        req.header("authorization"),
        Some(format!("Bearer {SECRET}"))
    );
    let e = o.error.clone().unwrap();
    assert_eq!((e.kind, e.status), (ErrorKind::HttpStatus, Some(401)));
    for shown in [
        format!("{ep:?}"),
        format!("{o:?}"),
        format!("{e:?}"),
        e.message.clone(),
        format!("{:?}", ep.spec()),
        serde_json::to_string(ep.spec()).unwrap(),
    ] {
        assert!(!shown.contains(SECRET), "secret leaked in {shown}");
    }
}

#[test]
fn missing_or_empty_key_variable_is_named() {
    let mut s = spec("http://127.0.0.1:1/v1");
    s.api_key_env = Some("RIGHTSIZE_TEST_KEY_UNSET_7f3a".into());
    let e = Endpoint::new(&s, 1, TIMEOUT).unwrap_err();
    assert!(matches!(e, EndpointError::MissingApiKey { .. }));
    assert_eq!(
        e.to_string(),
        "the API key variable RIGHTSIZE_TEST_KEY_UNSET_7f3a (api_key_env) is not set in the environment"
    );
    std::env::set_var("RIGHTSIZE_TEST_KEY_EMPTY", "  ");
    s.api_key_env = Some("RIGHTSIZE_TEST_KEY_EMPTY".into());
    let e = Endpoint::new(&s, 1, TIMEOUT).unwrap_err();
    assert_eq!(
        e.to_string(),
        "the API key variable RIGHTSIZE_TEST_KEY_EMPTY (api_key_env) is empty"
    );
}

#[test]
fn invalid_base_url_is_a_construction_error() {
    let e = Endpoint::new(&spec("ftp://h/v1"), 1, TIMEOUT).unwrap_err();
    assert_eq!(
        e.to_string(),
        "invalid base URL 'ftp://h/v1': scheme 'ftp' is not http or https"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_requests_each_get_a_connection_and_run_in_parallel() {
    const N: usize = 32;
    // every answer waits until all N requests have arrived: requests sent one after another
    // would wait for each other until the client's timeout
    let server = serve_one(vec![
        Step::WaitRequests(N),
        sse_head(),
        content("Hello"),
        usage(1, 1),
        done(),
        end(),
    ])
    .await;
    let ep = endpoint(&spec(&server.base()));
    let tasks: Vec<_> = (0..N)
        .map(|_| {
            let ep = ep.clone();
            tokio::spawn(async move { ep.send("x", 4).await })
        })
        .collect();
    for t in tasks {
        let o = t.await.unwrap();
        assert_eq!(o.error, None, "requests were serialized");
    }
    let mut conns: Vec<usize> = server.requests().iter().map(|r| r.conn).collect();
    conns.sort_unstable();
    conns.dedup();
    assert_eq!(conns.len(), N);
}

#[tokio::test]
async fn a_20_mib_line_is_a_bad_payload_not_a_memory_leak() {
    // a server that streams 20 MiB without ending a line, in 1 MiB chunks, then waits
    let mut steps = vec![sse_head(), content("Hello")];
    let mib = "x".repeat(1 << 20);
    steps.push(chunk("data: "));
    for _ in 0..20 {
        steps.push(chunk(&mib));
    }
    steps.push(Step::Sleep(10_000));
    let server = serve_one(steps).await;
    let o = endpoint(&spec(&server.base())).send("hi there", 16).await;
    // it ends as soon as the line passes the 16 MiB cap, not at the timeout (a Timeout)
    assert_eq!(kind(&o), Some(ErrorKind::BadPayload), "{:?}", o.error);
    let msg = &o.error.as_ref().unwrap().message;
    assert!(msg.contains("longer than 16 MiB"), "{msg}");
    // the first token came before it, and stays recorded
    assert!(o.first_token_ns.is_some());
}
