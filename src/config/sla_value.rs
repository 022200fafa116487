//! An SLA value as a config file writes it, in `[searches.NAME]` and `[campaigns.NAME]`.

use serde::Deserialize;

/// An SLA value in a file: a number (ms, or a fraction for the error rate) or a string
/// `"[STAT:]VALUE"` as the flags take it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum SlaValue {
    Number(f64),
    Text(String),
}
