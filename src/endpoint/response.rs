//! Reading a response body, streamed or whole, with one clock read per network read: the
//! moment a read returns bytes, [`now_ns`] is read in this task and every event parsed from
//! those bytes gets that time. Waiting for bytes is an `await`, never a poll loop.

use std::time::Duration;

use bytes::Bytes;

use hyper::body::Incoming;

use super::conn::Conn;
use super::openai::{self, ChunkError, Usage};
use super::sse::{Event, Framing, StreamParser, MAX_LINE_BYTES};
use super::transport::{error_text, Transport};
use crate::clock::now_ns;
use crate::record::{ErrorKind, ExchangeOutcome, RequestError, TokenSource};

/// Largest response body read (non-streaming answers and error bodies), in bytes.
const MAX_BODY_BYTES: usize = 64 * 1024 * 1024;
/// Largest error body read for a message, in bytes.
const MAX_ERROR_BODY_BYTES: usize = 64 * 1024;
/// How long to wait for the end of the body after `[DONE]` before dropping the connection.
const AFTER_DONE_GRACE: Duration = Duration::from_secs(1);
/// Body bytes kept for the pre-flight diagnosis.
const PROBE_HEAD_BYTES: usize = 2048;

/// What the pre-flight check needs beyond an [`ExchangeOutcome`].
#[derive(Debug, Default)]
pub(crate) struct Probe {
    pub status: Option<u16>,
    pub content_type: Option<String>,
    pub server_header: Option<String>,
    /// SageMaker: the production variant that answered (`x-amzn-invoked-production-variant`).
    #[cfg_attr(not(feature = "sagemaker"), allow(dead_code))]
    pub production_variant: Option<String>,
    /// The first bytes of the body.
    pub head: Vec<u8>,
    /// Data events (SSE events or JSON lines) received.
    pub data_events: u64,
    /// Chunks with `choices` or `usage`.
    pub openai_chunks: u64,
    pub transport: Option<Transport>,
    /// Error text of the transport failure (no URL, no headers).
    pub transport_detail: Option<String>,
    pub location: Option<String>,
    /// How the streamed body was framed.
    pub framing: Option<Framing>,
}

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
    let text = error_text(e);
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
        let reason = reqwest::StatusCode::from_u16(status)
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

fn keep_head(probe: &mut Option<&mut Probe>, bytes: &[u8]) {
    if let Some(p) = probe.as_deref_mut() {
        let room = PROBE_HEAD_BYTES.saturating_sub(p.head.len());
        p.head.extend_from_slice(&bytes[..bytes.len().min(room)]);
    }
}

/// Which JSON the answer's events carry.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) enum Dialect {
    /// OpenAI chat or completions chunks.
    #[default]
    OpenAi,
    /// Hugging Face TGI tokens ([`super::tgi`]): complete at the chunk with `generated_text`.
    #[cfg_attr(not(feature = "sagemaker"), allow(dead_code))]
    Tgi,
    /// A custom format's pointers ([`super::custom_payload`]): complete when the body ends.
    #[cfg_attr(not(feature = "sagemaker"), allow(dead_code))]
    Custom(std::sync::Arc<super::custom_payload::CustomPayload>),
}

impl Dialect {
    fn parse_event<'a>(&self, data: &'a [u8]) -> Result<openai::Chunk<'a>, ChunkError> {
        match self {
            Dialect::OpenAi => openai::parse_chunk(data),
            Dialect::Tgi => super::tgi::parse_stream_chunk(data),
            Dialect::Custom(c) => c.parse(data),
        }
    }

    fn parse_whole<'a>(&self, data: &'a [u8]) -> Result<openai::Chunk<'a>, ChunkError> {
        match self {
            Dialect::OpenAi => openai::parse_chunk(data),
            Dialect::Tgi => super::tgi::parse_whole(data),
            Dialect::Custom(c) => c.parse(data),
        }
    }

    /// A stream that ended before what this dialect calls its end.
    fn cut_short(&self) -> &'static str {
        match self {
            Dialect::OpenAi => "the stream ended without [DONE]",
            Dialect::Tgi => "the stream ended without its generated_text",
            Dialect::Custom(_) => "the stream ended without an event",
        }
    }

    /// A whole answer without what this dialect reads.
    fn nothing_in_the_answer(&self) -> String {
        match self {
            Dialect::OpenAi => "the response has no choices".to_string(),
            Dialect::Tgi => "the response has no generated_text".to_string(),
            Dialect::Custom(c) => format!(
                "the response has nothing at the text pointer {}{}",
                c.text_pointer,
                c.token_count_pointer
                    .as_deref()
                    .map(|p| format!(" or the token count pointer {p}"))
                    .unwrap_or_default()
            ),
        }
    }
}

