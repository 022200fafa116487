//! Prompt-building benchmark: prompts per second for 1,024-token prompts in each tokenizer
//! (the engine builds a level's prompts before the level starts, so this bounds how long that
//! takes). The two `tokenizer.json` files are the ones the tests train and write themselves
//! (src/workload/test_tokenizers.rs), never downloaded.
//!
//! `cargo bench --bench prompt_speed [-- N]` (N prompts per tokenizer, 20,000 by default).

/// What `test_tokenizers` takes from its parent module in the library.
mod tokenizer {
    pub use rightsize::workload::tokenizer::VOCAB;
}
#[path = "../src/workload/test_tokenizers.rs"]
#[allow(dead_code)]
mod test_tokenizers;

use std::time::Instant;

use rightsize::workload::WorkloadSpec;
use test_tokenizers::{byte_level_bpe_json, sentencepiece_json, write};

fn main() {
    let n: u64 = match std::env::args().skip(1).find(|a| a != "--bench") {
        Some(v) => v
            .parse()
            .unwrap_or_else(|_| panic!("the prompt count must be a number, not {v:?}")),
        None => 20_000,
    };
    let bpe = write("speed-bpe", &byte_level_bpe_json());
    let spm = write("speed-spm", &sentencepiece_json());
    let tokenizers = [
        ("approx", "approx"),
        ("o200k", "o200k"),
        ("cl100k", "cl100k"),
        ("byte-level BPE", bpe.to_str().expect("a UTF-8 temp path")),
        ("SentencePiece", spm.to_str().expect("a UTF-8 temp path")),
    ];
    println!("{n} prompts of 1,024 tokens per tokenizer");
    for (label, name) in tokenizers {
        let mut spec = WorkloadSpec::fixed(1024, 256);
        spec.tokenizer = name.into();
        let w = spec
            .load()
            .unwrap_or_else(|e| panic!("load tokenizer {label}: {e}"));
        // One prompt first: the first call builds what every later one reuses.
        let _ = w.prompt(0, u64::MAX);
        let t = Instant::now();
        let tokens: u64 = (0..n).map(|i| u64::from(w.prompt(0, i).input_tokens)).sum();
        let s = t.elapsed().as_secs_f64();
        assert_eq!(
            tokens,
            1024 * n,
            "{label}: every prompt must count 1,024 tokens"
        );
        let counted = w.loaded().words.counts_each_prompt();
        println!(
            "{label:<15} {:>9.0} prompts/s (each prompt encoded to count it: {})",
            n as f64 / s,
            if counted { "yes" } else { "no" }
        );
    }
    for p in [bpe, spm] {
        if let Some(dir) = p.parent() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}
