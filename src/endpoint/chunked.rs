//! Incremental, in-place decoder of an HTTP/1.1 `Transfer-Encoding: chunked` body.
//!
//! Each call takes the raw bytes of one network read and rewrites them in place so that the
//! body data (chunk framing removed) is at the start of the slice: no copy to another buffer,
//! no allocation. Chunk sizes, extensions, CRLFs and trailers may be split anywhere between
//! reads. Bare LF line ends are accepted as well as CRLF.

/// Why a chunked body cannot be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChunkedError {
    #[error("invalid chunk size line")]
    BadSize,
    #[error("chunk size too large")]
    SizeOverflow,
    #[error("chunk data not followed by CRLF")]
    MissingCrlf,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// In the hex digits of a chunk size (`digits` read so far).
    Size,
    /// In a chunk extension (`;name=value`), up to the line end.
    Ext,
    /// After the `\r` of the size line.
    SizeLf,
    /// Inside chunk data (`remaining` bytes left).
    Data,
    /// After chunk data: expecting `\r` (or a bare `\n`).
    DataCr,
    /// After chunk data and `\r`: expecting `\n`.
    DataLf,
    /// At the start of a trailer line (or of the final empty line).
    TrailerStart,
    /// Inside a trailer line.
    TrailerLine,
    /// After the `\r` of the final empty line.
    FinalLf,
    /// The last chunk and its trailer were read.
    Done,
}

/// The decoder's state between reads.
#[derive(Debug, Clone)]
pub struct ChunkedDecoder {
    state: State,
    digits: u8,
    remaining: u64,
}

impl Default for ChunkedDecoder {
    fn default() -> Self {
        Self::new()
    }
}

impl ChunkedDecoder {
    /// A decoder at the start of a body.
    pub fn new() -> Self {
        ChunkedDecoder {
            state: State::Size,
            digits: 0,
            remaining: 0,
        }
    }

    /// True once the last (zero-size) chunk and the trailer were read.
    pub fn is_done(&self) -> bool {
        self.state == State::Done
    }

    /// Decodes `buf` (the next raw bytes) in place. Returns `(data, consumed)`: the body data
    /// is now `buf[..data]`, and `consumed` raw bytes were used (all of `buf`, unless the body
    /// ended before its end: the rest does not belong to this body).
    pub fn decode(&mut self, buf: &mut [u8]) -> Result<(usize, usize), ChunkedError> {
        let mut r = 0; // read position
        let mut w = 0; // write position (w <= r)
        while r < buf.len() {
            let b = buf[r];
            match self.state {
                State::Size => match b {
                    b'0'..=b'9' | b'a'..=b'f' | b'A'..=b'F' => {
                        if self.digits >= 15 {
                            return Err(ChunkedError::SizeOverflow);
                        }
                        let d = (b as char).to_digit(16).unwrap_or(0);
                        self.remaining = self.remaining * 16 + u64::from(d);
                        self.digits += 1;
                    }
                    _ if self.digits == 0 => return Err(ChunkedError::BadSize),
                    b';' | b' ' | b'\t' => self.state = State::Ext,
                    b'\r' => self.state = State::SizeLf,
                    b'\n' => self.size_line_end(),
                    _ => return Err(ChunkedError::BadSize),
                },
                State::Ext => match b {
                    b'\r' => self.state = State::SizeLf,
                    b'\n' => self.size_line_end(),
                    _ => {}
                },
                State::SizeLf => {
                    if b != b'\n' {
                        return Err(ChunkedError::BadSize);
                    }
                    self.size_line_end();
                }
                State::Data => {
                    let avail = (buf.len() - r) as u64;
                    let n = self.remaining.min(avail) as usize;
                    if w != r {
                        buf.copy_within(r..r + n, w);
                    }
                    w += n;
                    r += n;
                    self.remaining -= n as u64;
                    if self.remaining == 0 {
                        self.state = State::DataCr;
                    }
                    continue;
                }
                State::DataCr => match b {
                    b'\r' => self.state = State::DataLf,
                    b'\n' => self.state = State::Size,
                    _ => return Err(ChunkedError::MissingCrlf),
                },
                State::DataLf => {
                    if b != b'\n' {
                        return Err(ChunkedError::MissingCrlf);
                    }
                    self.state = State::Size;
                }
                State::TrailerStart => match b {
                    b'\r' => self.state = State::FinalLf,
                    b'\n' => self.state = State::Done,
                    _ => self.state = State::TrailerLine,
                },
                State::TrailerLine => {
                    if b == b'\n' {
                        self.state = State::TrailerStart;
                    }
                }
                State::FinalLf => {
                    if b != b'\n' {
                        return Err(ChunkedError::MissingCrlf);
                    }
                    self.state = State::Done;
                }
                State::Done => break,
            }
            r += 1;
        }
        Ok((w, r))
    }

