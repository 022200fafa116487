//! Property tests of the stream parser (`rightsize::endpoint::sse`) and of the body reading
//! (`rightsize::endpoint::body_replay`: body pieces through the content decoder into the
//! stream reader or the whole-body cap), shared by two runners: `tests/parser_props.rs` runs
//! each property for a few hundred cases in `cargo test`; `benches/parser_props.rs` runs each
//! for 100,000 (the memory properties for a few hundred) in release, with a counting
//! allocator that checks what a case holds at its peak against the caps.
//!
//! The properties:
//! - `sse_any_split`: a valid SSE stream (any mix of LF / CR / CRLF, BOM, comments, other
//!   fields, multi-line data, `[DONE]` with or without its blank line and anything after it,
//!   an event cut short) split anywhere parses to the events its model says, as it does whole.
//! - `jsonl_any_split`: the same for JSON lines (blank lines, surrounding blanks, the last
//!   line unterminated, `[DONE]`).
//! - `parser_arbitrary_bytes`: any bytes (biased to the framing's tokens) never panic and
//!   parse to the same events, `[DONE]`, framing and count whole, split anywhere and one byte
//!   per read; nothing follows a `Done`.
//! - `body_any_split`: an OpenAI stream (SSE or JSON lines; content, reasoning, finish, usage,
//!   an in-stream error, `[DONE]` or not, cut anywhere), plain, gzip or deflate at any level,
//!   its encoded bytes split anywhere, ends in the outcome its model says (cut streams: the
//!   outcome of the plain body whole), timestamps aside.
//! - `body_arbitrary_bytes`: any bytes, or a compressed body corrupted (a byte flipped,
//!   truncated, garbage inserted), under any content-encoding label, streamed or whole, split
//!   anywhere: no panic, and a classified outcome (success, `bad_payload`, `broken_stream`,
//!   `in_stream_error`; a coding not decoded is refused); plain bodies and intact compressed
//!   ones read split as the plain body does whole.
//! - `parser_overflow_memory` (huge inputs, few cases): a line, or an event's data lines,
//!   past `MAX_LINE_BYTES`, in any pieces: the parser stops, delivers nothing after, and at
//!   its peak holds no more than the cap + margin (an event's data lines: + the buffer of a
//!   line that spans reads, at most twice that line and at most the cap).
//! - `body_cap_memory` (huge inputs, few cases): a whole body around `MAX_BODY_BYTES` in any
//!   pieces is refused past the cap and held within it; a streamed over-long line is
//!   `bad_payload` within the line cap, plain or gzip (the gzip figure also holds the decoded
//!   read, up to ~1,000 times the compressed one).
//!
//! Included with `#[path]` by both runners; each uses part of it.
#![allow(dead_code)]

use bytes::Bytes;
use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::{Config, RngSeed, TestCaseError, TestRunner};
use rightsize::endpoint::body_replay::{self, MAX_BODY_BYTES};
use rightsize::endpoint::outcome::{ErrorKind, ExchangeOutcome, TokenSource};
use rightsize::endpoint::sse::{Event, Framing, StreamParser, MAX_LINE_BYTES};

/// The seed of every run unless one is given: a failure is found again by running again.
pub const DEFAULT_SEED: u64 = 0x5eed_2026;

/// Live bytes a case may hold beyond its cap: the parser's and the reader's small state,
/// the events collected, a decoder's window.
pub const MARGIN: usize = 256 * 1024;

/// One property: its name, whether its inputs are huge (run for fewer cases), and its run.
pub struct Property {
    pub name: &'static str,
    pub huge: bool,
    /// The kinds of input a memory property tries, each with its own peak.
    pub kinds: &'static [&'static str],
    pub run: fn(Config) -> Result<(), String>,
}

pub const ALL: &[Property] = &[
    Property {
        name: "sse_any_split",
        huge: false,
        kinds: &[],
        run: sse_any_split,
    },
    Property {
        name: "jsonl_any_split",
        huge: false,
        kinds: &[],
        run: jsonl_any_split,
    },
    Property {
        name: "parser_arbitrary_bytes",
        huge: false,
        kinds: &[],
        run: parser_arbitrary_bytes,
    },
    Property {
        name: "body_any_split",
        huge: false,
        kinds: &[],
        run: body_any_split,
    },
    Property {
        name: "body_arbitrary_bytes",
        huge: false,
        kinds: &[],
        run: body_arbitrary_bytes,
    },
    Property {
        name: "parser_overflow_memory",
        huge: true,
        kinds: &["one SSE line", "one JSON line", "an event's data lines"],
        run: parser_overflow_memory,
    },
    Property {
        name: "body_cap_memory",
        huge: true,
        kinds: &["whole body", "streamed line", "streamed line, gzip"],
        run: body_cap_memory,
    },
];

pub fn find(name: &str) -> &'static Property {
    ALL.iter()
        .find(|p| p.name == name)
        .unwrap_or_else(|| panic!("no property {name}"))
}

/// `cases` cases from a fixed seed, nothing written to disk, shrinking bounded.
pub fn config(cases: u32, seed: u64) -> Config {
    Config {
        cases,
        failure_persistence: None,
        rng_seed: RngSeed::Fixed(seed),
        max_shrink_iters: 4096,
        ..Config::default()
    }
}

