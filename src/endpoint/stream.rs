//! The stream reader: the events of a streamed answer (SSE or JSON lines, `super::sse`) read
//! into the exchange's outcome as their bytes arrive, each event stamped with the time of the
//! network read that brought it (the first token's is the request's TTFT), in the dialect of
//! the endpoint's container (OpenAI chunks, TGI tokens, a custom format's pointers); and a
//! whole answer read the same way. Adapter-neutral: the HTTP transport hands it body pieces
//! through [`BodySource`] (`super::http::body`), the SageMaker adapter the payload parts the
//! AWS SDK gives it.

use std::future::Future;
use std::time::Duration;

use super::openai::{self, ChunkError, Usage};
use super::probe::Probe;
use super::sse::{Event, Framing, StreamParser, MAX_LINE_BYTES};
use super::tool_calls::ToolCalls;
use crate::clock::now_ns;
use crate::record::{ErrorKind, ExchangeOutcome, RequestError, TokenSource};

/// How long to wait for the end of the body after `[DONE]` before dropping the connection.
const AFTER_DONE_GRACE: Duration = Duration::from_secs(1);

/// Where a streamed body's bytes come from, each piece with the monotonic time of the read
/// that brought it.
pub(crate) trait BodySource {
    /// The next bytes and their read time; `None` at the end of the body.
    fn next(&mut self) -> impl Future<Output = Result<Option<(&[u8], u64)>, String>> + Send;
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
    tools: ToolCalls,
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
                    self.tools.add(&c.tool_calls);
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
        out.cached_tokens = self
            .usage
            .and_then(|u| u.prompt_tokens_details)
            .and_then(|d| d.cached_tokens);
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
        self.tools.finish(out);
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
        body: &mut impl BodySource,
        out: &mut ExchangeOutcome,
        mut probe: Option<&mut Probe>,
        until_first_token: bool,
    ) -> bool {
        loop {
            let next = if self.parser.saw_done() {
                // Complete; wait briefly for the body's end so the connection can be reused.
                tokio::time::timeout(AFTER_DONE_GRACE, body.next())
                    .await
                    .unwrap_or(Ok(None))
            } else {
                body.next().await
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
        probe: Option<&mut Probe>,
    ) -> bool {
        let (parser, st) = (&mut self.parser, &mut self.st);
        if let Some(p) = probe {
            p.keep_head(bytes);
        }
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
            st.tools.add(&c.tool_calls);
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

#[cfg(test)]
#[path = "stream_tool_tests.rs"]
mod tool_tests;
