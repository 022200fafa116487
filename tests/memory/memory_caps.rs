//! Memory within the caps, by construction: against a server sending one 400 MB stream line,
//! or a 200 MB answer that is not streamed, the client's heap grows by at most the cap (16 MiB
//! a line, 64 MiB a body) plus 32 MB while it reads, and the request is a `bad_payload`.
//!
//! A counting allocator (this test binary's global allocator) keeps the peak of the bytes
//! allocated; each case resets it once the endpoint is built and reads it after the answer.
//! The server is in this process too: it writes one 1 MiB piece again and again, allocating
//! nothing while it writes, until the client stops reading.

use rightsize::endpoint::{Api, Endpoint, EndpointSpec};
use rightsize::record::ErrorKind;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// The system allocator, counting the bytes held now and the most held since the last reset.
struct Counting;

static HELD: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let now = HELD.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        HELD.fetch_sub(layout.size(), Ordering::Relaxed);
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            if new_size > layout.size() {
                let now = HELD.fetch_add(new_size - layout.size(), Ordering::Relaxed) + new_size
                    - layout.size();
                PEAK.fetch_max(now, Ordering::Relaxed);
            } else {
                HELD.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
            }
        }
        p
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

const MB: usize = 1_000_000;
const MIB: usize = 1 << 20;
/// What the client may hold beyond the cap while it reads.
const SLACK: usize = 32 * MB;

/// Serves one connection: reads the request head and body, writes `head`, then `total`
/// bytes of `x` (in 1 MiB pieces of one buffer) and `tail`, or less when the client goes.
async fn serve(listener: TcpListener, head: String, total: usize, tail: &'static [u8]) {
    let (mut sock, _) = listener.accept().await.unwrap();
    let mut got = Vec::with_capacity(64 * 1024);
    let mut buf = [0u8; 16 * 1024];
    // the request: its head and a Content-Length body
    loop {
        let n = sock.read(&mut buf).await.unwrap();
        if n == 0 {
            return;
        }
        got.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&got).to_ascii_lowercase();
        if let Some(end) = text.find("\r\n\r\n") {
            let length = text[..end]
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse::<usize>().ok())
                .unwrap_or(0);
            if got.len() >= end + 4 + length {
                break;
            }
        }
    }
    if sock.write_all(head.as_bytes()).await.is_err() {
        return;
    }
    let piece = vec![b'x'; MIB];
    let mut sent = 0;
    while sent < total {
        let n = piece.len().min(total - sent);
        if sock.write_all(&piece[..n]).await.is_err() {
            return;
        }
        sent += n;
    }
    let _ = sock.write_all(tail).await;
}

fn spec(base: String, stream: bool) -> EndpointSpec {
    EndpointSpec {
        name: "huge".into(),
        base_url: base,
        model: "m".into(),
        api: Api::Chat,
        stream,
        exact_output_length: false,
        headers: vec![],
        api_key_env: None,
        sim_timing: false,
        sagemaker: None,
    }
}

/// One request against a server answering `head` and `total` bytes of `x`: the error kind
/// and the peak heap growth while it ran.
async fn peak_of(
    stream: bool,
    head: String,
    total: usize,
    tail: &'static [u8],
) -> (Option<ErrorKind>, usize) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}/v1", listener.local_addr().unwrap());
    let server = tokio::spawn(serve(listener, head, total, tail));
    let ep = Endpoint::new(&spec(base, stream), 1, Duration::from_secs(60)).unwrap();
    let before = HELD.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let out = ep.send("hi", 4).await;
    let peak = PEAK.load(Ordering::Relaxed) - before;
    drop(ep);
    let _ = server.await;
    let kind = out.error.map(|e| e.kind);
    (kind, peak)
}

#[tokio::test]
async fn a_400_mb_line_and_a_200_mb_body_stay_within_their_caps() {
    let cases = [
        (
            // one SSE line of 400 MB, chunked by the server's writes (read to close)
            "a 400 MB line",
            true,
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n\
             data: "
                .to_string(),
            400 * MB,
            &b"\n\n"[..],
            16 * MIB,
        ),
        (
            // a 200 MB answer with its Content-Length, not streamed
            "a 200 MB body",
            false,
            format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
                200 * MB
            ),
            200 * MB,
            &b""[..],
            64 * MIB,
        ),
    ];
    for (what, stream, head, total, tail, cap) in cases {
        let (kind, peak) = peak_of(stream, head, total, tail).await;
        println!("{what}: peak heap growth {:.1} MB", peak as f64 / 1e6);
        assert_eq!(kind, Some(ErrorKind::BadPayload), "{what}");
        assert!(
            peak < cap + SLACK,
            "{what} grew the heap by {:.1} MB (cap {} MiB + 32 MB)",
            peak as f64 / 1e6,
            cap / MIB
        );
    }
}
