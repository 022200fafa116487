//! Token counting. A [`Tokenizer`] counts (and encodes) text; [`load`] picks one by name:
//!
//! - `approx` (recorded as `approx-4c`), the built-in approximation shared by the client and
//!   the simulator: **a whitespace-separated word of `n` characters is `ceil(n / 4)` tokens.**
//!   English text averages about four characters per BPE token, so this is close for prose, and
//!   it is exact for the text rightsize itself generates: synthetic prompts and the simulator's
//!   output are made of words of one to four letters, one token each.
//! - `o200k` / `cl100k`: OpenAI's encodings, embedded in the binary (see [`super::encodings`]).
//! - a path to a Hugging Face `tokenizer.json`, for the exact counts of an open model.
//!
//! See `docs/workloads.md`.

pub use super::token_counter::Tokenizer;
use std::sync::Arc;

/// The built-in approximate tokenizer: `ceil(chars / 4)` per whitespace-separated word.
#[derive(Debug, Clone, Copy, Default)]
pub struct ApproxTokenizer;

impl Tokenizer for ApproxTokenizer {
    fn count(&self, text: &str) -> u32 {
        approx_token_count(text)
    }
    fn name(&self) -> &str {
        APPROX_NAME
    }
    /// One id per four-character piece of each word: a hash of the piece's text.
    fn encode(&self, text: &str) -> Vec<u32> {
        let mut ids = Vec::new();
        for word in text.split_whitespace() {
            let chars: Vec<char> = word.chars().collect();
            for piece in chars.chunks(4) {
                let mut h: u32 = 0x811c_9dc5;
                for c in piece {
                    h = (h ^ *c as u32).wrapping_mul(0x0100_0193);
                }
                ids.push(h);
            }
        }
        ids
    }
}

/// The recorded name of the built-in approximation.
pub const APPROX_NAME: &str = "approx-4c";

/// A tokenizer chosen by name, ready to count, with what a run records about it.
#[derive(Clone)]
pub struct LoadedTokenizer {
    /// The tokenizer itself.
    pub tokenizer: Arc<dyn Tokenizer>,
    /// What `run.json` records: `approx-4c`, `o200k_base`, `cl100k_base`, or the file's path.
    pub name: String,
    /// sha256 (hex) of a `tokenizer.json` file, so a run can be repeated with the same one.
    pub sha256: Option<String>,
}

impl std::fmt::Debug for LoadedTokenizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoadedTokenizer")
            .field("name", &self.name)
            .field("sha256", &self.sha256)
            .finish_non_exhaustive()
    }
}

/// Why a tokenizer could not be loaded.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TokenizerError {
    #[error(
        "tokenizer `{0}`: no such file; use approx, o200k, cl100k or the path of a Hugging \
         Face tokenizer.json"
    )]
    NotFound(String),
    #[error("tokenizer `{path}`: cannot read: {reason}")]
    Unreadable { path: String, reason: String },
    #[error("tokenizer `{path}`: not a Hugging Face tokenizer.json: {reason}")]
    Invalid { path: String, reason: String },
    #[error(
        "tokenizer `{0}`: this rightsize was built without the `exact-tokenizers` feature; \
         only approx is available"
    )]
    NotBuiltIn(String),
}

/// Loads the tokenizer `spec` names: `approx` (or `approx-4c`), `o200k` (or `o200k_base`),
/// `cl100k` (or `cl100k_base`), or the path of a Hugging Face `tokenizer.json`.
pub fn load(spec: &str) -> Result<LoadedTokenizer, TokenizerError> {
    let builtin = |t: Arc<dyn Tokenizer>| LoadedTokenizer {
        name: t.name().to_string(),
        tokenizer: t,
        sha256: None,
    };
    match spec.trim() {
        "approx" | APPROX_NAME => Ok(builtin(Arc::new(ApproxTokenizer))),
        #[cfg(feature = "exact-tokenizers")]
        "o200k" | "o200k_base" => Ok(builtin(Arc::new(super::encodings::OpenAi::o200k()))),
        #[cfg(feature = "exact-tokenizers")]
        "cl100k" | "cl100k_base" => Ok(builtin(Arc::new(super::encodings::OpenAi::cl100k()))),
        #[cfg(not(feature = "exact-tokenizers"))]
        other => Err(TokenizerError::NotBuiltIn(other.to_string())),
        #[cfg(feature = "exact-tokenizers")]
        path => {
            let p = std::path::Path::new(path);
            if !p.exists() {
                return Err(TokenizerError::NotFound(path.to_string()));
            }
            let bytes = std::fs::read(p).map_err(|e| TokenizerError::Unreadable {
                path: path.to_string(),
                reason: e.to_string(),
            })?;
            let hf = super::encodings::HuggingFace::from_bytes(path, &bytes).map_err(|reason| {
                TokenizerError::Invalid {
                    path: path.to_string(),
                    reason,
                }
            })?;
            Ok(LoadedTokenizer {
                name: path.to_string(),
                tokenizer: Arc::new(hf),
                sha256: Some(sha256_hex(&bytes)),
            })
        }
    }
}

