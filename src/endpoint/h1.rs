//! One HTTP/1.1 connection driven by the task using it: it writes the request, reads the
//! response head and then the body straight from the socket into a reusable buffer, reading
//! the clock once right after each `read()` returns. No connection task, no channel: the bytes
//! are read and timed in the task that interprets them, as the spec asks. A connection can be
//! detached from one runtime and attached to another (the first-token lane and the workers).

use std::ops::Range;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::chunked::ChunkedDecoder;
use crate::clock::now_ns;

/// Size of each connection's read buffer: a backlog of ~80 typical events is taken in one read
/// (one clock read, one wake-up). A read that fills it is followed by a yield to the other
/// tasks, so one stream's backlog delays the others' reads by at most one buffer's worth.
pub(crate) const READ_BUFFER_BYTES: usize = 16 * 1024;
/// Largest read on the first-token lane: enough for a response head and the first events,
/// small enough that a stream already deep in tokens costs the lane one short read and parse.
pub(crate) const FIRST_TOKEN_READ_BYTES: usize = 1024;
/// Most response header lines read.
const MAX_HEADERS: usize = 64;

/// An open connection with its read buffer.
pub(crate) struct Conn {
    stream: TcpStream,
    buf: Vec<u8>,
    /// Unconsumed bytes are `buf[start..end]`.
    start: usize,
    end: usize,
    /// When the read that brought the buffered bytes completed.
    read_ns: u64,
    /// The last body read filled the buffer: more is probably waiting in the socket.
    full_read: bool,
    /// Most bytes taken by one read.
    read_cap: usize,
}

/// A [`Conn`] registered with no runtime: how idle connections wait in the pool and how a
/// connection moves between the first-token lane and the workers.
pub(crate) struct DetachedConn {
    stream: std::net::TcpStream,
    buf: Vec<u8>,
    start: usize,
    end: usize,
    read_ns: u64,
    full_read: bool,
}

impl DetachedConn {
    /// The connection registered with the runtime of the calling task, taking at most
    /// `read_cap` bytes a read.
    pub fn attach(self, read_cap: usize) -> std::io::Result<Conn> {
        Ok(Conn {
            read_cap,
            stream: TcpStream::from_std(self.stream)?,
            buf: self.buf,
            start: self.start,
            end: self.end,
            read_ns: self.read_ns,
            full_read: self.full_read,
        })
    }

    /// A connection over `stream` (connected, `TCP_NODELAY` set, non-blocking) that no runtime
    /// has seen yet: one connected ahead by the open-loop dispatcher.
    pub fn new(stream: std::net::TcpStream) -> DetachedConn {
        DetachedConn {
            stream,
            buf: vec![0; READ_BUFFER_BYTES],
            start: 0,
            end: 0,
            read_ns: 0,
            full_read: false,
        }
    }

    /// Writes as much of `request` as the socket takes now, never waiting (the socket is
    /// non-blocking): the bytes written, which may be fewer than all when the socket's buffer
    /// is full. The open-loop dispatcher writes a request this way at its intended time
    /// (`super::direct`); the runtime writes the rest.
    pub fn write_now(&mut self, request: &[u8]) -> std::io::Result<usize> {
        use std::io::Write;
        self.start = 0;
        self.end = 0;
        let mut sent = 0;
        while sent < request.len() {
            match (&self.stream).write(&request[sent..]) {
                Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
                Ok(n) => sent += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                Err(e) => return Err(e),
            }
        }
        Ok(sent)
    }

    /// False when an idle connection is known to be unusable: the server closed it, reset it
    /// or sent bytes nobody asked for. Never waits (the socket is non-blocking).
    pub fn looks_idle_and_open(&self) -> bool {
        let mut probe = [0u8; 1];
        match self.stream.peek(&mut probe) {
            Err(e) => e.kind() == std::io::ErrorKind::WouldBlock,
            Ok(_) => false,
        }
    }
}

/// What went wrong before the response head was complete.
#[derive(Debug)]
pub(crate) struct HeadError {
    /// The request may never have reached the server: the write failed, or the connection
    /// closed or was reset before any response byte (a stale keep-alive connection).
    pub before_response: bool,
    pub message: String,
}

/// The parts of a response head the client uses.
#[derive(Debug, Default, Clone)]
pub(crate) struct Head {
    pub status: u16,
    pub content_type: Option<String>,
    /// `content-encoding`, when the server sent one.
    pub content_encoding: Option<String>,
    pub server: Option<String>,
    pub location: Option<String>,
    /// The connection may carry another request after this response.
    pub keep_alive: bool,
    content_length: Option<u64>,
    chunked: bool,
}

enum Framing {
    Length(u64),
    Chunked(ChunkedDecoder),
    Close,
}

/// How far the body of one response has been read.
pub(crate) struct BodyReader {
    framing: Framing,
    done: bool,
}

