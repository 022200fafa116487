//! Prompt tests: exact lengths, repeatability, shared prefixes, real tokenizers, calibration,
//! and the prompt-generation speed measurement.

use super::*;
use crate::workload::tokenizer::approx_token_count;

fn spec() -> WorkloadSpec {
    WorkloadSpec {
        name: "t".into(),
        input_tokens: 100,
        output_tokens: 20,
        seed: 42,
        ..WorkloadSpec::fixed(100, 20)
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
        assert_eq!(s.target_input(1, i), Some(p.input_tokens));
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

#[test]
#[cfg(feature = "exact-tokenizers")]
fn real_tokenizers_count_every_prompt_exactly() {
    let mut s = spec();
    s.tokenizer = "o200k".into();
    s.input_tokens_stddev = 300;
    s.input_tokens = 1024;
    s.shared_prefix_tokens = 64;
    s.shared_prefix_share = 0.5;
    let s = s.load().unwrap();
    assert_eq!(s.tokenizer, "o200k_base");
    let tok = &*s.loaded().tokenizer.tokenizer;
    for i in 0..50 {
        let p = s.prompt(2, i);
        assert_eq!(Some(p.input_tokens), s.target_input(2, i));
        assert_eq!(tok.count(&p.text), p.input_tokens, "request {i}");
    }
    assert_eq!(s.prompt(2, 7).text, s.prompt(2, 7).text);
}

#[test]
#[cfg(feature = "exact-tokenizers")]
fn calibration_sizes_prompts_for_the_servers_count() {
    use crate::workload::calibration::{Calibration, LengthFit};
    let mut s = spec();
    s.tokenizer = "o200k".into();
    s.input_tokens = 128;
    let mut s = s.load().unwrap();
    s.calibration = Some(Calibration {
        points: vec![],
        fit: Some(LengthFit {
            server_per_client: 1.0,
            overhead_tokens: 37.0,
        }),
        applied: true,
        note: None,
    });
    let p = s.prompt(0, 0);
    assert_eq!(p.input_tokens, 91);
    assert_eq!(s.target_input(0, 0), Some(128));
    assert_eq!(s.target_input_mean(0, 10), Some(128.0));
    let c = s.calibration_prompt(2, 1024);
    assert_eq!((c.input_tokens, c.max_tokens), (1024, 1));
}
