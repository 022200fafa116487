//! Property benchmark: the stream parser's and the body reading's properties
//! (benches/support/props/, where each is described) for 100,000 cases each in release, the
//! huge-input memory properties for 200, from a fixed seed, with a counting global allocator
//! that checks what each case holds at its peak against the caps. Prints per property the
//! cases run, the failures (the minimal failing input when there is one), the wall time and
//! the largest peak of live heap bytes a case reached above its start; exits 1 on a failure.
//!
//! `cargo bench --bench parser_props [-- [--cases N] [--huge-cases N] [--seed S] [NAME...]]`
//! (also `PROPS_CASES`, `PROPS_HUGE_CASES`, `PROPS_SEED`); names pick properties.

#[path = "support/props/mod.rs"]
mod props;

use std::time::Instant;

#[global_allocator]
static ALLOC: props::mem::Counting = props::mem::Counting;

fn env_num(name: &str) -> Option<u64> {
    std::env::var(name).ok().map(|v| {
        v.parse()
            .unwrap_or_else(|_| panic!("{name} must be a number, not {v:?}"))
    })
}

fn main() {
    props::mem::installed();
    let mut cases = env_num("PROPS_CASES").unwrap_or(100_000);
    let mut huge_cases = env_num("PROPS_HUGE_CASES").unwrap_or(200);
    let mut seed = env_num("PROPS_SEED").unwrap_or(props::DEFAULT_SEED);
    let mut names = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut num = |what: &str| -> u64 {
            let v = args
                .next()
                .unwrap_or_else(|| panic!("{what} needs a value"));
            v.parse()
                .unwrap_or_else(|_| panic!("{what} must be a number, not {v:?}"))
        };
        match a.as_str() {
            "--cases" => cases = num("--cases"),
            "--huge-cases" => huge_cases = num("--huge-cases"),
            "--seed" => seed = num("--seed"),
            // cargo bench passes `--bench`
            "--bench" => {}
            a if a.starts_with('-') => panic!("unknown option {a}"),
            name => {
                props::find(name);
                names.push(name.to_string());
            }
        }
    }
    println!(
        "property                  cases  failures     wall s   peak MiB/case   (seed {seed:#x})"
    );
    let mut failed = 0;
    for p in props::ALL {
        if !names.is_empty() && !names.iter().any(|n| n == p.name) {
            continue;
        }
        let n = if p.huge { huge_cases } else { cases };
        let n = u32::try_from(n).expect("cases fit in u32");
        props::mem::take_case_max();
        let t = Instant::now();
        let result = (p.run)(props::config(n, seed));
        let wall = t.elapsed().as_secs_f64();
        let peak = props::mem::take_case_max() as f64 / (1 << 20) as f64;
        let failures = usize::from(result.is_err());
        println!(
            "{:<24} {:>7}  {:>8}  {:>9.2}  {:>14.3}",
            p.name, n, failures, wall, peak
        );
        for (k, kind) in p.kinds.iter().enumerate() {
            let peak = props::mem::take_kind_max(k) as f64 / (1 << 20) as f64;
            println!("  {kind:<40} {peak:>14.3}");
        }
        if let Err(e) = result {
            println!("  {e}");
            failed += 1;
        }
    }
    if failed > 0 {
        eprintln!("{failed} properties failed");
        std::process::exit(1);
    }
}
