//! How the simulator counts prompt tokens: with the shared approximation by default, or with
//! the run's tokenizer (`--tokenizer`), plus a fixed chat-template overhead on chat requests
//! (`--template-overhead`). With a tokenizer, the prefix cache hashes the prompt's real token
//! ids, so shared text prefixes are shared token blocks exactly as a server would see them.

use std::sync::Arc;

use crate::workload::tokenizer::{approx_token_count, Tokenizer, APPROX_NAME};

/// The simulator's prompt counter.
#[derive(Clone)]
pub enum PromptCounter {
    /// The shared approximation (whitespace words, four characters a token).
    Approx,
    /// A real tokenizer.
    Exact(Arc<dyn Tokenizer>),
}

/// A prompt as the simulator counts it.
#[derive(Debug, Clone, PartialEq)]
pub struct Counted {
    /// Tokens of the text (template overhead not included).
    pub tokens: u32,
    /// The token ids, with a real tokenizer (for the prefix cache).
    pub ids: Option<Vec<u32>>,
}

impl PromptCounter {
    /// The counter for `--tokenizer` `spec` (`approx` or empty: the approximation).
    pub fn load(spec: &str) -> Result<PromptCounter, String> {
        let spec = spec.trim();
        if spec.is_empty() || spec == "approx" || spec == APPROX_NAME {
            return Ok(PromptCounter::Approx);
        }
        let t = crate::workload::tokenizer::load(spec).map_err(|e| format!("--tokenizer: {e}"))?;
        Ok(PromptCounter::Exact(t.tokenizer))
    }

    /// Counts `prompt`.
    pub fn count(&self, prompt: &str) -> Counted {
        match self {
            PromptCounter::Approx => Counted {
                tokens: approx_token_count(prompt),
                ids: None,
            },
            PromptCounter::Exact(t) => {
                let ids = t.encode(prompt);
                Counted {
                    tokens: u32::try_from(ids.len()).unwrap_or(u32::MAX),
                    ids: Some(ids),
                }
            }
        }
    }
}