impl BodyReader {
    /// The body of a response with `head` (to a request that was not `HEAD`).
    pub fn new(head: &Head) -> BodyReader {
        let no_body = (100..200).contains(&head.status) || matches!(head.status, 204 | 304);
        let framing = if no_body {
            Framing::Length(0)
        } else if head.chunked {
            Framing::Chunked(ChunkedDecoder::new())
        } else if let Some(n) = head.content_length {
            Framing::Length(n)
        } else {
            Framing::Close
        };
        let done = matches!(framing, Framing::Length(0));
        BodyReader { framing, done }
    }
}

impl Conn {
    /// A connection over `stream` (already connected, `TCP_NODELAY` set) taking at most
    /// `read_cap` bytes a read.
    pub fn new(stream: TcpStream, read_cap: usize) -> Conn {
        Conn {
            read_cap,
            stream,
            buf: vec![0; READ_BUFFER_BYTES],
            start: 0,
            end: 0,
            read_ns: 0,
            full_read: false,
        }
    }

    /// The connection without its runtime registration, to be attached to another runtime
    /// (the first-token lane hands a streaming response over to the worker this way).
    pub fn detach(self) -> std::io::Result<DetachedConn> {
        Ok(DetachedConn {
            stream: self.stream.into_std()?,
            buf: self.buf,
            start: self.start,
            end: self.end,
            read_ns: self.read_ns,
            full_read: self.full_read,
        })
    }

    /// Reads more bytes into the buffer; `Ok(0)` at the end of the stream.
    async fn fill(&mut self) -> std::io::Result<usize> {
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
        } else if self.end == self.buf.len() {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        if self.end == self.buf.len() {
            return Err(std::io::Error::other("the response head is too large"));
        }
        let room = (self.buf.len() - self.end).min(self.read_cap);
        let n = self
            .stream
            .read(&mut self.buf[self.end..self.end + room])
            .await?;
        self.read_ns = now_ns();
        self.end += n;
        self.full_read = n == room;
        Ok(n)
    }

    /// Writes `request` (head and body) and reads the response head (skipping `1xx` heads).
    pub async fn request(&mut self, request: &[u8]) -> Result<Head, HeadError> {
        self.write_request(request).await?;
        self.read_head().await
    }

    /// Writes `request` (head and body).
    pub async fn write_request(&mut self, request: &[u8]) -> Result<(), HeadError> {
        self.start = 0;
        self.end = 0;
        self.stream.write_all(request).await.map_err(|e| HeadError {
            before_response: true,
            message: format!("sending the request failed: {e}"),
        })
    }

    /// Reads the response head (skipping `1xx` heads).
    pub async fn read_head(&mut self) -> Result<Head, HeadError> {
        let mut got_bytes = false;
        loop {
            if self.start < self.end {
                match parse_head(&self.buf[self.start..self.end]) {
                    Ok(Some((len, head))) => {
                        self.start += len;
                        if (100..200).contains(&head.status) && head.status != 101 {
                            continue;
                        }
                        return Ok(head);
                    }
                    Ok(None) => {}
                    Err(message) => {
                        return Err(HeadError {
                            before_response: false,
                            message,
                        })
                    }
                }
            }
            match self.fill().await {
                Ok(0) => {
                    return Err(HeadError {
                        before_response: !got_bytes,
                        message: "the connection closed before the response head was complete"
                            .to_string(),
                    })
                }
                Ok(_) => got_bytes = true,
                Err(e) => {
                    use std::io::ErrorKind as K;
                    let reset = matches!(
                        e.kind(),
                        K::ConnectionReset | K::BrokenPipe | K::ConnectionAborted
                    );
                    return Err(HeadError {
                        before_response: !got_bytes && reset,
                        message: format!("reading the response head failed: {e}"),
                    });
                }
            }
        }
    }

    /// The next body bytes (as a range of [`Conn::bytes`]) and the time the read that brought
    /// them completed; `None` at the end of the body. Waits for the socket, never polls.
    pub async fn body_next(
        &mut self,
        body: &mut BodyReader,
    ) -> Result<Option<(Range<usize>, u64)>, String> {
        loop {
            if body.done {
                return Ok(None);
            }
            if self.start < self.end {
                let start = self.start;
                let avail = self.end - start;
                let data = match &mut body.framing {
                    Framing::Length(rem) => {
                        let n = (*rem).min(avail as u64) as usize;
                        *rem -= n as u64;
                        body.done = *rem == 0;
                        self.start += n;
                        n
                    }
                    Framing::Chunked(dec) => {
                        let (n, used) = dec
                            .decode(&mut self.buf[start..self.end])
                            .map_err(|e| format!("invalid chunked body: {e}"))?;
                        body.done = dec.is_done();
                        self.start += used;
                        n
                    }
                    Framing::Close => {
                        self.start = self.end;
                        avail
                    }
                };
                if data > 0 {
                    return Ok(Some((start..start + data, self.read_ns)));
                }
                continue;
            }
            if self.full_read {
                // Let the other streams read before this one takes its next buffer.
                self.full_read = false;
                tokio::task::yield_now().await;
            }
            match self.fill().await {
                Ok(0) => {
                    return match body.framing {
                        Framing::Close => {
                            body.done = true;
                            Ok(None)
                        }
                        Framing::Length(rem) => Err(format!(
                            "the connection closed {rem} bytes before the end of the body"
                        )),
                        Framing::Chunked(_) => {
                            Err("the connection closed inside the chunked body".to_string())
                        }
                    }
                }
                Ok(_) => {}
                Err(e) => return Err(e.to_string()),
            }
        }
    }

