//! Configuration: the TOML files (shipped defaults, the user's file), validated values, and
//! the resolution of files plus flags into one run specification. Flags win over files.

mod agent;
pub mod campaign;
mod custom_format;
pub mod error;
pub mod file;
pub mod overrides;
pub mod resolve;
pub mod search;
pub mod sla_value;
mod workload;

pub use error::ConfigError;
pub use file::ConfigFile;
