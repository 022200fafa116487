//! Reading a response body on one of our connections: its pieces as hyper hands them over,
//! each with the time of the read that brought it ([`super::connection::Conn::next_data`]),
//! decompressed when a server compressed it anyway, then read as an error, a stream (the
//! stream reader, `crate::endpoint::stream`) or a whole answer. Waiting for bytes is an
//! `await`, never a poll loop.

use bytes::Bytes;

use hyper::body::Incoming;

use super::connection::Conn;
use crate::clock::now_ns;
use crate::endpoint::failure::describe;
use crate::endpoint::openai;
use crate::endpoint::probe::{Probe, PROBE_HEAD_BYTES};
use crate::endpoint::stream::{parse_whole, BodySource, Dialect, StreamReader};
use crate::record::{ErrorKind, ExchangeOutcome, RequestError};

/// Largest response body read (non-streaming answers and error bodies), in bytes.
const MAX_BODY_BYTES: usize = 64 * 1024 * 1024;
/// Largest error body read for a message, in bytes.
const MAX_ERROR_BODY_BYTES: usize = 64 * 1024;

/// Where the body bytes come from: a response on one of our connections, read in this task,
/// decompressed when the server compressed it anyway.
pub(crate) struct Body<'a> {
    source: Source<'a>,
    decoder: &'a mut Decoder,
    /// The bytes handed out last.
    current: Bytes,
}

/// The body's pieces before decoding.
enum Source<'a> {
    /// A response's body frames, each with the time of the read that brought it.
    Conn {
        conn: &'a mut Conn,
        body: &'a mut Incoming,
    },
    /// Pieces given whole, piece `i` (from 1) stamped `i` ([`replay`]).
    Pieces {
        pieces: std::slice::Iter<'a, Bytes>,
        n: u64,
    },
}

impl<'a> Body<'a> {
    pub fn new(conn: &'a mut Conn, body: &'a mut Incoming, decoder: &'a mut Decoder) -> Body<'a> {
        Body {
            source: Source::Conn { conn, body },
            decoder,
            current: Bytes::new(),
        }
    }
}

impl BodySource for Body<'_> {
    /// The next bytes and the time they were read; `None` at the end of the body.
    async fn next(&mut self) -> Result<Option<(&[u8], u64)>, String> {
        // the bytes handed out last share hyper's read buffer: let go of them first, so the
        // next read refills that buffer instead of allocating another
        self.current = Bytes::new();
        loop {
            let got = match &mut self.source {
                Source::Conn { conn, body } => {
                    conn.next_data(body).await.map_err(|e| body_failed(&e))?
                }
                Source::Pieces { pieces, n } => pieces.next().map(|b| {
                    *n += 1;
                    (b.clone(), *n)
                }),
            };
            let Some((bytes, t)) = got else {
                // what a compressed body still held at its end
                let rest = self.decoder.finish()?;
                if rest.is_empty() {
                    return Ok(None);
                }
                self.current = rest;
                return Ok(Some((&self.current[..], now_ns())));
            };
            self.current = self.decoder.decode(bytes)?;
            if !self.current.is_empty() {
                return Ok(Some((&self.current[..], t)));
            }
        }
    }
}

/// Why reading a body failed, in words: a connection that ended early says so first.
fn body_failed(e: &hyper::Error) -> String {
    use std::error::Error as _;
    let text = describe(e);
    let mut cause = e.source();
    let mut ended_early = e.is_incomplete_message();
    while let Some(c) = cause {
        ended_early |= c
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::UnexpectedEof);
        cause = c.source();
    }
    if ended_early {
        format!("the connection closed before the end of the body ({text})")
    } else {
        text
    }
}

/// The body's content coding: none, or gzip / deflate, decoded as the bytes arrive (each
/// decoded piece keeps the time of the read that brought it).
pub(crate) enum Decoder {
    Identity,
    Gzip(Box<flate2::write::GzDecoder<Vec<u8>>>),
    Deflate(Box<flate2::write::ZlibDecoder<Vec<u8>>>),
    /// A coding this client does not decode: the answer is refused ([`unreadable`]).
    Unknown(String),
}

impl Decoder {
    /// The decoder for a `content-encoding` header's value.
    pub fn for_encoding(encoding: Option<&str>) -> Decoder {
        let enc = encoding.map(str::trim).unwrap_or_default();
        if enc.is_empty() || enc.eq_ignore_ascii_case("identity") {
            Decoder::Identity
        } else if enc.eq_ignore_ascii_case("gzip") || enc.eq_ignore_ascii_case("x-gzip") {
            Decoder::Gzip(Box::new(flate2::write::GzDecoder::new(Vec::new())))
        } else if enc.eq_ignore_ascii_case("deflate") {
            Decoder::Deflate(Box::new(flate2::write::ZlibDecoder::new(Vec::new())))
        } else {
            Decoder::Unknown(enc.to_string())
        }
    }

