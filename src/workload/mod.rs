//! Workloads: token counting and synthetic prompts of exact token length.

pub mod tokenizer;
