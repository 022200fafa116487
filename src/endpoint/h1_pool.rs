//! The pool of idle keep-alive connections to one `http://` endpoint, shared by every worker,
//! and the request step with the reconnect rule: a request that fails on a reused connection
//! before any response byte (the server had closed it while idle) is sent once more on a new
//! connection. There is no cap on open connections: the engine's concurrency is the cap.

use std::net::SocketAddr;
use std::sync::Mutex;

use reqwest::Url;
use tokio::net::TcpStream;

use super::h1::{Conn, DetachedConn, Head};
use super::transport::Transport;

/// A failure before any response: how it looked, and its text (no URL).
#[derive(Debug)]
pub(crate) struct ConnectFailure {
    pub transport: Transport,
    pub detail: String,
}

/// Idle connections to one host and port.
pub(crate) struct Pool {
    host: String,
    port: u16,
    /// Addresses of the host, resolved on the first connect.
    addrs: Mutex<Vec<SocketAddr>>,
    /// Registered with no runtime: the lane or a worker attaches the one it takes.
    idle: Mutex<Vec<DetachedConn>>,
    max_idle: usize,
    /// ` (through the proxy host:port)` when the host is a proxy, for failure messages.
    via: String,
}

impl Pool {
    /// A pool for `url`'s host and port, keeping at most `max_idle` idle connections; `proxy`
    /// says `url` is a proxy's.
    pub fn new(url: &Url, max_idle: usize, proxy: bool) -> Pool {
        // An IPv6 address without its brackets.
        let host = url.host_str().unwrap_or_default();
        let host = host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_string();
        Pool {
            host,
            port: url.port_or_known_default().unwrap_or(80),
            addrs: Mutex::new(Vec::new()),
            idle: Mutex::new(Vec::new()),
            max_idle: max_idle.max(1),
            via: if proxy {
                format!(
                    " (through the proxy {}:{})",
                    url.host_str().unwrap_or_default(),
                    url.port_or_known_default().unwrap_or(80)
                )
            } else {
                String::new()
            },
        }
    }

    /// Keeps `conn` for a later request.
    pub fn put(&self, conn: Conn) {
        if let Ok(mut idle) = self.idle.lock() {
            if idle.len() < self.max_idle {
                if let Ok(conn) = conn.detach() {
                    idle.push(conn);
                }
            }
        }
    }

    /// Keeps a connection registered with no runtime (one connected ahead and not used).
    pub fn put_detached(&self, conn: DetachedConn) {
        if let Ok(mut idle) = self.idle.lock() {
            if idle.len() < self.max_idle {
                idle.push(conn);
            }
        }
    }

    /// Idle connections kept now.
    pub fn idle_len(&self) -> usize {
        self.idle.lock().map_or(0, |idle| idle.len())
    }

    /// The most recently used idle connection that still looks open, registered with no
    /// runtime.
    pub fn take_idle_detached(&self) -> Option<DetachedConn> {
        loop {
            let conn = self.idle.lock().ok()?.pop()?;
            if conn.looks_idle_and_open() {
                return Some(conn);
            }
        }
    }

    /// [`Pool::take_idle_detached`], attached to the calling task's runtime.
    fn take_idle(&self, read_cap: usize) -> Option<Conn> {
        loop {
            if let Ok(conn) = self.take_idle_detached()?.attach(read_cap) {
                return Some(conn);
            }
        }
    }

    /// Whether the host's addresses have been looked up.
    pub fn addresses_known(&self) -> bool {
        self.addrs.lock().is_ok_and(|a| !a.is_empty())
    }

    /// A new connection made on the calling thread (no runtime), waiting at most `limit`; only
    /// when the host's addresses are known already (no name lookup here). `None` when it
    /// could not be made: the request path will try again and report why.
    pub fn connect_now(&self, limit: std::time::Duration) -> Option<DetachedConn> {
        let addrs = self.addrs.lock().ok()?.clone();
        let until = std::time::Instant::now() + limit;
        for addr in addrs {
            let left = until.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                break;
            }
            let Ok(stream) = std::net::TcpStream::connect_timeout(&addr, left) else {
                continue;
            };
            if stream.set_nodelay(true).is_ok() && stream.set_nonblocking(true).is_ok() {
                return Some(DetachedConn::new(stream));
            }
        }
        None
    }

    async fn resolve(&self) -> Result<Vec<SocketAddr>, ConnectFailure> {
        if let Ok(a) = self.addrs.lock() {
            if !a.is_empty() {
                return Ok(a.clone());
            }
        }
        let found: Vec<SocketAddr> = tokio::net::lookup_host((self.host.as_str(), self.port))
            .await
            .map_err(|e| ConnectFailure {
                transport: Transport::Dns,
                detail: format!("dns error: {e}{}", self.via),
            })?
            .collect();
        if found.is_empty() {
            return Err(ConnectFailure {
                transport: Transport::Dns,
                detail: format!("dns error: no address found{}", self.via),
            });
        }
        if let Ok(mut a) = self.addrs.lock() {
            a.clone_from(&found);
        }
        Ok(found)
    }

    /// A new connection (each address of the host in turn).
    pub async fn connect(&self, read_cap: usize) -> Result<Conn, ConnectFailure> {
        let mut last = None;
        for addr in self.resolve().await? {
            match TcpStream::connect(addr).await {
                Ok(stream) => {
                    // Without TCP_NODELAY a small request may wait for a delayed ACK.
                    if let Err(e) = stream.set_nodelay(true) {
                        last = Some(e);
                        continue;
                    }
                    return Ok(Conn::new(stream, read_cap));
                }
                Err(e) => last = Some(e),
            }
        }
        let e = last.unwrap_or_else(|| std::io::Error::other("no address to connect to"));
        let transport = match e.kind() {
            std::io::ErrorKind::ConnectionRefused => Transport::Refused,
            std::io::ErrorKind::TimedOut => Transport::Timeout,
            _ => Transport::Other,
        };
        Err(ConnectFailure {
            transport,
            detail: format!("tcp connect error: {e}{}", self.via),
        })
    }

    /// An idle connection when `reuse` and one is left, else a new one; attached to the
    /// calling task's runtime, taking at most `read_cap` bytes a read. True when reused.
    pub async fn open(&self, reuse: bool, read_cap: usize) -> Result<(Conn, bool), ConnectFailure> {
        if reuse {
            if let Some(conn) = self.take_idle(read_cap) {
                return Ok((conn, true));
            }
        }
        Ok((self.connect(read_cap).await?, false))
    }

    /// Sends `request` on an idle connection or a new one (taking at most `read_cap` bytes a
    /// read) and reads the response head. Sets `reconnected` when a reused connection failed
    /// before any response byte and the request was sent again on a new one.
    pub async fn send(
        &self,
        request: &[u8],
        read_cap: usize,
        reconnected: &mut bool,
    ) -> Result<(Conn, Head), ConnectFailure> {
        let mut reuse = true;
        loop {
            let (mut conn, reused) = self.open(reuse, read_cap).await?;
            match conn.request(request).await {
                Ok(head) => return Ok((conn, head)),
                Err(e) if reused && e.before_response => {
                    *reconnected = true;
                    reuse = false;
                }
                Err(e) => return Err(head_failure(e.message)),
            }
        }
    }
}

fn head_failure(detail: String) -> ConnectFailure {
    ConnectFailure {
        transport: Transport::Other,
        detail,
    }
}
