//! The socket under every HTTP connection, as hyper sees it: a TCP stream (with TLS over it
//! for `https://`) that can move between runtimes while hyper owns it, caps how much one read
//! takes, and stamps the monotonic clock the moment a read returns bytes.
//!
//! Why it is ours: hyper owns the protocol (framing, chunked bodies, keep-alive), but three
//! things a measuring client needs sit under it. (1) A connection moves between the worker
//! runtime and the first-token lane (`super::lane`) mid-response, and the open-loop dispatcher
//! writes on it from a thread with no runtime at all (`super::direct`); a tokio socket is tied
//! to the reactor it was registered with, so the registration lives in a shared [`Link`] that
//! the owner releases at each hand-over, and the next poll inside a runtime registers the
//! socket there. (2) The lane takes short reads, so a stream deep in tokens costs it one small
//! read; the cap is the link's. (3) The read time: every body frame hyper hands out carries the
//! time of the read that brought its bytes, read here right after `read()` returns.
//!
//! Outside a runtime (the dispatcher's thread) reads and writes are plain non-blocking calls:
//! `WouldBlock` is `Pending` with no waker kept, which is right only because the dispatcher
//! polls once and hands the connection to a runtime, whose first poll registers the socket
//! and asks again.

use std::io::{self, Read, Write};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use crate::clock::now_ns;

/// Most bytes one read takes on a worker: a backlog of ~80 typical events in one read (one
/// clock read, one wake-up) without one stream's backlog holding the others up for long.
pub(crate) const READ_BUFFER_BYTES: usize = 16 * 1024;
/// Most bytes one read takes on the first-token lane: enough for a response head and the first
/// events, small enough that a stream already deep in tokens costs the lane one short read.
pub(crate) const FIRST_TOKEN_READ_BYTES: usize = 1024;

enum State {
    /// Registered with the reactor of the runtime that last polled it.
    Registered(tokio::net::TcpStream),
    /// Registered nowhere (non-blocking): idle in the pool, or between owners.
    Released(std::net::TcpStream),
    /// Lost while moving (deregistering failed): every call fails.
    Lost,
}

/// What the socket's owner shares with the socket hyper holds.
pub(crate) struct Link {
    state: Mutex<State>,
    read_cap: AtomicUsize,
    /// [`now_ns`] right after the last read that returned bytes.
    read_ns: AtomicU64,
    /// Polls stay unregistered (a write from a task that hands the connection on at once).
    unregistered: AtomicBool,
}

impl Link {
    fn new(state: State) -> Arc<Link> {
        Arc::new(Link {
            state: Mutex::new(state),
            read_cap: AtomicUsize::new(READ_BUFFER_BYTES),
            read_ns: AtomicU64::new(0),
            unregistered: AtomicBool::new(false),
        })
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// When the last read that brought bytes returned ([`now_ns`]).
    pub fn read_ns(&self) -> u64 {
        self.read_ns.load(Ordering::Relaxed)
    }

    /// Each read takes at most `bytes`.
    pub fn set_read_cap(&self, bytes: usize) {
        self.read_cap.store(bytes.max(1), Ordering::Relaxed);
    }

    /// Polls register nothing while `yes` (see [`super::conn::Conn::write_now`]).
    pub fn stay_unregistered(&self, yes: bool) {
        self.unregistered.store(yes, Ordering::Relaxed);
    }

    /// Unregisters the socket from its runtime: the next poll inside a runtime registers it
    /// with that one. Called at every hand-over (to the lane, back, into the pool).
    pub fn release(&self) {
        let mut st = self.state();
        if let State::Registered(_) = &*st {
            let State::Registered(t) = std::mem::replace(&mut *st, State::Lost) else {
                unreachable!()
            };
            if let Ok(s) = t.into_std() {
                *st = State::Released(s);
            }
        }
    }

    /// False when an idle connection is known to be unusable: the server closed it, reset it
    /// or sent bytes nobody asked for (for TLS, an alert). Never waits; leaves it released.
    pub fn looks_idle_and_open(&self) -> bool {
        self.release();
        let mut probe = [0u8; 1];
        match &*self.state() {
            State::Released(s) => match s.peek(&mut probe) {
                Err(e) => e.kind() == io::ErrorKind::WouldBlock,
                Ok(_) => false,
            },
            State::Registered(_) | State::Lost => false,
        }
    }
}

/// The TCP stream hyper reads and writes (under TLS for `https://`).
pub(crate) struct Socket {
    link: Arc<Link>,
}

impl Socket {
    /// A socket over a stream connected in a runtime, and the link its owner keeps.
    pub fn registered(stream: tokio::net::TcpStream) -> (Socket, Arc<Link>) {
        Self::with(State::Registered(stream))
    }

