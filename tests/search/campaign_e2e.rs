//! `rightsize campaign` end to end on simulators with known capacities (docs/campaigns.md):
//! the ranking, the cost per million output tokens recomputed from each run's recorded
//! answer, the instances for the peak, an interrupt mid-candidate and `--resume`, the
//! `--max-cost-per-million` gate on finished-run candidates, `show` of the campaign folder;
//! and a bad third candidate stopping everything before any load reaches the first.
#![cfg(unix)]

use crate::support::common;
use common::{bin, flat_sim_candidate, read_json, stderr, stdout, tmpdir, SimProcess};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

/// Each campaign takes two tenths of a core (`search_support::MACHINE`) for its simulators
/// and clients: what one used alone. The lane keeps the measuring tests beside it to one core,
/// so its clients are not slowed and its answers tell about the candidates, not the machine.
fn turn() -> crate::support::common::lane::Turn {
    crate::support::search_support::MACHINE.take(2)
}

/// Equal but for the last bits a JSON round trip may change (see the cost check below).
fn same(a: f64, b: f64) -> bool {
    (a / b - 1.0).abs() < 1e-12
}

/// The entries of `dir` (which must exist), as paths.
fn children(dir: &Path) -> impl Iterator<Item = PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.path())
}

// Each simulator at 2x: a step of 10 ms whatever the batch, 16 output tokens, so a request
// takes 17 steps, 170 ms, while a slot is free, and about twice that (340 ms) when it waits
// for one beyond `max_num_seqs`. The p90 SLA of 255 ms sits halfway between the two, so the
// model decides each answer, not the machine's load: a level passes while fewer than 10 % of
// its requests wait for a slot, which puts the answer at the slot count or a little above it,
// and a busy machine would have to add 85 ms to most requests to move it. An error-rate limit
// of 10 % is decided on ~30 requests (1 % would need ~380 per level).
const CONFIG: &str = r#"
[searches.known]
e2e_sla_ms = "p90:255ms"
max_error_rate = 0.1
concurrency_min = 1
concurrency_max = 32
search_max_iterations = 6
request_count = 32

[profiles.known]
input_tokens = 32
output_tokens = 16
stream = true

[campaigns.known]
description = "three simulators with known capacities"
search = "known"
profile = "known"
peak_concurrency = 100
headroom = 0.2

[[campaigns.known.candidates]]
label = "one slot"
price_per_hour = 1.0
sim = { time_scale = 2.0, max_num_seqs = 1, decode_base_ms = 20.0, decode_per_seq_ms = 0.0, prefill_per_token_ms = 0.0 }

[[campaigns.known.candidates]]
label = "four slots"
price_per_hour = 2.0
sim = { time_scale = 2.0, max_num_seqs = 4, decode_base_ms = 20.0, decode_per_seq_ms = 0.0, prefill_per_token_ms = 0.0 }

[[campaigns.known.candidates]]
label = "sixteen slots"
price_per_hour = 4.0
gpus = 2
sim = { time_scale = 2.0, max_num_seqs = 16, decode_base_ms = 20.0, decode_per_seq_ms = 0.0, prefill_per_token_ms = 0.0 }
"#;

fn state(rec: &Value, i: usize) -> &str {
    rec["candidates"][i]["state"].as_str().unwrap()
}

