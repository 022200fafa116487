//! What the test binaries share: the `rightsize` binary and simulators in child processes
//! (`common`), scripted servers (`endpoint_support`), runs made for the report tests
//! (`export_support`, `report_support`, `scripted_support`), search plans
//! (`search_support`), raw HTTP to the simulator (`sim_util`), tmux (`tmux_support`), chart
//! layout checks (`chart_support`) and Data Capture files (`capture_support`).
//!
//! Each binary under `tests/` (one per area: `cli`, `endpoint`, `engine`, `search`, `report`,
//! `dashboard`, `sim`, `memory`, `hold`) takes it whole with `#[path = "../support/mod.rs"] mod
//! support;` (a helper that binary never calls is allowed to be dead code there).
#![allow(dead_code)]

pub mod capture_support;
pub mod chart_support;
pub mod common;
pub mod endpoint_support;
pub mod export_support;
pub mod report_support;
pub mod scripted_support;
pub mod search_support;
pub mod sim_util;
pub mod tmux_support;
