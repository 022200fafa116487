//! `Endpoint::send` against servers that bend HTTP/1.1 the ways real ones do: trailers and
//! chunk extensions, an HTTP/1.0 body delimited by the connection closing, an HTML page with a
//! 200, a compressed body nobody asked for (gzip decoded, other codings refused), a stream
//! line too long to hold, a proxy from the environment, and an open-file limit too low for the
//! plan.

use crate::support::endpoint_support;

use std::time::Duration;

use endpoint_support::*;
use rightsize::endpoint::Endpoint;
use rightsize::record::ErrorKind;

const TIMEOUT: Duration = Duration::from_secs(5);

fn endpoint(spec: &rightsize::endpoint::EndpointSpec) -> Endpoint {
    Endpoint::new(spec, 8, TIMEOUT).unwrap()
}

/// One HTTP chunk carrying the SSE event `data: {json}`, with a chunk extension.
fn event_with_extension(json: &str) -> Step {
    let data = format!("data: {json}\n\n");
    Step::Write(format!("{:x};name=\"value\"\r\n{data}\r\n", data.len()).into_bytes())
}

fn content_json(text: &str) -> String {
    format!(
        r#"{{"id":"c1","object":"chat.completion.chunk","choices":[{{"index":0,"delta":{{"content":{}}},"finish_reason":null}}]}}"#,
        serde_json::to_string(text).unwrap()
    )
}

#[tokio::test]
async fn trailers_and_chunk_extensions_are_read_past() {
    let server = serve_one(vec![
        Step::Write(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\ntrailer: x-request-cost\r\n\r\n"
                .to_vec(),
        ),
        event_with_extension(&content_json("Hello")),
        event_with_extension(&content_json(" world")),
        event_with_extension("[DONE]"),
        Step::Write(b"0;final=1\r\nx-request-cost: 12\r\nx-other: a\r\n\r\n".to_vec()),
    ])
    .await;
    let ep = endpoint(&spec(&server.base()));
    let o = ep.send("hi", 4).await;
    assert_eq!(o.error, None);
    assert_eq!(o.content_chunk_ns.len(), 2);
    assert_eq!(o.answer_text, "Hello world");
    // the trailer was consumed: the connection is reused for the next request
    let o = ep.send("hi", 4).await;
    assert_eq!(o.error, None);
    let conns: Vec<usize> = server.requests().iter().map(|r| r.conn).collect();
    assert_eq!(conns, vec![0, 0]);
}

#[tokio::test]
async fn an_http_1_0_body_ends_when_the_connection_closes() {
    // no content-length, no chunking: the body is everything until the server closes
    let server = serve_one(vec![
        Step::Write(b"HTTP/1.0 200 OK\r\ncontent-type: text/event-stream\r\n\r\n".to_vec()),
        Step::Write(format!("data: {}\n\n", content_json("Hello")).into_bytes()),
        Step::Sleep(20),
        Step::Write(format!("data: {}\n\n", content_json(" there")).into_bytes()),
        Step::Write(b"data: [DONE]\n\n".to_vec()),
        Step::Close,
    ])
    .await;
    let ep = endpoint(&spec(&server.base()));
    let o = ep.send("hi", 4).await;
    assert_eq!(o.error, None);
    assert_eq!(o.answer_text, "Hello there");
    assert_eq!(o.content_chunk_ns.len(), 2);
    // the closed connection is not reused: the next request opens a new one
    let o = ep.send("hi", 4).await;
    assert_eq!(o.error, None);
    let conns: Vec<usize> = server.requests().iter().map(|r| r.conn).collect();
    assert_eq!(conns, vec![0, 1]);
}

#[tokio::test]
async fn an_html_page_with_a_200_is_a_bad_payload_that_says_what_came() {
    // a login page or a proxy's error page in front of the model server
    let page = "<!DOCTYPE html><html><head><title>Sign in</title></head><body>login</body></html>";
    let server = serve_one(vec![response("200 OK", "text/html; charset=utf-8", page)]).await;
    let o = endpoint(&spec(&server.base())).send("hi", 4).await;
    let e = o.error.expect("an HTML page is not an answer");
    assert_eq!(e.kind, ErrorKind::BadPayload);
    assert!(e.message.contains("text/html"), "{}", e.message);
}

