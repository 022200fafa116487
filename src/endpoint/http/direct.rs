//! Open-loop sends written by the dispatcher's own thread (`docs/open-loop.md`, "How sends are
//! timed"): at a request's intended time the dispatcher queues the request on an idle
//! keep-alive connection of the pool (or one it connected ahead of time) and polls that
//! connection once, outside any runtime, so hyper writes the request then and there; only
//! then is the connection handed to the runtime, which reads the answer on the usual path (the
//! first-token lane, then a worker). So one kernel wake-up stands between the intended time
//! and the bytes, the dispatcher's, not two (the dispatcher's and then a runtime worker's).
//!
//! The request body is built before the dispatcher sleeps. A request that finds no connection
//! ready when it is due is sent on the runtime's path as before, and its lag shows it. Over
//! TLS the dispatcher encrypts and writes too; connections made ahead are plain `http://`
//! ones only (a TLS handshake on this thread could make a send late).
//!
//! The send time is read the moment before the poll that writes; the socket is non-blocking,
//! so the dispatcher never waits on it: bytes the socket does not take at once are written by
//! the runtime. A request that fails before any response on such a connection is sent again
//! on a new one (the stale keep-alive rule of [`super::exchange`]): every connection used
//! here has waited idle.

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;

use super::connection::Conn;
use super::exchange::{Early, HttpClient};
use crate::clock::now_ns;

/// Connect ahead only when the next send is at least this far off (a connect on this thread
/// must never make a send late).
const CONNECT_AHEAD_MIN: Duration = Duration::from_millis(3);
/// What a connect ahead leaves before the send it is for.
const CONNECT_MARGIN: Duration = Duration::from_millis(1);
/// The longest a connect ahead may take (the dispatcher looks at its stop token between).
const CONNECT_LIMIT: Duration = Duration::from_millis(250);
/// Connections connected ahead and not used yet, at most.
const RESERVE: usize = 2;
/// After a connect ahead fails, none for this long (the send path then meets and reports the
/// failure).
const CONNECT_BACKOFF: Duration = Duration::from_secs(1);

/// The dispatcher's writer for one `http://` endpoint: its pool and its own reserve of
/// connections opened ahead of time.
pub struct DirectWriter {
    client: Arc<HttpClient>,
    /// Connected ahead and never used.
    reserve: Vec<Conn>,
    /// No connect ahead before this time (ns): the last one failed.
    quiet_until: u64,
}

/// A request's bytes, built before its intended time.
pub struct BuiltRequest {
    pub(crate) body: Bytes,
    pub(crate) max_tokens: u32,
}

/// A request written by the dispatcher (or found unwritable), for the runtime to finish
/// ([`super::Endpoint::send_written`]).
pub struct Written {
    pub(crate) client: Arc<HttpClient>,
    pub(crate) body: Bytes,
    pub(crate) max_tokens: u32,
    pub(crate) early: Early,
    /// [`now_ns`] the moment before the poll that writes: the request's send time.
    pub(crate) start_ns: u64,
    /// The same moment, for the request's deadline.
    pub(crate) started: Instant,
}

impl Written {
    /// The request's send time ([`now_ns`]).
    pub fn start_ns(&self) -> u64 {
        self.start_ns
    }
}

impl DirectWriter {
    pub(crate) fn new(client: Arc<HttpClient>) -> DirectWriter {
        DirectWriter {
            client,
            reserve: Vec::new(),
            quiet_until: 0,
        }
    }

    /// The request with `body`, ready to be written.
    pub(crate) fn prepare_body(&self, body: Vec<u8>, max_tokens: u32) -> BuiltRequest {
        BuiltRequest {
            body: Bytes::from(body),
            max_tokens,
        }
    }

    /// Before sleeping until `due_ns` ([`now_ns`]): when the pool has no idle connection and
    /// the reserve is short, connects ahead, as long as `due_ns` is far enough off.
    pub fn get_ready(&mut self, due_ns: u64) {
        let pool = self.client.pool();
        while self.reserve.len() < RESERVE && pool.idle_len() == 0 {
            let now = now_ns();
            let left = due_ns.saturating_sub(now);
            // the host's addresses are looked up by the send path (the pre-flight's), not here
            if now < self.quiet_until
                || left < CONNECT_AHEAD_MIN.as_nanos() as u64
                || !pool.can_connect_now()
            {
                return;
            }
            let limit = (Duration::from_nanos(left) - CONNECT_MARGIN).min(CONNECT_LIMIT);
            match pool.connect_now(limit) {
                Some(conn) => self.reserve.push(conn),
                None => {
                    self.quiet_until = now + CONNECT_BACKOFF.as_nanos() as u64;
                    return;
                }
            }
        }
    }

    /// Writes `p` now on an idle connection (the pool's first, else the reserve's), stamping
    /// its send time the moment before the poll that writes; `None` when no connection is
    /// ready.
    pub fn write(&mut self, p: BuiltRequest) -> Option<Written> {
        let mut conn = match self.client.pool().take_idle() {
            Some(c) => c,
            None => loop {
                let c = self.reserve.pop()?;
                if c.link().looks_idle_and_open() {
                    break c;
                }
            },
        };
        let request = self.client.request(p.body.clone());
        let start_ns = now_ns();
        let started = Instant::now();
        let answer = conn.send(request);
        conn.write_now();
        Some(Written {
            client: self.client.clone(),
            body: p.body,
            max_tokens: p.max_tokens,
            early: Early { conn, answer },
            start_ns,
            started,
        })
    }
}

impl Drop for DirectWriter {
    /// Unused connections go to the pool for the next level.
    fn drop(&mut self) {
        let pool = self.client.pool();
        for conn in self.reserve.drain(..) {
            pool.put_unused(conn);
        }
    }
}
