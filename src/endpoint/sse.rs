//! Incremental stream parser for server-sent events (SSE) and JSON-lines response bodies.
//!
//! Pure and allocation-light: the caller feeds byte slices exactly as they arrive from the
//! network (split anywhere, including inside a UTF-8 sequence or between `\r` and `\n`) and
//! receives each complete event through a callback. The parser never interprets the JSON; see
//! [`super::openai`] for that.
//!
//! SSE handling follows the WHATWG rules that matter for LLM servers: lines end in LF, CRLF or
//! CR; `data:` with or without one following space; several `data:` lines in one event are
//! joined with `\n`; a blank line ends the event; `:` comment lines and the other fields
//! (`event:`, `id:`, `retry:`) are ignored; a leading UTF-8 BOM is skipped. `data: [DONE]` ends
//! the stream and everything after it is ignored.
//!
//! Some servers (e.g. SageMaker containers) send one JSON object per line with no `data:`
//! prefix. The parser detects that mode when the first non-blank line starts with `{`.

/// One event taken from the stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event<'a> {
    /// The payload of one event (an SSE event's joined `data:` lines, or one JSON line).
    /// Raw bytes: UTF-8 validity is checked by the JSON parser.
    Data(&'a [u8]),
    /// The `[DONE]` sentinel: the stream is complete.
    Done,
}

/// The stream framing, decided by the first non-blank line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// Not decided yet (no non-blank line seen).
    Unknown,
    /// Server-sent events (`data: ...` lines).
    Sse,
    /// One JSON object per line.
    JsonLines,
}

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// The longest line (and the longest event's joined data) a stream may send: past it the
/// parser stops buffering and the request fails as `bad_payload`, so one server that never
/// ends a line cannot take the client's memory (a 300 MB line once took it to 1.2 GB).
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// Appends `bytes` to `buf`, whose length stays within `cap` (the caller checks), growing it
/// as a `Vec` would (at least doubling) but never past `cap` bytes of capacity: left to
/// `extend_from_slice`, a buffer just under the cap could double to nearly twice it (a
/// 12 MiB line read in one piece and then one byte more held 24 MiB).
pub(crate) fn extend_within(buf: &mut Vec<u8>, bytes: &[u8], cap: usize) {
    let need = buf.len() + bytes.len();
    if need > buf.capacity() {
        let grown = buf.capacity().saturating_mul(2).clamp(need, cap.max(need));
        buf.reserve_exact(grown - buf.len());
    }
    buf.extend_from_slice(bytes);
}

/// Incremental SSE / JSON-lines parser. Feed bytes with [`StreamParser::feed`], then call
/// [`StreamParser::finish`] at the end of the body.
#[derive(Debug)]
pub struct StreamParser {
    framing: Framing,
    /// The current, not yet terminated line (only used when a line spans reads).
    line: Vec<u8>,
    /// The current event's data (SSE only).
    data: Vec<u8>,
    /// A `data:` field was seen in the current event (the data may still be empty).
    has_data: bool,
    /// The previous read ended in `\r`: skip a `\n` at the start of the next one.
    skip_lf: bool,
    /// No line has been completed yet (a BOM may start the first one).
    first_line: bool,
    done: bool,
    data_events: u64,
    /// A line or an event's data passed [`MAX_LINE_BYTES`]: nothing more is parsed.
    overflowed: bool,
}

impl Default for StreamParser {
    fn default() -> Self {
        Self::new()
    }
}

impl StreamParser {
    /// A parser at the start of a body.
    pub fn new() -> Self {
        StreamParser {
            framing: Framing::Unknown,
            line: Vec::new(),
            data: Vec::new(),
            has_data: false,
            skip_lf: false,
            first_line: true,
            done: false,
            data_events: 0,
            overflowed: false,
        }
    }

