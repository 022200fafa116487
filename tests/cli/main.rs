//! The command line end to end: bad input and its messages, the limits table, run ids and
//! results folders, secrets, signals, failed writes, `k8s render`, the layer order of `src/`,
//! and sweeps that show what bounds the server.

#[path = "../support/mod.rs"]
mod support;

mod bound_e2e;
mod cli_bad_input;
mod k8s_render;
mod layers;
mod limits_walk;
mod results_folder;
mod run_ids;
mod secrets_e2e;
mod serve_campaign;
mod serve_e2e;
mod signals_e2e;
mod sweep_e2e;
mod trust_e2e;
mod write_failures;
