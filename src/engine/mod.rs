//! The load engine: levels of closed-loop workers over one shared HTTP client. It knows a
//! sender of events, a cancellation token and the planner it drives (`plan::LevelPlanner`),
//! nothing of terminals.

pub mod closed_loop;
#[cfg(feature = "sagemaker")]
mod cloudwatch;
pub mod events;
pub mod fleet;
pub mod fleet_level;
pub mod fleet_open;
pub mod intended;
pub mod lag;
mod open_collect;
pub mod open_loop;
pub mod open_plan;
pub mod run;
pub mod sink;
mod start_note;
mod warmup_lengths;
pub mod workers;

pub use crate::workload::warmup::Warmup;
pub use events::EngineEvent;
pub use run::{run, LevelPlanner, RunError, RunOutcome, RunRequest};
pub use sink::RunSink;