/// Live and peak heap bytes, kept by [`mem::Counting`] when a runner installs it as its
/// global allocator (the benchmark does; `cargo test` runs tests on several threads at once,
/// so it does not, and the memory bounds are not checked there).
pub mod mem {
    use std::alloc::{GlobalAlloc, Layout, System};
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};

    static LIVE: AtomicUsize = AtomicUsize::new(0);
    static PEAK: AtomicUsize = AtomicUsize::new(0);
    static INSTALLED: AtomicBool = AtomicBool::new(false);
    /// The largest peak above its start any case of the current property reached.
    static CASE_MAX: AtomicUsize = AtomicUsize::new(0);
    /// The same per kind of input, for the properties that have kinds.
    static KIND_MAX: [AtomicUsize; 4] = [const { AtomicUsize::new(0) }; 4];

    /// `System`, counting. A reallocation counts as its change in size (a large block grows
    /// in place or by remapping, not by holding both copies).
    pub struct Counting;

    fn add(n: usize) {
        let live = LIVE.fetch_add(n, Relaxed) + n;
        PEAK.fetch_max(live, Relaxed);
    }

    unsafe impl GlobalAlloc for Counting {
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            let p = unsafe { System.alloc(layout) };
            if !p.is_null() {
                add(layout.size());
            }
            p
        }
        unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
            let p = unsafe { System.alloc_zeroed(layout) };
            if !p.is_null() {
                add(layout.size());
            }
            p
        }
        unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
            unsafe { System.dealloc(ptr, layout) };
            LIVE.fetch_sub(layout.size(), Relaxed);
        }
        unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
            let p = unsafe { System.realloc(ptr, layout, new_size) };
            if !p.is_null() {
                if new_size >= layout.size() {
                    add(new_size - layout.size());
                } else {
                    LIVE.fetch_sub(layout.size() - new_size, Relaxed);
                }
            }
            p
        }
    }

    /// The runner installed [`Counting`]; call once at its start.
    pub fn installed() {
        INSTALLED.store(true, Relaxed);
    }

    pub fn is_installed() -> bool {
        INSTALLED.load(Relaxed)
    }

    /// A case starts: the live bytes now, the peak reset to them.
    pub fn start() -> usize {
        let live = LIVE.load(Relaxed);
        PEAK.store(live, Relaxed);
        live
    }

    /// The most a case held above `start` (none when not counting), noted for the property.
    pub fn peak_since(start: usize) -> Option<usize> {
        if !is_installed() {
            return None;
        }
        let above = PEAK.load(Relaxed).saturating_sub(start);
        CASE_MAX.fetch_max(above, Relaxed);
        Some(above)
    }

    /// The largest case peak since the last call.
    pub fn take_case_max() -> usize {
        CASE_MAX.swap(0, Relaxed)
    }

    /// [`peak_since`], noted for the case's kind of input too.
    pub fn peak_of_kind(start: usize, kind: usize) -> Option<usize> {
        let peak = peak_since(start)?;
        KIND_MAX[kind].fetch_max(peak, Relaxed);
        Some(peak)
    }

    /// The largest case peak of `kind` since the last call.
    pub fn take_kind_max(kind: usize) -> usize {
        KIND_MAX[kind].swap(0, Relaxed)
    }
}

/// Runs `test` on values of `strategy`; with `measure`, what each case holds at its peak is
/// noted for the runner (the memory properties measure a narrower window themselves).
fn check<S>(
    config: Config,
    strategy: S,
    measure: bool,
    test: impl Fn(S::Value) -> Result<(), TestCaseError>,
) -> Result<(), String>
where
    S: Strategy,
    S::Value: std::fmt::Debug,
{
    TestRunner::new(config)
        .run(&strategy, |v| {
            if !measure {
                return test(v);
            }
            let start = mem::start();
            let r = test(v);
            mem::peak_since(start);
            r
        })
        .map_err(|e| e.to_string())
}

// ---------------------------------------------------------------------------------------------
// Parsing and splitting

/// An owned event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ev {
    Data(Vec<u8>),
    Done,
}

/// What the parser gave for a body fed in pieces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parsed {
    pub events: Vec<Ev>,
    pub saw_done: bool,
    pub framing: Framing,
    pub data_events: u64,
    pub overflowed: bool,
}

pub fn parse(pieces: &[&[u8]]) -> Parsed {
    let mut p = StreamParser::new();
    let mut events = Vec::new();
    let mut on = |e: Event<'_>| {
        events.push(match e {
            Event::Data(d) => Ev::Data(d.to_vec()),
            Event::Done => Ev::Done,
        })
    };
    for piece in pieces {
        p.feed(piece, &mut on);
    }
    p.finish(&mut on);
    Parsed {
        events,
        saw_done: p.saw_done(),
        framing: p.framing(),
        data_events: p.data_events(),
        overflowed: p.overflowed(),
    }
}

/// Where to cut a body: anywhere (empty pieces included), or one byte per piece.
#[derive(Debug, Clone)]
pub struct Cuts {
    at: Vec<Index>,
    bytewise: bool,
}

fn cuts() -> impl Strategy<Value = Cuts> {
    (
        prop::collection::vec(any::<Index>(), 0..12),
        prop::bool::weighted(0.05),
    )
        .prop_map(|(at, bytewise)| Cuts { at, bytewise })
}

impl Cuts {
    pub fn offsets(&self, len: usize) -> Vec<usize> {
        if self.bytewise {
            return (0..=len).collect();
        }
        let mut at: Vec<usize> = self.at.iter().map(|i| i.index(len + 1)).collect();
        at.push(0);
        at.push(len);
        at.sort_unstable();
        at
    }

    pub fn split<'a>(&self, body: &'a [u8]) -> Vec<&'a [u8]> {
        self.offsets(body.len())
            .windows(2)
            .map(|w| &body[w[0]..w[1]])
            .collect()
    }

    pub fn split_bytes(&self, body: &Bytes) -> Vec<Bytes> {
        self.offsets(body.len())
            .windows(2)
            .map(|w| body.slice(w[0]..w[1]))
            .collect()
    }
}

