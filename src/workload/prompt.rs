//! Synthetic prompts of exact token length (for the built-in tokenizer), with an optional
//! shared system-prompt prefix, and seeded output lengths. Every prompt of a run is a pure
//! function of (seed, level, request index), so runs repeat exactly.

use crate::rng::{mix64, SplitMix64};
use crate::workload::tokenizer::VOCAB;
use serde::{Deserialize, Serialize};

/// Lower and upper bounds a drawn token count is clamped to.
pub const MIN_TOKENS: u32 = 1;
/// Largest input a synthetic prompt may have (tokens).
pub const MAX_INPUT_TOKENS: u32 = 1_000_000;
/// Largest output a request may ask for (tokens).
pub const MAX_OUTPUT_TOKENS: u32 = 1_000_000;

/// The shape of the traffic: token counts, streaming, shared prefix.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkloadSpec {
    /// Profile name (e.g. `rag`), for the record.
    pub name: String,
    /// Input tokens per request: mean and standard deviation.
    pub input_tokens: u32,
    pub input_tokens_stddev: u32,
    /// Output tokens per request (sent as `max_tokens`): mean and standard deviation.
    pub output_tokens: u32,
    pub output_tokens_stddev: u32,
    /// Stream responses.
    pub stream: bool,
    /// Tokens of a shared system-prompt prefix, and the share (0-1) of requests that use it.
    pub shared_prefix_tokens: u32,
    pub shared_prefix_share: f64,
    /// Seed for prompt text and lengths.
    pub seed: u64,
    /// Tokenizer used to count tokens (`approx-4c` is the built-in approximation).
    pub tokenizer: String,
}

/// One request's input.
#[derive(Debug, Clone)]
pub struct Prompt {
    pub text: String,
    /// Input tokens (exact for the built-in tokenizer).
    pub input_tokens: u32,
    /// `max_tokens` to ask for.
    pub max_tokens: u32,
}

/// Draws a token count from a normal distribution around `mean`, clamped to three standard
/// deviations and to `[MIN_TOKENS, max]`.
fn draw(rng: &mut SplitMix64, mean: u32, std: u32, max: u32) -> u32 {
    if std == 0 {
        return mean.clamp(MIN_TOKENS, max);
    }
    let x = mean as f64 + std as f64 * rng.normal().clamp(-3.0, 3.0);
    (x.round() as i64).clamp(MIN_TOKENS as i64, max as i64) as u32
}

fn push_words(out: &mut String, rng: &mut SplitMix64, n: u32) {
    for _ in 0..n {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(VOCAB[rng.below(VOCAB.len() as u64) as usize]);
    }
}

impl WorkloadSpec {
    /// Exactly `input` tokens in and `output` out, streamed, no shared prefix, seed 1, the
    /// built-in tokenizer: the plain workload tests and benchmarks start from.
    pub fn fixed(input: u32, output: u32) -> WorkloadSpec {
        WorkloadSpec {
            name: "fixed".into(),
            input_tokens: input,
            input_tokens_stddev: 0,
            output_tokens: output,
            output_tokens_stddev: 0,
            stream: true,
            shared_prefix_tokens: 0,
            shared_prefix_share: 0.0,
            seed: 1,
            tokenizer: "approx-4c".into(),
        }
    }

    /// The prompt for request `index` of level `level`.
    pub fn prompt(&self, level: u32, index: u64) -> Prompt {
        let mut rng = SplitMix64::new(mix64(
            self.seed ^ ((level as u64) << 40) ^ index.wrapping_mul(0x9E37),
        ));
        let input_tokens = draw(
            &mut rng,
            self.input_tokens,
            self.input_tokens_stddev,
            MAX_INPUT_TOKENS,
        );
        let max_tokens = draw(
            &mut rng,
            self.output_tokens,
            self.output_tokens_stddev,
            MAX_OUTPUT_TOKENS,
        );
        let mut text = String::with_capacity(input_tokens as usize * 5);
        let shared = self.shared_prefix_tokens.min(input_tokens);
        let mut body_tokens = input_tokens;
        if shared > 0 && rng.next_f64() < self.shared_prefix_share {
            // the prefix depends on the seed only: every request that uses it shares it exactly
            let mut prefix_rng = SplitMix64::new(mix64(self.seed ^ 0x005E_ED0F_9EF1));
            push_words(&mut text, &mut prefix_rng, shared);
            body_tokens -= shared;
        }
        push_words(&mut text, &mut rng, body_tokens);
        Prompt {
            text,
            input_tokens,
            max_tokens,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::tokenizer::approx_token_count;

    fn spec() -> WorkloadSpec {
        WorkloadSpec {
            name: "t".into(),
            input_tokens: 100,
            input_tokens_stddev: 0,
            output_tokens: 20,
            output_tokens_stddev: 0,
            stream: true,
            shared_prefix_tokens: 0,
            shared_prefix_share: 0.0,
            seed: 42,
            tokenizer: "approx-4c".into(),
        }
    }

    #[test]
    fn exact_lengths_and_repeatable() {
        let s = spec();
        let p = s.prompt(0, 3);
        assert_eq!(approx_token_count(&p.text), 100);
        assert_eq!(p.input_tokens, 100);
        assert_eq!(p.max_tokens, 20);
        assert_eq!(p.text, s.prompt(0, 3).text);
        assert_ne!(p.text, s.prompt(0, 4).text);
    }

    #[test]
    fn stddev_draws_are_clamped_and_counted() {
        let mut s = spec();
        s.input_tokens = 10;
        s.input_tokens_stddev = 50;
        s.output_tokens_stddev = 10;
        for i in 0..200 {
            let p = s.prompt(1, i);
            assert!(p.input_tokens >= 1 && p.input_tokens <= 160);
            assert_eq!(approx_token_count(&p.text), p.input_tokens);
            assert!(p.max_tokens >= 1 && p.max_tokens <= 50);
        }
    }

    #[test]
    fn shared_prefix_is_shared_by_the_asked_share() {
        let mut s = spec();
        s.shared_prefix_tokens = 40;
        s.shared_prefix_share = 0.5;
        let first = s.prompt(0, 0).text;
        let prefix_of = |t: &str| t.split(' ').take(40).collect::<Vec<_>>().join(" ");
        let mut with = std::collections::HashMap::new();
        for i in 0..400 {
            *with.entry(prefix_of(&s.prompt(0, i).text)).or_insert(0) += 1;
        }
        let most = with.values().copied().max().unwrap_or(0);
        assert!((160..=240).contains(&most), "{most} of 400 share a prefix");
        assert_eq!(approx_token_count(&first), 100);
    }
}
