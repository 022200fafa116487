//! Generated streams (see the property list in `mod.rs`).

use super::*;

pub(super) const BOM: &[u8] = b"\xEF\xBB\xBF";

/// A line terminator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Eol {
    Lf,
    Cr,
    CrLf,
}

pub(super) fn eol() -> impl Strategy<Value = Eol> {
    prop_oneof![Just(Eol::Lf), Just(Eol::Cr), Just(Eol::CrLf)]
}

/// Writes lines, each with the next terminator of a cycle; a blank line right after a lone
/// CR takes CRLF for LF (CR LF is one line end, not two).
pub(super) struct Lines<'a> {
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
pub(super) fn value(max: usize) -> impl Strategy<Value = Vec<u8>> {
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

pub(super) const FIELDS: [&[u8]; 4] = [b"event", b"id", b"retry", b"x-other"];

pub(super) fn sse_line() -> impl Strategy<Value = SseLine> {
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

pub(super) fn sse_stream() -> impl Strategy<Value = SseStream> {
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

pub(super) fn joined(lines: &[SseLine]) -> Option<Vec<u8>> {
    let data: Vec<&[u8]> = lines.iter().filter_map(SseLine::data).collect();
    (!data.is_empty()).then(|| data.join(&b'\n'))
}

/// Events as the SSE rules say, `[DONE]` ending them.
pub(super) struct Model {
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

pub(super) fn check_parse(
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

pub(super) fn sse_any_split(config: Config) -> Result<(), String> {
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

pub(super) fn blanks() -> impl Strategy<Value = Vec<bool>> {
    prop::collection::vec(any::<bool>(), 0..3)
}

pub(super) fn blank_bytes(b: &[bool]) -> Vec<u8> {
    b.iter().map(|t| if *t { b'\t' } else { b' ' }).collect()
}

pub(super) fn jline() -> impl Strategy<Value = JLine> {
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

pub(super) fn jsonl_stream() -> impl Strategy<Value = JsonlStream> {
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

pub(super) fn jsonl_any_split(config: Config) -> Result<(), String> {
    check(config, (jsonl_stream(), cuts()), true, |(s, cuts)| {
        check_parse(&s.bytes(), &cuts, &s.expected(), Framing::JsonLines)
    })
}

/// Any bytes, mostly made of what the framing reacts to.
pub(super) fn noise(max: usize) -> impl Strategy<Value = Vec<u8>> {
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

pub(super) fn parser_arbitrary_bytes(config: Config) -> Result<(), String> {
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
