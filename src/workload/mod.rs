//! Workloads: token counting and synthetic prompts of exact token length.

pub mod prompt;
pub mod tokenizer;

pub use prompt::{Prompt, WorkloadSpec};
