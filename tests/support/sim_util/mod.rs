//! A minimal HTTP/1.1 client over `tokio::net::TcpStream` for the simulator tests: one request
//! per connection (`Connection: close`), chunked bodies decoded, SSE events split.
#![allow(dead_code)]

use std::net::SocketAddr;
use std::time::Duration;

use rightsize::sim::{self, SimConfig, SimServer};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// A response as read off the wire.
#[derive(Debug, Default)]
pub struct RawResponse {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    /// The body, de-chunked.
    pub body: Vec<u8>,
    /// The body ended properly (last chunk or full content-length) before EOF.
    pub complete: bool,
    /// The read timed out (the server kept the connection open without finishing).
    pub timed_out: bool,
    /// Reading failed with an I/O error (e.g. connection reset).
    pub io_error: bool,
}

impl RawResponse {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.text()))
    }

    /// The `data:` payloads of the SSE events, in order.
    pub fn sse_data(&self) -> Vec<String> {
        self.text()
            .split("\n\n")
            .filter_map(|ev| ev.strip_prefix("data: "))
            .map(str::to_string)
            .collect()
    }

    /// The SSE events' JSON chunks, in order; the stream must end with `[DONE]`.
    pub fn chunks(&self) -> Vec<serde_json::Value> {
        let data = self.sse_data();
        assert_eq!(
            data.last().map(String::as_str),
            Some("[DONE]"),
            "{}",
            self.text()
        );
        data[..data.len() - 1]
            .iter()
            .map(|d| serde_json::from_str(d).unwrap_or_else(|e| panic!("{e}: {d}")))
            .collect()
    }
}

pub async fn start(cfg: SimConfig) -> SimServer {
    sim::start(cfg).await.expect("sim starts")
}

/// Sends one request and reads the response until EOF or `timeout`.
pub async fn request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
    timeout: Duration,
) -> RawResponse {
    let mut s = TcpStream::connect(addr).await.expect("connect");
    s.set_nodelay(true).ok();
    let mut req = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    if !body.is_empty() {
        req.push_str("Content-Type: application/json\r\n");
    }
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    req.push_str(body);
    s.write_all(req.as_bytes()).await.expect("write");
    let mut raw = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    let mut out = RawResponse::default();
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        match tokio::time::timeout_at(deadline, s.read(&mut buf)).await {
            Err(_) => {
                out.timed_out = true;
                break;
            }
            Ok(Ok(0)) => break,
            Ok(Ok(n)) => raw.extend_from_slice(&buf[..n]),
            Ok(Err(_)) => {
                out.io_error = true;
                break;
            }
        }
    }
    parse(&raw, out)
}

fn parse(raw: &[u8], mut out: RawResponse) -> RawResponse {
    let Some(end) = raw.windows(4).position(|w| w == b"\r\n\r\n") else {
        return out;
    };
    let head = String::from_utf8_lossy(&raw[..end]).into_owned();
    let mut lines = head.split("\r\n");
    out.status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    for l in lines {
        if let Some((k, v)) = l.split_once(':') {
            out.headers
                .push((k.trim().to_string(), v.trim().to_string()));
        }
    }
    let rest = &raw[end + 4..];
    if out
        .header("transfer-encoding")
        .is_some_and(|v| v.eq_ignore_ascii_case("chunked"))
    {
        let mut i = 0;
        while let Some(nl) = rest[i..].windows(2).position(|w| w == b"\r\n") {
            let size_line = String::from_utf8_lossy(&rest[i..i + nl]).into_owned();
            let Ok(size) = usize::from_str_radix(size_line.trim(), 16) else {
                break;
            };
            i += nl + 2;
            if size == 0 {
                out.complete = true;
                break;
            }
            if i + size > rest.len() {
                out.body.extend_from_slice(&rest[i..]);
                break;
            }
            out.body.extend_from_slice(&rest[i..i + size]);
            i += size + 2;
        }
    } else {
        out.body = rest.to_vec();
        let len: Option<usize> = out.header("content-length").and_then(|v| v.parse().ok());
        out.complete = len.is_none_or(|n| n == out.body.len());
    }
    out
}

/// `POST` a JSON body.
pub async fn post(addr: SocketAddr, path: &str, body: &serde_json::Value) -> RawResponse {
    post_with(addr, path, &[], body, Duration::from_secs(20)).await
}

pub async fn post_with(
    addr: SocketAddr,
    path: &str,
    headers: &[(&str, &str)],
    body: &serde_json::Value,
    timeout: Duration,
) -> RawResponse {
    request(addr, "POST", path, headers, &body.to_string(), timeout).await
}

pub async fn get(addr: SocketAddr, path: &str) -> RawResponse {
    request(addr, "GET", path, &[], "", Duration::from_secs(10)).await
}

/// A prompt of `n` one-token words, distinct per `salt`.
pub fn prompt(n: usize, salt: u64) -> String {
    let words = rightsize::workload::tokenizer::VOCAB;
    let mut x = salt.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            words[(x % words.len() as u64) as usize]
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// A streaming chat request body.
pub fn chat_body(prompt: &str, max_tokens: u32, ignore_eos: bool) -> serde_json::Value {
    serde_json::json!({
        "model": "sim-moe-30b-a3b",
        "messages": [{"role": "user", "content": prompt}],
        "max_tokens": max_tokens,
        "ignore_eos": ignore_eos,
        "stream": true,
        "stream_options": {"include_usage": true},
    })
}
