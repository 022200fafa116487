//! What counts tokens: the [`Tokenizer`] trait that the built-in approximation
//! (`tokenizer.rs`), OpenAI's encodings and a Hugging Face `tokenizer.json` (`encodings.rs`)
//! implement. Which one a run uses is chosen by name in `tokenizer.rs`.

/// Counts tokens in text.
pub trait Tokenizer: Send + Sync {
    /// Number of tokens `text` encodes to (no special tokens added).
    fn count(&self, text: &str) -> u32;
    /// A short name recorded with results (e.g. `approx-4c`).
    fn name(&self) -> &str;
    /// The token ids of `text` (no special tokens added), for prefix-cache block hashing.
    fn encode(&self, text: &str) -> Vec<u32>;
}
