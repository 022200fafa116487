//! The load engine: levels of closed-loop workers over one shared HTTP client.

pub mod record;
