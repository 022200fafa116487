//! Planning: the SLA search planner, knee detection and capacity planning, all pure functions
//! of finished level summaries (table-tested), plus the [`crate::engine::LevelPlanner`]s that
//! let the engine drive them.

pub mod capacity;
pub mod knee;
pub mod search;
pub mod sla;