/// Per-stream state while events are parsed.
#[derive(Default)]
struct StreamState {
    dialect: Dialect,
    content: String,
    reasoning: String,
    usage: Option<Usage>,
    finished: bool,
    openai_chunks: u64,
    /// Events now come from the end of the body (an unterminated last line).
    at_end: bool,
}

impl StreamState {
    fn on_event(&mut self, out: &mut ExchangeOutcome, event: Event<'_>, t: u64) {
        if out.error.is_some() {
            return;
        }
        let Event::Data(data) = event else {
            return;
        };
        match self.dialect.parse_event(data) {
            Ok(c) => {
                self.openai_chunks += u64::from(c.openai_shaped);
                self.finished |= c.finished;
                if c.usage.is_some() {
                    self.usage = c.usage;
                }
                if c.content.is_some() {
                    out.first_output_ns.get_or_insert(t);
                }
                if c.has_text() {
                    if let Some(live) = &out.live_chunks {
                        live.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    }
                    out.first_token_ns.get_or_insert(t);
                    out.last_token_ns = Some(t);
                    out.content_chunk_ns.push(t);
                    if let Some(s) = c.sim_sent_ns {
                        out.server_first_sent_ns.get_or_insert(s);
                        out.server_last_sent_ns = Some(s);
                    }
                    if let Some(text) = &c.content {
                        self.content.push_str(text);
                    }
                    if let Some(text) = &c.reasoning {
                        self.reasoning.push_str(text);
                    }
                }
            }
            Err(ChunkError::InStream(message)) => {
                out.error = Some(RequestError {
                    kind: ErrorKind::InStreamError,
                    status: None,
                    message,
                })
            }
            Err(ChunkError::BadPayload(m)) if self.at_end => {
                out.error = Some(RequestError {
                    kind: ErrorKind::BrokenStream,
                    status: None,
                    message: format!("the stream ended inside a chunk ({m})"),
                })
            }
            Err(ChunkError::BadPayload(m)) => {
                out.error = Some(RequestError {
                    kind: ErrorKind::BadPayload,
                    status: None,
                    message: format!("a chunk is not valid JSON: {m}"),
                })
            }
        }
    }

    /// The server's token counts into `out`, and the answer and reasoning texts; where the
    /// server gave no count (`output_tokens` `None` with source `Client`), [`super::Endpoint`]
    /// counts the texts with the run's tokenizer.
    fn count_tokens(&mut self, out: &mut ExchangeOutcome) {
        out.server_input_tokens = self.usage.and_then(|u| u.prompt_tokens);
        out.output_tokens = self.usage.and_then(|u| u.completion_tokens);
        out.output_tokens_source = match out.output_tokens {
            Some(_) => TokenSource::Server,
            None => TokenSource::Client,
        };
        out.reasoning_tokens = self
            .usage
            .and_then(|u| u.completion_tokens_details)
            .and_then(|d| d.reasoning_tokens)
            .filter(|n| *n > 0);
        out.answer_text = std::mem::take(&mut self.content);
        out.reasoning_text = std::mem::take(&mut self.reasoning);
    }
}

/// A streamed body read in one go, or in two parts: up to the first token (on the
/// first-token lane), then the rest (in the worker).
#[derive(Default)]
pub(crate) struct StreamReader {
    parser: StreamParser,
    st: StreamState,
}

impl StreamReader {
    /// A reader of `dialect` events.
    #[cfg_attr(not(feature = "sagemaker"), allow(dead_code))]
    pub fn new(dialect: Dialect) -> Self {
        StreamReader {
            parser: StreamParser::default(),
            st: StreamState {
                dialect,
                ..StreamState::default()
            },
        }
    }

    /// Reads events into `out` until the body ends (or fails), or, with `until_first_token`,
    /// until a read has brought the first token. True when the body ended (or failed).
    pub async fn read(
        &mut self,
        resp: &mut Body<'_>,
        out: &mut ExchangeOutcome,
        mut probe: Option<&mut Probe>,
        until_first_token: bool,
    ) -> bool {
        loop {
            let next = if self.parser.saw_done() {
                // Complete; wait briefly for the body's end so the connection can be reused.
                tokio::time::timeout(AFTER_DONE_GRACE, resp.next())
                    .await
                    .unwrap_or(Ok(None))
            } else {
                resp.next().await
            };
            match next {
                Ok(Some((bytes, t))) => {
                    if self.on_bytes(bytes, t, out, probe.as_deref_mut()) {
                        return true;
                    }
                    if until_first_token && out.first_token_ns.is_some() {
                        return false;
                    }
                }
                Ok(None) => {
                    self.on_end(out);
                    return true;
                }
                Err(e) => {
                    out.error = Some(broken_stream(&e));
                    return true;
                }
            }
        }
    }

