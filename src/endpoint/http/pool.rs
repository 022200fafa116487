//! The connections to one endpoint: new ones made through hyper-util's connector (the host
//! looked up at each connect, so DNS changes are seen; happy-eyeballs between addresses with a
//! timeout for each), through a proxy when the environment names one (absolute-form requests
//! for `http://`, a `CONNECT` tunnel for `https://`), with TLS (rustls) for `https://`; and the
//! idle keep-alive ones, shared by every worker. There is no cap on open connections: the
//! engine's concurrency is the cap.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use hyper_util::client::legacy::connect::proxy::Tunnel;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::proxy::matcher::Intercept;
use tower_service::Service;

use super::connection::{Conn, Socket, Stream};
use crate::endpoint::failure::{classify, describe};
use crate::endpoint::probe::Transport;

/// The longest one connect may take, over all of the host's addresses.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// A failure before any response: how it looked, and its text (no URL).
#[derive(Debug)]
pub(crate) struct ConnectFailure {
    pub transport: Transport,
    pub detail: String,
}

/// Where the connections go.
pub(crate) struct Target {
    /// `scheme://host:port` of the endpoint.
    pub origin: http::Uri,
    /// The proxy the environment names for it, if any.
    pub proxy: Option<Intercept>,
}

impl Target {
    fn tls(&self) -> bool {
        self.origin.scheme_str() == Some("https")
    }
}

/// Connections to one endpoint.
pub(crate) struct Pool {
    target: Target,
    connector: HttpConnector,
    /// The TLS client for `https://` (the server name is the endpoint's host).
    tls: Option<(
        tokio_rustls::TlsConnector,
        rustls::pki_types::ServerName<'static>,
    )>,
    /// Released from every runtime: the next owner's polls register them.
    idle: Mutex<Vec<Conn>>,
    max_idle: usize,
    /// The address of the last connection made straight to the endpoint (no proxy, no TLS),
    /// for connects outside any runtime ([`Pool::connect_now`]).
    last_addr: Mutex<Option<SocketAddr>>,
    /// ` (through the proxy host:port)` when connections go through a proxy, for messages.
    via: String,
}

/// The TLS settings every `https://` endpoint shares: the system's roots (`SSL_CERT_FILE` and
/// `SSL_CERT_DIR` honoured), HTTP/1.1 offered by ALPN. Built once: reading the roots takes
/// milliseconds.
fn tls_config() -> Result<Arc<rustls::ClientConfig>, String> {
    static CONFIG: OnceLock<Result<Arc<rustls::ClientConfig>, String>> = OnceLock::new();
    CONFIG
        .get_or_init(|| {
            let mut roots = rustls::RootCertStore::empty();
            let found = rustls_native_certs::load_native_certs();
            for cert in found.certs {
                let _ = roots.add(cert);
            }
            if roots.is_empty() {
                let why = found
                    .errors
                    .first()
                    .map_or("none found".to_string(), ToString::to_string);
                return Err(format!(
                    "no trusted root certificates could be read ({why}): install the system's \
                     CA certificates, or point SSL_CERT_FILE at a PEM file"
                ));
            }
            let provider = Arc::new(rustls::crypto::ring::default_provider());
            let mut config = rustls::ClientConfig::builder_with_provider(provider)
                .with_safe_default_protocol_versions()
                .map_err(|e| e.to_string())?
                .with_root_certificates(roots)
                .with_no_client_auth();
            config.alpn_protocols = vec![b"http/1.1".to_vec()];
            Ok(Arc::new(config))
        })
        .clone()
}

/// The proxy the environment names for `origin` (hyper-util's reading: `http_proxy`,
/// `https_proxy`, `all_proxy`, `no_proxy`, as curl reads them), with `var` reading the
/// environment. A variable that is set and is not a usable proxy URL is an error naming it:
/// a proxy left out silently would send the load elsewhere than the user said.
pub(crate) fn proxy_for(
    origin: &http::Uri,
    var: impl Fn(&str) -> Option<String>,
) -> Result<Option<Intercept>, String> {
    const VARS: [&str; 6] = [
        "http_proxy",
        "HTTP_PROXY",
        "https_proxy",
        "HTTPS_PROXY",
        "all_proxy",
        "ALL_PROXY",
    ];
    for name in VARS {
        let Some(value) = var(name).filter(|v| !v.trim().is_empty()) else {
            continue;
        };
        let value = value.trim();
        let with_scheme = if value.contains("://") {
            value.to_string()
        } else {
            format!("http://{value}")
        };
        let uri: http::Uri = with_scheme.parse().map_err(|e| {
            format!(
                "environment variable {name} is not a proxy URL ({e}); set it like \
                 http://proxy.example:3128"
            )
        })?;
        if uri.scheme_str() != Some("http") || uri.host().is_none() {
            return Err(format!(
                "environment variable {name} names a {} proxy; rightsize goes through http:// \
                 proxies only (set it like http://proxy.example:3128)",
                uri.scheme_str().unwrap_or("host-less")
            ));
        }
    }
    let get = |names: [&str; 2]| names.iter().find_map(|n| var(n)).unwrap_or_default();
    // `*` is every host, IP addresses too (hyper-util's matcher reads it for names only)
    if get(["no_proxy", "NO_PROXY"])
        .split(',')
        .any(|e| e.trim() == "*")
    {
        return Ok(None);
    }
    let matcher = hyper_util::client::proxy::matcher::Matcher::builder()
        .http(get(["http_proxy", "HTTP_PROXY"]))
        .https(get(["https_proxy", "HTTPS_PROXY"]))
        .all(get(["all_proxy", "ALL_PROXY"]))
        .no(get(["no_proxy", "NO_PROXY"]))
        .build();
    Ok(matcher.intercept(origin))
}

