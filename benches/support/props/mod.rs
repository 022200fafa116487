//! Property tests of the stream parser (`rightsize::endpoint::sse`) and of the body reading
//! (`rightsize::endpoint::body_replay`: body pieces through the content decoder into the
//! stream reader or the whole-body cap), shared by two runners: `tests/endpoint/parser_props.rs` runs
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
use rightsize::endpoint::sse::{Event, Framing, StreamParser, MAX_LINE_BYTES};
use rightsize::record::{ErrorKind, ExchangeOutcome, TokenSource};

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

mod bodies;
mod caps;
pub mod mem;
mod streams;

use bodies::*;
use caps::*;
use streams::*;

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
