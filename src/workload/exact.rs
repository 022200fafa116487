//! Text of an exact token count in a chosen tokenizer, the way AIPerf builds prompts: pick
//! text, count it, then trim or extend it word by word until the count is the target.
//!
//! The text is made of short English words that the tokenizer encodes as exactly one token,
//! both at the start of a text and after a space ([`Words::for_tokenizer`] picks them from
//! [`VOCAB`], with single letters as a fallback). Tokenizers that split on whitespace before
//! merging (tiktoken's encodings, byte-level BPE, Metaspace) then count `n` such words as `n`
//! tokens whatever their order: [`Words::for_tokenizer`] checks that once, on long random
//! texts, and prompts for such a tokenizer are built word by word without encoding them
//! again (a 1,024-token encode costs 0.1 ms with o200k but up to 1 ms with a tokenizer.json,
//! and a level builds every prompt before it starts). For a tokenizer that merges across
//! words each prompt is counted, then trimmed or extended until its count is right. For the
//! built-in approximation every [`VOCAB`] word is one token by definition.

use super::tokenizer::{Tokenizer, VOCAB};
use crate::rng::SplitMix64;

/// Most count-and-adjust rounds before a prompt is kept at the nearest count reached.
const MAX_ADJUST_ROUNDS: u32 = 16;

/// Fewer one-token words than this and the generator adds single letters as candidates.
const MIN_WORDS: usize = 16;

/// Words in each random text of the additivity check, and how many texts it counts.
const PROBE_WORDS: u32 = 1500;
const PROBE_TEXTS: u64 = 3;

/// Words that are one token each in a tokenizer.
#[derive(Debug, Clone)]
pub struct Words {
    list: Vec<&'static str>,
    /// Each prompt must be counted: the tokenizer does not count `n` words as `n` tokens in
    /// every order (false for the built-in approximation, exact by definition, and for
    /// tokenizers that passed the additivity check).
    checked: bool,
}

/// Single letters, tried when a tokenizer has too few one-token [`VOCAB`] words.
const LETTERS: &[&str] = &[
    "a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n", "o", "p", "q", "r", "s",
    "t", "u", "v", "w", "x", "y", "z",
];

impl Words {
    /// Every [`VOCAB`] word, for the built-in approximation (no counting needed).
    pub fn approx() -> Words {
        Words {
            list: VOCAB.to_vec(),
            checked: false,
        }
    }

    /// The [`VOCAB`] words (and, if too few, single letters) that `tok` encodes as one token
    /// alone and one more after a space. Fails when fewer than two are left.
    pub fn for_tokenizer(tok: &dyn Tokenizer) -> Result<Words, String> {
        let one_token = |w: &&str| tok.count(w) == 1 && tok.count(&format!("{w} {w}")) == 2;
        let mut list: Vec<&'static str> = VOCAB.iter().copied().filter(one_token).collect();
        if list.len() < MIN_WORDS {
            list.extend(LETTERS.iter().copied().filter(one_token));
        }
        if list.len() < 2 {
            return Err(format!(
                "tokenizer `{}` encodes fewer than two short English words as one token each; \
                 rightsize cannot build prompts of exact length with it",
                tok.name()
            ));
        }
        let mut words = Words {
            list,
            checked: true,
        };
        words.checked = !words.additive(tok);
        Ok(words)
    }

    /// Whether `tok` counts texts of these words as one token a word: a text in which every
    /// ordered pair of words stands side by side once (no two words merge), and long random
    /// texts.
    fn additive(&self, tok: &dyn Tokenizer) -> bool {
        let pairs: Vec<&str> = every_pair(self.list.len())
            .into_iter()
            .map(|i| self.list[i])
            .collect();
        if tok.count(&pairs.join(" ")) != pairs.len() as u32 {
            return false;
        }
        (0..PROBE_TEXTS).all(|seed| {
            let mut rng = SplitMix64::new(0xADD1_7105 ^ seed);
            let mut b = TextBuilder::new(tok, self, PROBE_WORDS);
            b.push_words(&mut rng, PROBE_WORDS);
            tok.count(&b.text) == PROBE_WORDS
        })
    }

    /// Whether each prompt is counted (the tokenizer merges across words).
    pub fn counts_each_prompt(&self) -> bool {
        self.checked
    }

    /// How many words there are to pick from.
    pub fn len(&self) -> usize {
        self.list.len()
    }

    /// Always false: a word list has at least two words.
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    fn pick(&self, rng: &mut SplitMix64) -> &'static str {
        self.list[rng.below(self.list.len() as u64) as usize]
    }
}

/// A sequence of `0..n` in which every ordered pair `(a, b)` (`a == b` included) appears
/// side by side exactly once: an Eulerian circuit of the complete directed graph with loops
/// (Hierholzer's algorithm), `n * n + 1` long.
fn every_pair(n: usize) -> Vec<usize> {
    let mut next = vec![0usize; n];
    let mut stack = vec![0usize];
    let mut circuit = Vec::with_capacity(n * n + 1);
    while let Some(&v) = stack.last() {
        if next[v] < n {
            stack.push(next[v]);
            next[v] += 1;
        } else {
            circuit.push(v);
            stack.pop();
        }
    }
    circuit.reverse();
    circuit
}

/// A prompt being built: the text and where each of its words ends.
pub struct TextBuilder<'a> {
    tok: &'a dyn Tokenizer,
    words: &'a Words,
    text: String,
    /// Byte offset just past each word.
    ends: Vec<usize>,
}