// ---------------------------------------------------------------------------------------------
// Generated streams

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// A line terminator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Eol {
    Lf,
    Cr,
    CrLf,
}

fn eol() -> impl Strategy<Value = Eol> {
    prop_oneof![Just(Eol::Lf), Just(Eol::Cr), Just(Eol::CrLf)]
}

/// Writes lines, each with the next terminator of a cycle; a blank line right after a lone
/// CR takes CRLF for LF (CR LF is one line end, not two).
struct Lines<'a> {
    out: Vec<u8>,
    eols: &'a [Eol],
    next: usize,
    after_cr: bool,
}

impl<'a> Lines<'a> {
    fn new(bom: bool, eols: &'a [Eol]) -> Self {
        Lines {
            out: if bom { BOM.to_vec() } else { Vec::new() },
            eols,
            next: 0,
            after_cr: false,
        }
    }

    fn line(&mut self, content: &[u8]) {
        self.unterminated(content);
        let mut e = self.eols[self.next % self.eols.len()];
        self.next += 1;
        if e == Eol::Lf && content.is_empty() && self.after_cr {
            e = Eol::CrLf;
        }
        self.out.extend_from_slice(match e {
            Eol::Lf => b"\n".as_slice(),
            Eol::Cr => b"\r",
            Eol::CrLf => b"\r\n",
        });
        self.after_cr = e == Eol::Cr;
    }

    fn unterminated(&mut self, content: &[u8]) {
        debug_assert!(!content.contains(&b'\n') && !content.contains(&b'\r'));
        self.out.extend_from_slice(content);
        if !content.is_empty() {
            self.after_cr = false;
        }
    }
}

/// Bytes without CR or LF: arbitrary, text, or what the framing reacts to.
fn value(max: usize) -> impl Strategy<Value = Vec<u8>> {
    let no_eol = |b: u8| if b == b'\r' || b == b'\n' { b' ' } else { b };
    prop_oneof![
        4 => prop::collection::vec(
            prop_oneof![any::<u8>(), Just(b' '), Just(b':'), Just(b'{'), Just(b'\t')],
            0..max
        )
        .prop_map(move |v| v.into_iter().map(no_eol).collect::<Vec<u8>>()),
        2 => prop::collection::vec(any::<char>(), 0..max / 2).prop_map(|cs| cs
            .into_iter()
            .filter(|c| *c != '\r' && *c != '\n')
            .collect::<String>()
            .into_bytes()),
        1 => prop_oneof![
            Just(b"[DONE]".to_vec()),
            Just(b" [DONE] ".to_vec()),
            Just(b"{\"a\":1}".to_vec()),
            Just(BOM.to_vec()),
            Just(Vec::new()),
        ],
    ]
}

/// One line of an SSE event.
#[derive(Debug, Clone)]
pub enum SseLine {
    /// `data:` with or without one space, then the value.
    Data {
        value: Vec<u8>,
        space: bool,
    },
    /// `data` alone: an empty data line.
    DataBare,
    Comment(Vec<u8>),
    /// `event`, `id`, `retry` or an unknown field.
    Field(usize, Vec<u8>),
}

const FIELDS: [&[u8]; 4] = [b"event", b"id", b"retry", b"x-other"];

fn sse_line() -> impl Strategy<Value = SseLine> {
    prop_oneof![
        6 => (value(48), any::<bool>()).prop_map(|(value, space)| SseLine::Data { value, space }),
        1 => Just(SseLine::DataBare),
        1 => value(16).prop_map(SseLine::Comment),
        1 => (0..FIELDS.len(), value(16)).prop_map(|(f, v)| SseLine::Field(f, v)),
    ]
}

impl SseLine {
    fn bytes(&self) -> Vec<u8> {
        match self {
            SseLine::Data { value, space } => {
                // a value starting with a space keeps it only after the one space stripped
                let space = *space || value.first() == Some(&b' ');
                [
                    if space {
                        b"data: ".as_slice()
                    } else {
                        b"data:"
                    },
                    value,
                ]
                .concat()
            }
            SseLine::DataBare => b"data".to_vec(),
            SseLine::Comment(c) => [b":".as_slice(), c].concat(),
            SseLine::Field(f, v) => [FIELDS[*f], b": ", v].concat(),
        }
    }

    fn data(&self) -> Option<&[u8]> {
        match self {
            SseLine::Data { value, .. } => Some(value),
            SseLine::DataBare => Some(b""),
            _ => None,
        }
    }
}

/// How an SSE stream ends.
#[derive(Debug, Clone)]
pub enum SseEnd {
    /// After the last event's blank line.
    Complete,
    /// `data: [DONE]`, unterminated (0), terminated (1) or with its blank line (2), then (2
    /// only) anything.
    Done { blank: u8, after: Vec<u8> },
    /// An event without its blank line, the last line terminated or not: dropped.
    CutShort {
        lines: Vec<SseLine>,
        terminated: bool,
    },
}

#[derive(Debug, Clone)]
pub struct SseStream {
    bom: bool,
    eols: Vec<Eol>,
    /// Events, each with blank lines after its own.
    events: Vec<(Vec<SseLine>, u8)>,
    end: SseEnd,
}

fn sse_stream() -> impl Strategy<Value = SseStream> {
    let end = prop_oneof![
        Just(SseEnd::Complete),
        (0..3u8, prop::collection::vec(any::<u8>(), 0..64))
            .prop_map(|(blank, after)| SseEnd::Done { blank, after }),
        (prop::collection::vec(sse_line(), 1..4), any::<bool>())
            .prop_map(|(lines, terminated)| SseEnd::CutShort { lines, terminated }),
    ];
    (
        any::<bool>(),
        prop::collection::vec(eol(), 1..4),
        prop::collection::vec((prop::collection::vec(sse_line(), 0..5), 0..3u8), 0..8),
        end,
    )
        .prop_map(|(bom, eols, events, end)| SseStream {
            bom,
            eols,
            events,
            end,
        })
}

