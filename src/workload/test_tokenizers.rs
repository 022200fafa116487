//! Tokenizer files the tests build themselves (never downloaded): a Llama-3-style byte-level
//! BPE trained here on a small corpus, and a SentencePiece-style Unigram model with Metaspace
//! pre-tokenization and byte fallback, both written as `tokenizer.json`.

use std::path::PathBuf;

use tokenizers::models::bpe::{BpeTrainerBuilder, BPE};
use tokenizers::models::TrainerWrapper;
use tokenizers::pre_tokenizers::byte_level::ByteLevel;
use tokenizers::pre_tokenizers::sequence::Sequence;
use tokenizers::pre_tokenizers::split::{Split, SplitPattern};
use tokenizers::pre_tokenizers::PreTokenizerWrapper;
use tokenizers::{ModelWrapper, SplitDelimiterBehavior};

use super::tokenizer::VOCAB;

/// Llama 3's pre-tokenization pattern.
const LLAMA3_PATTERN: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";

/// A byte-level BPE `tokenizer.json` in Llama 3's shape (regex split, then ByteLevel without
/// its own regex), trained on sentences of [`VOCAB`] words only: every VOCAB word is one token
/// with or without a leading space; digits and accented letters never occur in the corpus, so
/// they stay one token per byte.
pub fn byte_level_bpe_json() -> String {
    let mut tok = tokenizers::Tokenizer::new(ModelWrapper::BPE(BPE::default()));
    let split = Split::new(
        SplitPattern::Regex(LLAMA3_PATTERN.into()),
        SplitDelimiterBehavior::Isolated,
        false,
    )
    .expect("the pattern compiles");
    tok.with_pre_tokenizer(Some(PreTokenizerWrapper::Sequence(Sequence::new(vec![
        PreTokenizerWrapper::Split(split),
        PreTokenizerWrapper::ByteLevel(ByteLevel::new(false, true, false)),
    ]))));
    tok.with_decoder(Some(ByteLevel::default()));
    let mut trainer = TrainerWrapper::BpeTrainer(
        BpeTrainerBuilder::new()
            .vocab_size(4000)
            .min_frequency(1)
            .show_progress(false)
            .initial_alphabet(ByteLevel::alphabet().into_iter().collect())
            .build(),
    );
    // each word starts a line once (no leading space) and follows another several times
    let corpus: Vec<String> = VOCAB
        .iter()
        .enumerate()
        .map(|(i, w)| {
            let mut line = w.to_string();
            for k in 1..6 {
                line.push(' ');
                line.push_str(VOCAB[(i * 7 + k * 13) % VOCAB.len()]);
            }
            line.push(' ');
            line.push_str(w);
            line
        })
        .collect();
    tok.train(&mut trainer, corpus.iter())
        .expect("training on a small corpus works");
    tok.to_string(false).expect("a tokenizer serializes")
}

/// A SentencePiece-style `tokenizer.json`: Unigram over `▁word` pieces for every [`VOCAB`]
/// word, the single letters a-z, `▁`, and byte fallback (`<0x00>`..`<0xFF>`) for anything
/// else; Metaspace pre-tokenization (`▁` for spaces, prepended, split on it).
pub fn sentencepiece_json() -> String {
    let mut vocab: Vec<serde_json::Value> = vec![serde_json::json!(["<unk>", 0.0])];
    for b in 0..=255u8 {
        vocab.push(serde_json::json!([format!("<0x{b:02X}>"), -20.0]));
    }
    vocab.push(serde_json::json!(["\u{2581}", -5.0]));
    for c in 'a'..='z' {
        vocab.push(serde_json::json!([c.to_string(), -8.0]));
    }
    for w in VOCAB {
        vocab.push(serde_json::json!([format!("\u{2581}{w}"), -2.0]));
    }
    serde_json::json!({
        "version": "1.0",
        "truncation": null,
        "padding": null,
        "added_tokens": [],
        "normalizer": null,
        "pre_tokenizer": {
            "type": "Metaspace", "replacement": "\u{2581}", "prepend_scheme": "always",
            "split": true
        },
        "post_processor": null,
        "decoder": {
            "type": "Metaspace", "replacement": "\u{2581}", "prepend_scheme": "always",
            "split": true
        },
        "model": {"type": "Unigram", "unk_id": 0, "vocab": vocab, "byte_fallback": true}
    })
    .to_string()
}

/// Writes `json` as `NAME/tokenizer.json` in a fresh temporary folder; returns its path.
pub fn write(name: &str, json: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "rightsize-tokenizer-{}-{name}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    std::fs::create_dir_all(&dir).expect("create a temp dir");
    let path = dir.join("tokenizer.json");
    std::fs::write(&path, json).expect("write tokenizer.json");
    path
}
