//! The knee with its confidence, end to end: the real binary against a simulator configured
//! like a llama.cpp server (4 slots, decode time growing with the batch: 8 ms a step plus
//! 12 ms a running sequence, so one request of 64 tokens alone takes about 1.3 s of model
//! time), swept at 1, 2, 4 and 8 with 16 requests a level. Such levels cannot bound their
//! throughput (fewer than 20 requests follow each level's first round), so no doubling's gain
//! is known to be under 10 %, and the knee is reported as not decided, with the figures the
//! table shows. The decided case (512 requests a level names 4) is a table test in
//! `plan::knee` and a measurement in the note: it takes minutes.

use crate::support::common;
use common::{bin, stderr, stdout, tmpdir, SimProcess};
use serde_json::Value;

#[test]
fn sixteen_requests_a_level_leave_the_knee_not_decided_with_the_table_s_figures() {
    let _turn = crate::support::search_support::MACHINE.take(2);
    let sim = SimProcess::llama_like("10");
    let out = tmpdir("knee-undecided");
    let sweep = |json: bool| {
        let mut c = bin();
        c.args(["sweep", "-e", &sim.url, "--input-tokens", "64"])
            .args(["--output-tokens", "64", "-c", "1,2,4,8", "-n", "16"])
            .arg("--out")
            .arg(&out);
        if json {
            c.arg("--json");
        }
        let o = c.output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        o
    };
    let text = stdout(&sweep(false));
    let knee = text
        .lines()
        .find(|l| l.starts_with("knee: "))
        .unwrap_or_else(|| panic!("no knee line in {text}"));
    assert!(knee.starts_with("knee: not decided from 1 on ("), "{knee}");
    // each doubling's figures are the table's output tok/s, and its interval is open
    let steady: Vec<String> = text
        .lines()
        .filter_map(|l| {
            let cols: Vec<&str> = l.split_whitespace().collect();
            (cols.len() >= 4 && ["1", "2", "4", "8"].contains(&cols[0]))
                .then(|| cols[2].to_string())
        })
        .collect();
    assert_eq!(steady.len(), 4, "{text}");
    for (from, pair) in ["1", "2", "4"].iter().zip(steady.windows(2)) {
        let want = format!("{from} -> twice: {} -> {} output tok/s, ", pair[0], pair[1]);
        assert!(knee.contains(&want), "no '{want}' in {knee}");
    }
    assert_eq!(knee.matches("[-, -]").count(), 3, "{knee}");

    let v: Value = serde_json::from_str(&stdout(&sweep(true))).unwrap();
    assert_eq!(v["knee"], Value::Null, "{}", v["knee"]);
    let u = &v["knee_undecided"];
    assert_eq!(u["from"], 1, "{u}");
    let gains = u["gains"].as_array().unwrap();
    let at: Vec<u64> = gains
        .iter()
        .map(|g| g["concurrency"].as_u64().unwrap())
        .collect();
    assert_eq!(at, [1, 2, 4]);
    assert!(gains.iter().all(|g| g["lo"].is_null() && g["hi"].is_null()));
    // every level's throughput carries an interval, open on both sides
    for l in v["levels"].as_array().unwrap() {
        let ci = &l["output_tps"]["ci95"];
        assert_eq!(ci, &serde_json::json!([null, null]), "{l}");
    }
}
