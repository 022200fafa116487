//! Tokenizer files built by the tests (a Llama-3-style byte-level BPE, a SentencePiece-style
//! Unigram) load and count known strings exactly.

use crate::workload::test_tokenizers::{byte_level_bpe_json, sentencepiece_json, write};
use crate::workload::tokenizer::{load, LoadedTokenizer};

fn assert_counts(t: &LoadedTokenizer, cases: &[(&str, u32)]) {
    for (text, want) in cases {
        assert_eq!(t.tokenizer.count(text), *want, "{}: {text:?}", t.name);
    }
}

#[test]
fn byte_level_bpe_file_counts_known_strings() {
    let path = write("bpe", &byte_level_bpe_json());
    let t = load(path.to_str().unwrap()).unwrap();
    assert_eq!(t.name, path.to_str().unwrap());
    assert_eq!(t.sha256.as_deref().map(str::len), Some(64));
    let cases: &[(&str, u32)] = &[
        ("", 0),
        ("the", 1),
        ("the data", 2),
        ("and it was not", 4),
        // digits never occur in the corpus: one byte-level token each
        ("123", 3),
        // é is two UTF-8 bytes, neither merged with anything
        ("é", 2),
        // the, Ġdata, Ġ, 1 2 3, Ġ Ã ©
        ("the data 123 é", 9),
    ];
    assert_counts(&t, cases);
}

#[test]
fn sentencepiece_file_counts_known_strings() {
    let path = write("spm", &sentencepiece_json());
    let t = load(path.to_str().unwrap()).unwrap();
    let cases: &[(&str, u32)] = &[
        ("", 0),
        ("the", 1),
        // ▁the ▁data
        ("the data", 2),
        // ▁ x q: no ▁x piece, letters on their own
        ("xq", 3),
        // ▁ then é by byte fallback: <0xC3> <0xA9>
        ("é", 3),
        ("the é", 4),
    ];
    assert_counts(&t, cases);
}
