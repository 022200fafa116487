//! The stream parser's and the body reading's properties (benches/support/props/), a few
//! hundred cases each (the huge-input ones a few), from a fixed seed: quick enough for every
//! `cargo test`. `cargo bench --bench parser_props` runs them for 100,000 cases each, with
//! the memory bounds checked.

#[path = "../../benches/support/props/mod.rs"]
mod props;

const CASES: u32 = 256;
/// Each huge case reads 16 to 64 MiB, slowly in a debug build.
const HUGE_CASES: u32 = 3;

fn check(name: &str) {
    let p = props::find(name);
    let cases = if p.huge { HUGE_CASES } else { CASES };
    if let Err(e) = (p.run)(props::config(cases, props::DEFAULT_SEED)) {
        panic!("{name}: {e}");
    }
}

#[test]
fn every_property_has_a_test_here() {
    let here = include_str!("parser_props.rs");
    for p in props::ALL {
        assert!(here.contains(&format!("fn {}()", p.name)), "{}", p.name);
    }
}

#[test]
fn sse_any_split() {
    check("sse_any_split");
}

#[test]
fn jsonl_any_split() {
    check("jsonl_any_split");
}

#[test]
fn parser_arbitrary_bytes() {
    check("parser_arbitrary_bytes");
}

#[test]
fn body_any_split() {
    check("body_any_split");
}

#[test]
fn body_arbitrary_bytes() {
    check("body_arbitrary_bytes");
}

#[test]
fn parser_overflow_memory() {
    check("parser_overflow_memory");
}

#[test]
fn body_cap_memory() {
    check("body_cap_memory");
}
