//! The prefix cache: vLLM-style chained hashes over fixed-size token blocks of a prompt (its
//! approximate tokens, or a real tokenizer's ids), and a bounded set of cached block hashes
//! with least-recently-used eviction.

use std::collections::{BTreeMap, HashMap};

use crate::rng::mix64;

/// A 64-bit hash of one approximate token's text (FNV-1a, finished with `mix64`).
fn token_hash(piece: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in piece.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    mix64(h)
}

/// Chained block hashes, fed one token hash at a time: block `i`'s hash covers every token of
/// blocks `0..=i`, so two prompts share block `i`'s hash exactly when they start with the same
/// `(i + 1) * block_size` tokens.
struct Chain {
    block_size: usize,
    chain: u64,
    in_block: usize,
    block_acc: u64,
    hashes: Vec<u64>,
}

impl Chain {
    fn new(block_size: u32, template_tokens: u32) -> Chain {
        let mut c = Chain {
            block_size: block_size.max(1) as usize,
            chain: 0x5349_4d5f_5052_4658, // arbitrary root
            in_block: 0,
            block_acc: 0,
            hashes: Vec::new(),
        };
        // the chat template's tokens come first and are the same in every chat prompt
        for i in 0..template_tokens {
            c.push(mix64(0x7E4D_1A7E_0000_0000 ^ u64::from(i)));
        }
        c
    }

    #[inline]
    fn push(&mut self, token: u64) {
        self.block_acc = mix64(self.block_acc.rotate_left(5) ^ token);
        self.in_block += 1;
        if self.in_block == self.block_size {
            self.chain = mix64(self.chain ^ self.block_acc.wrapping_mul(0x9E37_79B9_7F4A_7C15));
            self.hashes.push(self.chain);
            self.in_block = 0;
            self.block_acc = 0;
        }
    }
}

/// Chained hashes of the whole blocks of `block_size` tokens of `template_tokens` template
/// tokens followed by the prompt, its tokens cut the way the shared approximate tokenizer
/// counts them: each whitespace-separated word into pieces of four characters.
pub fn block_hashes(prompt: &str, template_tokens: u32, block_size: u32) -> Vec<u64> {
    let mut chain = Chain::new(block_size, template_tokens);
    for word in prompt.split_whitespace() {
        let mut chars = word.char_indices().peekable();
        while let Some(&(start, _)) = chars.peek() {
            let mut end = word.len();
            for _ in 0..4 {
                if chars.next().is_none() {
                    break;
                }
            }
            if let Some(&(next, _)) = chars.peek() {
                end = next;
            }
            chain.push(token_hash(&word[start..end]));
        }
    }
    chain.hashes
}

/// Chained hashes of the whole blocks of `template_tokens` template tokens followed by the
/// prompt's token ids (from a real tokenizer).
pub fn block_hashes_of_ids(ids: &[u32], template_tokens: u32, block_size: u32) -> Vec<u64> {
    let mut chain = Chain::new(block_size, template_tokens);
    for id in ids {
        chain.push(mix64(u64::from(*id) ^ 0x1D5_0000_0000));
    }
    chain.hashes
}

/// A bounded set of cached block hashes, evicting the least recently used.
#[derive(Debug)]
pub struct PrefixCache {
    capacity: u64,
    tick: u64,
    last_used: HashMap<u64, u64>,
    by_tick: BTreeMap<u64, u64>,
}

impl PrefixCache {
    /// An empty cache holding at most `capacity_blocks` blocks (0 = disabled).
    pub fn new(capacity_blocks: u64) -> Self {
        Self {
            capacity: capacity_blocks,
            tick: 0,
            last_used: HashMap::new(),
            by_tick: BTreeMap::new(),
        }
    }

    /// How many leading blocks of `hashes` are cached (marking them recently used).
    pub fn lookup(&mut self, hashes: &[u64]) -> usize {
        let mut n = 0;
        for h in hashes {
            if !self.last_used.contains_key(h) {
                break;
            }
            self.touch(*h);
            n += 1;
        }
        n
    }

    /// Caches every block of `hashes`, evicting the least recently used beyond capacity.
    pub fn insert(&mut self, hashes: &[u64]) {
        if self.capacity == 0 {
            return;
        }
        for h in hashes {
            self.touch(*h);
        }
        while self.last_used.len() as u64 > self.capacity {
            let Some((_, oldest)) = self.by_tick.pop_first() else {
                break;
            };
            self.last_used.remove(&oldest);
        }
    }

    /// Number of blocks cached now.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.last_used.len()
    }

    /// Whether nothing is cached.
    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.last_used.is_empty()
    }

    fn touch(&mut self, h: u64) {
        self.tick += 1;
        if let Some(old) = self.last_used.insert(h, self.tick) {
            self.by_tick.remove(&old);
        }
        self.by_tick.insert(self.tick, h);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_prefix_shares_leading_blocks() {
        let shared: String = (0..40).map(|i| format!("w{i} ")).collect(); // 40 tokens
        let a = block_hashes(&format!("{shared} alpha beta"), 0, 16);
        let b = block_hashes(&format!("{shared} gamma delta and more words here"), 0, 16);
        assert_eq!(a.len(), 2);
        assert_eq!(a[..2], b[..2]);
        let c = block_hashes(&format!("x {shared}"), 0, 16);
        assert_ne!(a[0], c[0]);
        // "internationalization" is 5 tokens, as the approximate tokenizer counts it
        assert_eq!(
            block_hashes(&"internationalization ".repeat(16), 0, 16).len(),
            5
        );
        // a template shifts the blocks: 40 + 8 tokens make 3 whole blocks
        let t = block_hashes(&format!("{shared} alpha beta"), 8, 16);
        assert_eq!(t.len(), 3);
        assert_ne!(t[0], a[0]);
    }

    #[test]
    fn token_id_blocks_share_exact_prefixes() {
        let ids: Vec<u32> = (0..100).collect();
        let mut other = ids.clone();
        other[40] = 9999;
        let a = block_hashes_of_ids(&ids, 0, 16);
        let b = block_hashes_of_ids(&other, 0, 16);
        assert_eq!(a.len(), 6);
        assert_eq!(a[..2], b[..2]);
        assert_ne!(a[2], b[2]);
        assert_eq!(block_hashes_of_ids(&ids, 37, 16).len(), 8);
    }

    #[test]
    fn lookup_counts_leading_hits_and_evicts_lru() {
        let mut c = PrefixCache::new(3);
        c.insert(&[1, 2, 3]);
        assert_eq!(c.lookup(&[1, 2, 9, 3]), 2);
        c.insert(&[4]); // evicts 3, the least recently used
        assert_eq!(c.len(), 3);
        assert_eq!(c.lookup(&[3]), 0);
        assert_eq!(c.lookup(&[1, 2, 4]), 3);
        let mut off = PrefixCache::new(0);
        off.insert(&[1]);
        assert!(off.is_empty());
    }
}