/// `data` compressed with gzip, flushed so that every byte of it can be decoded now (a
/// server compressing a stream flushes each event).
fn gzip_part(enc: &mut flate2::write::GzEncoder<Vec<u8>>, data: &str) -> Vec<u8> {
    use std::io::Write;
    enc.write_all(data.as_bytes()).unwrap();
    enc.flush().unwrap();
    std::mem::take(enc.get_mut())
}

/// One HTTP chunk of raw bytes.
fn raw_chunk(data: &[u8]) -> Step {
    let mut c = format!("{:x}\r\n", data.len()).into_bytes();
    c.extend_from_slice(data);
    c.extend_from_slice(b"\r\n");
    Step::Write(c)
}

#[tokio::test]
async fn a_gzip_stream_nobody_asked_for_is_decoded_and_timed_as_it_arrives() {
    // rightsize asks for no compression (its timing is of the bytes as they arrive); a server
    // or proxy that gzips anyway is decoded piece by piece, each event at its own read
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    let first = gzip_part(&mut enc, &format!("data: {}\n\n", content_json("Hello")));
    let second = gzip_part(&mut enc, &format!("data: {}\n\n", content_json(" world")));
    let mut last = gzip_part(&mut enc, "data: [DONE]\n\n");
    last.extend(enc.finish().unwrap());
    let server = serve_one(vec![
        Step::Write(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-encoding: gzip\r\ntransfer-encoding: chunked\r\n\r\n".to_vec(),
        ),
        raw_chunk(&first),
        Step::Sleep(200),
        raw_chunk(&second),
        raw_chunk(&last),
        end(),
    ])
    .await;
    let o = endpoint(&spec(&server.base())).send("hi", 4).await;
    assert_eq!(o.error, None);
    assert_eq!(o.answer_text, "Hello world");
    assert_eq!(o.content_chunk_ns.len(), 2);
    let gap = ms(o.content_chunk_ns[0], o.content_chunk_ns[1]);
    // decoded when its piece came, not when the next one did (a stall of this machine can
    // delay the first read, never bring the second one forward)
    assert!(
        gap >= 100.0,
        "the second token was read {gap} ms after the first"
    );
    // and the request said it takes the body as it is
    let req = &server.requests()[0];
    assert_eq!(req.header("accept-encoding").as_deref(), Some("identity"));
}

#[tokio::test]
async fn a_body_in_a_coding_not_decoded_is_a_bad_payload_that_says_so() {
    let server = serve(|_, n, _| {
        let head = if n == 0 {
            "content-encoding: br"
        } else {
            "content-encoding: gzip"
        };
        let mut r = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n{head}\r\ncontent-length: 10\r\n\r\n"
        )
        .into_bytes();
        // gzip's magic bytes, then nothing a decoder can use
        r.extend_from_slice(&[0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff]);
        vec![Step::Write(r)]
    })
    .await;
    let mut s = spec(&server.base());
    s.stream = false;
    let ep = endpoint(&s);
    let e = ep.send("hi", 4).await.error.expect("brotli is not decoded");
    assert_eq!(e.kind, ErrorKind::BadPayload);
    assert!(e.message.contains("content-encoding: br"), "{}", e.message);
    // a body that says gzip and is not: its reading fails, saying why
    let e = ep.send("hi", 4).await.error.expect("a broken gzip body");
    assert_eq!(e.kind, ErrorKind::BrokenStream);
    assert!(e.message.contains("does not decode"), "{}", e.message);
}

#[tokio::test]
async fn a_20_mib_stream_line_is_a_bad_payload_not_a_memory_blowup() {
    // one SSE line of 20 MiB without a newline, in 64 KiB chunks
    let piece = "x".repeat(64 * 1024);
    let mut steps = vec![sse_head(), chunk("data: ")];
    for _ in 0..(20 * 16) {
        steps.push(chunk(&piece));
    }
    steps.push(chunk("\n\n"));
    steps.push(end());
    let server = serve_one(steps).await;
    let o = endpoint(&spec(&server.base())).send("hi", 4).await;
    let e = o.error.expect("an endless line is refused");
    assert_eq!(e.kind, ErrorKind::BadPayload);
    assert!(e.message.contains("MiB"), "{}", e.message);
}