    fn size_line_end(&mut self) {
        self.digits = 0;
        self.state = if self.remaining == 0 {
            State::TrailerStart
        } else {
            State::Data
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Decodes `parts` one after another; returns the data, whether the body ended, and the
    /// raw bytes left over after its end.
    fn run(parts: &[&[u8]]) -> Result<(Vec<u8>, bool, usize), ChunkedError> {
        let mut d = ChunkedDecoder::new();
        let mut data = Vec::new();
        let mut left = 0;
        for part in parts {
            let mut buf = part.to_vec();
            let (n, used) = d.decode(&mut buf)?;
            data.extend_from_slice(&buf[..n]);
            left += buf.len() - used;
        }
        Ok((data, d.is_done(), left))
    }

    #[test]
    fn table_at_every_split() {
        // (name, raw body, decoded data, complete, bytes left over after the end)
        type Case = (&'static str, &'static [u8], &'static [u8], bool, usize);
        let cases: &[Case] = &[
            ("one chunk", b"5\r\nhello\r\n0\r\n\r\n", b"hello", true, 0),
            (
                "two chunks, hex sizes",
                b"3\r\nabc\r\nA\r\n0123456789\r\n0\r\n\r\n",
                b"abc0123456789",
                true,
                0,
            ),
            (
                "upper and lower hex",
                b"b\r\nhello world\r\n0\r\n\r\n",
                b"hello world",
                true,
                0,
            ),
            (
                "extension",
                b"5;name=val\r\nhello\r\n0;x\r\n\r\n",
                b"hello",
                true,
                0,
            ),
            (
                "trailers",
                b"2\r\nhi\r\n0\r\nx-a: 1\r\nx-b: 2\r\n\r\n",
                b"hi",
                true,
                0,
            ),
            ("bare lf", b"2\nhi\n0\n\n", b"hi", true, 0),
            ("leading zeros", b"0002\r\nhi\r\n0\r\n\r\n", b"hi", true, 0),
            (
                "data with crlf inside",
                b"4\r\n\r\n\r\n\r\n0\r\n\r\n",
                b"\r\n\r\n",
                true,
                0,
            ),
            (
                "not finished",
                b"5\r\nhello\r\n3\r\nab",
                b"helloab",
                false,
                0,
            ),
            (
                "bytes after the end",
                b"1\r\nx\r\n0\r\n\r\nHTTP",
                b"x",
                true,
                4,
            ),
            ("empty body", b"0\r\n\r\n", b"", true, 0),
        ];
        for (name, raw, want, complete, left) in cases {
            let want = (want.to_vec(), *complete, *left);
            assert_eq!(run(&[raw]).as_ref(), Ok(&want), "{name}");
            for i in 0..=raw.len() {
                assert_eq!(
                    run(&[&raw[..i], &raw[i..]]).as_ref(),
                    Ok(&want),
                    "{name} at {i}"
                );
                for j in i..=raw.len() {
                    let got = run(&[&raw[..i], &raw[i..j], &raw[j..]]);
                    assert_eq!(got.as_ref(), Ok(&want), "{name} at {i},{j}");
                }
            }
            let bytes: Vec<&[u8]> = raw.chunks(1).collect();
            assert_eq!(run(&bytes).as_ref(), Ok(&want), "{name} byte by byte");
        }
    }

    #[test]
    fn malformed_bodies_are_errors() {
        let cases: &[(&[u8], ChunkedError)] = &[
            (b"x\r\n", ChunkedError::BadSize),
            (b"\r\n", ChunkedError::BadSize),
            (b"2\r\nhiX", ChunkedError::MissingCrlf),
            (b"2\r\nhi\rX", ChunkedError::MissingCrlf),
            (b"2\rX", ChunkedError::BadSize),
            (b"1234567890abcdef0\r\n", ChunkedError::SizeOverflow),
        ];
        for (raw, want) in cases {
            let bytes: Vec<&[u8]> = raw.chunks(1).collect();
            assert_eq!(
                run(&bytes).err().as_ref(),
                Some(want),
                "{}",
                String::from_utf8_lossy(raw)
            );
        }
    }
}