    /// Parses `input` (the next bytes of the body) and calls `on_event` for every event it
    /// completes. Bytes of an unfinished line are kept for the next call.
    pub fn feed(&mut self, mut input: &[u8], on_event: &mut impl FnMut(Event<'_>)) {
        if self.skip_lf && !input.is_empty() {
            self.skip_lf = false;
            if input[0] == b'\n' {
                input = &input[1..];
            }
        }
        while !input.is_empty() && !self.overflowed {
            let Some(i) = input.iter().position(|&b| b == b'\n' || b == b'\r') else {
                if self.line.len() + input.len() > MAX_LINE_BYTES {
                    self.overflow();
                } else {
                    extend_within(&mut self.line, input, MAX_LINE_BYTES);
                }
                return;
            };
            if self.line.len() + i > MAX_LINE_BYTES {
                self.overflow();
                return;
            }
            if self.line.is_empty() {
                self.process_line(&input[..i], on_event);
            } else {
                extend_within(&mut self.line, &input[..i], MAX_LINE_BYTES);
                let line = std::mem::take(&mut self.line);
                self.process_line(&line, on_event);
                self.line = line;
                self.line.clear();
            }
            let terminator = input[i];
            input = &input[i + 1..];
            if terminator == b'\r' {
                match input.first() {
                    Some(b'\n') => input = &input[1..],
                    Some(_) => {}
                    None => self.skip_lf = true,
                }
            }
        }
    }

    /// Ends the body. A last line without a terminator is processed. In SSE, an event not
    /// closed by a blank line is incomplete and dropped (as the SSE standard says), except a
    /// `[DONE]` (some servers omit the final blank line). In JSON lines, the last line is
    /// delivered even without a newline (it may be truncated; the JSON parser will tell).
    /// Check [`StreamParser::saw_done`] afterwards to tell a complete stream from a broken one.
    pub fn finish(&mut self, on_event: &mut impl FnMut(Event<'_>)) {
        if self.overflowed {
            return;
        }
        if !self.line.is_empty() {
            let line = std::mem::take(&mut self.line);
            self.process_line(&line, on_event);
        }
        if self.framing == Framing::Sse && self.has_data && self.data.trim_ascii() == b"[DONE]" {
            self.dispatch(on_event);
        }
        self.has_data = false;
        self.data.clear();
    }

    /// True once a line or an event's data passed [`MAX_LINE_BYTES`]; the parser then
    /// ignores the rest of the body.
    pub fn overflowed(&self) -> bool {
        self.overflowed
    }

    fn overflow(&mut self) {
        self.overflowed = true;
        self.line = Vec::new();
        self.data = Vec::new();
    }

    /// True once `[DONE]` was received.
    pub fn saw_done(&self) -> bool {
        self.done
    }

    /// Number of [`Event::Data`] events delivered so far.
    pub fn data_events(&self) -> u64 {
        self.data_events
    }

    /// The framing detected so far.
    pub fn framing(&self) -> Framing {
        self.framing
    }

    fn process_line(&mut self, mut line: &[u8], on_event: &mut impl FnMut(Event<'_>)) {
        if self.first_line {
            self.first_line = false;
            if let Some(rest) = line.strip_prefix(BOM) {
                line = rest;
            }
        }
        if self.done {
            return;
        }
        if self.framing == Framing::Unknown {
            match line.trim_ascii_start().first() {
                None => return,
                Some(b'{') => self.framing = Framing::JsonLines,
                Some(_) => self.framing = Framing::Sse,
            }
        }
        match self.framing {
            Framing::JsonLines => {
                let payload = line.trim_ascii();
                if !payload.is_empty() {
                    self.emit(payload, on_event);
                }
            }
            _ => self.sse_line(line, on_event),
        }
    }

    fn sse_line(&mut self, line: &[u8], on_event: &mut impl FnMut(Event<'_>)) {
        if line.is_empty() {
            self.dispatch(on_event);
            return;
        }
        if line[0] == b':' {
            return;
        }
        let (field, value) = match line.iter().position(|&b| b == b':') {
            Some(i) => {
                let v = &line[i + 1..];
                (&line[..i], v.strip_prefix(b" ").unwrap_or(v))
            }
            None => (line, &b""[..]),
        };
        if field == b"data" {
            if self.data.len() + value.len() + 1 > MAX_LINE_BYTES {
                self.overflow();
                return;
            }
            if self.has_data {
                extend_within(&mut self.data, b"\n", MAX_LINE_BYTES);
            }
            extend_within(&mut self.data, value, MAX_LINE_BYTES);
            self.has_data = true;
        }
    }

    fn dispatch(&mut self, on_event: &mut impl FnMut(Event<'_>)) {
        if !self.has_data {
            return;
        }
        self.has_data = false;
        let data = std::mem::take(&mut self.data);
        self.emit(&data, on_event);
        self.data = data;
        self.data.clear();
    }

    fn emit(&mut self, payload: &[u8], on_event: &mut impl FnMut(Event<'_>)) {
        if self.done {
            return;
        }
        if payload.trim_ascii() == b"[DONE]" {
            self.done = true;
            on_event(Event::Done);
        } else {
            self.data_events += 1;
            on_event(Event::Data(payload));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An owned event, for comparing.
    #[derive(Debug, Clone, PartialEq, Eq)]
    enum Ev {
        D(String),
        Done,
    }

    fn d(s: &str) -> Ev {
        Ev::D(s.to_string())
    }

    /// Feeds `parts` one by one, then finishes; returns the events and whether `[DONE]` came.
    fn run(parts: &[&[u8]]) -> (Vec<Ev>, bool, Framing) {
        let mut p = StreamParser::new();
        let mut out = Vec::new();
        let mut on = |e: Event<'_>| {
            out.push(match e {
                Event::Data(b) => Ev::D(String::from_utf8_lossy(b).into_owned()),
                Event::Done => Ev::Done,
            })
        };
        for part in parts {
            p.feed(part, &mut on);
        }
        p.finish(&mut on);
        (out, p.saw_done(), p.framing())
    }

    #[test]
    fn a_line_past_the_cap_stops_the_parser_and_holds_no_more_than_the_cap() {
        // up to the cap, in 1 MiB reads, a line is kept; one more byte and it is dropped
        let mib = vec![b'x'; 1 << 20];
        let mut p = StreamParser::new();
        let mut events = 0;
        p.feed(b"data: {\"a\":1}\n\n", &mut |_| events += 1);
        for _ in 0..16 {
            p.feed(&mib, &mut |_| events += 1);
            assert!(p.line.len() <= MAX_LINE_BYTES);
        }
        assert!(!p.overflowed());
        p.feed(b"x", &mut |_| events += 1);
        assert!(p.overflowed());
        assert!(p.line.capacity() == 0 && p.data.capacity() == 0);
        // nothing after it is parsed, not even a well-formed event or the end
        p.feed(b"\n\ndata: [DONE]\n\n", &mut |_| events += 1);
        p.finish(&mut |_| events += 1);
        assert_eq!(events, 1);
        assert!(!p.saw_done());
        // an event whose data lines add up past the cap, each line short
        let mut p = StreamParser::new();
        let line = [b"data: ".as_slice(), &mib, b"\n"].concat();
        for _ in 0..16 {
            p.feed(&line, &mut |_| {});
        }
        assert!(p.overflowed());
        // a JSON-lines record the same
        let mut p = StreamParser::new();
        p.feed(b"{", &mut |_| {});
        for _ in 0..16 {
            p.feed(&mib, &mut |_| {});
        }
        assert!(p.overflowed());
    }

    /// Found by the property benchmark (benches/parser_props.rs, `parser_overflow_memory`):
    /// a line read in a piece of 12 MiB and then one byte more doubled its buffer to 24 MiB,
    /// past the cap it is checked against; the buffers now grow to the cap at most.
    #[test]
    fn buffers_near_the_cap_hold_no_more_than_the_cap() {
        let mut p = StreamParser::new();
        p.feed(&vec![b'x'; 12 << 20], &mut |_| {});
        p.feed(b"x", &mut |_| {});
        assert!(!p.overflowed());
        assert!(p.line.capacity() <= MAX_LINE_BYTES, "{}", p.line.capacity());
        // an event's data joined from lines, one of 12 MiB and a short one
        let mut p = StreamParser::new();
        let line = [b"data: ".as_slice(), &vec![b'x'; 12 << 20], b"\n"].concat();
        p.feed(&line, &mut |_| {});
        p.feed(b"data: x\n", &mut |_| {});
        assert!(!p.overflowed());
        assert!(p.data.capacity() <= MAX_LINE_BYTES, "{}", p.data.capacity());
        // growth below the cap still doubles (no reallocation per read)
        let mut buf = Vec::new();
        for _ in 0..1000 {
            extend_within(&mut buf, b"0123456789", MAX_LINE_BYTES);
        }
        assert!(buf.capacity() >= 10_000 && buf.capacity() < 20_000);
        let mut buf = vec![0u8; 7];
        extend_within(&mut buf, b"ab", 9);
        assert_eq!((buf.len(), buf.capacity()), (9, 9));
    }

    /// Every way of splitting `input` into two or three reads gives the same events.
    fn assert_all_splits(input: &[u8], want: &[Ev], want_done: bool) {
        let (whole, done, _) = run(&[input]);
        assert_eq!(
            whole,
            want,
            "whole input {:?}",
            String::from_utf8_lossy(input)
        );
        assert_eq!(done, want_done);
        for i in 0..=input.len() {
            let (got, done, _) = run(&[&input[..i], &input[i..]]);
            assert_eq!(got, want, "split at {i}");
            assert_eq!(done, want_done, "split at {i}");
            for j in i..=input.len() {
                let (got, _, _) = run(&[&input[..i], &input[i..j], &input[j..]]);
                assert_eq!(got, want, "split at {i},{j}");
            }
        }
        // one byte per read
        let bytes: Vec<&[u8]> = input.chunks(1).collect();
        assert_eq!(run(&bytes).0, want, "byte by byte");
    }

    #[test]
    fn table() {
        type Case = (&'static str, &'static [u8], &'static [&'static str], bool);
        // (name, input, data events ("DONE" stands for Event::Done), saw_done)
        let cases: &[Case] = &[
            (
                "lf with space",
                b"data: {\"a\":1}\n\ndata: [DONE]\n\n",
                &["{\"a\":1}", "DONE"],
                true,
            ),
            (
                "crlf",
                b"data: {\"a\":1}\r\n\r\ndata: [DONE]\r\n\r\n",
                &["{\"a\":1}", "DONE"],
                true,
            ),
            (
                "cr only",
                b"data: x\r\rdata: [DONE]\r\r",
                &["x", "DONE"],
                true,
            ),
            (
                "no space after colon",
                b"data:{\"a\":1}\n\n",
                &["{\"a\":1}"],
                false,
            ),
            ("only one space stripped", b"data:  x\n\n", &[" x"], false),
            (
                "comments ignored",
                b": ping\n\n:keepalive\ndata: x\n\n",
                &["x"],
                false,
            ),
            (
                "other fields ignored",
                b"event: message\nid: 7\nretry: 100\ndata: x\n\n",
                &["x"],
                false,
            ),
            (
                "event without data dispatches nothing",
                b"event: ping\n\n",
                &[],
                false,
            ),
            (
                "multi-line data joined",
                b"data: a\ndata: b\ndata:\n\n",
                &["a\nb\n"],
                false,
            ),
            ("field without colon", b"data\n\n", &[""], false),
            (
                "done with trailing space",
                b"data: [DONE] \n\n",
                &["DONE"],
                true,
            ),
            (
                "nothing after done",
                b"data: [DONE]\n\ndata: x\n\n",
                &["DONE"],
                true,
            ),
            (
                "broken: no done",
                b"data: x\n\ndata: y\n\n",
                &["x", "y"],
                false,
            ),
            (
                "last event lacks blank line",
                b"data: x\n\ndata: [DONE]",
                &["x", "DONE"],
                true,
            ),
            (
                "truncated mid-line dropped",
                b"data: x\n\ndata: {\"a\"",
                &["x"],
                false,
            ),
            (
                "unterminated event dropped",
                b"data: x\n\ndata: y\n",
                &["x"],
                false,
            ),
            ("bom skipped", b"\xEF\xBB\xBFdata: x\n\n", &["x"], false),
            (
                "utf8 kept",
                "data: h\u{e9}llo \u{1F600}\n\n".as_bytes(),
                &["h\u{e9}llo \u{1F600}"],
                false,
            ),
            ("empty body", b"", &[], false),
            (
                "json lines",
                b"{\"a\":1}\n{\"b\":2}\r\n\n  {\"c\":3}  \n",
                &["{\"a\":1}", "{\"b\":2}", "{\"c\":3}"],
                false,
            ),
            (
                "json lines last line unterminated",
                b"{\"a\":1}\n{\"b\":2}",
                &["{\"a\":1}", "{\"b\":2}"],
                false,
            ),
            (
                "json lines after blank lines",
                b"\n\r\n{\"a\":1}\n",
                &["{\"a\":1}"],
                false,
            ),
            (
                "json lines done",
                b"{\"a\":1}\n[DONE]\n",
                &["{\"a\":1}", "DONE"],
                true,
            ),
        ];
        for (name, input, want, want_done) in cases {
            let want: Vec<Ev> = want
                .iter()
                .map(|s| if *s == "DONE" { Ev::Done } else { d(s) })
                .collect();
            let (got, done, _) = run(&[input]);
            assert_eq!(got, want, "{name}");
            assert_eq!(done, *want_done, "{name}: saw_done");
            assert_all_splits(input, &want, *want_done);
        }
    }

    #[test]
    fn framing_detected_from_first_non_blank_line() {
        assert_eq!(run(&[b"data: x\n\n"]).2, Framing::Sse);
        assert_eq!(run(&[b": c\n"]).2, Framing::Sse);
        assert_eq!(run(&[b"\n  {\"a\":1}\n"]).2, Framing::JsonLines);
        assert_eq!(run(&[b"\r\n"]).2, Framing::Unknown);
    }

    #[test]
    fn crlf_split_between_reads_is_one_line_end() {
        // "\r" ends one read, "\n" starts the next: one line end, not a blank line
        let (got, _, _) = run(&[b"data: a\r", b"\ndata: b\r\n\r\n"]);
        assert_eq!(got, vec![d("a\nb")]);
    }

    #[test]
    fn utf8_split_mid_codepoint() {
        let input = "data: \u{1F600}\u{e9}\n\n".as_bytes();
        // split inside the 4-byte emoji
        let (got, _, _) = run(&[&input[..8], &input[8..]]);
        assert_eq!(got, vec![d("\u{1F600}\u{e9}")]);
    }

    #[test]
    fn counts_data_events() {
        let mut p = StreamParser::new();
        let mut n = 0;
        p.feed(b"data: a\n\ndata: b\n\ndata: [DONE]\n\n", &mut |_| n += 1);
        assert_eq!(n, 3);
        assert_eq!(p.data_events(), 2);
    }
}
