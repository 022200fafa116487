//! Transport failures (before any response): classifying them for diagnosis, describing them
//! without the URL, and telling a stale keep-alive connection (safe to send again on a new
//! one) from the rest; for the requests' own client (hyper) and for reqwest's (`GET /models`).

use std::error::Error as StdError;

use crate::endpoint::probe::{Probe, Transport};
use crate::record::{ErrorKind, ExchangeOutcome, RequestError};

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

/// The error's causes joined with `: `, without the URL reqwest's top-level message carries.
pub(crate) fn error_chain(e: &reqwest::Error) -> String {
    match e.source() {
        Some(s) => error_text(s),
        None if e.is_connect() => "connection failed".to_string(),
        None if e.is_timeout() => "timed out".to_string(),
        None if e.is_body() => "body error".to_string(),
        None => "request failed".to_string(),
    }
}

/// An error and its causes joined with `: `, each text once (hyper and hyper-util repeat
/// their cause in their own message).
pub(crate) fn error_text(e: &(dyn StdError + 'static)) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut source = Some(e);
    while let Some(s) = source {
        let text = s.to_string();
        if !text.is_empty() && !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        source = s.source();
    }
    // hyper-util's "client error (Connect)" only repeats what the causes below it say.
    if parts.len() > 1 && parts[0].starts_with("client error (") {
        parts.remove(0);
    }
    parts.join(": ")
}

/// Classifies a transport error from reqwest by walking its causes.
pub(crate) fn classify(e: &reqwest::Error) -> Transport {
    if e.is_timeout() {
        return Transport::Timeout;
    }
    classify_error(e)
}

/// Classifies a transport error by walking its causes.
pub(crate) fn classify_error(e: &(dyn StdError + 'static)) -> Transport {
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
    if text.contains("connect timeout") || text.contains("timed out") {
        Transport::Timeout
    } else if DNS.iter().any(|m| text.contains(m)) {
        Transport::Dns
    } else if TLS.iter().any(|m| text.contains(m)) {
        Transport::Tls
    } else {
        Transport::Other
    }
}

/// A failure on a kept-alive connection that the server had closed, before any response: the
/// connection closed or was reset before a response byte came (a stale keep-alive connection;
/// the server dropped the request unread). One immediate send on a new connection is safe.
pub(crate) fn is_stale_connection(e: &hyper::Error) -> bool {
    if e.is_incomplete_message() || e.is_canceled() || e.is_closed() {
        return true;
    }
    let mut source: Option<&(dyn StdError + 'static)> = e.source();
    while let Some(s) = source {
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
