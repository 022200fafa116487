//! Outputs: the results folder on disk (JSON per level, request log, run echo and summary),
//! AIPerf-shaped and CSV exports, UTC wall-clock labels, and the final text table.

pub mod export;
pub mod results;
pub mod table;
pub mod wallclock;

pub use export::{aiperf_export, levels_csv};
pub use results::{
    default_root, level_file_name, list_runs, load_levels, load_requests, read_json,
    write_json_atomic, RequestLine, RequestLog, ResultsDir,
};
pub use table::render_table;
pub use wallclock::{new_run_id, rfc3339_utc};