fn joined(lines: &[SseLine]) -> Option<Vec<u8>> {
    let data: Vec<&[u8]> = lines.iter().filter_map(SseLine::data).collect();
    (!data.is_empty()).then(|| data.join(&b'\n'))
}

/// Events as the SSE rules say, `[DONE]` ending them.
struct Model {
    events: Vec<Ev>,
    done: bool,
}

impl Model {
    fn new() -> Self {
        Model {
            events: Vec::new(),
            done: false,
        }
    }

    fn emit(&mut self, data: Vec<u8>) {
        if self.done {
            return;
        }
        if data.trim_ascii() == b"[DONE]" {
            self.done = true;
            self.events.push(Ev::Done);
        } else {
            self.events.push(Ev::Data(data));
        }
    }
}

impl SseStream {
    pub fn bytes(&self) -> Vec<u8> {
        let mut w = Lines::new(self.bom, &self.eols);
        for (lines, blanks) in &self.events {
            for l in lines {
                w.line(&l.bytes());
            }
            for _ in 0..=*blanks {
                w.line(b"");
            }
        }
        match &self.end {
            SseEnd::Complete => {}
            SseEnd::Done { blank, after } => {
                if *blank == 0 {
                    w.unterminated(b"data: [DONE]");
                } else {
                    w.line(b"data: [DONE]");
                }
                if *blank == 2 {
                    w.line(b"");
                    w.out.extend_from_slice(after);
                }
            }
            SseEnd::CutShort { lines, terminated } => {
                let (last, rest) = lines.split_last().expect("one line at least");
                for l in rest {
                    w.line(&l.bytes());
                }
                if *terminated {
                    w.line(&last.bytes());
                } else {
                    w.unterminated(&last.bytes());
                }
            }
        }
        w.out
    }

    pub fn expected(&self) -> Vec<Ev> {
        let mut m = Model::new();
        for (lines, _) in &self.events {
            if let Some(d) = joined(lines) {
                m.emit(d);
            }
        }
        match &self.end {
            SseEnd::Complete => {}
            SseEnd::Done { .. } => m.emit(b"[DONE]".to_vec()),
            // an event cut short is dropped, unless it is `[DONE]`
            SseEnd::CutShort { lines, .. } => {
                if let Some(d) = joined(lines).filter(|d| d.trim_ascii() == b"[DONE]") {
                    m.emit(d);
                }
            }
        }
        m.events
    }
}

fn check_parse(
    body: &[u8],
    cuts: &Cuts,
    want: &[Ev],
    framing: Framing,
) -> Result<(), TestCaseError> {
    let whole = parse(&[body]);
    prop_assert_eq!(&whole.events, want, "whole body {:?}", body);
    prop_assert_eq!(whole.saw_done, want.last() == Some(&Ev::Done));
    prop_assert_eq!(whole.framing, framing);
    prop_assert!(!whole.overflowed);
    let split = parse(&cuts.split(body));
    prop_assert_eq!(&split, &whole, "split at {:?}", cuts.offsets(body.len()));
    Ok(())
}

fn sse_any_split(config: Config) -> Result<(), String> {
    check(config, (sse_stream(), cuts()), true, |(s, cuts)| {
        let body = s.bytes();
        let want = s.expected();
        // SSE from the first non-blank line; undecided when there is none
        let any_line = s.events.iter().any(|(lines, _)| !lines.is_empty())
            || !matches!(s.end, SseEnd::Complete);
        let framing = if any_line {
            Framing::Sse
        } else {
            Framing::Unknown
        };
        check_parse(&body, &cuts, &want, framing)
    })
}

/// A line of a JSON-lines body.
#[derive(Debug, Clone)]
pub enum JLine {
    /// `{` and a value, with blanks (spaces, tabs) before and after.
    Record {
        before: Vec<bool>,
        value: Vec<u8>,
        after: Vec<bool>,
    },
    Blank(Vec<bool>),
}

fn blanks() -> impl Strategy<Value = Vec<bool>> {
    prop::collection::vec(any::<bool>(), 0..3)
}

fn blank_bytes(b: &[bool]) -> Vec<u8> {
    b.iter().map(|t| if *t { b'\t' } else { b' ' }).collect()
}

fn jline() -> impl Strategy<Value = JLine> {
    prop_oneof![
        4 => (blanks(), value(48), blanks())
            .prop_map(|(before, value, after)| JLine::Record { before, value, after }),
        1 => blanks().prop_map(JLine::Blank),
    ]
}

impl JLine {
    fn bytes(&self) -> Vec<u8> {
        match self {
            JLine::Record {
                before,
                value,
                after,
            } => [
                &blank_bytes(before),
                b"{".as_slice(),
                value,
                &blank_bytes(after),
            ]
            .concat(),
            JLine::Blank(b) => blank_bytes(b),
        }
    }
}

#[derive(Debug, Clone)]
pub struct JsonlStream {
    bom: bool,
    eols: Vec<Eol>,
    /// Blank lines before the first record.
    lead: Vec<Vec<bool>>,
    lines: Vec<JLine>,
    last_terminated: bool,
    /// A `[DONE]` line, then anything (the line unterminated when nothing follows and
    /// `last_terminated` is false).
    done: Option<Vec<u8>>,
}

