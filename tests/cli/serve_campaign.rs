//! Acceptance (issue 50, a served campaign): `campaign --serve 127.0.0.1:0` streams the
//! campaign's events from its start (each candidate running, its search's engine events,
//! done, the ranking, and the campaign's end last), `GET /run` answers its record, `/metrics`
//! mid-campaign carries the running candidate's figures under its label and the candidates
//! by state, and what the stream says at the end is what `campaign.json` records.

use crate::support::common::{bin, read_json, start_served, tmpdir};
use serde_json::Value;

// Two simulators with a 20 ms step whatever the batch: small searches of 16 requests a
// level. The first runs at 10x (a second or so); the second in real time, so its first level
// (16 requests of 9 steps, one at a time) lasts about 3 s: /metrics is read while it runs.
const CONFIG: &str = r#"
[searches.small]
e2e_sla_ms = "p90:300ms"
max_error_rate = 0.1
concurrency_min = 1
concurrency_max = 8
search_max_iterations = 3
request_count = 16

[profiles.small]
input_tokens = 16
output_tokens = 8
stream = true

[campaigns.served]
search = "small"
profile = "small"

[[campaigns.served.candidates]]
label = "two slots"
price_per_hour = 1.0
sim = { time_scale = 10.0, max_num_seqs = 2, decode_base_ms = 20.0, decode_per_seq_ms = 0.0, prefill_per_token_ms = 0.0 }

[[campaigns.served.candidates]]
label = "eight slots"
price_per_hour = 2.0
sim = { time_scale = 1.0, max_num_seqs = 8, decode_base_ms = 20.0, decode_per_seq_ms = 0.0, prefill_per_token_ms = 0.0 }
"#;

/// The one key of an event object (`state`, `engine`, ...).
fn kind(ev: &Value) -> &str {
    ev.as_object()
        .and_then(|o| o.keys().next())
        .map_or("", |k| k.as_str())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_served_campaign_streams_every_candidate_and_ends_as_its_record() {
    let root = tmpdir("serve-campaign");
    let cfg = root.join("rightsize.toml");
    std::fs::write(&cfg, CONFIG).unwrap();
    let out = root.join("runs");
    let (mut child, base, _stderr) = start_served(
        bin()
            .arg("--config")
            .arg(&cfg)
            .args([
                "campaign",
                "--plan",
                "served",
                "--serve",
                "127.0.0.1:0",
                "--out",
            ])
            .arg(&out),
    );
    let client = reqwest::Client::new();
    let described = client.get(format!("{base}/run")).send().await.unwrap();
    let described: Value = serde_json::from_str(&described.text().await.unwrap()).unwrap();
    let labels: Vec<&str> = described["campaign"]["candidates"]
        .as_array()
        .expect("GET /run answers the campaign's record")
        .iter()
        .map(|c| c["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels, ["two slots", "eight slots"]);
    // read the stream; once the second candidate's first level is under way, scrape /metrics
    let mut stream = client.get(format!("{base}/events")).send().await.unwrap();
    assert_eq!(stream.status(), 200);
    let (mut events, mut pending, mut metrics) = (Vec::<Value>::new(), String::new(), None);
    while let Some(chunk) = stream.chunk().await.expect("the stream reads") {
        pending.push_str(std::str::from_utf8(&chunk).unwrap());
        while let Some(nl) = pending.find('\n') {
            let line: String = pending.drain(..=nl).collect();
            let v: Value = serde_json::from_str(&line).expect("one JSON event per line");
            let ev = &v["event"];
            let second_running =
                ev["engine"]["index"] == 1 && kind(&ev["engine"]["event"]) == "progress";
            if second_running && metrics.is_none() {
                let text = client.get(format!("{base}/metrics")).send().await.unwrap();
                metrics = Some(text.text().await.unwrap());
            }
            events.push(v);
        }
    }
    assert!(pending.is_empty(), "a partial last line: {pending}");
    let status = tokio::task::spawn_blocking(move || child.wait())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(status.code(), Some(0));
    // numbered from 0 in order
    let seqs: Vec<u64> = events.iter().map(|e| e["seq"].as_u64().unwrap()).collect();
    assert!(
        seqs[0] == 0 && seqs.windows(2).all(|w| w[0] < w[1]),
        "{seqs:?}"
    );
    // each candidate runs, sends its search's events from its run's start to its end, and is
    // done; the ranking follows; the campaign's end comes last
    let steps: Vec<String> = events
        .iter()
        .map(|e| &e["event"])
        .filter_map(|ev| match kind(ev) {
            "state" => Some(format!("{} {}", ev["state"]["index"], ev["state"]["state"])),
            "engine" => match kind(&ev["engine"]["event"]) {
                k @ ("run_started" | "run_finished") => {
                    Some(format!("{} {k}", ev["engine"]["index"]))
                }
                _ => None,
            },
            k => Some(k.to_string()),
        })
        .collect();
    assert_eq!(
        steps,
        [
            r#"0 "running""#,
            "0 run_started",
            "0 run_finished",
            r#"0 "done""#,
            "ranking",
            r#"1 "running""#,
            "1 run_started",
            "1 run_finished",
            r#"1 "done""#,
            "ranking",
            "ended",
        ]
    );
    let last = &events[events.len() - 1]["event"];
    assert_eq!(last["ended"]["finished"]["failed"], 0, "{last}");
    // the last ranking is campaign.json's
    let dir = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.join("campaign.json").exists())
        .expect("the campaign's folder");
    let rec = read_json(&dir.join("campaign.json"));
    let ranking = events
        .iter()
        .rev()
        .find(|e| kind(&e["event"]) == "ranking")
        .map(|e| &e["event"]["ranking"])
        .unwrap();
    assert_eq!(ranking, &rec["ranking"]);
    assert_eq!(ranking.as_array().unwrap().len(), 2, "{ranking}");
    // mid-campaign: the second candidate's run, labelled, and the candidates by state
    let metrics = metrics.expect("/metrics was read while the second candidate ran");
    let samples = rightsize::telemetry::prometheus::parse(&metrics);
    let value = |name: &str, label: (&str, &str)| {
        let s = samples.iter().find(|s| {
            s.name == name
                && s.labels
                    .iter()
                    .any(|(k, v)| (k.as_str(), v.as_str()) == label)
        });
        s.map(|s| s.value)
    };
    let by_state = |state| value("rightsize_campaign_candidates", ("state", state));
    assert_eq!(
        ["waiting", "running", "done", "interrupted", "failed"].map(by_state),
        [Some(0.0), Some(1.0), Some(1.0), Some(0.0), Some(0.0)],
        "{metrics}"
    );
    assert_eq!(
        value("rightsize_run_info", ("candidate", "eight slots")),
        Some(1.0),
        "{metrics}"
    );
    // its first level running
    assert!(
        value("rightsize_in_flight", ("level", "1")).is_some(),
        "{metrics}"
    );
}