impl Pool {
    /// A pool for `target`, keeping at most `max_idle` idle connections.
    pub fn new(target: Target, max_idle: usize) -> Result<Pool, String> {
        let mut connector = HttpConnector::new();
        connector.enforce_http(false);
        connector.set_nodelay(true);
        connector.set_connect_timeout(Some(CONNECT_TIMEOUT));
        let tls = if target.tls() {
            let host = target.origin.host().unwrap_or_default();
            let host = host.trim_start_matches('[').trim_end_matches(']');
            let name = rustls::pki_types::ServerName::try_from(host.to_string())
                .map_err(|e| format!("'{host}' cannot be a TLS server name: {e}"))?;
            Some((tokio_rustls::TlsConnector::from(tls_config()?), name))
        } else {
            None
        };
        let via = match &target.proxy {
            Some(p) => format!(
                " (through the proxy {}:{})",
                p.uri().host().unwrap_or_default(),
                p.uri().port_u16().unwrap_or(80)
            ),
            None => String::new(),
        };
        Ok(Pool {
            target,
            connector,
            tls,
            idle: Mutex::new(Vec::new()),
            max_idle: max_idle.max(1),
            last_addr: Mutex::new(None),
            via,
        })
    }

    /// Requests go to the proxy in absolute form (`http://` through a proxy).
    pub fn absolute_form(&self) -> bool {
        self.target.proxy.is_some() && !self.target.tls()
    }

    /// The proxy's credentials, for `Proxy-Authorization` on absolute-form requests.
    pub fn proxy_auth(&self) -> Option<http::HeaderValue> {
        self.target.proxy.as_ref()?.basic_auth().cloned()
    }

    /// Keeps `conn` (released from its runtime) for a later request when it can take one.
    pub async fn put(&self, mut conn: Conn) {
        if !conn.settle().await {
            return;
        }
        let conn = conn.release();
        if let Ok(mut idle) = self.idle.lock() {
            if idle.len() < self.max_idle {
                idle.push(conn);
            }
        }
    }