fn jsonl_stream() -> impl Strategy<Value = JsonlStream> {
    (
        any::<bool>(),
        prop::collection::vec(eol(), 1..4),
        prop::collection::vec(blanks(), 0..3),
        prop::collection::vec(jline(), 0..10),
        (value(48), blanks()),
        any::<bool>(),
        prop::option::of(prop::collection::vec(any::<u8>(), 0..64)),
    )
        .prop_map(
            |(bom, eols, lead, mut lines, (first, after), last_terminated, done)| {
                // the first non-blank line is a record: it decides the framing
                lines.insert(
                    0,
                    JLine::Record {
                        before: Vec::new(),
                        value: first,
                        after,
                    },
                );
                JsonlStream {
                    bom,
                    eols,
                    lead,
                    lines,
                    last_terminated,
                    done,
                }
            },
        )
}

impl JsonlStream {
    pub fn bytes(&self) -> Vec<u8> {
        let mut w = Lines::new(self.bom, &self.eols);
        for b in &self.lead {
            w.line(&blank_bytes(b));
        }
        let mut lines: Vec<Vec<u8>> = self.lines.iter().map(JLine::bytes).collect();
        if self.done.is_some() {
            lines.push(b"[DONE]".to_vec());
        }
        let last = lines.pop().expect("one record at least");
        for l in &lines {
            w.line(l);
        }
        let after_done = self.done.as_ref().filter(|a| !a.is_empty());
        if self.last_terminated || after_done.is_some() {
            w.line(&last);
        } else {
            w.unterminated(&last);
        }
        if let Some(after) = after_done {
            w.out.extend_from_slice(after);
        }
        w.out
    }

    pub fn expected(&self) -> Vec<Ev> {
        let mut m = Model::new();
        for l in &self.lines {
            let b = l.bytes();
            let payload = b.trim_ascii();
            if !payload.is_empty() {
                m.emit(payload.to_vec());
            }
        }
        if self.done.is_some() {
            m.emit(b"[DONE]".to_vec());
        }
        m.events
    }
}

fn jsonl_any_split(config: Config) -> Result<(), String> {
    check(config, (jsonl_stream(), cuts()), true, |(s, cuts)| {
        check_parse(&s.bytes(), &cuts, &s.expected(), Framing::JsonLines)
    })
}

/// Any bytes, mostly made of what the framing reacts to.
fn noise(max: usize) -> impl Strategy<Value = Vec<u8>> {
    let token = prop_oneof![
        6 => any::<u8>().prop_map(|b| vec![b]),
        1 => prop::collection::vec(any::<u8>(), 0..16),
        2 => Just(b"data:".to_vec()),
        2 => Just(b"data: ".to_vec()),
        3 => Just(b"\n".to_vec()),
        3 => Just(b"\r".to_vec()),
        2 => Just(b"\r\n".to_vec()),
        1 => Just(b"[DONE]".to_vec()),
        1 => Just(b"{".to_vec()),
        1 => Just(b":".to_vec()),
        1 => Just(b" ".to_vec()),
        1 => Just(BOM.to_vec()),
        1 => Just(b"event: e".to_vec()),
        1 => Just(b"{\"choices\":[{\"delta\":{\"content\":\"a\"}}]}".to_vec()),
        1 => Just(b"{\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}".to_vec()),
        1 => Just(b"{\"choices\":[],\"usage\":{\"completion_tokens\":3}}".to_vec()),
        1 => Just(b"{\"error\":{\"message\":\"m\"}}".to_vec()),
    ];
    prop::collection::vec(token, 0..max).prop_map(|t| t.concat())
}

fn parser_arbitrary_bytes(config: Config) -> Result<(), String> {
    check(config, (noise(160), cuts()), true, |(body, cuts)| {
        let whole = parse(&[&body]);
        let data = whole
            .events
            .iter()
            .filter(|e| matches!(e, Ev::Data(_)))
            .count();
        prop_assert_eq!(whole.data_events, data as u64);
        let dones = whole.events.iter().filter(|e| **e == Ev::Done).count();
        prop_assert_eq!(dones, usize::from(whole.saw_done));
        if whole.saw_done {
            prop_assert_eq!(whole.events.last(), Some(&Ev::Done));
        }
        prop_assert!(!whole.overflowed);
        let split = parse(&cuts.split(&body));
        prop_assert_eq!(&split, &whole, "split at {:?}", cuts.offsets(body.len()));
        let bytewise: Vec<&[u8]> = body.chunks(1).collect();
        prop_assert_eq!(&parse(&bytewise), &whole, "one byte per read");
        Ok(())
    })
}

// ---------------------------------------------------------------------------------------------
// Bodies

/// What an outcome says, timestamps aside.
#[derive(Debug, Clone, PartialEq)]
pub struct Shape {
    pub error: Option<(ErrorKind, String)>,
    pub answer: String,
    pub reasoning: String,
    pub output_tokens: Option<u32>,
    pub source: TokenSource,
    pub input_tokens: Option<u32>,
    pub reasoning_tokens: Option<u32>,
    /// Chunks with text, and whether the first-token / first-output / last-token times were
    /// taken.
    pub text_chunks: usize,
    pub times: (bool, bool, bool),
}

pub fn shape(o: &ExchangeOutcome) -> Shape {
    Shape {
        error: o.error.as_ref().map(|e| (e.kind, e.message.clone())),
        answer: o.answer_text.clone(),
        reasoning: o.reasoning_text.clone(),
        output_tokens: o.output_tokens,
        source: o.output_tokens_source,
        input_tokens: o.server_input_tokens,
        reasoning_tokens: o.reasoning_tokens,
        text_chunks: o.content_chunk_ns.len(),
        times: (
            o.first_token_ns.is_some(),
            o.first_output_ns.is_some(),
            o.last_token_ns.is_some(),
        ),
    }
}

