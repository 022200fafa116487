//! Transport failures (before any response) of the generation requests: recording one in the
//! outcome (and the pre-flight probe), and telling a stale keep-alive connection (safe to send
//! again on a new one) from the rest. How a failure is classified and described is shared
//! with the control-plane client: `crate::endpoint::failure`.

use std::error::Error as StdError;

use crate::endpoint::failure::error_kind;
use crate::endpoint::probe::{Probe, Transport};
use crate::record::{ExchangeOutcome, RequestError};

/// Records a failure before any response, already classified, with its text (no URL).
pub(crate) fn fail_with(
    out: &mut ExchangeOutcome,
    transport: Transport,
    detail: String,
    probe: Option<&mut Probe>,
) {
    out.error = Some(RequestError {
        kind: error_kind(transport),
        status: None,
        message: detail.clone(),
    });
    if let Some(p) = probe {
        p.transport = Some(transport);
        p.transport_detail = Some(detail);
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