    /// `bytes` decoded: as much as they complete (possibly nothing yet).
    fn decode(&mut self, bytes: Bytes) -> Result<Bytes, String> {
        use std::io::Write;
        let bad = |e: std::io::Error| format!("the compressed body does not decode: {e}");
        match self {
            Decoder::Identity | Decoder::Unknown(_) => Ok(bytes),
            Decoder::Gzip(d) => {
                d.write_all(&bytes).map_err(bad)?;
                d.flush().map_err(bad)?;
                Ok(Bytes::from(std::mem::take(d.get_mut())))
            }
            Decoder::Deflate(d) => {
                d.write_all(&bytes).map_err(bad)?;
                d.flush().map_err(bad)?;
                Ok(Bytes::from(std::mem::take(d.get_mut())))
            }
        }
    }

    /// What the decoder still holds at the end of the body.
    fn finish(&mut self) -> Result<Bytes, String> {
        let bad = |e: std::io::Error| format!("the compressed body does not decode: {e}");
        match self {
            Decoder::Identity | Decoder::Unknown(_) => Ok(Bytes::new()),
            Decoder::Gzip(d) => {
                d.try_finish().map_err(bad)?;
                Ok(Bytes::from(std::mem::take(d.get_mut())))
            }
            Decoder::Deflate(d) => {
                d.try_finish().map_err(bad)?;
                Ok(Bytes::from(std::mem::take(d.get_mut())))
            }
        }
    }
}

/// Reads a non-2xx answer: `HttpStatus` with the body's `error.message`, or the status and
/// the start of the body.
pub(crate) async fn read_error(
    resp: &mut Body<'_>,
    status: u16,
    out: &mut ExchangeOutcome,
    probe: Option<&mut Probe>,
) {
    let body = read_limited(resp, MAX_ERROR_BODY_BYTES).await;
    if let Some(p) = probe {
        p.head = body.iter().take(PROBE_HEAD_BYTES).copied().collect();
    }
    let message = openai::error_message(&body).unwrap_or_else(|| {
        let reason = http::StatusCode::from_u16(status)
            .ok()
            .and_then(|s| s.canonical_reason())
            .unwrap_or("error");
        let text = String::from_utf8_lossy(&body);
        let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
        if text.is_empty() {
            format!("HTTP {status} {reason}")
        } else {
            format!(
                "HTTP {status} {reason}: {}",
                openai::truncate_chars(&text, 120)
            )
        }
    });
    out.error = Some(RequestError {
        kind: ErrorKind::HttpStatus,
        status: Some(status),
        message,
    });
}

/// Why a 2xx body cannot be an answer whatever it holds, from its head: compressed in a coding
/// this client does not decode (it asks for none, and decodes gzip and deflate when a server
/// or a proxy compresses anyway), or a web page (a login page or a proxy's page in front of
/// the model server).
pub(crate) fn unreadable(content_type: Option<&str>, decoder: &Decoder) -> Option<RequestError> {
    let bad = |message: String| RequestError {
        kind: ErrorKind::BadPayload,
        status: None,
        message,
    };
    if let Decoder::Unknown(enc) = decoder {
        return Some(bad(format!(
            "the response is compressed (content-encoding: {enc}) although the request asked \
             for none, in a coding rightsize does not decode (it decodes gzip and deflate): turn \
             response compression off on the server or the proxy in front of it"
        )));
    }
    let ct = content_type.unwrap_or_default();
    if ct.to_ascii_lowercase().contains("text/html") {
        return Some(bad(format!(
            "the server answered with a web page ({ct}), not a model's answer: is a login page \
             or a proxy in front of the model server?"
        )));
    }
    None
}

/// Reads a 2xx answer: refused when [`unreadable`] says so (keeping the body's first bytes for
/// the pre-flight's message), else streamed or whole.
pub(crate) async fn read_answer(
    resp: &mut Body<'_>,
    stream: bool,
    refused: Option<RequestError>,
    out: &mut ExchangeOutcome,
    probe: Option<&mut Probe>,
) {
    if let Some(err) = refused {
        let body = read_limited(resp, PROBE_HEAD_BYTES).await;
        if let Some(p) = probe {
            p.head = body;
        }
        out.error = Some(err);
    } else if stream {
        read_stream(resp, out, probe).await;
    } else {
        read_whole(resp, out, probe).await;
    }
}

/// Reads up to `limit` body bytes, ignoring read errors (used for error bodies).
async fn read_limited(resp: &mut Body<'_>, limit: usize) -> Vec<u8> {
    let mut body = Vec::new();
    while let Ok(Some((b, _))) = resp.next().await {
        let room = limit.saturating_sub(body.len());
        body.extend_from_slice(&b[..b.len().min(room)]);
        if body.len() >= limit {
            break;
        }
    }
    body
}