    /// The next bytes of the body, read at `t`: their events into `out`. True when the
    /// stream failed (`out.error` says how).
    pub fn on_bytes(
        &mut self,
        bytes: &[u8],
        t: u64,
        out: &mut ExchangeOutcome,
        mut probe: Option<&mut Probe>,
    ) -> bool {
        let (parser, st) = (&mut self.parser, &mut self.st);
        keep_head(&mut probe, bytes);
        parser.feed(bytes, &mut |ev| st.on_event(out, ev, t));
        if parser.overflowed() && out.error.is_none() {
            out.error = Some(RequestError {
                kind: ErrorKind::BadPayload,
                status: None,
                message: format!(
                    "the stream sent a line (or an event) longer than {} MiB",
                    MAX_LINE_BYTES >> 20
                ),
            });
        }
        out.error.is_some()
    }

    /// The body ended: its last unterminated event, and `BrokenStream` when the stream was
    /// not complete (no `[DONE]`, or no final chunk in a format without one).
    pub fn on_end(&mut self, out: &mut ExchangeOutcome) {
        let (parser, st) = (&mut self.parser, &mut self.st);
        let t = now_ns();
        st.at_end = true;
        parser.finish(&mut |ev| st.on_event(out, ev, t));
        if out.error.is_none() {
            let complete = parser.saw_done()
                || (st.finished
                    && (parser.framing() == Framing::JsonLines || st.dialect == Dialect::Tgi))
                // a custom format has no end marker of its own: its stream ends with the body
                // (a SageMaker stream cut short is the SDK's error, not an end)
                || (matches!(st.dialect, Dialect::Custom(_)) && parser.data_events() > 0);
            if !complete {
                out.error = Some(RequestError {
                    kind: ErrorKind::BrokenStream,
                    status: None,
                    message: st.dialect.cut_short().to_string(),
                });
            }
        }
    }

    /// Token counts into `out` (and the stream's shape into `probe`) once the body has ended.
    pub fn finish(mut self, out: &mut ExchangeOutcome, probe: Option<&mut Probe>) {
        self.st.count_tokens(out);
        if let Some(p) = probe {
            p.data_events = self.parser.data_events();
            p.openai_chunks = self.st.openai_chunks;
            p.framing = Some(self.parser.framing());
        }
    }
}

/// A read of the stream that failed.
pub(crate) fn broken_stream(e: &str) -> RequestError {
    RequestError {
        kind: ErrorKind::BrokenStream,
        status: None,
        message: format!("reading the stream failed: {e}"),
    }
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
                keep_head(&mut probe, bytes);
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
    super::sse::extend_within(body, bytes, MAX_BODY_BYTES);
    Ok(())
}

