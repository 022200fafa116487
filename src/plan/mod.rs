//! Planning: the SLA search planner, knee detection and capacity planning, all pure functions
//! of finished level summaries (table-tested), plus the [`LevelPlanner`] trait the engine
//! drives and the analysis that `summary.json` and the printer share. Nothing here imports
//! the engine.

pub mod analysis;
pub mod analysis_text;
pub mod bound;
pub mod capacity;
pub mod gate;
pub mod judge;
pub mod knee;
pub mod model;
pub mod planner;
pub mod range;
pub mod recorded;
pub mod search;
pub mod search_config;
pub mod search_outcome;
pub mod search_points;

pub use analysis::{analyse, Analysis, RunAnalysis};
pub use planner::{LevelLoad, LevelPlanner, SearchPlanner, SweepPlanner};
