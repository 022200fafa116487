//! Transport failures (before any response): classifying them for diagnosis, describing them
//! without the URL, and telling a stale keep-alive connection (safe to retry) from the rest
//! (reqwest's errors, for `https://`; the `http://` client classifies its own).

use std::error::Error as StdError;

use super::outcome::{ErrorKind, ExchangeOutcome, RequestError};
use super::response::Probe;

/// How a transport failure looked, for the pre-flight diagnosis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Transport {
    Refused,
    Dns,
    Tls,
    Timeout,
    Other,
}

/// Records a failure before any response: `Timeout` if the transport says so, else `Connect`.
pub(crate) fn fail_transport(
    out: &mut ExchangeOutcome,
    e: &reqwest::Error,
    probe: Option<&mut Probe>,
) {
    fail_with(out, classify(e), error_chain(e), probe);
}

/// Records a failure before any response, already classified, with its text (no URL).
pub(crate) fn fail_with(
    out: &mut ExchangeOutcome,
    transport: Transport,
    detail: String,
    probe: Option<&mut Probe>,
) {
    out.error = Some(RequestError {
        kind: if transport == Transport::Timeout {
            ErrorKind::Timeout
        } else {
            ErrorKind::Connect
        },
        status: None,
        message: detail.clone(),
    });
    if let Some(p) = probe {
        p.transport = Some(transport);
        p.transport_detail = Some(detail);
    }
}

/// The error's causes joined with `: `, without the URL the top-level message carries.
pub(crate) fn error_chain(e: &reqwest::Error) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut source = e.source();
    while let Some(s) = source {
        let text = s.to_string();
        // hyper and hyper-util repeat their cause in their own message; keep each once.
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        source = s.source();
    }
    // hyper-util's "client error (Connect)" only repeats what the causes below it say.
    if parts.len() > 1 && parts[0].starts_with("client error (") {
        parts.remove(0);
    }
    if parts.is_empty() {
        let top = if e.is_connect() {
            "connection failed"
        } else if e.is_timeout() {
            "timed out"
        } else if e.is_body() {
            "body error"
        } else {
            "request failed"
        };
        return top.to_string();
    }
    parts.join(": ")
}

/// Classifies a transport error by walking its causes.
pub(crate) fn classify(e: &reqwest::Error) -> Transport {
    if e.is_timeout() {
        return Transport::Timeout;
    }
    let mut source: Option<&(dyn StdError + 'static)> = Some(e);
    let mut text = String::new();
    while let Some(s) = source {
        if let Some(io) = s.downcast_ref::<std::io::Error>() {
            match io.kind() {
                std::io::ErrorKind::ConnectionRefused => return Transport::Refused,
                std::io::ErrorKind::TimedOut => return Transport::Timeout,
                _ => {}
            }
        }
        text.push_str(&s.to_string().to_ascii_lowercase());
        text.push('\n');
        source = s.source();
    }
    const DNS: [&str; 5] = [
        "dns error",
        "failed to lookup address",
        "name or service not known",
        "nodename nor servname",
        "no address associated",
    ];
    const TLS: [&str; 6] = [
        "certificate",
        "tls",
        "rustls",
        "handshake",
        "invalidcontenttype",
        "corrupt message",
    ];
    if DNS.iter().any(|m| text.contains(m)) {
        Transport::Dns
    } else if TLS.iter().any(|m| text.contains(m)) {
        Transport::Tls
    } else {
        Transport::Other
    }
}

/// A failure on a kept-alive connection that the server had closed, before any response:
/// the request never reached the server, so one immediate retry on a new connection is safe.
pub(crate) fn is_stale_connection(e: &reqwest::Error) -> bool {
    if e.is_connect() || e.is_timeout() || e.status().is_some() {
        return false;
    }
    let mut source: Option<&(dyn StdError + 'static)> = e.source();
    while let Some(s) = source {
        if let Some(h) = s.downcast_ref::<hyper::Error>() {
            if h.is_incomplete_message() || h.is_canceled() || h.is_closed() {
                return true;
            }
        }
        if let Some(io) = s.downcast_ref::<std::io::Error>() {
            use std::io::ErrorKind as K;
            if matches!(
                io.kind(),
                K::ConnectionReset | K::BrokenPipe | K::ConnectionAborted | K::UnexpectedEof
            ) {
                return true;
            }
        }
        source = s.source();
    }
    false
}