/// A whole answer's `body`, read by `t`, into `out`.
pub(crate) fn parse_whole(
    dialect: &Dialect,
    body: &[u8],
    t: u64,
    out: &mut ExchangeOutcome,
    probe: Option<&mut Probe>,
) {
    let mut st = StreamState {
        dialect: dialect.clone(),
        ..StreamState::default()
    };
    match dialect.parse_whole(body) {
        Ok(c) if !c.openai_shaped => {
            out.error = Some(RequestError {
                kind: ErrorKind::BadPayload,
                status: None,
                message: dialect.nothing_in_the_answer(),
            });
        }
        Ok(c) => {
            st.openai_chunks = 1;
            st.usage = c.usage;
            // no first token: a body read whole has no TTFT (and no inter-token latency)
            out.last_token_ns = Some(t);
            out.first_output_ns = c.content.is_some().then_some(t);
            out.server_first_sent_ns = c.sim_sent_ns;
            out.server_last_sent_ns = c.sim_sent_ns;
            if c.has_text() {
                out.content_chunk_ns.push(t);
            }
            st.content = c.content.map(|s| s.into_owned()).unwrap_or_default();
            st.reasoning = c.reasoning.map(|s| s.into_owned()).unwrap_or_default();
            st.count_tokens(out);
        }
        Err(ChunkError::InStream(message)) => {
            out.error = Some(RequestError {
                kind: ErrorKind::InStreamError,
                status: None,
                message,
            });
        }
        Err(ChunkError::BadPayload(m)) => {
            out.error = Some(RequestError {
                kind: ErrorKind::BadPayload,
                status: None,
                message: format!("the response is not valid JSON: {m}"),
            });
        }
    }
    if let Some(p) = probe {
        p.data_events = u64::from(!body.is_empty());
        p.openai_chunks = st.openai_chunks;
    }
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

    /// What a stream read in `parts` (each stamped with its index) gave.
    fn read_parts(dialect: Dialect, parts: &[&[u8]]) -> ExchangeOutcome {
        let mut out = ExchangeOutcome::default();
        let mut reader = StreamReader::new(dialect);
        for (i, part) in parts.iter().enumerate() {
            if reader.on_bytes(part, i as u64 + 1, &mut out, None) {
                break;
            }
        }
        if out.error.is_none() {
            reader.on_end(&mut out);
        }
        reader.finish(&mut out, None);
        out
    }

    const OPENAI: &str = "data: {\"choices\":[{\"delta\":{\"content\":\" h\u{e9}llo\"}}]}\n\n\
        data: {\"choices\":[{\"delta\":{\"content\":\" world\"},\"finish_reason\":\"length\"}]}\n\n\
        data: {\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":2}}\n\n\
        data: [DONE]\n\n";
    const TGI: &str = "data:{\"token\":{\"text\":\" h\u{e9}llo\",\"special\":false},\"generated_text\":null}\n\n\
        data:{\"token\":{\"text\":\" world\",\"special\":false},\"generated_text\":\" h\u{e9}llo world\",\"details\":{\"generated_tokens\":2}}\n\n";
    const CUSTOM_LINES: &str = "{\"out\":[\" h\u{e9}llo\"]}\n{\"out\":[\" world\"],\"n\":2}\n";

    /// SageMaker cuts the container's stream into payload parts at any byte (inside a JSON
    /// object, inside a UTF-8 character): every cut into two parts, and one byte per part,
    /// read as the whole stream in one part does; the first token is stamped with the part
    /// that completed its event.
    #[test]
    fn payload_parts_cut_anywhere_read_alike() {
        let custom = |text: &str, count: &str| {
            Dialect::Custom(std::sync::Arc::new(
                crate::endpoint::custom_payload::CustomPayload {
                    request_template: serde_json::json!("{prompt}"),
                    text_pointer: text.into(),
                    token_count_pointer: Some(count.into()),
                },
            ))
        };
        for (dialect, body, first_event_end) in [
            (Dialect::OpenAi, OPENAI, OPENAI.find("\n\n").unwrap() + 2),
            (Dialect::Tgi, TGI, TGI.find("\n\n").unwrap() + 2),
            // the TGI stream read through a custom format's pointers
            (
                custom("/token/text", "/details/generated_tokens"),
                TGI,
                TGI.find("\n\n").unwrap() + 2,
            ),
            // JSON lines, no end marker: complete when the body ends
            (
                custom("/out/0", "/n"),
                CUSTOM_LINES,
                CUSTOM_LINES.find('\n').unwrap() + 1,
            ),
        ] {
            let dialect = &dialect;
            let read_parts = |parts: &[&[u8]]| read_parts(dialect.clone(), parts);
            let bytes = body.as_bytes();
            let whole = read_parts(&[bytes]);
            assert_eq!(whole.error, None, "{dialect:?}");
            assert_eq!(whole.answer_text, " h\u{e9}llo world", "{dialect:?}");
            assert_eq!(whole.output_tokens, Some(2), "{dialect:?}");
            assert_eq!(whole.content_chunk_ns, vec![1, 1], "{dialect:?}");
            for cut in 1..bytes.len() {
                let (a, b) = bytes.split_at(cut);
                let got = read_parts(&[a, b]);
                assert_eq!(got.error, None, "{dialect:?} cut at {cut}");
                assert_eq!(
                    got.answer_text, whole.answer_text,
                    "{dialect:?} cut at {cut}"
                );
                assert_eq!(got.output_tokens, Some(2), "{dialect:?} cut at {cut}");
                // the first event completes with part 1 when the cut is past its blank line
                let first = if cut >= first_event_end { 1 } else { 2 };
                assert_eq!(got.first_token_ns, Some(first), "{dialect:?} cut at {cut}");
            }
            let bytewise: Vec<&[u8]> = bytes.chunks(1).collect();
            let got = read_parts(&bytewise);
            assert_eq!(
                got.answer_text, whole.answer_text,
                "{dialect:?} byte by byte"
            );
            assert_eq!(got.output_tokens, Some(2), "{dialect:?} byte by byte");
        }
    }

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

    /// A stream that ends before it is complete is a broken stream in either format.
    #[test]
    fn streams_cut_short_are_broken() {
        for (dialect, body, said) in [
            (
                Dialect::OpenAi,
                &OPENAI[..OPENAI.len() - 14],
                "the stream ended without [DONE]",
            ),
            (
                Dialect::Tgi,
                &TGI[..TGI.find("\n\n").unwrap() + 2],
                "the stream ended without its generated_text",
            ),
            (
                Dialect::Custom(std::sync::Arc::default()),
                "",
                "the stream ended without an event",
            ),
        ] {
            let got = read_parts(dialect, &[body.as_bytes()]);
            let err = got.error.expect("an error");
            assert_eq!(
                (err.kind, err.message.as_str()),
                (ErrorKind::BrokenStream, said)
            );
        }
    }
}
