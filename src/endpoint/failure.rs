//! Transport failures (no answer), read one way whichever HTTP path met them: the generation
//! requests' transport (`super::http`, on hyper) and the control-plane client
//! (`super::control`). [`classify`] walks an error's causes into a [`Transport`]
//! class, [`error_kind`] gives the class's [`ErrorKind`], [`describe`] gives the error's
//! text without the URL, and [`no_answer_within`] what a request that ran out of time says. A table test feeds both paths the same faults (refused, no answer,
//! closed at once, TLS against plain text, a name that does not resolve) and gets the same
//! kind and class from each.

use std::error::Error as StdError;
use std::time::Duration;

use super::probe::Transport;
use crate::record::ErrorKind;

/// The error kind a transport failure is recorded with: a timeout, or a connection that
/// failed (refused, DNS, TLS, closed).
pub(crate) fn error_kind(transport: Transport) -> ErrorKind {
    if transport == Transport::Timeout {
        ErrorKind::Timeout
    } else {
        ErrorKind::Connect
    }
}

/// What a request that ran out of `limit` says, on either path.
pub(crate) fn no_answer_within(limit: Duration) -> String {
    format!("no complete response within {} ms", limit.as_millis())
}

/// An error and its causes joined with `: `, each text once (hyper and hyper-util repeat
/// their cause in their own message). The error given must not be one whose own text names
/// the URL (the control client's own errors do: it describes their causes).
pub(crate) fn describe(e: &(dyn StdError + 'static)) -> String {
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

/// Classifies a transport failure by walking the error's causes: an I/O error's kind where
/// one says (refused, timed out), else the words of the causes (a timeout, a name lookup,
/// TLS), else [`Transport::Other`].
pub(crate) fn classify(e: &(dyn StdError + 'static)) -> Transport {
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

#[cfg(test)]
#[path = "failure_table.rs"]
mod failure_table;