    /// The bytes of a range returned by [`Conn::body_next`].
    pub fn bytes(&self, r: Range<usize>) -> &[u8] {
        &self.buf[r]
    }

    /// True when the response just read left the connection clean for the next request.
    pub fn reusable_after(&self, head: &Head, body: &BodyReader) -> bool {
        head.keep_alive
            && body.done
            && !matches!(body.framing, Framing::Close)
            && self.start == self.end
    }
}

/// Parses a response head from `buf`: `Ok(None)` if incomplete, else its length and content.
fn parse_head(buf: &[u8]) -> Result<Option<(usize, Head)>, String> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut resp = httparse::Response::new(&mut headers);
    let len = match resp.parse(buf) {
        Ok(httparse::Status::Complete(len)) => len,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(e) => return Err(format!("invalid response head: {e}")),
    };
    let mut head = Head {
        status: resp.code.unwrap_or(0),
        // HTTP/1.1 keeps the connection unless told; HTTP/1.0 closes it unless told.
        keep_alive: resp.version == Some(1),
        ..Head::default()
    };
    let text = |v: &[u8]| String::from_utf8_lossy(v).trim().to_string();
    for h in resp.headers.iter() {
        let name = h.name;
        if name.eq_ignore_ascii_case("content-length") {
            let n = std::str::from_utf8(h.value)
                .ok()
                .and_then(|s| s.trim().parse::<u64>().ok())
                .ok_or_else(|| "invalid content-length".to_string())?;
            if head.content_length.is_some_and(|m| m != n) {
                return Err("conflicting content-length headers".to_string());
            }
            head.content_length = Some(n);
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            let v = text(h.value).to_ascii_lowercase();
            head.chunked = v.rsplit(',').next().map(str::trim) == Some("chunked");
        } else if name.eq_ignore_ascii_case("connection") {
            for token in text(h.value).split(',') {
                let token = token.trim();
                if token.eq_ignore_ascii_case("close") {
                    head.keep_alive = false;
                } else if token.eq_ignore_ascii_case("keep-alive") && resp.version == Some(0) {
                    head.keep_alive = true;
                }
            }
        } else if name.eq_ignore_ascii_case("content-type") {
            head.content_type = Some(text(h.value));
        } else if name.eq_ignore_ascii_case("content-encoding") {
            head.content_encoding = Some(text(h.value));
        } else if name.eq_ignore_ascii_case("server") {
            head.server = Some(text(h.value));
        } else if name.eq_ignore_ascii_case("location") {
            head.location = Some(text(h.value));
        }
    }
    Ok(Some((len, head)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heads() {
        let raw = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\nServer: x/1\r\n\r\nrest";
        let (len, h) = parse_head(raw).unwrap().unwrap();
        assert_eq!(&raw[len..], b"rest");
        assert_eq!(h.status, 200);
        assert!(h.chunked && h.keep_alive);
        assert_eq!(h.content_type.as_deref(), Some("text/event-stream"));
        assert_eq!(h.server.as_deref(), Some("x/1"));

        let (_, h) = parse_head(
            b"HTTP/1.1 301 Moved\r\nlocation: /x\r\nconnection: close\r\ncontent-length: 0\r\n\r\n",
        )
        .unwrap()
        .unwrap();
        assert_eq!((h.status, h.keep_alive), (301, false));
        assert_eq!(
            (h.location.as_deref(), h.content_length),
            (Some("/x"), Some(0))
        );

        let (_, h) = parse_head(b"HTTP/1.0 200 OK\r\n\r\n").unwrap().unwrap();
        assert!(!h.keep_alive);
        let (_, h) = parse_head(b"HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\n\r\n")
            .unwrap()
            .unwrap();
        assert!(h.keep_alive);

        assert!(parse_head(b"HTTP/1.1 200 OK\r\ncontent-le")
            .unwrap()
            .is_none());
        assert!(parse_head(b"SSH-2.0-OpenSSH\r\n\r\n").is_err());
        assert!(parse_head(b"HTTP/1.1 200 OK\r\ncontent-length: x\r\n\r\n").is_err());
    }
}
