//! Searches, knees and campaigns end to end: the SLA search, its cost and noise, max-rate
//! searches, the knee with its confidence, and campaigns ranked by cost.

#[path = "../support/mod.rs"]
mod support;

mod campaign_e2e;
mod knee_confidence;
mod plan_knee;
mod search_cli;
mod search_cost;
mod search_error_rate;
mod search_noise;
mod search_rate;
mod search_sim;
