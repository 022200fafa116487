//! The simulator over real HTTP on loopback: its API, faults, pacing under load and TLS.

#[path = "../support/mod.rs"]
mod support;

mod sim_api;
mod sim_faults;
mod sim_load;
mod sim_tls;
