//! A tiny scripted HTTP/1.1 server for the endpoint tests: it reads each request (head and
//! `Content-Length` body) and plays a canned script of raw writes, sleeps and closes, so tests
//! control every byte and every delay the client sees. It stamps each write on the client's
//! own monotonic clock (`rightsize::clock::now_ns`, the same process) just before it writes,
//! so tests compare the client's times with the server's instead of with a stopwatch, and it
//! can wait for the client (a chunk counted, every request received) before its next step, so
//! an order of events is decided by the script, not by the machine's load.

#![allow(dead_code)]

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rightsize::endpoint::{Api, EndpointSpec};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// One step of a response script.
#[derive(Debug, Clone)]
pub enum Step {
    /// Write these bytes (and flush).
    Write(Vec<u8>),
    /// Wait this many milliseconds.
    Sleep(u64),
    /// Close the connection now (mid-body if the response is not finished).
    Close,
    /// Wait until the counter (the one given to `Endpoint::send_counting`, which the stream
    /// reader bumps as it reads each content chunk) reaches this value.
    WaitCount(Arc<AtomicU64>, u64),
    /// Wait until the server has received this many requests, on any connections.
    WaitRequests(usize),
}

/// How long a `Wait*` step waits at most: a bound for a broken client (whose request then
/// fails its own timeout), not a measurement.
const WAIT_BOUND: Duration = Duration::from_secs(10);

/// Polls `ready` every millisecond until it holds or [`WAIT_BOUND`] passes.
async fn wait_until(ready: impl Fn() -> bool) {
    let deadline = tokio::time::Instant::now() + WAIT_BOUND;
    while !ready() && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
}

/// A request as the server received it.
#[derive(Debug, Clone)]
pub struct Received {
    /// Connection number (0-based, in accept order).
    pub conn: usize,
    /// `GET /v1/models` etc.
    pub method: String,
    pub path: String,
    /// The raw head, lowercased header names included as sent.
    pub head: String,
    pub body: Vec<u8>,
}

impl Received {
    /// The value of header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<String> {
        self.head.lines().skip(1).find_map(|l| {
            let (n, v) = l.split_once(':')?;
            n.trim()
                .eq_ignore_ascii_case(name)
                .then(|| v.trim().to_string())
        })
    }
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).expect("request body is JSON")
    }
}

/// Picks the script for a request: (connection number, request number on that connection,
/// the request).
pub type Router = dyn Fn(usize, usize, &Received) -> Vec<Step> + Send + Sync;

/// A running test server.
pub struct Server {
    pub addr: SocketAddr,
    pub received: Arc<Mutex<Vec<Received>>>,
    /// (connection, request number on it, `now_ns` just before the write) of every `Write`.
    pub writes: Arc<Mutex<Vec<(usize, usize, u64)>>>,
}

impl Server {
    /// `http://127.0.0.1:port/v1`
    pub fn base(&self) -> String {
        format!("http://{}/v1", self.addr)
    }
    pub fn requests(&self) -> Vec<Received> {
        self.received.lock().unwrap().clone()
    }
    /// When each `Write` step of request `n` on connection `conn` began, in script order (on
    /// the client's monotonic clock).
    pub fn written(&self, conn: usize, n: usize) -> Vec<u64> {
        self.writes
            .lock()
            .unwrap()
            .iter()
            .filter(|w| w.0 == conn && w.1 == n)
            .map(|w| w.2)
            .collect()
    }
}

/// Starts a server on `127.0.0.1:0` that answers with `router`'s scripts.
pub async fn serve(
    router: impl Fn(usize, usize, &Received) -> Vec<Step> + Send + Sync + 'static,
) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let received = Arc::new(Mutex::new(Vec::new()));
    let writes = Arc::new(Mutex::new(Vec::new()));
    let router: Arc<Router> = Arc::new(router);
    let (rec, wrote) = (received.clone(), writes.clone());
    tokio::spawn(async move {
        let mut conn = 0;
        while let Ok((stream, _)) = listener.accept().await {
            let (router, rec, wrote) = (router.clone(), rec.clone(), wrote.clone());
            tokio::spawn(handle(stream, conn, router, rec, wrote));
            conn += 1;
        }
    });
    Server {
        addr,
        received,
        writes,
    }
}

/// Starts a server that answers every request with the same script.
pub async fn serve_one(steps: Vec<Step>) -> Server {
    serve(move |_, _, _| steps.clone()).await
}

