//! The vocabulary every layer shares, and a leaf: it imports nothing of the crate but the
//! value parsers ([`crate::values`]). What one request produced ([`request`]: the exchange's
//! observations, the record kept of it, how it failed), a 95 % confidence interval
//! ([`interval`]), SLA thresholds with their verdicts ([`sla`]), and what the server's own
//! metrics said during a level ([`server`]: telemetry folds it, a level summary carries it),
//! and the prefix cache between levels ([`prefix_cache`]: asked, and what a level began with).
//! The endpoint fills
//! outcomes, the engine keeps records, metrics fold them, the planner judges levels against
//! SLAs, and the report writes all of it: none of those imports another to get these types.

pub mod interval;
pub mod prefix_cache;
pub mod request;
pub mod server;
pub mod sla;

pub use interval::Interval;
pub use prefix_cache::{PrefixCachePolicy, PrefixCacheState};
pub use request::{
    ErrorKind, ExchangeOutcome, RequestDetail, RequestError, RequestRecord, TokenSource, ToolCall,
};
pub use server::{kwh_per_million, CloudWatchSummary, GpuSummary, MeanMax, ServerSummary};