/// The sha256 of `bytes`, as lowercase hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    let digest = ring::digest::digest(&ring::digest::SHA256, bytes);
    digest
        .as_ref()
        .iter()
        .fold(String::with_capacity(64), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

/// The approximate count as a free function, for hot paths that do not want a trait object.
pub fn approx_token_count(text: &str) -> u32 {
    text.split_whitespace()
        .map(|w| (w.chars().count() as u32).div_ceil(4))
        .sum()
}

/// Words of one to four lowercase letters: each is exactly one token for [`ApproxTokenizer`].
/// Used for synthetic prompts and for the simulator's output text.
pub const VOCAB: &[&str] = &[
    "the", "of", "and", "to", "in", "is", "for", "that", "with", "as", "on", "by", "this", "be",
    "are", "from", "at", "or", "an", "it", "was", "not", "can", "data", "time", "used", "each",
    "more", "such", "also", "into", "than", "has", "its", "we", "one", "two", "use", "new", "all",
    "may", "both", "when", "over", "most", "load", "node", "rate", "peak", "cost", "plan", "mean",
    "tail", "fast", "slow", "gpu", "unit", "cell", "grid", "flow", "path", "key", "map", "set",
    "sum", "max", "min", "low", "high", "user", "work", "team", "code", "test", "run", "fit",
    "size", "step", "loop", "tree", "file", "page", "line", "word", "text", "read", "send", "hold",
    "keep", "make", "take", "give", "show", "find", "tell", "call", "turn", "move", "live", "open",
    "stop", "wait", "pick", "fill", "pool", "band", "lane", "dial", "gate", "wall", "edge", "core",
    "disk", "port", "host", "link", "span", "zone", "mode",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_table() {
        let cases: &[(&str, u32)] = &[
            ("", 0),
            ("   ", 0),
            ("a", 1),
            ("abcd", 1),
            ("abcde", 2),
            ("the cat sat", 3),
            ("  spaced\tout\nwords ", 5), // 6 chars = 2, 3 = 1, 5 = 2
            ("internationalization", 5),  // 20 chars
            ("héllo", 2),                 // 5 chars, not bytes
        ];
        for (text, want) in cases {
            assert_eq!(approx_token_count(text), *want, "{text:?}");
        }
    }

    #[test]
    #[cfg(feature = "exact-tokenizers")]
    fn builtin_encodings_count_known_strings() {
        // counts as OpenAI's tiktoken gives them
        let cases: &[(&str, &str, u32)] = &[
            ("o200k", "hello world", 2),
            ("o200k", "The quick brown fox jumps over the lazy dog.", 10),
            ("o200k", "", 0),
            ("cl100k", "hello world", 2),
            ("cl100k", "The quick brown fox jumps over the lazy dog.", 10),
            ("cl100k", "  indented\n\nlines", 5),
        ];
        for (name, text, want) in cases {
            let t = load(name).unwrap();
            assert_eq!(t.tokenizer.count(text), *want, "{name}: {text:?}");
            assert_eq!(t.tokenizer.encode(text).len() as u32, *want);
        }
        assert_eq!(load("o200k").unwrap().name, "o200k_base");
        assert_eq!(load("cl100k_base").unwrap().name, "cl100k_base");
        assert_eq!(load("approx").unwrap().name, "approx-4c");
    }

    #[test]
    #[cfg(feature = "exact-tokenizers")]
    fn missing_and_invalid_files_are_named() {
        let e = load("/nonexistent/tokenizer.json").unwrap_err().to_string();
        assert_eq!(
            e,
            "tokenizer `/nonexistent/tokenizer.json`: no such file; use approx, o200k, cl100k \
             or the path of a Hugging Face tokenizer.json"
        );
        let dir = std::env::temp_dir().join(format!("rightsize-tok-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let bad = dir.join("tokenizer.json");
        std::fs::write(&bad, "{\"model\": 5}").unwrap();
        let e = load(bad.to_str().unwrap()).unwrap_err().to_string();
        assert!(e.contains("not a Hugging Face tokenizer.json"), "{e}");
    }

    #[test]
    fn every_vocab_word_is_one_token() {
        for w in VOCAB {
            assert_eq!(approx_token_count(w), 1, "{w}");
        }
        assert!(VOCAB.len() >= 64);
    }
}
