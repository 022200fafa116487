//! Which fault, if any, hits request number `n`.

use super::sim_config::FaultConfig;

/// Content chunks sent before a stream fault strikes (fewer when the answer is shorter).
pub const FAULT_AFTER_CHUNKS: u32 = 3;

/// A fault answered with an HTTP status before the request reaches the scheduler.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatusFault {
    /// HTTP 500.
    Http500,
    /// HTTP 429 with `Retry-After: 1`.
    Http429,
}

/// A fault inside a 200 response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamFault {
    /// The body errors, so the connection is aborted without finishing the chunked body.
    Reset,
    /// The body stops producing data and stays open.
    Stall,
    /// One malformed SSE event (non-streaming: truncated JSON).
    Malformed,
    /// An error object inside the 200 response.
    InStreamError,
}

/// The faults for request `n`: at most one status fault, else at most one stream fault.
pub fn pick(cfg: &FaultConfig, seed: u64, n: u64) -> (Option<StatusFault>, Option<StreamFault>) {
    if cfg.http500.hits(n, seed, 1) {
        return (Some(StatusFault::Http500), None);
    }
    if cfg.http429.hits(n, seed, 2) {
        return (Some(StatusFault::Http429), None);
    }
    let stream = [
        (cfg.reset, StreamFault::Reset, 3),
        (cfg.stall, StreamFault::Stall, 4),
        (cfg.malformed, StreamFault::Malformed, 5),
        (cfg.in_stream_error, StreamFault::InStreamError, 6),
    ]
    .into_iter()
    .find(|(spec, _, salt)| spec.hits(n, seed, *salt))
    .map(|(_, f, _)| f);
    (None, stream)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::sim_config::FaultSpec;

    #[test]
    fn status_faults_win_and_every_n_is_exact() {
        let cfg = FaultConfig {
            http500: FaultSpec::Every(3),
            reset: FaultSpec::Every(2),
            ..FaultConfig::default()
        };
        assert_eq!(pick(&cfg, 0, 1), (None, None));
        assert_eq!(pick(&cfg, 0, 2), (None, Some(StreamFault::Reset)));
        assert_eq!(pick(&cfg, 0, 3), (Some(StatusFault::Http500), None));
        assert_eq!(pick(&cfg, 0, 6), (Some(StatusFault::Http500), None));
    }
}
