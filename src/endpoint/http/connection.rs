//! One HTTP/1.1 connection: hyper's connection-level client over a socket of ours, driven by
//! the task that uses it. There is no connection task: hyper's connection future (which does
//! the socket reads and writes) is polled in the same task that awaits the response and its
//! body frames, so the bytes are read, stamped and interpreted in one task, as the timing
//! rule asks. The connection moves as one value between the worker, the first-token lane
//! (`super::exchange`), the open loop's dispatcher (`super::direct`) and the pool.
//!
//! The socket under it is ours, as hyper sees it: a TCP stream (with TLS over it for
//! `https://`) that can move between runtimes while hyper owns it, caps how much one read
//! takes, and stamps the monotonic clock the moment a read returns bytes. Why: hyper owns the
//! protocol (framing, chunked bodies, keep-alive), but three things a measuring client needs
//! sit under it. (1) A connection moves between the worker runtime and the first-token lane
//! mid-response, and the open-loop dispatcher writes on it from a thread with no runtime at
//! all; a tokio socket is tied to the reactor it was registered with, so the registration
//! lives in a shared [`Link`] that the owner releases at each hand-over, and the next poll
//! inside a runtime registers the socket there. (2) The lane takes short reads, so a stream
//! deep in tokens costs it one small read; the cap is the link's. (3) The read time: every
//! body frame hyper hands out carries the time of the read that brought its bytes, read here
//! right after `read()` returns ([`Conn::next_data`]).
//!
//! Outside a runtime (the dispatcher's thread) reads and writes are plain non-blocking calls:
//! `WouldBlock` is `Pending` with no waker kept, which is right only because the dispatcher
//! polls once and hands the connection to a runtime, whose first poll registers the socket
//! and asks again.

use std::future::Future;
use std::io::{self, Read, Write};
use std::pin::{pin, Pin};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Wake, Waker};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::client::conn::http1::{self, Connection, SendRequest};
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use crate::clock::now_ns;

/// A request as this client sends it: the body whole, its length known.
pub(crate) type Request = http::Request<Full<Bytes>>;
/// A response as hyper hands it over: the head, and the body to read frame by frame.
pub(crate) type Response = http::Response<Incoming>;
/// An answer on its way ([`Conn::send`]): ready once the connection has read its head.
pub(crate) type Pending =
    std::pin::Pin<Box<dyn Future<Output = Result<Response, SendError>> + Send>>;
/// Why a request got no response, and the request back when hyper never wrote it.
pub(crate) type SendError = hyper::client::conn::TrySendError<Request>;

/// Most response header lines read.
const MAX_HEADERS: usize = 64;
/// Passes of one [`Conn::drive`] poll while its own polls keep waking it, before it yields.
const MAX_INLINE_PASSES: usize = 8;

/// The waker hyper and the socket see while a connection is driven. hyper's connection and
/// its body wake each other as they hand a frame over (the body asks for more, the
/// connection says it has some); both are polled in one task here, so those wake-ups would
/// each cost a trip through the scheduler and a spurious poll. A wake that comes while the
/// task is polling is noted instead, and the poll goes round once more; a wake from outside
/// (the reactor: bytes arrived) goes to the task that drives the connection now.
struct DriveWaker {
    /// [`POLLING`] and [`WOKEN`].
    state: AtomicU8,
    /// The waker of the task driving the connection now.
    task: futures_util::task::AtomicWaker,
}

const POLLING: u8 = 1;
const WOKEN: u8 = 2;

impl DriveWaker {
    /// Sets the task to wake and starts a polling pass.
    fn begin(&self, task: &Waker) {
        self.task.register(task);
        self.state.store(POLLING, Ordering::SeqCst);
    }

    /// Forgets the wakes so far in this pass: for just before polling hyper's connection,
    /// which sees for itself whatever they were about (bytes ready, a frame wanted).
    fn seen(&self) {
        self.state.store(POLLING, Ordering::SeqCst);
    }

    /// Ends a polling pass: true when something woke the task since [`DriveWaker::seen`].
    fn end(&self) -> bool {
        self.state.swap(0, Ordering::SeqCst) & WOKEN != 0
    }
}

impl Wake for DriveWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        if self.state.fetch_or(WOKEN, Ordering::SeqCst) & POLLING == 0 {
            self.task.wake();
        }
    }
}

/// An open connection.
pub(crate) struct Conn {
    send: SendRequest<Full<Bytes>>,
    /// hyper's connection future; `None` once it has ended (closed, failed).
    driver: Option<Connection<TokioIo<Stream>, Full<Bytes>>>,
    link: Arc<Link>,
    /// What hyper and the socket wake ([`DriveWaker`]), and the same as a `Waker`.
    drive_waker: Arc<DriveWaker>,
    waker: Waker,
}

