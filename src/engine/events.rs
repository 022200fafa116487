//! What the engine tells its consumer. Both consumers (headless printer, dashboard) fold this
//! one stream through [`crate::state::RunState`].

use crate::endpoint::preflight::ServerIdentity;
use crate::metrics::{LevelProgress, LevelSummary};
use crate::workload::arrivals::LoadShape;
use std::path::PathBuf;

/// One engine event. Progress events are snapshots and may be dropped when the consumer is
/// slow; every other event is delivered. A served run (`crate::serve`) sends them as JSON,
/// each as an object named by its kind in snake case (`{"level_finished": {...}}`).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EngineEvent {
    /// The pre-flight check passed and the results folder exists.
    RunStarted {
        run_id: String,
        dir: PathBuf,
        endpoint: String,
        model: String,
        server: ServerIdentity,
    },
    /// A level begins (its warmup, if any, flows into it).
    LevelStarted {
        index: u32,
        /// The closed loop's concurrency; an open loop's `--max-in-flight` (0: none).
        concurrency: u32,
        request_count: u64,
        /// The most requests the level may run: more than `request_count` when it grows by
        /// batches of that many until its verdict is decided (adaptive sampling).
        request_cap: u64,
        /// Requests the level measured before: a level measured again (its new requests join
        /// those); 0 for a new level.
        earlier: u64,
        /// Warmup requests sent first at the level's concurrency, not counted (0: a cold
        /// start; always 0 for an open loop).
        warmup: u32,
        /// How an open-loop level's rate changes (`None` for a closed loop).
        shape: Option<LoadShape>,
    },
    /// How many levels may run after the one starting: the fewest and the most (a sweep
    /// knows; a search may end after any level, within its budget).
    LevelsLeft([u32; 2]),
    /// A live snapshot of the running level.
    Progress(LevelProgress),
    /// A level ended and its file is written.
    LevelFinished(Box<LevelSummary>),
    /// The server's own figures from its `/metrics` (a snapshot; may be dropped).
    Telemetry(crate::telemetry::ServerSample),
    /// A distributed level's workers: each one's share, in-flight count, errors and lag, and
    /// how far apart they started (a snapshot while the level runs, the final figures when
    /// it ends; may be dropped).
    Workers(Box<crate::metrics::fleet::FleetLevel>),
    /// Something the user should know (client lag, file-descriptor limit, ...).
    Warning(String),
    /// The run is over; `interrupted` when it was cancelled.
    RunFinished { interrupted: bool },
}
