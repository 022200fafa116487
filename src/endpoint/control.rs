//! The control-plane client: every HTTP call that is not a generation request, on reqwest.
//! The endpoint's `GET /models` (pre-flight, the server's identity), the server telemetry's
//! `/metrics` and llama.cpp's `/props`, the prefix-cache reset (`super::cache_reset`), the GPU exporter's metrics, and a distributed run's
//! worker calling its controller all go through here. This is the only file of the crate
//! that names reqwest: it builds the clients those callers need and answers in the crate's
//! own types (`http`'s status, method and headers, [`Answer`], [`ControlError`]).
//!
//! Why two clients: generation requests go through the transport of `super::http`, written
//! by hand on hyper's connection-level client, because a measuring client must stamp the
//! clock at each read and move connections between runtimes, which a pooled client hides.
//! These calls measure nothing, so a whole client does them. A failure reads the same on
//! both paths: its class and text come from `super::failure`, as the transport's do.

use std::error::Error as _;
use std::time::Duration;

use bytes::Bytes;
use http::header::{HeaderMap, HeaderName, ACCEPT, CONTENT_TYPE};
use http::{Method, StatusCode};

use super::failure::{classify, describe, error_kind, no_answer_within};
use super::probe::Transport;
use super::Secret;
use crate::record::ErrorKind;

/// A client for control-plane calls (cheap to clone). The default is reqwest's own: no
/// headers, no bound, redirects followed.
#[derive(Clone, Default)]
pub struct ControlClient {
    http: reqwest::Client,
    /// Sent as `Authorization: Bearer` on every call (a worker's token to its controller).
    bearer: Option<Secret>,
    /// The bound on each whole call, unless the call gives its own.
    whole: Option<Duration>,
}

impl std::fmt::Debug for ControlClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // the headers (and so the credentials) are left out
        f.debug_struct("ControlClient").finish_non_exhaustive()
    }
}

/// An answer: its status and head at once, its body when read.
pub struct Answer {
    resp: reqwest::Response,
    /// The call's bound (for a body that runs out of it).
    bound: Option<Duration>,
}

/// A control call that got no answer, or whose answer broke off inside its body: classified
/// and described as the transport's failures are (`super::failure`); its text never names
/// the URL.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{text}")]
pub struct ControlError {
    transport: Transport,
    /// No connection was made (refused, DNS, TLS, the connect timed out).
    connecting: bool,
    /// The answer broke off inside its body.
    in_body: bool,
    text: String,
}

impl ControlClient {
    /// The endpoint's client: `headers` (its own and its credentials) on every call,
    /// HTTP/1.1 only, no redirects (a redirect is shown, not followed), up to `idle`
    /// connections kept idle per host, the system's TLS roots.
    pub(crate) fn for_endpoint(headers: HeaderMap, idle: usize) -> Result<Self, ControlError> {
        // HTTP/1.1 only, as the generation requests: over HTTP/2 a server's stream limit
        // would queue calls on one connection.
        let http = reqwest::Client::builder()
            .default_headers(headers)
            .pool_max_idle_per_host(idle)
            .tcp_nodelay(true)
            .http1_only()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| ControlError::of(e, None))?;
        Ok(ControlClient {
            http,
            bearer: None,
            whole: None,
        })
    }

    /// A client of no endpoint's (the GPU exporter, which must not get the endpoint's
    /// credentials): no headers of its own, redirects followed, each call bounded by
    /// `timeout` when given.
    pub fn plain(timeout: Option<Duration>) -> Result<Self, ControlError> {
        let mut builder = reqwest::Client::builder();
        if let Some(t) = timeout {
            builder = builder.timeout(t);
        }
        let http = builder.build().map_err(|e| ControlError::of(e, None))?;
        Ok(ControlClient {
            http,
            bearer: None,
            whole: timeout,
        })
    }

    /// A client to a distributed run's controller: `token` as the bearer of every call, no
    /// proxy, `connect` for each connect and `whole` for each call from its start to the end
    /// of its answer.
    pub fn with_bearer(
        token: &str,
        connect: Duration,
        whole: Duration,
    ) -> Result<Self, ControlError> {
        let http = reqwest::Client::builder()
            .no_proxy()
            .connect_timeout(connect)
            .timeout(whole)
            .build()
            .map_err(|e| ControlError::of(e, None))?;
        Ok(ControlClient {
            http,
            bearer: Some(Secret::new(token)),
            whole: Some(whole),
        })
    }

    /// A client that follows a served run (`crate::serve::follow`): `token` as the bearer of
    /// every call when given, `connect` for each connect, and no bound on a whole call (an
    /// event stream lasts as long as its run).
    pub fn following(token: Option<&str>, connect: Duration) -> Result<Self, ControlError> {
        let http = reqwest::Client::builder()
            .connect_timeout(connect)
            .build()
            .map_err(|e| ControlError::of(e, None))?;
        Ok(ControlClient {
            http,
            bearer: token.map(Secret::new),
            whole: None,
        })
    }

    /// `GET url`, asking for `accept` when given, within `timeout` when given (else the
    /// client's own bound, if any).
    pub async fn get(
        &self,
        url: &str,
        accept: Option<&str>,
        timeout: Option<Duration>,
    ) -> Result<Answer, ControlError> {
        let mut req = self.http.get(url);
        if let Some(a) = accept {
            req = req.header(ACCEPT, a);
        }
        if let Some(t) = timeout {
            req = req.timeout(t);
        }
        self.send(req, timeout.or(self.whole)).await
    }

    /// `method url` with `json` as a JSON body when given: the status and the whole body.
    pub async fn call(
        &self,
        method: Method,
        url: &str,
        json: Option<Vec<u8>>,
    ) -> Result<(StatusCode, Bytes), ControlError> {
        let mut req = self.http.request(method, url);
        if let Some(body) = json {
            req = req.header(CONTENT_TYPE, "application/json").body(body);
        }
        let answer = self.send(req, self.whole).await?;
        let status = answer.status();
        Ok((status, answer.bytes().await?))
    }

    /// `POST url` without a body, within `timeout`: the answer's status (its body read and
    /// dropped, so the connection can be used again).
    pub async fn post_empty(
        &self,
        url: &str,
        timeout: Duration,
    ) -> Result<StatusCode, ControlError> {
        let req = self.http.post(url).timeout(timeout);
        let answer = self.send(req, Some(timeout)).await?;
        let status = answer.status();
        answer.bytes().await?;
        Ok(status)
    }

    /// Sends `req`, bounded by `bound` (when given) from its start to the end of its answer.
    async fn send(
        &self,
        mut req: reqwest::RequestBuilder,
        bound: Option<Duration>,
    ) -> Result<Answer, ControlError> {
        if let Some(token) = &self.bearer {
            req = req.bearer_auth(token.expose());
        }
        match req.send().await {
            Ok(resp) => Ok(Answer { resp, bound }),
            Err(e) => Err(ControlError::of(e, bound)),
        }
    }
}

