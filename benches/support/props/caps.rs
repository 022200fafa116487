//! Memory at the caps (see the property list in `mod.rs`).

use super::*;

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

pub(super) fn overlong() -> impl Strategy<Value = Overlong> {
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

pub(super) fn parser_overflow_memory(config: Config) -> Result<(), String> {
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

pub(super) fn at_cap() -> impl Strategy<Value = AtCap> {
    (0..3u8, -4..=4i64, cuts()).prop_map(|(kind, delta, mut cuts)| {
        cuts.bytewise = false;
        AtCap { kind, delta, cuts }
    })
}

/// The gzip body of kind 2, made once.
pub(super) fn gzip_overlong() -> &'static Bytes {
    static BODY: std::sync::OnceLock<Bytes> = std::sync::OnceLock::new();
    BODY.get_or_init(|| {
        let mut line = b"data: {\"choices\":[{\"delta\":{\"content\":\"".to_vec();
        line.resize(line.len() + MAX_LINE_BYTES, b'z');
        Bytes::from(Coding::Gzip(6).encode(&line))
    })
}

/// Largest piece of the gzip body read at once.
pub(super) const READ_BUFFER: usize = 16 * 1024;

pub(super) fn body_cap_memory(config: Config) -> Result<(), String> {
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