    /// Keeps a connection that was never used (one connected ahead).
    pub fn put_unused(&self, conn: Conn) {
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

    /// The most recently used idle connection that still looks open.
    pub fn take_idle(&self) -> Option<Conn> {
        loop {
            let conn = self.idle.lock().ok()?.pop()?;
            if conn.link().looks_idle_and_open() {
                return Some(conn);
            }
        }
    }

    /// Whether a connection can be made outside any runtime ([`Pool::connect_now`]).
    pub fn can_connect_now(&self) -> bool {
        self.tls.is_none()
            && self.target.proxy.is_none()
            && self.last_addr.lock().is_ok_and(|a| a.is_some())
    }

    /// A new connection made on the calling thread (no runtime), waiting at most `limit`,
    /// to the address the last connect found (no name lookup here; plain `http://` without a
    /// proxy only). `None` when it could not be made: the request path will try again and
    /// report why.
    pub fn connect_now(&self, limit: Duration) -> Option<Conn> {
        if !self.can_connect_now() {
            return None;
        }
        let addr = (*self.last_addr.lock().ok()?)?;
        let stream = std::net::TcpStream::connect_timeout(&addr, limit).ok()?;
        stream.set_nodelay(true).ok()?;
        stream.set_nonblocking(true).ok()?;
        let (socket, link) = Socket::released(stream);
        Conn::handshake_now(Stream::Plain(socket), link)
    }

    /// A new connection.
    pub async fn connect(&self) -> Result<Conn, ConnectFailure> {
        let fail = |transport: Transport, detail: String| ConnectFailure {
            transport,
            detail: format!("{detail}{}", self.via),
        };
        let io = match &self.target.proxy {
            Some(p) if self.target.tls() => {
                let mut tunnel = Tunnel::new(p.uri().clone(), self.connector.clone());
                if let Some(auth) = p.basic_auth() {
                    tunnel = tunnel.with_auth(auth.clone());
                }
                tunnel.call(self.target.origin.clone()).await.map_err(|e| {
                    let e: &(dyn std::error::Error + 'static) = &e;
                    fail(classify(e), describe(e))
                })?
            }
            Some(p) => self
                .connector
                .clone()
                .call(p.uri().clone())
                .await
                .map_err(|e| {
                    let e: &(dyn std::error::Error + 'static) = &e;
                    fail(classify(e), describe(e))
                })?,
            None => self
                .connector
                .clone()
                .call(self.target.origin.clone())
                .await
                .map_err(|e| {
                    let e: &(dyn std::error::Error + 'static) = &e;
                    fail(classify(e), describe(e))
                })?,
        };
        let tcp = io.into_inner();
        if self.target.proxy.is_none() && self.tls.is_none() {
            if let (Ok(addr), Ok(mut last)) = (tcp.peer_addr(), self.last_addr.lock()) {
                *last = Some(addr);
            }
        }
        let (socket, link) = Socket::registered(tcp);
        let stream = match &self.tls {
            Some((tls, name)) => {
                let s = tls.connect(name.clone(), socket).await.map_err(|e| {
                    // a failure in the handshake is a TLS one, whatever its causes say
                    fail(
                        Transport::Tls,
                        format!("TLS handshake failed: {}", describe(&e)),
                    )
                })?;
                Stream::Tls(Box::new(s))
            }
            None => Stream::Plain(socket),
        };
        Conn::handshake(stream, link)
            .await
            .map_err(|e| fail(classify(&e), describe(&e)))
    }

    /// An idle connection when `reuse` and one is left, else a new one. True when reused.
    pub async fn open(&self, reuse: bool) -> Result<(Conn, bool), ConnectFailure> {
        if reuse {
            if let Some(conn) = self.take_idle() {
                return Ok((conn, true));
            }
        }
        Ok((self.connect().await?, false))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn proxy(target: &str, pairs: &[(&str, &str)]) -> Result<Option<String>, String> {
        let env = |k: &str| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        };
        proxy_for(&target.parse().unwrap(), env).map(|i| i.map(|i| i.uri().to_string()))
    }

    #[test]
    fn which_variable_gives_the_proxy() {
        let t = "http://10.1.2.3:8000";
        let s = "https://api.example.com:443";
        type Env<'a> = &'a [(&'a str, &'a str)];
        let cases: &[(&str, Env, Option<&str>)] = &[
            (t, &[], None),
            (
                t,
                &[("HTTP_PROXY", "http://p:3128")],
                Some("http://p:3128/"),
            ),
            // the lower-case name first, as curl reads it
            (
                t,
                &[
                    ("HTTP_PROXY", "http://upper:1"),
                    ("http_proxy", "http://lower:2"),
                ],
                Some("http://lower:2/"),
            ),
            (t, &[("ALL_PROXY", "p2:8080")], Some("http://p2:8080/")),
            (t, &[("https_proxy", "http://s:1")], None),
            (s, &[("https_proxy", "http://s:1")], Some("http://s:1/")),
            (s, &[("http_proxy", "http://p:1")], None),
            (s, &[("all_proxy", "http://a:1")], Some("http://a:1/")),
            // no_proxy: names with their subdomains, addresses, networks, `*`
            (
                s,
                &[("all_proxy", "http://a:1"), ("no_proxy", ".example.com")],
                None,
            ),
            (
                s,
                &[("all_proxy", "http://a:1"), ("NO_PROXY", "example.com")],
                None,
            ),
            (
                s,
                &[("all_proxy", "http://a:1"), ("no_proxy", "badexample.com")],
                Some("http://a:1/"),
            ),
            (
                t,
                &[("all_proxy", "http://a:1"), ("no_proxy", "10.0.0.0/8")],
                None,
            ),
            (
                t,
                &[("all_proxy", "http://a:1"), ("no_proxy", "11.0.0.0/8")],
                Some("http://a:1/"),
            ),
            (t, &[("all_proxy", "http://a:1"), ("no_proxy", "*")], None),
        ];
        for (target, env, want) in cases {
            assert_eq!(
                proxy(target, env),
                Ok(want.map(str::to_string)),
                "{target} {env:?}"
            );
        }
        assert!(proxy(t, &[("http_proxy", "socks5://s:1080")])
            .unwrap_err()
            .contains("http_proxy names a socks5 proxy"));
        assert!(proxy(t, &[("HTTP_PROXY", "http://[bad")])
            .unwrap_err()
            .starts_with("environment variable HTTP_PROXY is not a proxy URL"));
    }

    #[test]
    fn proxy_credentials_become_basic_authorization() {
        let env = |k: &str| (k == "http_proxy").then(|| "http://pu:pp@proxy:3128".to_string());
        let i = proxy_for(&"http://h:80".parse().unwrap(), env)
            .unwrap()
            .unwrap();
        assert_eq!(i.basic_auth().unwrap().to_str().unwrap(), "Basic cHU6cHA=");
    }
}