/// A content coding, and how the body is compressed to match.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Coding {
    Plain,
    Gzip(u32),
    Deflate(u32),
}

impl Coding {
    fn label(self) -> Option<&'static str> {
        match self {
            Coding::Plain => None,
            Coding::Gzip(_) => Some("gzip"),
            Coding::Deflate(_) => Some("deflate"),
        }
    }

    pub fn encode(self, body: &[u8]) -> Vec<u8> {
        use std::io::Write;
        match self {
            Coding::Plain => body.to_vec(),
            Coding::Gzip(level) => {
                let mut e =
                    flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::new(level));
                e.write_all(body).expect("in memory");
                e.finish().expect("in memory")
            }
            Coding::Deflate(level) => {
                let mut e =
                    flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::new(level));
                e.write_all(body).expect("in memory");
                e.finish().expect("in memory")
            }
        }
    }
}

fn coding() -> impl Strategy<Value = Coding> {
    prop_oneof![
        Just(Coding::Plain),
        (0..10u32).prop_map(Coding::Gzip),
        (0..10u32).prop_map(Coding::Deflate),
    ]
}

/// One OpenAI chunk.
#[derive(Debug, Clone)]
pub struct OaChunk {
    content: String,
    reasoning: String,
    finish: bool,
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        prop::collection::vec(any::<char>(), 1..12).prop_map(|c| c.into_iter().collect()),
        Just(" h\u{e9}llo\n".to_string()),
    ]
}

/// An OpenAI stream: chunks, an in-stream error before chunk `i`, usage last, `[DONE]` or
/// not, SSE or JSON lines, and maybe cut at a byte.
#[derive(Debug, Clone)]
pub struct OaStream {
    chunks: Vec<OaChunk>,
    error: Option<(Index, String)>,
    usage: Option<(u32, u32)>,
    done: bool,
    jsonl: bool,
    cut: Option<Index>,
}

fn oa_stream() -> impl Strategy<Value = OaStream> {
    let chunk =
        (text(), text(), prop::bool::weighted(0.1)).prop_map(|(content, reasoning, finish)| {
            OaChunk {
                content,
                reasoning,
                finish,
            }
        });
    (
        prop::collection::vec(chunk, 0..8),
        prop::option::weighted(0.1, (any::<Index>(), "[a-z ]{0,20}")),
        prop::option::of((0..5000u32, 0..5000u32)),
        prop::bool::weighted(0.8),
        prop::bool::weighted(0.3),
        prop::option::weighted(0.15, any::<Index>()),
    )
        .prop_map(|(chunks, error, usage, done, jsonl, cut)| OaStream {
            chunks,
            error,
            usage,
            done,
            jsonl,
            cut,
        })
}

enum Item<'a> {
    Chunk(&'a OaChunk),
    Error(&'a str),
    Usage(u32, u32),
}

impl OaStream {
    fn items(&self) -> Vec<Item<'_>> {
        let mut items: Vec<Item<'_>> = self.chunks.iter().map(Item::Chunk).collect();
        if let Some((at, message)) = &self.error {
            items.insert(at.index(items.len() + 1), Item::Error(message));
        }
        if let Some((p, c)) = self.usage {
            items.push(Item::Usage(p, c));
        }
        items
    }

    pub fn bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        let mut event = |json: &[u8]| {
            if self.jsonl {
                out.extend_from_slice(json);
                out.push(b'\n');
            } else {
                out.extend_from_slice(b"data: ");
                out.extend_from_slice(json);
                out.extend_from_slice(b"\n\n");
            }
        };
        for item in self.items() {
            let json = match item {
                Item::Chunk(c) => serde_json::json!({"choices": [{
                    "index": 0,
                    "delta": {"content": c.content, "reasoning_content": c.reasoning},
                    "finish_reason": if c.finish { Some("stop") } else { None },
                }]}),
                Item::Error(m) => serde_json::json!({"error": {"message": m}}),
                Item::Usage(p, c) => serde_json::json!({
                    "choices": [],
                    "usage": {"prompt_tokens": p, "completion_tokens": c},
                }),
            };
            event(&serde_json::to_vec(&json).expect("serialises"));
        }
        if self.done {
            event(b"[DONE]");
        }
        if let Some(cut) = self.cut {
            out.truncate(cut.index(out.len() + 1));
        }
        out
    }

    /// The outcome's shape, for a stream not cut.
    pub fn expected(&self) -> Shape {
        let mut answer = String::new();
        let mut reasoning = String::new();
        let mut text_chunks = 0;
        let mut finished = false;
        let mut usage = None;
        let mut error = None;
        for item in self.items() {
            match item {
                Item::Chunk(c) => {
                    answer.push_str(&c.content);
                    reasoning.push_str(&c.reasoning);
                    text_chunks += usize::from(!c.content.is_empty() || !c.reasoning.is_empty());
                    finished |= c.finish;
                }
                Item::Error(m) => {
                    error = Some((ErrorKind::InStreamError, m.to_string()));
                    break;
                }
                Item::Usage(p, c) => usage = Some((p, c)),
            }
        }
        // a JSON-lines body that is only `[DONE]` reads as SSE (its first line is not a
        // record), where that line is no event
        let done = self.done && !(self.jsonl && self.items().is_empty());
        let complete = done || (self.jsonl && finished);
        if error.is_none() && !complete {
            error = Some((
                ErrorKind::BrokenStream,
                "the stream ended without [DONE]".to_string(),
            ));
        }
        let output_tokens = usage.map(|u| u.1);
        Shape {
            error,
            times: (text_chunks > 0, !answer.is_empty(), text_chunks > 0),
            answer,
            reasoning,
            output_tokens,
            source: if output_tokens.is_some() {
                TokenSource::Server
            } else {
                TokenSource::Client
            },
            input_tokens: usage.map(|u| u.0),
            reasoning_tokens: None,
            text_chunks,
        }
    }
}

