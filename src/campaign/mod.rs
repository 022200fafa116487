//! Campaigns (docs/campaigns.md): one workload and one SLA search over several candidates
//! (an endpoint or a simulator with its own model, or a finished run, each with a price per
//! instance-hour), run one after another into a campaign folder, then ranked by cost per
//! million output tokens at the SLA answer.

pub mod campaign_file;
pub mod chart;
pub mod events;
pub mod printer;
pub mod rank;
pub mod ranking_text;
pub mod runner;
pub mod served;
pub mod spec;
