//! The `http://` client against scripted loopback servers: body framings (chunked,
//! `Content-Length`, read to close), keep-alive reuse and its limits, the reconnect rule and
//! timeouts. Connections are counted by the server (`Received::conn`, in accept order).

use crate::support::endpoint_support;

use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::Duration;

use endpoint_support::*;
use rightsize::endpoint::Endpoint;
use rightsize::record::{ErrorKind, ExchangeOutcome};
use rightsize::workload::RequestInput;

const TIMEOUT: Duration = Duration::from_secs(5);

fn endpoint(spec: &rightsize::endpoint::EndpointSpec) -> Endpoint {
    Endpoint::new(spec, 64, TIMEOUT).unwrap()
}

fn kind(o: &ExchangeOutcome) -> Option<ErrorKind> {
    o.error.as_ref().map(|e| e.kind)
}

/// The SSE body of [`good_stream`] without HTTP chunk framing.
fn sse_body() -> String {
    let ev = |json: &str| format!("data: {json}\r\n\r\n");
    [
        ev(r#"{"choices":[{"delta":{"content":"Hello"}}]}"#),
        ev(r#"{"choices":[{"delta":{"content":" world"}}]}"#),
        ev(r#"{"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":2}}"#),
        "data: [DONE]\r\n\r\n".to_string(),
    ]
    .concat()
}

/// Connection numbers of the requests the server received, in order.
fn conns(server: &Server) -> Vec<usize> {
    server.requests().iter().map(|r| r.conn).collect()
}

#[tokio::test]
async fn content_length_stream_is_read_and_the_connection_reused() {
    let body = sse_body();
    let (first, rest) = body.split_at(body.find("\r\n\r\n").unwrap() + 4);
    let (first, rest) = (first.to_string(), rest.to_string());
    // the client counts each content chunk as it reads it; the second write waits for the
    // first request's chunk to be counted (two chunks per request)
    let read = Arc::new(AtomicU64::new(0));
    let counted = read.clone();
    let server = serve(move |_, n, _| {
        vec![
            Step::Write(
                format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\n\r\n{first}",
                    body.len()
                )
                .into_bytes(),
            ),
            Step::WaitCount(counted.clone(), 2 * n as u64 + 1),
            Step::Sleep(50),
            Step::Write(rest.clone().into_bytes()),
        ]
    })
    .await;
    let ep = endpoint(&spec(&server.base()));
    for n in 0..3 {
        let o = ep
            .send_counting(RequestInput::Text("x"), 4, read.clone())
            .await;
        assert_eq!(o.error, None);
        assert_eq!(o.output_tokens, Some(2));
        assert_eq!(o.content_chunk_ns.len(), 2);
        // "Hello" was in the first write and is timed before the second, " world" in the
        // second (the server's stamps, on the client's clock)
        let w = server.written(0, n);
        let (hello, world) = (o.content_chunk_ns[0], o.content_chunk_ns[1]);
        assert!(
            (w[0]..w[1]).contains(&hello),
            "Hello at {hello}, writes {w:?}"
        );
        assert!(world >= w[1], "world at {world}, writes {w:?}");
    }
    assert_eq!(conns(&server), vec![0, 0, 0]);
    let req = &server.requests()[0];
    assert_eq!(req.header("host"), Some(server.addr.to_string()));
    assert_eq!(req.header("accept").as_deref(), Some("text/event-stream"));
}

#[tokio::test]
async fn body_read_to_close_completes_and_is_not_reused() {
    let server = serve_one(vec![
        Step::Write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n".to_vec()),
        Step::Write(sse_body().into_bytes()),
        Step::Close,
    ])
    .await;
    let ep = endpoint(&spec(&server.base()));
    for _ in 0..2 {
        let o = ep.send("x", 4).await;
        assert_eq!(o.error, None);
        assert_eq!(o.output_tokens, Some(2));
        assert!(!o.reconnected);
    }
    assert_eq!(conns(&server), vec![0, 1]);
}

#[tokio::test]
async fn chunked_stream_keeps_the_connection_alive() {
    let server = serve_one(good_stream()).await;
    let ep = endpoint(&spec(&server.base()));
    for _ in 0..3 {
        let o = ep.send("x", 4).await;
        assert_eq!(o.error, None);
        assert!(!o.reconnected);
    }
    assert_eq!(conns(&server), vec![0, 0, 0]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_wave_reuses_the_first_waves_connections() {
    const N: usize = 16;
    let server = serve_one(vec![
        sse_head(),
        Step::Sleep(50),
        content("Hello"),
        usage(1, 1),
        done(),
        end(),
    ])
    .await;
    let ep = endpoint(&spec(&server.base()));
    for _ in 0..2 {
        let wave: Vec<_> = (0..N)
            .map(|_| {
                let ep = ep.clone();
                tokio::spawn(async move { ep.send("x", 4).await })
            })
            .collect();
        for t in wave {
            assert_eq!(t.await.unwrap().error, None);
        }
    }
    let mut c = conns(&server);
    assert_eq!(c.len(), 2 * N);
    c.sort_unstable();
    c.dedup();
    assert_eq!(c.len(), N, "the second wave opened new connections");
}

#[tokio::test]
async fn connection_close_is_honoured() {
    let server = serve_one(vec![Step::Write(
        format!(
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{}",
            sse_body().len(),
            sse_body()
        )
        .into_bytes(),
    )])
    .await;
    let ep = endpoint(&spec(&server.base()));
    for _ in 0..2 {
        let o = ep.send("x", 4).await;
        assert_eq!(o.error, None);
        assert!(!o.reconnected);
    }
    // the server kept its side open: only the header made the client open a new connection
    assert_eq!(conns(&server), vec![0, 1]);
}

#[tokio::test]
async fn idle_connection_closed_by_the_server_is_replaced() {
    // the server answers one request per connection, then closes it while it is idle
    let server = serve(|_, _, _| {
        let mut steps = good_stream();
        steps.push(Step::Close);
        steps
    })
    .await;
    let ep = endpoint(&spec(&server.base()));
    let first = ep.send("x", 4).await;
    assert_eq!(first.error, None);
    tokio::time::sleep(Duration::from_millis(50)).await;
    let second = ep.send("x", 4).await;
    assert_eq!(second.error, None, "{:?}", second.error);
    assert_eq!(second.output_tokens, Some(2));
    assert_eq!(conns(&server), vec![0, 1]);
}

#[tokio::test]
async fn reset_of_a_reused_connection_is_retried_once() {
    // connection 0 answers, then drops the second request unanswered; so does connection 1:
    // the retry happens once, and its failure is reported
    let server = serve(|conn, n, _| {
        if n == 1 || conn == 1 {
            vec![Step::Close]
        } else {
            good_stream()
        }
    })
    .await;
    let ep = endpoint(&spec(&server.base()));
    assert_eq!(ep.send("x", 4).await.error, None);
    let o = ep.send("x", 4).await;
    assert!(o.reconnected);
    assert_eq!(kind(&o), Some(ErrorKind::Connect), "{:?}", o.error);
    assert_eq!(conns(&server), vec![0, 0, 1]);
}

#[tokio::test]
async fn fresh_connection_closed_before_the_head_is_not_retried() {
    let server = serve_one(vec![Step::Close]).await;
    let o = endpoint(&spec(&server.base())).send("x", 4).await;
    assert_eq!(kind(&o), Some(ErrorKind::Connect));
    assert!(!o.reconnected);
    assert_eq!(conns(&server), vec![0]);
}

#[tokio::test]
async fn no_answer_times_out_and_the_connection_is_dropped() {
    let server = serve(|conn, _, _| {
        if conn == 0 {
            vec![Step::Sleep(10_000)]
        } else {
            good_stream()
        }
    })
    .await;
    let ep = Endpoint::new(&spec(&server.base()), 8, Duration::from_millis(200)).unwrap();
    let o = ep.send("x", 4).await;
    assert_eq!(kind(&o), Some(ErrorKind::Timeout));
    let total = ms(o.start_ns, o.end_ns);
    // the client's limit, not the server's 10 s hold
    assert!((200.0..10_000.0).contains(&total), "{total} ms");
    // the timed-out connection is not put back: the next request opens a new one
    assert_eq!(ep.send("x", 4).await.error, None);
    assert_eq!(conns(&server), vec![0, 1]);
}

#[tokio::test]
async fn short_content_length_body_is_broken() {
    let server = serve_one(vec![
        Step::Write(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: 5000\r\n\r\n"
                .to_vec(),
        ),
        Step::Write(sse_body().into_bytes()[..60].to_vec()),
        Step::Close,
    ])
    .await;
    let o = endpoint(&spec(&server.base())).send("x", 4).await;
    assert_eq!(kind(&o), Some(ErrorKind::BrokenStream), "{:?}", o.error);
    assert!(o.error.unwrap().message.contains("closed"));
}

#[tokio::test]
async fn error_answers_and_interim_heads_keep_the_connection() {
    let server = serve(|_, n, _| match n {
        0 => vec![response(
            "503 Service Unavailable",
            "application/json",
            r#"{"error":{"message":"warming up"}}"#,
        )],
        _ => {
            let mut s = vec![Step::Write(b"HTTP/1.1 100 Continue\r\n\r\n".to_vec())];
            s.extend(good_stream());
            s
        }
    })
    .await;
    let ep = endpoint(&spec(&server.base()));
    let e = ep.send("x", 4).await.error.unwrap();
    assert_eq!((e.kind, e.status), (ErrorKind::HttpStatus, Some(503)));
    assert_eq!(e.message, "warming up");
    let o = ep.send("x", 4).await;
    assert_eq!(o.error, None);
    assert_eq!(o.output_tokens, Some(2));
    assert_eq!(conns(&server), vec![0, 0]);
}

#[tokio::test]
async fn garbage_instead_of_a_head_is_a_connect_failure() {
    let server = serve_one(vec![Step::Write(b"SSH-2.0-OpenSSH_9.6\r\n\r\n".to_vec())]).await;
    let e = endpoint(&spec(&server.base()))
        .send("x", 4)
        .await
        .error
        .unwrap();
    assert_eq!(e.kind, ErrorKind::Connect);
    assert!(
        e.message.starts_with("invalid response head"),
        "{}",
        e.message
    );
}

/// Writes `text`'s request with `writer` on a thread of its own, outside any runtime (as the
/// open-loop dispatcher does), returning the writer and what it wrote.
fn write_on_a_thread(
    ep: &Endpoint,
    writer: rightsize::endpoint::DirectWriter,
    text: &str,
) -> (
    rightsize::endpoint::DirectWriter,
    Option<rightsize::endpoint::Written>,
) {
    use rightsize::workload::messages::RequestInput;
    let p = ep.prepare(&writer, RequestInput::Text(text), 4);
    std::thread::spawn(move || {
        let mut writer = writer;
        let w = writer.write(p);
        (writer, w)
    })
    .join()
    .unwrap()
}

/// Waits (up to 5 s) until the server has received `n` requests.
async fn received(server: &Server, n: usize) {
    for _ in 0..500 {
        if server.requests().len() >= n {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the server received {} requests", server.requests().len());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_dispatchers_thread_writes_on_an_idle_connection_and_the_runtime_reads() {
    let server = serve(|_, _, _| good_stream()).await;
    let ep = endpoint(&spec(&server.base()));
    let mut writer = ep
        .direct_writer()
        .expect("an http:// endpoint writes directly");
    // no connection yet, and the host's address unknown: nothing to write on, none made
    writer.get_ready(rightsize::clock::now_ns() + 1_000_000_000);
    let (writer, none) = write_on_a_thread(&ep, writer, "x");
    assert!(none.is_none(), "no connection was ready");
    assert_eq!(ep.send("x", 4).await.error, None);
    // the request goes out on the thread, before the runtime is asked to read its answer
    let (writer, w) = write_on_a_thread(&ep, writer, "y");
    let w = w.expect("the idle connection is used");
    received(&server, 2).await;
    assert_eq!(server.requests()[1].json()["messages"][0]["content"], "y");
    let sent_at = w.start_ns();
    let live = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let o = ep.send_written(w, live.clone()).await;
    assert_eq!(o.error, None);
    assert_eq!(o.output_tokens, Some(2));
    assert_eq!(o.start_ns, sent_at);
    assert!(o.end_ns > o.start_ns && !o.reconnected);
    assert_eq!(live.load(std::sync::atomic::Ordering::Relaxed), 2);
    // its connection went back to the pool; with it taken, none is ready, until one is
    // connected ahead of a send far enough off
    let (writer, w) = write_on_a_thread(&ep, writer, "z");
    let o = ep
        .send_written(w.expect("the connection came back"), live.clone())
        .await;
    assert_eq!(o.error, None);
    assert_eq!(conns(&server), vec![0, 0, 0]);
    // two sends due at once and one idle connection: the second finds none ready, until
    // connections are made ahead of a send far enough off
    let (writer, a) = write_on_a_thread(&ep, writer, "a");
    let a = a.expect("the idle connection");
    let (mut writer, b) = write_on_a_thread(&ep, writer, "b");
    assert!(b.is_none(), "the only connection is taken");
    writer.get_ready(rightsize::clock::now_ns() + 1_000_000_000);
    let (writer, c) = write_on_a_thread(&ep, writer, "c");
    let c = c.expect("a connection made ahead");
    for w in [a, c] {
        assert_eq!(ep.send_written(w, live.clone()).await.error, None);
    }
    drop(writer);
    // x, y and z went one after another on connection 0; a and c were in flight together, so
    // the server may record either first: each is found by its text
    let on = conns(&server);
    assert!(on.len() == 5 && on[..3] == [0, 0, 0], "{on:?}");
    let conn_of = |text: &str| {
        let requests = server.requests();
        let r = requests
            .iter()
            .find(|r| r.json()["messages"][0]["content"] == text);
        r.expect("the request arrived").conn
    };
    assert_eq!(conn_of("a"), 0, "{on:?}");
    assert!(conn_of("c") > 0, "{on:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_direct_write_on_a_connection_the_server_drops_is_sent_again_once() {
    // connection 0 answers its first request and drops the second unanswered (a keep-alive
    // connection closed as the request arrived); connection 1 answers
    let server = serve(|conn, n, _| {
        if conn == 0 && n == 1 {
            vec![Step::Close]
        } else {
            good_stream()
        }
    })
    .await;
    let ep = endpoint(&spec(&server.base()));
    assert_eq!(ep.send("x", 4).await.error, None);
    let (_, w) = write_on_a_thread(&ep, ep.direct_writer().unwrap(), "y");
    let live = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let o = ep.send_written(w.expect("the idle connection"), live).await;
    assert_eq!(o.error, None, "{:?}", o.error);
    assert!(o.reconnected);
    assert_eq!(conns(&server), vec![0, 0, 1]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_the_socket_does_not_take_at_once_is_written_by_the_runtime() {
    let server = serve(|_, _, _| good_stream()).await;
    let ep = endpoint(&spec(&server.base()));
    assert_eq!(ep.send("x", 4).await.error, None);
    // 16 MiB: more than a loopback socket's send buffer
    let big = "y".repeat(16 << 20);
    let (_, w) = write_on_a_thread(&ep, ep.direct_writer().unwrap(), &big);
    let live = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let o = ep.send_written(w.expect("the idle connection"), live).await;
    assert_eq!(o.error, None, "{:?}", o.error);
    let got = server.requests();
    assert_eq!(got.len(), 2);
    assert_eq!(got[1].json()["messages"][0]["content"], big.as_str());
    assert_eq!(conns(&server), vec![0, 0]);
}
