//! Workloads: tokenizers, prompts of exact token length, datasets (SageMaker Data Capture
//! among them), server calibration of prompt lengths, and the traffic a recorded trace or
//! capture holds. See `docs/workloads.md` and `docs/open-loop.md`.

pub mod arrivals;
pub mod bounds;
pub mod calibration;
pub mod capture;
pub mod dataset;
#[cfg(feature = "exact-tokenizers")]
pub mod encodings;
pub mod exact;
pub mod messages;
pub mod prompt;
mod runtime;
pub mod session;
pub mod session_spec;
#[cfg(all(test, feature = "exact-tokenizers"))]
pub(crate) mod test_tokenizers;
pub mod token_counter;
pub mod tokenizer;
pub mod tools;
pub mod trace;
pub mod traffic;
pub mod warmup;

pub use calibration::{Calibration, CalibrationPoint, LengthFit};
pub use dataset::{DatasetFormat, DatasetSpec, LengthFilter, Sampling};
pub use messages::{ChatMessage, RequestInput};
pub use prompt::{Prompt, WorkloadSpec};
pub use runtime::{Loaded, Runtime, WorkloadError};
pub use session::Session;
pub use session_spec::SessionSpec;
