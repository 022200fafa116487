//! One HTTP/1.1 connection on hyper's connection-level client, driven by the task using it:
//! there is no connection task. hyper's connection future (which does the socket reads and
//! writes) is polled in the same task that awaits the response and its body frames, so the
//! bytes are read, stamped ([`super::socket`]) and interpreted in one task, as the timing rule
//! asks. The connection moves as one value between the worker, the first-token lane, the open
//! loop's dispatcher and the pool.

use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::client::conn::http1::{self, Connection, SendRequest};
use hyper_util::rt::TokioIo;

use super::socket::{Link, Stream};

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

/// An open connection.
pub(crate) struct Conn {
    send: SendRequest<Full<Bytes>>,
    /// hyper's connection future; `None` once it has ended (closed, failed).
    driver: Option<Connection<TokioIo<Stream>, Full<Bytes>>>,
    link: Arc<Link>,
}

impl Conn {
    /// The HTTP/1.1 client over `stream`, whose socket's owner side is `link`.
    pub async fn handshake(stream: Stream, link: Arc<Link>) -> hyper::Result<Conn> {
        let (send, driver) = http1::Builder::new()
            .max_headers(MAX_HEADERS)
            .handshake(TokioIo::new(stream))
            .await?;
        Ok(Conn {
            send,
            driver: Some(driver),
            link,
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

    /// Waits for `fut` while driving the connection in this task.
    pub async fn drive<F: Future>(&mut self, fut: F) -> F::Output {
        let mut fut = pin!(fut);
        std::future::poll_fn(|cx| {
            if let Poll::Ready(v) = fut.as_mut().poll(cx) {
                return Poll::Ready(v);
            }
            self.poll_driver(cx);
            fut.as_mut().poll(cx)
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
            self.poll_driver(cx);
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
