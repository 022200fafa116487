//! The load engine: a run (`run`) of levels one after another (`levels`), each a closed loop
//! or a schedule sent over one shared HTTP client from this process or a distributed run's
//! workers (`level`). It knows a sender of events, a cancellation token and the planner it
//! drives (`plan::LevelPlanner`), nothing of terminals.

#[cfg(feature = "sagemaker")]
mod cloudwatch;
pub mod events;
pub mod fleet;
pub mod intended;
pub mod lag;
pub mod level;
mod levels;
pub mod open_plan;
mod prefix_reset;
pub mod run;
mod scraping;
pub mod sink;
mod start_note;
mod warmup_lengths;
pub mod workers;

pub use crate::workload::warmup::Warmup;
pub use events::EngineEvent;
pub use run::{run, LevelPlanner, RunError, RunOutcome, RunRequest};
pub use sink::RunSink;