async fn handle(
    mut stream: TcpStream,
    conn: usize,
    router: Arc<Router>,
    rec: Arc<Mutex<Vec<Received>>>,
    wrote: Arc<Mutex<Vec<(usize, usize, u64)>>>,
) {
    stream.set_nodelay(true).unwrap();
    let mut buf: Vec<u8> = Vec::new();
    for n in 0.. {
        // read the head
        let head_end = loop {
            if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break i + 4;
            }
            if buf.first() == Some(&0x16) {
                // a TLS ClientHello: answer like a plain HTTP server does
                let _ = stream
                    .write_all(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n")
                    .await;
                return;
            }
            let mut tmp = [0u8; 4096];
            match stream.read(&mut tmp).await {
                Ok(0) | Err(_) => return,
                Ok(k) => buf.extend_from_slice(&tmp[..k]),
            }
        };
        let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
        let len: usize = head
            .lines()
            .find_map(|l| {
                let (n, v) = l.split_once(':')?;
                n.eq_ignore_ascii_case("content-length")
                    .then(|| v.trim().parse().ok())?
            })
            .unwrap_or(0);
        while buf.len() < head_end + len {
            let mut tmp = [0u8; 4096];
            match stream.read(&mut tmp).await {
                Ok(0) | Err(_) => return,
                Ok(k) => buf.extend_from_slice(&tmp[..k]),
            }
        }
        let body = buf[head_end..head_end + len].to_vec();
        buf.drain(..head_end + len);
        let mut first = head.lines().next().unwrap_or("").split_whitespace();
        let req = Received {
            conn,
            method: first.next().unwrap_or("").to_string(),
            path: first.next().unwrap_or("").to_string(),
            head,
            body,
        };
        let steps = router(conn, n, &req);
        rec.lock().unwrap().push(req);
        for step in steps {
            match step {
                Step::Write(bytes) => {
                    wrote
                        .lock()
                        .unwrap()
                        .push((conn, n, rightsize::clock::now_ns()));
                    if stream.write_all(&bytes).await.is_err() {
                        return;
                    }
                    let _ = stream.flush().await;
                }
                Step::Sleep(ms) => tokio::time::sleep(Duration::from_millis(ms)).await,
                Step::Close => return,
                Step::WaitCount(counter, at) => {
                    wait_until(|| counter.load(Ordering::Relaxed) >= at).await
                }
                Step::WaitRequests(k) => wait_until(|| rec.lock().unwrap().len() >= k).await,
            }
        }
    }
}

/// Head of a chunked SSE response.
pub fn sse_head() -> Step {
    Step::Write(
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\nserver: test-server/1.0\r\n\r\n"
            .to_vec(),
    )
}

/// One HTTP chunk carrying `data`.
pub fn chunk(data: &str) -> Step {
    Step::Write(format!("{:x}\r\n{}\r\n", data.len(), data).into_bytes())
}

/// One HTTP chunk carrying the SSE event `data: {json}` (CRLF line ends).
pub fn event(json: &str) -> Step {
    chunk(&format!("data: {json}\r\n\r\n"))
}

/// A chat content chunk.
pub fn content(text: &str) -> Step {
    event(&format!(
        r#"{{"id":"c1","object":"chat.completion.chunk","choices":[{{"index":0,"delta":{{"content":{}}},"finish_reason":null}}]}}"#,
        serde_json::to_string(text).unwrap()
    ))
}

/// The usage chunk with empty choices.
pub fn usage(prompt: u32, completion: u32) -> Step {
    event(&format!(
        r#"{{"id":"c1","choices":[],"usage":{{"prompt_tokens":{prompt},"completion_tokens":{completion},"total_tokens":{}}}}}"#,
        prompt + completion
    ))
}

/// `data: [DONE]`.
pub fn done() -> Step {
    chunk("data: [DONE]\r\n\r\n")
}

/// The last (empty) chunk of a chunked body.
pub fn end() -> Step {
    Step::Write(b"0\r\n\r\n".to_vec())
}

/// A complete response with a `Content-Length` body.
pub fn response(status: &str, content_type: &str, body: &str) -> Step {
    Step::Write(
        format!(
            "HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\nserver: test-server/1.0\r\n\r\n{body}",
            body.len()
        )
        .into_bytes(),
    )
}

/// A well-behaved streaming chat answer: "Hello world", usage 5 in / 2 out.
pub fn good_stream() -> Vec<Step> {
    vec![
        sse_head(),
        content("Hello"),
        content(" world"),
        usage(5, 2),
        done(),
        end(),
    ]
}

/// A spec for a streaming chat endpoint at `base`.
pub fn spec(base: &str) -> EndpointSpec {
    EndpointSpec {
        name: "test".into(),
        base_url: base.into(),
        model: "test-model".into(),
        api: Api::Chat,
        stream: true,
        exact_output_length: false,
        headers: vec![],
        api_key_env: None,
        sim_timing: false,
        sagemaker: None,
    }
}

/// Milliseconds between two monotonic nanosecond times.
pub fn ms(from_ns: u64, to_ns: u64) -> f64 {
    (to_ns as f64 - from_ns as f64) / 1e6
}
