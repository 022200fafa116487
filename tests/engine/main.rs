//! The engine end to end: closed and open loops, warm-up, sessions, workloads, replay,
//! distributed runs, server telemetry and the prefix cache between levels, against the
//! simulator.

#[path = "../support/mod.rs"]
mod support;

mod agent_e2e;
mod distributed_e2e;
mod engine_e2e;
mod gpu_telemetry;
mod open_loop_e2e;
mod prefix_cache_reset;
mod replay_e2e;
mod sessions_e2e;
mod telemetry_e2e;
mod telemetry_levels;
mod tools_e2e;
mod warmup_flow;
mod workloads_e2e;