    /// A socket over a non-blocking stream connected outside any runtime.
    pub fn released(stream: std::net::TcpStream) -> (Socket, Arc<Link>) {
        Self::with(State::Released(stream))
    }

    fn with(state: State) -> (Socket, Arc<Link>) {
        let link = Link::new(state);
        (Socket { link: link.clone() }, link)
    }

    /// The link's state, registered with the current runtime when there is one and polls
    /// may register.
    fn state(&self) -> MutexGuard<'_, State> {
        let mut st = self.link.state();
        if matches!(*st, State::Released(_))
            && !self.link.unregistered.load(Ordering::Relaxed)
            && tokio::runtime::Handle::try_current().is_ok()
        {
            let State::Released(s) = std::mem::replace(&mut *st, State::Lost) else {
                unreachable!()
            };
            if let Ok(t) = tokio::net::TcpStream::from_std(s) {
                *st = State::Registered(t);
            }
        }
        st
    }
}

fn lost() -> io::Error {
    io::Error::other("the connection's socket was lost moving between threads")
}

/// A non-blocking call's result as a poll: `WouldBlock` is `Pending` (see the module header).
fn raw<T>(r: io::Result<T>) -> Poll<io::Result<T>> {
    match r {
        Err(e) if e.kind() == io::ErrorKind::WouldBlock => Poll::Pending,
        r => Poll::Ready(r),
    }
}

impl AsyncRead for Socket {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let cap = self.link.read_cap.load(Ordering::Relaxed);
        let n = {
            let mut st = self.state();
            let mut part = buf.take(cap);
            let polled = match &mut *st {
                State::Registered(t) => Pin::new(t).poll_read(cx, &mut part),
                State::Released(s) => {
                    raw(s.read(part.initialize_unfilled())).map_ok(|n| part.advance(n))
                }
                State::Lost => Poll::Ready(Err(lost())),
            };
            match polled {
                Poll::Ready(Ok(())) => part.filled().len(),
                other => return other,
            }
        };
        if n > 0 {
            self.link.read_ns.store(now_ns(), Ordering::Relaxed);
            // SAFETY: the `n` bytes were written by the read into `buf`'s unfilled part.
            unsafe { buf.assume_init(n) };
            buf.advance(n);
        }
        Poll::Ready(Ok(()))
    }
}

impl AsyncWrite for Socket {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        match &mut *self.state() {
            State::Registered(t) => Pin::new(t).poll_write(cx, data),
            State::Released(s) => raw(s.write(data)),
            State::Lost => Poll::Ready(Err(lost())),
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        match &mut *self.state() {
            State::Registered(t) => Pin::new(t).poll_write_vectored(cx, bufs),
            State::Released(s) => raw(s.write_vectored(bufs)),
            State::Lost => Poll::Ready(Err(lost())),
        }
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match &mut *self.state() {
            State::Registered(t) => Pin::new(t).poll_shutdown(cx),
            State::Released(s) => Poll::Ready(s.shutdown(std::net::Shutdown::Write)),
            State::Lost => Poll::Ready(Ok(())),
        }
    }
}

/// What hyper reads and writes: the socket, or TLS over it.
pub(crate) enum Stream {
    Plain(Socket),
    Tls(Box<tokio_rustls::client::TlsStream<Socket>>),
}

impl AsyncRead for Stream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_read(cx, buf),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Stream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_write(cx, data),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, data),
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_write_vectored(cx, bufs),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_write_vectored(cx, bufs),
        }
    }

    fn is_write_vectored(&self) -> bool {
        match self {
            Stream::Plain(s) => s.is_write_vectored(),
            Stream::Tls(s) => s.is_write_vectored(),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_flush(cx),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_shutdown(cx),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
        }
    }
}