impl Answer {
    /// The answer's status.
    pub fn status(&self) -> StatusCode {
        self.resp.status()
    }

    /// A header's value, when sent and readable as text.
    pub fn header(&self, name: HeaderName) -> Option<&str> {
        self.resp.headers().get(name).and_then(|v| v.to_str().ok())
    }

    /// The whole body.
    pub async fn bytes(self) -> Result<Bytes, ControlError> {
        let bound = self.bound;
        self.resp
            .bytes()
            .await
            .map_err(|e| ControlError::of(e, bound))
    }

    /// The whole body as text (UTF-8, invalid sequences replaced).
    pub async fn text(self) -> Result<String, ControlError> {
        let body = self.bytes().await?;
        Ok(String::from_utf8_lossy(&body).into_owned())
    }

    /// The body's next piece as it arrives; `None` once the body has ended.
    pub async fn chunk(&mut self) -> Result<Option<Bytes>, ControlError> {
        let bound = self.bound;
        self.resp
            .chunk()
            .await
            .map_err(|e| ControlError::of(e, bound))
    }

    /// The body, read until it ends or passes `limit` bytes (the piece that passed it kept).
    pub async fn body_up_to(mut self, limit: usize) -> Result<Vec<u8>, ControlError> {
        let mut body = Vec::new();
        while let Some(b) = self.chunk().await? {
            body.extend_from_slice(&b);
            if body.len() > limit {
                break;
            }
        }
        Ok(body)
    }
}

impl ControlError {
    /// reqwest's error, classified and described by its causes: its own text only names
    /// the URL (and its kind, said here when no cause says more). A call that ran out of its
    /// `bound` says so as a generation request does.
    fn of(e: reqwest::Error, bound: Option<Duration>) -> ControlError {
        let ran_out = e.is_timeout() && !e.is_connect();
        let (transport, text) = match (e.source(), bound) {
            (Some(_), Some(bound)) if ran_out => (Transport::Timeout, no_answer_within(bound)),
            (Some(cause), _) => (classify(cause), describe(cause)),
            (None, _) if e.is_connect() => (Transport::Other, "connection failed".to_string()),
            (None, _) if e.is_timeout() => (Transport::Timeout, "timed out".to_string()),
            (None, _) if e.is_body() => (Transport::Other, "body error".to_string()),
            (None, _) => (Transport::Other, "request failed".to_string()),
        };
        ControlError {
            transport,
            connecting: e.is_connect(),
            in_body: e.is_body() || e.is_decode(),
            text,
        }
    }

    /// How the failure looked: refused, DNS, TLS, a timeout, or otherwise.
    pub(crate) fn transport(&self) -> Transport {
        self.transport
    }

    /// The kind a request's record carries for the same failure on the load path: a
    /// timeout, a broken body, or a connection that failed.
    pub fn kind(&self) -> ErrorKind {
        match error_kind(self.transport) {
            ErrorKind::Connect if self.in_body => ErrorKind::BrokenStream,
            kind => kind,
        }
    }

    /// The call ran out of time.
    pub fn is_timeout(&self) -> bool {
        self.transport == Transport::Timeout
    }

    /// No connection was made.
    pub fn is_connect(&self) -> bool {
        self.connecting
    }

    /// The answer broke off inside its body.
    pub fn in_body(&self) -> bool {
        self.in_body
    }
}
