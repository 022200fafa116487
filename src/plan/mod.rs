//! Planning: the SLA search planner, knee detection and capacity planning, all pure functions
//! of finished level summaries (table-tested), plus the [`crate::engine::LevelPlanner`]s that
//! let the engine drive them and the analysis that `summary.json` and the printer share.

pub mod analysis;
pub mod capacity;
pub mod gate;
pub mod knee;
pub mod model;
pub mod outcome;
pub mod planner;
pub mod recorded;
pub mod search;
pub mod sla;
pub mod text;

pub use analysis::{analyse, Analysis, RunAnalysis};
pub use planner::{SearchPlanner, SweepPlanner};
