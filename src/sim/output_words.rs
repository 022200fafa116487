//! Seeded output: which word each output token is, and how long a "natural" answer is. Both
//! derive from the seed and a hash of the prompt, never from arrival order, so a given prompt
//! gets the same answer on every run with the same `--seed`.

use crate::rng::{mix64, SplitMix64};
use crate::workload::tokenizer::VOCAB;

/// A 64-bit hash of the prompt text (FNV-1a, finished with `mix64`).
pub fn prompt_hash(prompt: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in prompt.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    mix64(h)
}

/// The per-request text seed: the server seed mixed with the prompt hash.
pub fn text_seed(seed: u64, prompt_hash: u64) -> u64 {
    mix64(seed ^ mix64(prompt_hash))
}

/// The word of output token `index` (0-based); its chunk text is `" " + word`, one token.
#[inline]
pub fn token_word(text_seed: u64, index: u32) -> &'static str {
    let h = mix64(text_seed ^ (index as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    VOCAB[((h as u128 * VOCAB.len() as u128) >> 64) as usize]
}

/// The natural output length: exponential with mean `mean` tokens, clamped to `[lo, hi]`.
pub fn natural_length(text_seed: u64, mean: f64, lo: u32, hi: u32) -> u32 {
    let mut rng = SplitMix64::new(text_seed ^ 0x4e41_5455_5241_4c00);
    let u = rng.next_f64();
    let draw = (-mean * (1.0 - u).ln()).ceil();
    let draw = if draw.is_finite() { draw } else { hi as f64 };
    (draw.max(1.0).min(u32::MAX as f64) as u32).clamp(lo.min(hi), hi)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::tokenizer::approx_token_count;

    #[test]
    fn words_repeat_and_are_one_token() {
        let s = text_seed(1, prompt_hash("hello"));
        let a: Vec<&str> = (0..50).map(|i| token_word(s, i)).collect();
        let b: Vec<&str> = (0..50).map(|i| token_word(s, i)).collect();
        assert_eq!(a, b);
        let text: String = a.iter().map(|w| format!(" {w}")).collect();
        assert_eq!(approx_token_count(&text), 50);
        let other = text_seed(2, prompt_hash("hello"));
        assert_ne!(a, (0..50).map(|i| token_word(other, i)).collect::<Vec<_>>());
    }

    #[test]
    fn natural_length_is_clamped_and_has_the_mean() {
        let mut sum = 0u64;
        for i in 0..10_000u64 {
            let n = natural_length(mix64(i), 100.0, 1, 100_000);
            assert!(n >= 1);
            sum += n as u64;
        }
        let mean = sum as f64 / 10_000.0;
        assert!((90.0..110.0).contains(&mean), "{mean}");
        assert_eq!(natural_length(7, 100.0, 50, 50), 50);
        assert!(natural_length(7, 1e9, 5, 60) <= 60);
    }
}
