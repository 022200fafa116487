//! Token counting. The built-in tokenizer is an approximation shared by the client and the
//! simulator, so both count the same text the same way:
//!
//! **a whitespace-separated word of `n` characters is `ceil(n / 4)` tokens.**
//!
//! English text averages about four characters per BPE token, so this is close for prose, and
//! it is exact for the text rightsize itself generates: synthetic prompts and the simulator's
//! output are made of words of one to four letters, one token each. Exact tokenizers for real
//! models implement [`Tokenizer`] as well.

/// Counts tokens in text.
pub trait Tokenizer: Send + Sync {
    /// Number of tokens `text` encodes to.
    fn count(&self, text: &str) -> u32;
    /// A short name recorded with results (e.g. `approx-4c`).
    fn name(&self) -> &str;
}

/// The built-in approximate tokenizer: `ceil(chars / 4)` per whitespace-separated word.
#[derive(Debug, Clone, Copy, Default)]
pub struct ApproxTokenizer;

impl Tokenizer for ApproxTokenizer {
    fn count(&self, text: &str) -> u32 {
        approx_token_count(text)
    }
    fn name(&self) -> &str {
        "approx-4c"
    }
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
    fn every_vocab_word_is_one_token() {
        for w in VOCAB {
            assert_eq!(approx_token_count(w), 1, "{w}");
        }
        assert!(VOCAB.len() >= 64);
    }
}
