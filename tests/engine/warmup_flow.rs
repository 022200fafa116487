//! `--warmup N` flows into the level: the warmup's workers leave as the warmup runs out and each
//! hands its place to one of the level's workers, so the server never sees the level's streams
//! arrive at once (whose queue for their prefills the level would otherwise measure) and never
//! more than the level's concurrency in flight. Read from the run's own request log: every
//! request's start and end on the level's clock.

use crate::support::common;
use common::{bin, stderr, tmpdir, SimProcess};
use serde_json::Value;

/// Whether a request record carries `k` (`warmup`, `cooldown`) set.
fn flag(r: &Value, k: &str) -> bool {
    r.get(k).and_then(Value::as_bool) == Some(true)
}

#[test]
fn the_level_takes_over_from_its_warmup_one_place_at_a_time() {
    let sim = SimProcess::start(&["--time-scale", "20"]);
    let out = tmpdir("warmup-flow");
    let o = bin()
        .args(["sweep", "-e", &sim.url, "--input-tokens", "64"])
        .args([
            "--output-tokens",
            "32",
            "--output-stddev",
            "8",
            "--seed",
            "3",
        ])
        .args(["-c", "8", "-n", "32", "--warmup", "8", "--no-tui", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let run = common::only_run_dir(&out);
    let recs = common::request_log(&run);
    let ns = |r: &Value, k: &str| r[k].as_u64().unwrap_or_else(|| panic!("{k} in {r}"));
    let warmup: Vec<&Value> = recs.iter().filter(|r| flag(r, "warmup")).collect();
    let measured: Vec<&Value> = recs
        .iter()
        .filter(|r| !flag(r, "warmup") && !flag(r, "cooldown"))
        .collect();
    assert_eq!((warmup.len(), measured.len()), (8, 32));

    // the level's requests in flight never outnumber the warmup requests that have ended:
    // each ended warmup request gives one place (a measured request that ends frees its
    // place for the next, so the k-th measured *start* may well come before the k-th warmup
    // end; an end before a start at the same instant)
    let mut ends: Vec<u64> = warmup.iter().map(|r| ns(r, "end_ns")).collect();
    let mut starts: Vec<u64> = measured.iter().map(|r| ns(r, "start_ns")).collect();
    ends.sort_unstable();
    starts.sort_unstable();
    let mut places: Vec<(u64, i32, i32)> = ends.iter().map(|e| (*e, 0, 1)).collect();
    for r in &measured {
        places.push((ns(r, "start_ns"), 1, 0));
        places.push((ns(r, "end_ns"), -1, 0));
    }
    places.sort_unstable_by_key(|(t, d, given)| (*t, *d, -*given));
    let (mut level_in_flight, mut given) = (0, 0);
    for (t, d, g) in places {
        level_in_flight += d;
        given += g;
        assert!(
            level_in_flight <= given,
            "{level_in_flight} of the level's requests in flight at {t} ns, \
             with {given} warmup requests ended"
        );
    }
    // and the level began while the warmup still ran: no drain between them (answers of
    // 32 +- 8 tokens end the warmup's eight requests at different steps)
    let last_end = *ends.last().unwrap();
    assert!(
        starts[0] < last_end,
        "the level began at {} ns, after the warmup's last request ended at {last_end} ns",
        starts[0]
    );
    // a warmup request that has had no answer when the level's first request ended is cut
    // then, and its record says so; one already answering runs to its end (here the warmup's
    // answers may or may not outlast the level's first request: either way none is cut
    // before it ended)
    let first_measured_end = measured.iter().map(|r| ns(r, "end_ns")).min().unwrap();
    for r in warmup.iter().filter(|r| r.get("error").is_some()) {
        assert_eq!(r["error"]["kind"], "cancelled", "{r}");
        assert!(
            r["error"]["message"]
                .as_str()
                .unwrap()
                .starts_with("warmup request cut"),
            "{r}"
        );
        assert!(ns(r, "end_ns") >= first_measured_end, "{r}");
    }
    // the warmup's workers leave when it runs out: no cooldown requests to keep its load
    assert!(!recs
        .iter()
        .any(|r| flag(r, "warmup") && flag(r, "cooldown")));

    // never more than the concurrency in flight, warmup and level together (an end before a
    // start at the same instant)
    let mut events: Vec<(u64, i32)> = recs
        .iter()
        .flat_map(|r| [(ns(r, "start_ns"), 1), (ns(r, "end_ns"), -1)])
        .collect();
    events.sort_unstable();
    let mut in_flight = 0;
    for (t, d) in events {
        in_flight += d;
        assert!(in_flight <= 8, "{in_flight} in flight at {t} ns");
    }
}

/// Levels start warm by default: every level file records its warmup (a round: its
/// concurrency), `run.json` says `"round"`, the request log holds that many warmup requests
/// per level, and `show` says how the levels started; `--warmup 0` records a cold start.
#[test]
fn a_default_sweep_starts_warm_and_warmup_0_records_a_cold_start() {
    let levels = |run: &std::path::Path| -> Vec<Value> {
        let mut files: Vec<_> = std::fs::read_dir(run)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| {
                p.file_name()
                    .unwrap()
                    .to_str()
                    .unwrap()
                    .starts_with("level-")
            })
            .collect();
        files.sort();
        files
            .iter()
            .map(|f| serde_json::from_str(&std::fs::read_to_string(f).unwrap()).unwrap())
            .collect()
    };
    let warmup_records = |run: &std::path::Path| -> Vec<u64> {
        let mut per_level = vec![0u64; 2];
        for r in common::request_log(run) {
            if flag(&r, "warmup") {
                per_level[r["level"].as_u64().unwrap() as usize] += 1;
            }
        }
        per_level
    };
    for (extra, warmups, echo, said) in [
        (
            &[][..],
            [2u64, 8],
            serde_json::json!("round"),
            "levels    warm: a round (the level's concurrency) of warmup requests first",
        ),
        (
            &["--warmup", "0"][..],
            [0, 0],
            serde_json::json!(0),
            "levels    cold: the level's streams sent at once (--warmup 0)",
        ),
    ] {
        let out = tmpdir("warm-default");
        let o = common::on_sim("sweep", 64, 16)
            .args(["-c", "2,8", "-n", "16", "--no-tui", "--out"])
            .arg(&out)
            .args(extra)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let run = common::only_run_dir(&out);
        let levels = levels(&run);
        assert_eq!(levels.len(), 2);
        for (level, w) in levels.iter().zip(warmups) {
            assert_eq!(level["warmup"], w, "{extra:?}: {level}");
        }
        assert_eq!(warmup_records(&run), warmups, "{extra:?}");
        let run_json: Value =
            serde_json::from_str(&std::fs::read_to_string(run.join("run.json")).unwrap()).unwrap();
        assert_eq!(run_json["warmup"], echo, "{extra:?}");
        let show = bin().arg("show").arg(&run).output().unwrap();
        assert_eq!(show.status.code(), Some(0), "{}", stderr(&show));
        assert!(
            common::stdout(&show).contains(said),
            "{}",
            common::stdout(&show)
        );
    }
}

/// The warmup's round asks for shorter answers in turn (`engine::warmup_lengths`): the k-th
/// of four asks for (4 - k) / 4 of the 32 tokens, so its ends, and the level's starts, spread
/// over one request's time rather than coming in one wave. Read from what the simulator
/// answered (it answers exactly `max_tokens`); a warmup request cut when the level's first
/// request ended has no count and is left out (the first to end never is: the level's first
/// request starts only after it).
#[test]
fn the_warmup_round_asks_for_shorter_answers_in_turn() {
    let out = tmpdir("warm-spread");
    let o = common::on_sim("sweep", 64, 32)
        .args(["-c", "4", "-n", "8", "--no-tui", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let run = common::only_run_dir(&out);
    let mut answered: Vec<(u64, u64)> = common::request_log(&run)
        .into_iter()
        .filter(|r| flag(r, "warmup") && r.get("error").is_none())
        .map(|r| {
            let tokens = r["output_tokens"].as_u64().unwrap_or_else(|| panic!("{r}"));
            (r["index"].as_u64().unwrap(), tokens)
        })
        .collect();
    answered.sort_unstable();
    assert!(answered.len() >= 2, "{answered:?}");
    for (index, tokens) in &answered {
        assert_eq!(*tokens, [32, 24, 16, 8][*index as usize], "{answered:?}");
    }
}

/// A warmup request already answering when the level's first request ends runs to its end:
/// only one still waiting for its answer is cut. With seed 5 the warmup's answers are 52, 26,
/// 19 and 4 tokens and the level's first request (started when the 4-token one ended) ends
/// before the 52-token one, which cutting every request in flight would have cut. In real
/// time: a decode step is then 10 ms or more, longer than a debug client's turnaround on a busy
/// machine (at 10x the level's first request, a few steps later than usual, once ended after
/// the 52-token one, and the test showed nothing).
#[test]
fn a_warmup_request_already_answering_is_not_cut() {
    let out = tmpdir("warm-answering");
    let o = common::on_sim_at("sweep", 64, 32, 1.0)
        .args(["--output-stddev", "12", "--seed", "5", "--no-calibrate"])
        .args(["-c", "4", "-n", "8", "--no-tui", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let run = common::only_run_dir(&out);
    let recs = common::request_log(&run);
    let mut warmup: Vec<&Value> = recs.iter().filter(|r| flag(r, "warmup")).collect();
    warmup.sort_by_key(|r| r["index"].as_u64());
    let first_measured_end = recs
        .iter()
        .filter(|r| !flag(r, "warmup") && !flag(r, "cooldown"))
        .map(|r| r["end_ns"].as_u64().unwrap())
        .min()
        .unwrap();
    assert_eq!(warmup.len(), 4);
    for r in &warmup {
        assert!(r.get("error").is_none(), "cut while answering: {r}");
    }
    let longest = warmup[0];
    assert_eq!(longest["output_tokens"], 52, "{longest}");
    assert!(
        longest["end_ns"].as_u64().unwrap() > first_measured_end,
        "the level's first request ended at {first_measured_end} ns, before {longest}"
    );
}