pub(crate) async fn read_stream(
    resp: &mut Body<'_>,
    out: &mut ExchangeOutcome,
    mut probe: Option<&mut Probe>,
) {
    let mut reader = StreamReader::default();
    reader.read(resp, out, probe.as_deref_mut(), false).await;
    reader.finish(out, probe);
}

pub(crate) async fn read_whole(
    resp: &mut Body<'_>,
    out: &mut ExchangeOutcome,
    mut probe: Option<&mut Probe>,
) {
    let mut body: Vec<u8> = Vec::new();
    let mut t = now_ns();
    loop {
        match resp.next().await {
            Ok(Some((bytes, read_ns))) => {
                t = read_ns;
                if let Some(p) = probe.as_deref_mut() {
                    p.keep_head(bytes);
                }
                if let Err(e) = append_whole(&mut body, bytes) {
                    out.error = Some(e);
                    return;
                }
            }
            Ok(None) => {
                if body.is_empty() {
                    t = now_ns();
                }
                break;
            }
            Err(e) => {
                out.error = Some(RequestError {
                    kind: ErrorKind::BrokenStream,
                    status: None,
                    message: format!("reading the body failed: {e}"),
                });
                return;
            }
        }
    }
    parse_whole(&Dialect::OpenAi, &body, t, out, probe);
}

/// The next `bytes` of a whole body, or `BadPayload` past [`MAX_BODY_BYTES`]; the buffer grows
/// to the cap at most (not to nearly twice it, as doubling would).
fn append_whole(body: &mut Vec<u8>, bytes: &[u8]) -> Result<(), RequestError> {
    if body.len() + bytes.len() > MAX_BODY_BYTES {
        return Err(RequestError {
            kind: ErrorKind::BadPayload,
            status: None,
            message: format!("the response body exceeds {MAX_BODY_BYTES} bytes"),
        });
    }
    crate::endpoint::sse::extend_within(body, bytes, MAX_BODY_BYTES);
    Ok(())
}

/// Body pieces read without a connection, for the property tests and the property benchmark
/// (benches/support/props/) only: the pieces go through the same [`Body`], [`Decoder`] and
/// [`read_answer`] (the OpenAI dialect's stream reader or whole-body cap, and the refusal of
/// an unknown coding) as a response read from a socket, piece `i` (from 1) stamped `i` in
/// place of a clock reading.
#[doc(hidden)]
pub mod replay {
    use super::*;

    /// [`super::MAX_BODY_BYTES`], for the benchmark's bound.
    pub const MAX_BODY_BYTES: usize = super::MAX_BODY_BYTES;

    thread_local! {
        /// Drives [`read_answer`], whose waits all end at once here (every piece is ready);
        /// its timer serves the grace wait after `[DONE]`.
        static RUNTIME: tokio::runtime::Runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("a current-thread runtime");
    }

    /// The pieces of a body sent with `content_encoding`, read as a response's body is,
    /// streamed (`stream`) or whole.
    pub fn read(content_encoding: Option<&str>, stream: bool, pieces: &[Bytes]) -> ExchangeOutcome {
        let mut out = ExchangeOutcome::default();
        let mut decoder = Decoder::for_encoding(content_encoding);
        let refused = unreadable(None, &decoder);
        let mut body = Body {
            source: Source::Pieces {
                pieces: pieces.iter(),
                n: 0,
            },
            decoder: &mut decoder,
            current: Bytes::new(),
        };
        RUNTIME.with(|rt| rt.block_on(read_answer(&mut body, stream, refused, &mut out, None)));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found by the property benchmark (benches/parser_props.rs, `body_cap_memory`): a whole
    /// body read in a first piece of 40 MiB and one byte, then the rest up to the 64 MiB cap,
    /// doubled its buffer to 80 MiB; it now grows to the cap at most, and one byte past the
    /// cap is refused.
    #[test]
    fn a_whole_body_is_held_within_the_cap() {
        let mut body = Vec::new();
        let first = (40 << 20) + 1;
        append_whole(&mut body, &vec![b'x'; first]).unwrap();
        append_whole(&mut body, &vec![b'x'; MAX_BODY_BYTES - first]).unwrap();
        assert_eq!(body.len(), MAX_BODY_BYTES);
        assert!(body.capacity() <= MAX_BODY_BYTES, "{}", body.capacity());
        let err = append_whole(&mut body, b"x").unwrap_err();
        assert_eq!(err.kind, ErrorKind::BadPayload);
        assert_eq!(body.len(), MAX_BODY_BYTES);
    }
}
