//! Exit codes, fit for CI gates:
//! 0 success; 1 the run failed (pre-flight, I/O); 2 bad input (flags, config); 3 the run
//! finished but failed its gate (`--require-concurrency`, `--baseline`); 130 interrupted.

use crate::config::overrides::InputError;
use crate::config::ConfigError;

pub const EXIT_RUN_FAILED: u8 = 1;
pub const EXIT_BAD_INPUT: u8 = 2;
/// The run finished but its answer failed `--require-concurrency` or `--baseline`.
pub const EXIT_GATE: u8 = 3;
pub const EXIT_INTERRUPTED: u8 = 130;

/// Marks an error as the user's input being wrong (exit 2).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct BadInput(pub String);

/// The exit code for an error returned by `cli::run` (or a campaign candidate's launch).
pub fn exit_code_for(err: &anyhow::Error) -> u8 {
    let fd_limit = matches!(
        err.downcast_ref::<crate::engine::RunError>(),
        Some(crate::engine::RunError::FdLimit { .. })
    );
    if err.is::<BadInput>() || err.is::<InputError>() || err.is::<ConfigError>() || fd_limit {
        EXIT_BAD_INPUT
    } else {
        EXIT_RUN_FAILED
    }
}