#[test]
fn three_candidates_rank_by_cost_resume_after_an_interrupt_and_gate() {
    let _turn = turn();
    let root = tmpdir("campaign-known");
    let cfg = root.join("rightsize.toml");
    std::fs::write(&cfg, CONFIG).unwrap();
    let out = root.join("runs");
    let mut child = bin()
        .arg("--config")
        .arg(&cfg)
        .args(["campaign", "--plan", "known", "--out"])
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // interrupt once the second candidate has finished a level
    let start = Instant::now();
    let dir = loop {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "the second candidate never finished a level"
        );
        if let Some(status) = child.try_wait().unwrap() {
            panic!("the campaign ended before the interrupt: {status:?}");
        }
        // the folder is made at once, campaign.json once every candidate passed pre-flight
        let found = std::fs::read_dir(&out).ok().and_then(|mut it| {
            let d = it.next()?.ok()?.path();
            let rec: Value =
                serde_json::from_str(&std::fs::read_to_string(d.join("campaign.json")).ok()?)
                    .ok()?;
            let first = PathBuf::from(rec["candidates"][0]["run_dir"].as_str()?);
            (rec["candidates"][1]["state"] == "running").then_some((d, first))
        });
        if let Some((d, first)) = found {
            let second_level = children(&d)
                .filter(|p| p.is_dir() && *p != first)
                .any(|run| run.join("level-001-c0001.json").exists());
            if second_level {
                break d;
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    // SAFETY: kill only sends a signal to the child we started.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    let rec = read_json(&dir.join("campaign.json"));
    assert_eq!(state(&rec, 0), "done");
    assert_eq!(state(&rec, 1), "interrupted");
    assert_eq!(state(&rec, 2), "waiting");
    let first_run = rec["candidates"][0]["run_dir"]
        .as_str()
        .unwrap()
        .to_string();
    let cut_run = rec["candidates"][1]["run_dir"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(rec["ranking"].as_array().unwrap().len(), 1);

    let resumed = bin()
        .args(["campaign", "--resume"])
        .arg(&dir)
        .output()
        .unwrap();
    assert_eq!(resumed.status.code(), Some(0), "{}", stderr(&resumed));
    let rec = read_json(&dir.join("campaign.json"));
    for i in 0..3 {
        assert_eq!(state(&rec, i), "done", "candidate {i}");
    }
    // the finished candidate was not run again; the cut one was, from its first level
    assert_eq!(rec["candidates"][0]["run_dir"], first_run.as_str());
    assert_eq!(rec["candidates"][1]["abandoned_runs"][0], cut_run.as_str());
    assert_ne!(rec["candidates"][1]["run_dir"], cut_run.as_str());
    assert!(rec["ended_at"].is_string());

    let ranking = rec["ranking"].as_array().unwrap();
    let labels: Vec<&str> = ranking
        .iter()
        .map(|r| r["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels, ["sixteen slots", "four slots", "one slot"]);
    let ranks: Vec<(u64, bool)> = ranking
        .iter()
        .map(|r| (r["rank"].as_u64().unwrap(), r["tied"].as_bool().unwrap()))
        .collect();
    assert_eq!(ranks, [(1, false), (2, false), (3, false)]);
    let slots_of = |label: &str| match label {
        "one slot" => 1.0,
        "four slots" => 4.0,
        _ => 16.0,
    };
    for row in ranking {
        let label = row["label"].as_str().unwrap();
        let cand = rec["candidates"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["label"] == label)
            .unwrap();
        let run = PathBuf::from(cand["run_dir"].as_str().unwrap());
        let summary = read_json(&run.join("summary.json"));
        let price = cand["price_per_hour"].as_f64().unwrap();
        // the answer lies at the slot count or a little above it (a little below it where a
        // debug client on a busy machine adds its own delay to 16 streams)
        let answer = summary["answer"]["concurrency"].as_f64().unwrap();
        let slots = slots_of(label);
        assert!(
            answer >= slots * 0.75 && answer <= slots * 1.25,
            "{label}: answer {answer} for {slots} slots"
        );
        assert_eq!(row["answer"]["value"].as_f64().unwrap(), answer);
        // cost per million output tokens from the run's own recorded throughput at its
        // answer. Compared to 1e-12, not bit for bit: serde_json's default float parsing (no
        // `float_roundtrip` feature) can land one ulp off the number written, and did here
        let recorded = summary["answer"]["output_tps"].as_f64().unwrap();
        let tps = row["output_tps"]["value"].as_f64().unwrap();
        assert!(same(tps, recorded), "{label}: {tps} vs {recorded}");
        let expected = price / (recorded * 3600.0) * 1e6;
        let cost = row["cost_per_million"]["value"].as_f64().unwrap();
        assert!(same(cost, expected), "{label}: {cost} vs {expected}");
        // instances for a peak of 100 in flight with 20 % headroom at the ideal point
        let ideal = summary["planning"]["ideal"]["concurrency"]
            .as_f64()
            .unwrap();
        let instances = (100.0 * 1.2 / ideal - 1e-9).ceil();
        assert_eq!(
            row["instances"]["value"].as_f64().unwrap(),
            instances,
            "{label}"
        );
        assert_eq!(
            row["fleet_cost_per_hour"]["value"].as_f64().unwrap(),
            instances * price,
            "{label}"
        );
        assert_eq!(row["binding_sla"], "p90 e2e <= 255 ms", "{label}");
        // the simulated GPU's energy per million output tokens at the answer, as the level
        // files measured at that concurrency record it, and the fleet's GPU power: instances
        // times one instance's mean power at the ideal point
        let at_answer: Vec<f64> = children(&run)
            .filter(|p| {
                p.file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with("level-")
            })
            .map(|p| read_json(&p))
            .filter(|l| l["concurrency"].as_f64() == Some(answer) && l["partial"] != true)
            .filter_map(|l| l["server"]["gpu"]["kwh_per_million_output_tokens"].as_f64())
            .collect();
        assert!(!at_answer.is_empty(), "{label}: no GPU figures at {answer}");
        let kwh = at_answer.iter().sum::<f64>() / at_answer.len() as f64;
        assert!(
            same(row["kwh_per_million"].as_f64().unwrap(), kwh),
            "{label}: {row}"
        );
        let watts = summary["planning"]["ideal"]["energy"]["power_w"]
            .as_f64()
            .unwrap();
        assert!(
            same(
                row["fleet_power_kw"].as_f64().unwrap(),
                instances * watts / 1e3
            ),
            "{label}: {row}"
        );
    }
    // the printed ranking, and `show` of the folder
    let text = stdout(&resumed);
    assert!(
        text.contains("ranked by cost per million output tokens"),
        "{text}"
    );
    let shown = bin().arg("show").arg(&dir).output().unwrap();
    assert_eq!(shown.status.code(), Some(0));
    let shown = stdout(&shown);
    assert!(shown.contains("campaign known: three simulators with known capacities"));
    assert!(shown.contains(" 1. done         one slot"), "{shown}");
    // `compare` of two campaign folders (here the same one twice): candidate by candidate
    let compared = bin().arg("compare").arg(&dir).arg(&dir).output().unwrap();
    assert_eq!(compared.status.code(), Some(0), "{}", stderr(&compared));
    let compared = stdout(&compared);
    let row = compared
        .lines()
        .find(|l| l.starts_with("sixteen slots"))
        .unwrap_or_else(|| panic!("{compared}"));
    assert!(row.contains(" 1 ") && row.ends_with("+0.0 %"), "{row}");

    // the Pareto chart and the overlay, parsed: one point per candidate, the frontier
    // through the points no other candidate beats on both, every label
    let charts = root.join("charts");
    let o = bin()
        .arg("export")
        .arg(&dir)
        .arg("--svg")
        .arg(&charts)
        .arg("--png")
        .arg(&charts)
        .arg("--csv")
        .arg(charts.join("ranking.csv"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let svg = std::fs::read_to_string(charts.join("pareto.svg")).unwrap();
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let points = doc
        .descendants()
        .filter(|n| n.has_tag_name("circle") && n.attribute("fill") == Some("#1F77B4"))
        .count();
    assert_eq!(points, 3);
    let xy: Vec<(f64, f64)> = ranking
        .iter()
        .map(|r| {
            (
                r["sla_at_answer"]["value"].as_f64().unwrap(),
                r["cost_per_million"]["value"].as_f64().unwrap(),
            )
        })
        .collect();
    let on_frontier = xy
        .iter()
        .filter(|(x, y)| !xy.iter().any(|(x2, y2)| x2 <= x && y2 < y))
        .count();
    let rings = doc
        .descendants()
        .filter(|n| n.has_tag_name("circle") && n.attribute("stroke") == Some("#D62728"))
        .count();
    assert_eq!(rings, on_frontier);
    let frontier_line = doc
        .descendants()
        .filter(|n| n.has_tag_name("polyline") && n.attribute("stroke") == Some("#D62728"))
        .map(|n| n.attribute("points").unwrap().split_whitespace().count())
        .max();
    assert_eq!(frontier_line, Some(on_frontier));
    let texts: Vec<String> = doc
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| n.text().map(|t| t.trim().to_string()))
        .collect();
    for label in ["one slot", "four slots", "sixteen slots"] {
        assert!(texts.iter().any(|t| t == label), "{label}: {texts:?}");
    }
    let overlay = std::fs::read_to_string(charts.join("overlay.svg")).unwrap();
    for label in ["one slot", "four slots", "sixteen slots"] {
        assert!(
            overlay.contains(&format!("{label} ")),
            "{label} in the overlay legend"
        );
        // the candidates' servers were sampled: the server chart overlays them too
        assert!(
            overlay.contains(&format!("{label} running (batch)")),
            "{label}'s batch in the overlay's server chart"
        );
    }
    for name in ["pareto.png", "overlay.png"] {
        let png = png::Decoder::new(std::io::BufReader::new(
            std::fs::File::open(charts.join(name)).unwrap(),
        ));
        let info = png.read_info().unwrap();
        assert_eq!(
            (info.info().width, info.info().height),
            (1600, 900),
            "{name}"
        );
    }
    let csv = std::fs::read_to_string(charts.join("ranking.csv")).unwrap();
    let csv_rows: Vec<&str> = csv.lines().collect();
    assert_eq!(csv_rows.len(), 4);
    assert!(
        csv_rows[1].starts_with("1,false,sixteen slots,4,2,"),
        "{}",
        csv_rows[1]
    );

    // `runs` lists the candidates' runs inside the campaign folder
    let runs = bin()
        .args(["runs", "--json", "--runs-dir"])
        .arg(&out)
        .output()
        .unwrap();
    let listed: Value = serde_json::from_slice(&runs.stdout).unwrap();
    assert_eq!(
        listed.as_array().unwrap().len(),
        4,
        "three runs and the cut one"
    );

    // the gate, on a campaign of the finished runs (no load is sent)
    let gate_file = root.join("finished.toml");
    let runs: Vec<String> = (0..3)
        .map(|i| {
            rec["candidates"][i]["run_dir"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    std::fs::write(
        &gate_file,
        format!(
            "search = \"known\"\nprofile = \"known\"\n[[candidates]]\nlabel = \"a\"\n\
             price_per_hour = 1.0\nrun = \"{}\"\n[[candidates]]\nlabel = \"c\"\n\
             price_per_hour = 4.0\nrun = \"{}\"\n",
            runs[0], runs[2]
        ),
    )
    .unwrap();
    let cheapest = ranking[0]["cost_per_million"]["value"].as_f64().unwrap();
    for (limit, code) in [(cheapest * 0.99, 3), (cheapest * 1.01, 0)] {
        let o = bin()
            .arg("--config")
            .arg(&cfg)
            .arg("campaign")
            .arg(&gate_file)
            .args(["--max-cost-per-million", &limit.to_string(), "--out"])
            .arg(root.join("gate"))
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(code), "{limit}: {}", stderr(&o));
    }
    // other orders: by throughput the 32-slot run first; by fleet cost it needs a peak
    let o = bin()
        .arg("--config")
        .arg(&cfg)
        .arg("campaign")
        .arg(&gate_file)
        .args(["--rank-by", "throughput", "--json", "--out"])
        .arg(root.join("gate"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let by_tps: Value = serde_json::from_slice(&o.stdout).unwrap();
    let order: Vec<&str> = by_tps["ranking"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["label"].as_str().unwrap())
        .collect();
    assert_eq!(order, ["c", "a"]);
    assert_eq!(by_tps["rank_by"], "throughput");
    let o = bin()
        .arg("--config")
        .arg(&cfg)
        .arg("campaign")
        .arg(&gate_file)
        .args(["--rank-by", "fleet-cost", "--out"])
        .arg(root.join("gate"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains(
            "--rank-by fleet-cost needs a peak: campaign finished has no peak_concurrency"
        ),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_bad_third_candidate_stops_the_campaign_before_any_load() {
    let _turn = turn();
    let first = SimProcess::start(&["--time-scale", "10"]);
    let root = tmpdir("campaign-bad");
    // a port nothing listens on: bind one, note it, close it
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let file = root.join("bad.toml");
    let write = |third: &str| {
        std::fs::write(
            &file,
            format!(
                "e2e_sla_ms = 5000\n\
                 [[candidates]]\nlabel = \"first\"\nendpoint = \"{}\"\nprice_per_hour = 1\n\
                 [[candidates]]\nlabel = \"second\"\nprice_per_hour = 2\nsim = {{ max_num_seqs = 8 }}\n\
                 [[candidates]]\nlabel = \"third\"\nprice_per_hour = 3\n{third}\n",
                first.url
            ),
        )
        .unwrap()
    };
    let generated = || {
        common::prometheus_value(
            &common::http_get(&first.url, "/metrics"),
            "vllm:generation_tokens_total",
        )
    };
    let before = generated();

    // an endpoint that refuses connections: the run fails (1) in pre-flight
    write(&format!("endpoint = \"http://127.0.0.1:{closed}/v1\""));
    let o = bin()
        .arg("campaign")
        .arg(&file)
        .arg("--out")
        .arg(root.join("runs"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("no load was sent; 1 of 3 candidates cannot run"),
        "{err}"
    );
    assert!(err.contains("candidate 3/3 (third)"), "{err}");
    assert!(err.contains("connection refused"), "{err}");
    // the first candidate saw its pre-flight request and nothing else, and no folder is left
    let preflight_tokens = generated() - before;
    assert!(
        preflight_tokens <= 16.0,
        "{preflight_tokens} tokens generated"
    );
    assert_eq!(std::fs::read_dir(root.join("runs")).unwrap().count(), 0);

    // an endpoint name the config does not define: bad input (2), before any request
    write("endpoint = \"no-such-endpoint\"");
    let before = generated();
    let o = bin()
        .arg("campaign")
        .arg(&file)
        .arg("--out")
        .arg(root.join("runs"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o)
            .contains("campaign bad: candidate 3 (third): unknown endpoint `no-such-endpoint`"),
        "{}",
        stderr(&o)
    );
    assert_eq!(generated(), before);
}

#[test]
fn an_imported_aiperf_run_is_ranked_beside_a_live_candidate() {
    let _turn = turn();
    let root = tmpdir("campaign-imported");
    let runs = root.join("runs");
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/aiperf/v013");
    let o = bin()
        .args(["import", "aiperf"])
        .arg(&fixture)
        .arg("--runs-dir")
        .arg(&runs)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let imported = children(&runs).next().unwrap();
    // the export measured 4 and 8 in flight: p90 150 ms and 300 ms, 400 and 480 tok/s; under
    // p90 255 ms its answer is 4 at 400 tok/s, so at 0.5/h it costs
    // 0.5 / (400 x 3600) x 1e6 per million output tokens
    let file = root.join("mixed.toml");
    std::fs::write(
        &file,
        format!(
            "e2e_sla_ms = \"p90:255ms\"\nmax_error_rate = 0.1\nconcurrency_min = 2\n\
             concurrency_max = 16\nsearch_max_iterations = 4\nrequest_count = 32\n\
             input_tokens = 32\noutput_tokens = 16\n{}\
             [[candidates]]\nlabel = \"imported: AIPerf 0.13 job\"\nprice_per_hour = 0.5\n\
             run = \"{}\"\n",
            flat_sim_candidate("live: two slots", 1.0, 2, 20.0, 2.0),
            imported.display()
        ),
    )
    .unwrap();
    let o = bin()
        .arg("campaign")
        .arg(&file)
        .arg("--out")
        .arg(&runs)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let dir = children(&runs)
        .find(|p| p.join("campaign.json").is_file())
        .unwrap();
    let rec = read_json(&dir.join("campaign.json"));
    let ranking = rec["ranking"].as_array().unwrap();
    let labels: Vec<&str> = ranking
        .iter()
        .map(|r| r["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels, ["imported: AIPerf 0.13 job", "live: two slots"]);
    let top = &ranking[0];
    assert_eq!(top["answer"]["value"], 4.0);
    assert_eq!(top["output_tps"]["value"], 400.0);
    let cost = top["cost_per_million"]["value"].as_f64().unwrap();
    assert!(same(cost, 0.5 / (400.0 * 3600.0) * 1e6), "{cost}");
    assert_eq!(rec["candidates"][1]["run_dir"], imported.to_str().unwrap());
    assert!(stdout(&o).contains("imported: AIPerf 0.13 job"));
}