use crate::support::common;

/// A sweep of two requests to `http://model.invalid:8000/v1` with these proxy variables.
fn sweep_via(env: &[(&str, String)]) -> std::process::Output {
    let out = common::tmpdir("via-proxy");
    let mut cmd = common::bin();
    cmd.args(["sweep", "--endpoint", "http://model.invalid:8000/v1"])
        .args([
            "--model",
            "m",
            "-c",
            "1",
            "-n",
            "2",
            "--no-calibrate",
            "--no-tui",
        ])
        .arg("--out")
        .arg(&out);
    for v in [
        "http_proxy",
        "HTTP_PROXY",
        "all_proxy",
        "ALL_PROXY",
        "no_proxy",
        "NO_PROXY",
    ] {
        cmd.env_remove(v);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_proxy_environment_is_honoured() {
    // the scripted server is the proxy: every request reaches it in absolute form
    let proxy = serve(|_, _, req| {
        if req.method == "GET" {
            vec![response("404 Not Found", "application/json", "{}")]
        } else {
            good_stream()
        }
    })
    .await;
    let via = format!("http://carol:s3cret@{}", proxy.addr);
    let env = vec![("HTTP_PROXY", via.clone())];
    let o = tokio::task::spawn_blocking(move || sweep_via(&env))
        .await
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", common::stderr(&o));
    let got = proxy.requests();
    let posts: Vec<_> = got.iter().filter(|r| r.method == "POST").collect();
    assert!(posts.len() >= 3, "pre-flight and two requests: {got:?}");
    for r in &got {
        // the API, and the server telemetry's scrape of /metrics when it starts before the
        // short run ends (it goes through the proxy too)
        assert!(
            r.path.starts_with("http://model.invalid:8000/v1/")
                || r.path == "http://model.invalid:8000/metrics",
            "{}",
            r.path
        );
        assert_eq!(r.header("host").as_deref(), Some("model.invalid:8000"));
        assert_eq!(
            r.header("proxy-authorization").as_deref(),
            Some("Basic Y2Fyb2w6czNjcmV0"),
            "carol:s3cret"
        );
    }
    // the proxy's password is nowhere in what the run printed
    assert!(!common::stdout(&o).contains("s3cret") && !common::stderr(&o).contains("s3cret"));

    // no_proxy naming the host: straight to model.invalid, which does not resolve
    let seen = proxy.requests().len();
    let env = vec![
        ("http_proxy", via),
        ("no_proxy", "localhost,.invalid".to_string()),
    ];
    let o = tokio::task::spawn_blocking(move || sweep_via(&env))
        .await
        .unwrap();
    assert_ne!(o.status.code(), Some(0));
    assert!(
        common::stderr(&o).contains("model.invalid"),
        "{}",
        common::stderr(&o)
    );
    assert_eq!(proxy.requests().len(), seen, "bypassed the proxy");
}

/// An open-file limit (soft and hard) of 64 for the child: it cannot raise it for 250 streams.
#[cfg(unix)]
fn low_nofile(cmd: &mut std::process::Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: setrlimit is async-signal-safe and only touches the child about to exec.
    unsafe {
        cmd.pre_exec(|| {
            let lim = libc::rlimit {
                rlim_cur: 64,
                rlim_max: 64,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &lim) == 0 {
                Ok(())
            } else {
                Err(std::io::Error::last_os_error())
            }
        });
    }
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_open_file_limit_too_low_stops_before_any_load() {
    let server = serve(|_, _, _| good_stream()).await;
    let out = common::tmpdir("low-nofile");
    let mut cmd = common::bin();
    cmd.args(["sweep", "--endpoint", &server.base(), "--model", "m"])
        .args([
            "-c",
            "250",
            "-n",
            "500",
            "--no-calibrate",
            "--no-tui",
            "--out",
        ])
        .arg(&out);
    low_nofile(&mut cmd);
    let o = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    let err = common::stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("the open-file limit is 64") && err.contains("ulimit -n"),
        "{err}"
    );
    assert!(server.requests().is_empty(), "no request before the check");
}