fn read(coding: Option<&str>, stream: bool, body: &[u8], cuts: Option<&Cuts>) -> Shape {
    let body = Bytes::copy_from_slice(body);
    let pieces = match cuts {
        Some(c) => c.split_bytes(&body),
        None => vec![body],
    };
    shape(&body_replay::read(coding, stream, &pieces))
}

fn body_any_split(config: Config) -> Result<(), String> {
    check(
        config,
        (oa_stream(), coding(), cuts()),
        true,
        |(s, coding, cuts)| {
            let plain = s.bytes();
            let whole = read(None, true, &plain, None);
            if s.cut.is_none() {
                prop_assert_eq!(
                    &whole,
                    &s.expected(),
                    "body {:?}",
                    String::from_utf8_lossy(&plain)
                );
            }
            let encoded = coding.encode(&plain);
            let split = read(coding.label(), true, &encoded, Some(&cuts));
            prop_assert_eq!(
                &split,
                &whole,
                "{:?} split at {:?}",
                coding,
                cuts.offsets(encoded.len())
            );
            Ok(())
        },
    )
}

/// Content-encoding labels: decoded, not decoded, and spelt oddly.
const LABELS: [Option<&str>; 9] = [
    None,
    Some("identity"),
    Some(""),
    Some("gzip"),
    Some(" X-GZIP "),
    Some("deflate"),
    Some("br"),
    Some("zstd"),
    Some("gzip, deflate"),
];

fn decoded_label(label: Option<&str>) -> bool {
    let l = label.unwrap_or("").trim().to_ascii_lowercase();
    ["", "identity", "gzip", "x-gzip", "deflate"].contains(&l.as_str())
}

fn plain_label(label: Option<&str>) -> bool {
    let l = label.unwrap_or("").trim().to_ascii_lowercase();
    l.is_empty() || l == "identity"
}

/// Damage done to a compressed body.
#[derive(Debug, Clone)]
pub enum Damage {
    None,
    Flip(Index, u8),
    Truncate(Index),
    Insert(Index, Vec<u8>),
}

#[derive(Debug, Clone)]
pub struct Garbled {
    raw: Vec<u8>,
    coding: Coding,
    damage: Damage,
    label: usize,
    stream: bool,
}

fn garbled() -> impl Strategy<Value = Garbled> {
    let raw = prop_oneof![
        3 => noise(120),
        1 => oa_stream().prop_map(|s| s.bytes()),
    ];
    let damage = prop_oneof![
        2 => Just(Damage::None),
        1 => (any::<Index>(), 1..=255u8).prop_map(|(i, x)| Damage::Flip(i, x)),
        1 => any::<Index>().prop_map(Damage::Truncate),
        1 => (any::<Index>(), prop::collection::vec(any::<u8>(), 1..16))
            .prop_map(|(i, b)| Damage::Insert(i, b)),
    ];
    (raw, coding(), damage, 0..LABELS.len(), any::<bool>()).prop_map(
        |(raw, coding, damage, label, stream)| Garbled {
            raw,
            coding,
            damage,
            label,
            stream,
        },
    )
}

impl Garbled {
    fn bytes(&self) -> Vec<u8> {
        let mut b = self.coding.encode(&self.raw);
        match &self.damage {
            Damage::None => {}
            Damage::Flip(i, x) => {
                if !b.is_empty() {
                    let i = i.index(b.len());
                    b[i] ^= x;
                }
            }
            Damage::Truncate(i) => b.truncate(i.index(b.len() + 1)),
            Damage::Insert(i, x) => {
                let i = i.index(b.len() + 1);
                b.splice(i..i, x.iter().copied());
            }
        }
        b
    }
}

fn body_arbitrary_bytes(config: Config) -> Result<(), String> {
    check(config, (garbled(), cuts()), true, |(g, cuts)| {
        let label = LABELS[g.label];
        let body = g.bytes();
        let got = read(label, g.stream, &body, Some(&cuts));
        if !decoded_label(label) {
            let (kind, message) = got.error.clone().expect("refused");
            prop_assert_eq!(kind, ErrorKind::BadPayload);
            prop_assert!(message.contains("content-encoding"), "{}", message);
            return Ok(());
        }
        if let Some((kind, _)) = &got.error {
            prop_assert!(
                matches!(
                    kind,
                    ErrorKind::BadPayload | ErrorKind::BrokenStream | ErrorKind::InStreamError
                ),
                "{:?}",
                got.error
            );
        }
        // a body that reads plain (sent plain, or compressed intact and labelled so)
        // reads split as the plain body does whole
        let intact = matches!(g.damage, Damage::None)
            && (g.coding == Coding::Plain && plain_label(label)
                || g.coding.label().is_some_and(|l| {
                    label.is_some_and(|x| x.trim().eq_ignore_ascii_case(l))
                        || (l == "gzip" && label == Some(" X-GZIP "))
                }));
        if intact {
            let whole = read(None, g.stream, &g.raw, None);
            prop_assert_eq!(&got, &whole, "split at {:?}", cuts.offsets(body.len()));
        }
        Ok(())
    })
}

// ---------------------------------------------------------------------------------------------
// Memory at the caps

/// An over-long line (or event) for the parser.
#[derive(Debug, Clone)]
pub struct Overlong {
    /// 0: an SSE data line, 1: a JSON line, 2: an event's data lines of `line` bytes each.
    kind: u8,
    /// Bytes past the cap (kinds 0 and 1).
    extra: usize,
    /// Line length (kind 2).
    line: usize,
    /// A complete event first.
    event_first: bool,
    cuts: Cuts,
}

