//! Exact tokenizers behind [`Tokenizer`]: OpenAI's `o200k_base` and `cl100k_base`, and any
//! Hugging Face `tokenizer.json`.
//!
//! The OpenAI encodings come from `tiktoken-rs`, a port of OpenAI's tiktoken that embeds the
//! `.tiktoken` rank files it ships (5.3 MB for both) in the binary: no network, neither at build
//! time nor at run time. A table is built the first time it is used (about 150 ms for
//! `o200k_base`) and shared by the whole process.
//!
//! `tokenizer.json` files load through the `tokenizers` crate with its pure-Rust regex
//! backend and without its download support: byte-level BPE (Llama 3, Qwen, Mistral's newer
//! models), SentencePiece-style Unigram or BPE with byte fallback (Llama 2, T5, Gemma), and the
//! other models the crate reads. Counts never include special tokens (BOS, chat template): what
//! a server adds on top is the template overhead that calibration measures (see
//! `docs/workloads.md`).

use super::token_counter::Tokenizer;

/// One of OpenAI's encodings.
pub struct OpenAi {
    bpe: &'static tiktoken_rs::CoreBPE,
    name: &'static str,
}

impl OpenAi {
    /// `o200k_base` (GPT-4o, o1, gpt-oss).
    pub fn o200k() -> OpenAi {
        OpenAi {
            bpe: tiktoken_rs::o200k_base_singleton(),
            name: "o200k_base",
        }
    }

    /// `cl100k_base` (GPT-4, GPT-3.5).
    pub fn cl100k() -> OpenAi {
        OpenAi {
            bpe: tiktoken_rs::cl100k_base_singleton(),
            name: "cl100k_base",
        }
    }
}

impl Tokenizer for OpenAi {
    fn count(&self, text: &str) -> u32 {
        u32::try_from(self.bpe.encode_ordinary(text).len()).unwrap_or(u32::MAX)
    }
    fn name(&self) -> &str {
        self.name
    }
    fn encode(&self, text: &str) -> Vec<u32> {
        self.bpe.encode_ordinary(text)
    }
}

/// A Hugging Face `tokenizer.json`.
pub struct HuggingFace {
    inner: tokenizers::Tokenizer,
    name: String,
}

impl HuggingFace {
    /// Parses a `tokenizer.json` (`path` names it in messages and records); the error is the
    /// parser's message.
    pub fn from_bytes(path: &str, bytes: &[u8]) -> Result<HuggingFace, String> {
        let inner = tokenizers::Tokenizer::from_bytes(bytes).map_err(|e| e.to_string())?;
        Ok(HuggingFace {
            inner,
            name: path.to_string(),
        })
    }

    fn ids(&self, text: &str) -> Vec<u32> {
        // Encoding a &str cannot fail for the models the crate loads; an error (none known)
        // counts as no tokens rather than stopping a run.
        self.inner
            .encode_fast(text, false)
            .map(|e| e.get_ids().to_vec())
            .unwrap_or_default()
    }
}

impl Tokenizer for HuggingFace {
    fn count(&self, text: &str) -> u32 {
        if text.is_empty() {
            return 0;
        }
        u32::try_from(self.ids(text).len()).unwrap_or(u32::MAX)
    }
    fn name(&self) -> &str {
        &self.name
    }
    fn encode(&self, text: &str) -> Vec<u32> {
        self.ids(text)
    }
}

#[cfg(test)]
#[path = "encodings_tests.rs"]
mod tests;
