//! Bodies (see the property list in `mod.rs`).

use super::*;

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

pub(super) fn coding() -> impl Strategy<Value = Coding> {
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

pub(super) fn text() -> impl Strategy<Value = String> {
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

pub(super) fn oa_stream() -> impl Strategy<Value = OaStream> {
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

pub(super) enum Item<'a> {
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

pub(super) fn read(coding: Option<&str>, stream: bool, body: &[u8], cuts: Option<&Cuts>) -> Shape {
    let body = Bytes::copy_from_slice(body);
    let pieces = match cuts {
        Some(c) => c.split_bytes(&body),
        None => vec![body],
    };
    shape(&body_replay::read(coding, stream, &pieces))
}

pub(super) fn body_any_split(config: Config) -> Result<(), String> {
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
pub(super) const LABELS: [Option<&str>; 9] = [
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

pub(super) fn decoded_label(label: Option<&str>) -> bool {
    let l = label.unwrap_or("").trim().to_ascii_lowercase();
    ["", "identity", "gzip", "x-gzip", "deflate"].contains(&l.as_str())
}

pub(super) fn plain_label(label: Option<&str>) -> bool {
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

pub(super) fn garbled() -> impl Strategy<Value = Garbled> {
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

pub(super) fn body_arbitrary_bytes(config: Config) -> Result<(), String> {
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