fn overlong() -> impl Strategy<Value = Overlong> {
    (
        0..3u8,
        1..=64 * 1024usize,
        1024usize..=(4usize << 20),
        any::<bool>(),
        cuts(),
    )
        .prop_map(|(kind, extra, line, event_first, mut cuts)| {
            cuts.bytewise = false;
            Overlong {
                kind,
                extra,
                line,
                event_first,
                cuts,
            }
        })
}

fn parser_overflow_memory(config: Config) -> Result<(), String> {
    check(config, overlong(), false, |o| {
        let mut body = Vec::new();
        if o.event_first {
            body.extend_from_slice(b"data: {\"a\":1}\n\n");
        }
        let held_line = match o.kind {
            0 | 1 => {
                body.extend_from_slice(if o.kind == 0 { b"data: " } else { b"{" });
                body.resize(body.len() + MAX_LINE_BYTES + o.extra, b'x');
                0
            }
            _ => {
                let mut line = b"data: ".to_vec();
                line.resize(o.line, b'y');
                line.push(b'\n');
                while body.len() < MAX_LINE_BYTES + 2 * line.len() {
                    body.extend_from_slice(&line);
                }
                // the buffer of a line that spans reads grows by doubling
                (2 * o.line).min(MAX_LINE_BYTES)
            }
        };
        // what follows is never parsed
        body.extend_from_slice(b"\n\ndata: [DONE]\n\n");
        let pieces = o.cuts.split(&body);
        let start = mem::start();
        let got = parse(&pieces);
        let peak = mem::peak_of_kind(start, usize::from(o.kind));
        prop_assert!(got.overflowed);
        prop_assert!(!got.saw_done);
        // (after that event, a `{` line is an SSE line: the framing is decided)
        let want: &[Ev] = if o.event_first {
            &[Ev::Data(b"{\"a\":1}".to_vec())]
        } else {
            &[]
        };
        prop_assert_eq!(&got.events[..], want);
        if let Some(peak) = peak {
            let bound = MAX_LINE_BYTES + held_line + MARGIN;
            prop_assert!(peak <= bound, "peak {} bytes > bound {}", peak, bound);
        }
        Ok(())
    })
}

/// A body at the caps.
#[derive(Debug, Clone)]
pub struct AtCap {
    /// 0: a whole body of `MAX_BODY_BYTES + delta`, 1: a streamed line past the line cap,
    /// 2: the same gzip-compressed, read 16 KiB at most at a time (the transport's buffer).
    kind: u8,
    delta: i64,
    cuts: Cuts,
}

fn at_cap() -> impl Strategy<Value = AtCap> {
    (0..3u8, -4..=4i64, cuts()).prop_map(|(kind, delta, mut cuts)| {
        cuts.bytewise = false;
        AtCap { kind, delta, cuts }
    })
}

/// The gzip body of kind 2, made once.
fn gzip_overlong() -> &'static Bytes {
    static BODY: std::sync::OnceLock<Bytes> = std::sync::OnceLock::new();
    BODY.get_or_init(|| {
        let mut line = b"data: {\"choices\":[{\"delta\":{\"content\":\"".to_vec();
        line.resize(line.len() + MAX_LINE_BYTES, b'z');
        Bytes::from(Coding::Gzip(6).encode(&line))
    })
}

/// Largest piece of the gzip body read at once.
const READ_BUFFER: usize = 16 * 1024;

fn body_cap_memory(config: Config) -> Result<(), String> {
    check(config, at_cap(), false, |c| {
        let (label, stream, pieces, bound) = match c.kind {
            0 => {
                let len = (MAX_BODY_BYTES as i64 + c.delta) as usize;
                let body = Bytes::from(vec![b'x'; len]);
                (
                    None,
                    false,
                    c.cuts.split_bytes(&body),
                    MAX_BODY_BYTES + MARGIN,
                )
            }
            1 => {
                let mut body = b"data: ".to_vec();
                body.resize(
                    body.len() + MAX_LINE_BYTES + c.delta.unsigned_abs() as usize + 1,
                    b'x',
                );
                let body = Bytes::from(body);
                (
                    None,
                    true,
                    c.cuts.split_bytes(&body),
                    MAX_LINE_BYTES + MARGIN,
                )
            }
            _ => {
                let body = gzip_overlong();
                let mut pieces = Vec::new();
                for p in c.cuts.split_bytes(body) {
                    let mut p = p;
                    while p.len() > READ_BUFFER {
                        pieces.push(p.split_to(READ_BUFFER));
                    }
                    pieces.push(p);
                }
                // the line buffer, a decoded read (deflate gives at most ~1,032 bytes per
                // byte) in a buffer grown by doubling, and the decoder
                (
                    Some("gzip"),
                    true,
                    pieces,
                    MAX_LINE_BYTES + 2 * 1032 * READ_BUFFER + MARGIN,
                )
            }
        };
        let start = mem::start();
        let got = shape(&body_replay::read(label, stream, &pieces));
        let peak = mem::peak_of_kind(start, usize::from(c.kind));
        drop(pieces);
        let (kind, message) = got.error.clone().expect("refused");
        prop_assert_eq!(kind, ErrorKind::BadPayload);
        let over = match c.kind {
            0 => {
                if c.delta > 0 {
                    "exceeds"
                } else {
                    "not valid JSON"
                }
            }
            _ => "longer than 16 MiB",
        };
        prop_assert!(message.contains(over), "{}", message);
        if let Some(peak) = peak {
            prop_assert!(peak <= bound, "peak {} bytes > bound {}", peak, bound);
        }
        Ok(())
    })
}