impl Conn {
    /// The HTTP/1.1 client over `stream`, whose socket's owner side is `link`.
    pub async fn handshake(stream: Stream, link: Arc<Link>) -> hyper::Result<Conn> {
        let (send, driver) = http1::Builder::new()
            .max_headers(MAX_HEADERS)
            // one read buffer of a fixed size per connection, refilled in place (the socket
            // caps each read: [`Link::set_read_cap`]); hyper's adaptive buffer (8 KiB, growing) took
            // 3 % fewer token events/s in `cargo bench --bench client_events` for 9 KiB less
            // memory per stream
            .read_buf_exact_size(Some(READ_BUFFER_BYTES))
            .handshake(TokioIo::new(stream))
            .await?;
        let drive_waker = Arc::new(DriveWaker {
            state: AtomicU8::new(0),
            task: futures_util::task::AtomicWaker::new(),
        });
        Ok(Conn {
            send,
            driver: Some(driver),
            link,
            waker: Waker::from(drive_waker.clone()),
            drive_waker,
        })
    }

    /// [`Conn::handshake`] outside any runtime (it completes at once: no I/O).
    pub fn handshake_now(stream: Stream, link: Arc<Link>) -> Option<Conn> {
        let mut fut = pin!(Self::handshake(stream, link));
        match fut.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
            Poll::Ready(Ok(c)) => Some(c),
            _ => None,
        }
    }

    /// The socket's owner side.
    pub fn link(&self) -> &Link {
        &self.link
    }

    /// Queues `req` (nothing is written until the connection is polled: [`Conn::drive`],
    /// [`Conn::write_now`]). When the connection cannot take it, the answer is an error that
    /// gives the request back.
    pub fn send(&mut self, req: Request) -> Pending {
        Box::pin(self.send.try_send_request(req))
    }

    /// Polls hyper's connection once: its reads and writes make what progress they can.
    fn poll_driver(&mut self, cx: &mut Context<'_>) {
        if let Some(d) = &mut self.driver {
            if std::pin::Pin::new(d).poll(cx).is_ready() {
                // closed or failed: the request or body waiting on it gets the error
                self.driver = None;
            }
        }
    }

    /// Waits for `fut` while driving the connection in this task: both are polled with the
    /// [`DriveWaker`], going round again while their own polls wake each other.
    pub async fn drive<F: Future>(&mut self, fut: F) -> F::Output {
        let mut fut = pin!(fut);
        std::future::poll_fn(|cx| {
            let waker = self.waker.clone();
            let mut inner = Context::from_waker(&waker);
            for _ in 0..MAX_INLINE_PASSES {
                self.drive_waker.begin(cx.waker());
                let mut done = fut.as_mut().poll(&mut inner);
                if done.is_pending() {
                    self.drive_waker.seen();
                    self.poll_driver(&mut inner);
                    done = fut.as_mut().poll(&mut inner);
                }
                let woken = self.drive_waker.end();
                if done.is_ready() || !woken {
                    return done;
                }
            }
            cx.waker().wake_by_ref();
            Poll::Pending
        })
        .await
    }

    /// One poll of the connection that registers nothing and keeps no waker: it writes what
    /// the socket takes now of a queued request, never waiting. For a task or thread about to
    /// hand the connection on (the worker to the lane, the open-loop dispatcher); the next
    /// owner's polls write the rest.
    pub fn write_now(&mut self) {
        self.link.stay_unregistered(true);
        self.poll_driver(&mut Context::from_waker(Waker::noop()));
        self.link.stay_unregistered(false);
    }

    /// The next body bytes and the time the read that brought them returned; `None` at the
    /// end of the body. Trailers are read past.
    pub async fn next_data(&mut self, body: &mut Incoming) -> hyper::Result<Option<(Bytes, u64)>> {
        loop {
            match self.drive(body.frame()).await {
                None => return Ok(None),
                Some(Err(e)) => return Err(e),
                Some(Ok(frame)) => {
                    if let Ok(data) = frame.into_data() {
                        if !data.is_empty() {
                            return Ok(Some((data, self.link.read_ns())));
                        }
                    }
                }
            }
        }
    }

    /// After an answer was read to its end: lets hyper take up the connection's next request
    /// and says whether it can (false when the server closed it or asked to).
    pub async fn settle(&mut self) -> bool {
        std::future::poll_fn(|cx| {
            let waker = self.waker.clone();
            let mut inner = Context::from_waker(&waker);
            for _ in 0..MAX_INLINE_PASSES {
                self.drive_waker.begin(cx.waker());
                self.drive_waker.seen();
                self.poll_driver(&mut inner);
                if !self.drive_waker.end() {
                    break;
                }
            }
            Poll::Ready(())
        })
        .await;
        self.driver.is_some() && self.send.is_ready()
    }

    /// Unregisters the socket from this runtime, for a hand-over ([`Link::release`]).
    pub fn release(self) -> Conn {
        self.link.release();
        self
    }
}

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

    /// Polls register nothing while `yes` (see [`Conn::write_now`]).
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
