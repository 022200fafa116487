//! What a kept run says afterwards: `runs`, `show`, `compare`, exports (SVG, PNG, CSV, JSON,
//! HTML, Benchmark Report), imports (AIPerf, GuideLLM, vLLM), the charts' layout and marks,
//! and one figure under one word everywhere.

#[path = "../support/mod.rs"]
mod support;

mod benchmark_report_e2e;
mod chart_layout;
mod chart_marks;
mod export_e2e;
mod history_e2e;
mod import_e2e;
mod import_guidellm;
mod import_vllm;
mod one_story;
mod report_html;
mod server_chart_e2e;