impl<'a> TextBuilder<'a> {
    /// An empty text with room for about `tokens` tokens.
    pub fn new(tok: &'a dyn Tokenizer, words: &'a Words, tokens: u32) -> TextBuilder<'a> {
        TextBuilder {
            tok,
            words,
            text: String::with_capacity(tokens as usize * 5),
            ends: Vec::with_capacity(tokens as usize),
        }
    }

    /// Appends `n` words drawn from `rng`, separated by single spaces.
    pub fn push_words(&mut self, rng: &mut SplitMix64, n: u32) {
        for _ in 0..n {
            let w = self.words.pick(rng);
            if !self.text.is_empty() {
                self.text.push(' ');
            }
            self.text.push_str(w);
            self.ends.push(self.text.len());
        }
    }

    /// Words in the text so far.
    pub fn word_count(&self) -> u32 {
        self.ends.len() as u32
    }

    /// The text and its token count, trimmed or extended (with words from `rng`) until the
    /// count is `target`, or as close as [`MAX_ADJUST_ROUNDS`] rounds get.
    pub fn finish(mut self, target: u32, rng: &mut SplitMix64) -> (String, u32) {
        if !self.words.checked {
            let n = self.word_count();
            return (self.text, n);
        }
        let mut count = self.tok.count(&self.text);
        let mut best = (count.abs_diff(target), self.ends.len());
        for _ in 0..MAX_ADJUST_ROUNDS {
            if count == target {
                return (self.text, count);
            }
            if count > target {
                let drop = ((count - target) as usize).min(self.ends.len().saturating_sub(1));
                if drop == 0 {
                    break;
                }
                let keep = self.ends.len() - drop;
                self.ends.truncate(keep);
                self.text.truncate(self.ends[keep - 1]);
            } else {
                self.push_words(rng, target - count);
            }
            count = self.tok.count(&self.text);
            if count.abs_diff(target) < best.0 {
                best = (count.abs_diff(target), self.ends.len());
            }
        }
        // not exact: keep what was reached, with its true count
        if best.1 < self.ends.len() {
            self.ends.truncate(best.1);
            self.text.truncate(self.ends[best.1 - 1]);
            count = self.tok.count(&self.text);
        }
        (self.text, count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(feature = "exact-tokenizers")]
    use crate::workload::test_tokenizers::{byte_level_bpe_json, sentencepiece_json, write};
    #[cfg(feature = "exact-tokenizers")]
    use crate::workload::tokenizer::load;
    use crate::workload::tokenizer::ApproxTokenizer;

    #[test]
    #[cfg(feature = "exact-tokenizers")]
    fn prompts_hit_exact_lengths_in_every_tokenizer() {
        let bpe = write("exact-bpe", &byte_level_bpe_json());
        let spm = write("exact-spm", &sentencepiece_json());
        let names = [
            "approx",
            "o200k",
            "cl100k",
            bpe.to_str().unwrap(),
            spm.to_str().unwrap(),
        ];
        for name in names {
            let t = load(name).unwrap();
            let tok = &*t.tokenizer;
            let words = if name == "approx" {
                Words::approx()
            } else {
                Words::for_tokenizer(tok).unwrap()
            };
            for target in [1u32, 17, 128, 1_024, 8_000] {
                for seed in 0..3u64 {
                    let mut rng = SplitMix64::new(seed * 7919 + target as u64);
                    let mut b = TextBuilder::new(tok, &words, target);
                    b.push_words(&mut rng, target);
                    let (text, count) = b.finish(target, &mut rng);
                    assert_eq!(count, target, "{name}: {target} tokens, seed {seed}");
                    assert_eq!(tok.count(&text), target, "{name}: recount");
                }
            }
        }
    }

    /// A tokenizer that merges `of the` into one token: counts come out short and the
    /// builder extends the text until they are right.
    struct Merging;
    impl Tokenizer for Merging {
        fn count(&self, text: &str) -> u32 {
            ApproxTokenizer.count(text) - text.matches("of the").count() as u32
        }
        fn name(&self) -> &str {
            "merging"
        }
        fn encode(&self, text: &str) -> Vec<u32> {
            vec![0; self.count(text) as usize]
        }
    }

    #[test]
    fn counts_off_after_the_first_draw_are_adjusted() {
        let words = Words {
            list: vec!["of", "the"],
            checked: true,
        };
        for target in [1u32, 2, 17, 128] {
            let mut rng = SplitMix64::new(target as u64);
            let mut b = TextBuilder::new(&Merging, &words, target);
            b.push_words(&mut rng, target);
            let (text, count) = b.finish(target, &mut rng);
            assert_eq!((count, Merging.count(&text)), (target, target), "{text}");
        }
    }

    #[test]
    fn every_ordered_pair_stands_side_by_side_once() {
        for n in [1usize, 2, 5, 120] {
            let seq = every_pair(n);
            assert_eq!(seq.len(), n * n + 1);
            let pairs: std::collections::HashSet<_> =
                seq.windows(2).map(|w| (w[0], w[1])).collect();
            assert_eq!(pairs.len(), n * n);
        }
    }

    #[test]
    #[cfg(feature = "exact-tokenizers")]
    fn word_lists_keep_only_one_token_words() {
        let t = load("o200k").unwrap();
        let words = Words::for_tokenizer(&*t.tokenizer).unwrap();
        assert!(words.len() >= 100, "{}", words.len());
        assert!(!words.counts_each_prompt());
        let spm = load(write("words-spm", &sentencepiece_json()).to_str().unwrap()).unwrap();
        let words = Words::for_tokenizer(&*spm.tokenizer).unwrap();
        assert_eq!(words.len(), VOCAB.len());
        assert!(!words.counts_each_prompt());
        // a tokenizer that merges across words fails the check: its prompts are counted
        let merging = Words::for_tokenizer(&Merging).unwrap();
        assert!(merging.counts_each_prompt());
    }
}
