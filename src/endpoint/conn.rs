//! One HTTP/1.1 connection on hyper's connection-level client, driven by the task using it:
//! there is no connection task. hyper's connection future (which does the socket reads and
//! writes) is polled in the same task that awaits the response and its body frames, so the
//! bytes are read, stamped ([`super::socket`]) and interpreted in one task, as the timing rule
//! asks. The connection moves as one value between the worker, the first-token lane, the open
//! loop's dispatcher and the pool.

use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::client::conn::http1::{self, Connection, SendRequest};
use hyper_util::rt::TokioIo;

use super::socket::{Link, Stream, READ_BUFFER_BYTES};

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
            // caps each read: `super::socket`); hyper's adaptive buffer (8 KiB, growing) took
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
