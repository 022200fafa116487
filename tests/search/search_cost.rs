//! What deciding costs, end to end: the real binary against a simulator configured like a
//! llama.cpp server (4 slots, 8 ms a decode step plus 12 ms a running sequence: one request
//! of 64 tokens alone takes about 1.3 s of model time), searched from 1 to 16 on a p99 e2e
//! limit with 16 requests a level. The simulator runs 20x faster than real time, so the
//! issue's 8 s is 400 ms here; the test uses 440 ms (8.8 s of model time), the same boundary
//! between 8 (p99 ~365 ms) and 9 (~537 ms) with a 20 % margin at 8: with 10 %, a machine
//! busy with a release build left 8 uncertain at its cap (1,524 requests), which is right, but
//! not what this test measures.
//!
//! Its levels start cold (`--warmup 0`): those boundaries hold where each level's streams
//! start together, so the 4 slots serve them in rounds and at 9 some requests wait a whole
//! extra round (p99 ~537 ms). A warmup whose answers are spread (the default,
//! `engine::warmup_lengths`) starts them at every age and the wait evens out (at 9, p50 415 and
//! p99 421 ms in a release build): the limit would then sit within 5 % of level 9's p99, and the
//! search's ends would waver with the machine's load, which is not what this test measures.
//!
//! A p99 is decided only on 368 requests. Before screening, every level ran until decided:
//! 3,060 requests for this search (measured with a build of b6e5676, at 400 ms and at 440 ms
//! alike: six levels of 384 and two of 378). Now the levels that steer run one batch and only the bracket's ends are decided,
//! so the search must say what deciding costs before its first level and answer on at most a
//! third of those requests.

use crate::support::common;
use common::{bin, stderr, stdout, tmpdir, SimProcess};
use serde_json::Value;

/// The requests the same search spent when every level was decided (b6e5676).
const EVERY_LEVEL_DECIDED: u64 = 3060;

#[test]
fn a_search_decides_only_its_ends_and_says_the_cost_first() {
    let _turn = crate::support::search_support::MACHINE.take(3);
    let sim = SimProcess::llama_like("20");
    let out = tmpdir("search-cost");
    let o = bin()
        .args(["search", "-e", &sim.url, "--input-tokens", "64"])
        .args(["--output-tokens", "64", "--e2e-sla", "440ms"])
        .args(["--min", "1", "--max", "16", "--requests", "16", "--json"])
        .args(["--warmup", "0"])
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let err = stderr(&o);
    // the cost is said before the first level, naming what a decided p99 needs
    let note = err
        .find("can be decided only on enough requests (p99 e2e <= 440 ms on 368")
        .unwrap_or_else(|| panic!("no cost note before the first level:\n{err}"));
    assert!(note < err.find("level 1: ").unwrap(), "{err}");
    assert!(
        err.contains("at that pace a level decided on 381 requests takes about"),
        "{err}"
    );
    let v: Value = serde_json::from_str(&stdout(&o)).expect("stdout is JSON only");
    let s = &v["search"];
    let n = |x: &Value| x.as_u64().unwrap();
    assert_eq!(s["reason"], "converged", "{s}");
    assert_eq!(
        (n(&s["max_passing"]), n(&s["first_failing"])),
        (8, 9),
        "{s}"
    );
    // both ends decided on all their requests, the others screened on their first batch
    let levels = v["levels"].as_array().unwrap();
    for l in levels {
        let c = n(&l["concurrency"]);
        let screens: Vec<bool> = l["measurements"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["screen"].as_bool().unwrap_or(false))
            .collect();
        if c == 8 || c == 9 {
            assert_eq!(screens, [true, false], "{c}: {l}");
            assert_ne!(l["verdict"], "uncertain", "{c}");
        } else {
            assert_eq!(screens, [true], "{c}: {l}");
        }
    }
    let spent: u64 = levels.iter().map(|l| n(&l["planned_requests"])).sum();
    assert!(
        spent * 3 <= EVERY_LEVEL_DECIDED,
        "{spent} requests, more than a third of {EVERY_LEVEL_DECIDED}"
    );
}
