//! Outputs: the results folder on disk (JSON per level, request log, run echo and summary),
//! AIPerf-shaped, llm-d Benchmark Report and CSV exports, charts (SVG and PNG), run history
//! (list, show, compare), AIPerf and Benchmark Report imports, the one-file HTML report, and
//! the final text table.

pub mod benchmark_report;
pub mod chart;
pub mod export;
pub mod export_run;
pub mod folder;
pub mod history;
pub mod history_text;
pub mod html;
pub mod import_aiperf;
pub mod import_guidellm;
pub mod import_run;
pub mod import_stats;
pub mod import_vllm;
pub mod open_text;
pub mod run_chart;
pub mod server_text;
pub mod table;
pub mod traffic_text;
pub mod turns_text;
pub mod workload_text;

pub use export::{aiperf_export, csv_columns, levels_csv};
pub use export_run::{export_run, ExportRequest};
pub use folder::{
    default_root, level_file_name, list_runs, load_levels, load_requests, read_json,
    write_json_atomic, JsonLinesFile, RequestLine, ResultsDir,
};
pub use history::{list_run_infos, load_run, resolve_run, RunData, RunInfo, RunLookupError};
pub use table::render_table;
