//! The results folder round-trips: level files written atomically read back equal, the request
//! log parses line by line, and no `.tmp` file is left behind.

use std::fs;
use std::path::PathBuf;
use std::time::{SystemTime, UNIX_EPOCH};

use rightsize::metrics::{ClientLag, LevelAccumulator, LevelMeta, LevelSummary};
use rightsize::record::{ErrorKind, RequestError, RequestRecord, TokenSource};
use rightsize::report::{load_levels, load_requests, ResultsDir};
use rightsize::wallclock::new_run_id;

/// A fresh folder under the system temp dir, removed on drop.
struct TempRoot(PathBuf);

impl TempRoot {
    fn new(tag: &str) -> Self {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_nanos();
        let dir =
            std::env::temp_dir().join(format!("rightsize-{tag}-{}-{nanos}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        TempRoot(dir)
    }
}

impl Drop for TempRoot {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

fn record(index: u64, worker: u32, start_ms: u64, error: Option<ErrorKind>) -> RequestRecord {
    let ms = 1_000_000;
    RequestRecord {
        index,
        worker,
        slot_free_ns: start_ms * ms,
        start_ns: start_ms * ms + 1_234,
        first_token_ns: error.is_none().then_some((start_ms + 50) * ms),
        last_token_ns: error.is_none().then_some((start_ms + 900) * ms),
        end_ns: (start_ms + 900) * ms,
        input_tokens: 1024,
        output_tokens: error.is_none().then_some(256),
        output_tokens_source: TokenSource::Server,
        content_chunks: 256,
        chunk_gaps_ns: vec![3 * ms, 4 * ms],
        error: error.map(|kind| RequestError {
            kind,
            status: Some(503),
            message: "service unavailable".into(),
        }),
        reconnected: index == 2,
        server_first_sent_ns: None,
        server_last_sent_ns: None,
        warmup: false,
        cooldown: false,
        detail: Default::default(),
    }
}

fn records() -> Vec<RequestRecord> {
    vec![
        record(0, 0, 0, None),
        record(1, 1, 0, None),
        record(2, 0, 900, Some(ErrorKind::HttpStatus)),
        record(3, 1, 900, None),
    ]
}

fn summarize(index: u32, concurrency: u32, recs: &[RequestRecord]) -> LevelSummary {
    let mut acc = LevelAccumulator::new(concurrency, recs.len() as u64);
    recs.iter().for_each(|r| acc.add(r));
    acc.finish(LevelMeta {
        index,
        started_at: "2026-11-29T08:30:12.000Z".into(),
        ended_at: "2026-11-29T08:30:14.000Z".into(),
        partial: false,
        lag: Some(ClientLag {
            timer_late_p99_ms: 0.25,
            timer_late_max_ms: 1.5,
            slot_to_send_p99_ms: 0.01,
            warning: None,
        }),
        ..LevelMeta::default()
    })
}

fn no_tmp_files(dir: &std::path::Path) {
    for entry in fs::read_dir(dir).unwrap() {
        let name = entry.unwrap().file_name();
        assert!(
            !name.to_string_lossy().ends_with(".tmp"),
            "left behind: {name:?}"
        );
    }
}

#[test]
fn level_files_round_trip_sorted_without_summary() {
    let root = TempRoot::new("levels");
    let run_id = new_run_id("sweep", SystemTime::now());
    let dir = ResultsDir::create(&root.0, &run_id).unwrap();
    assert_eq!(dir.path(), root.0.join(&run_id));

    let second = summarize(1, 4, &records());
    let first = summarize(0, 2, &records());
    // written out of order: loading sorts by index
    let p1 = dir.write_level(&second).unwrap();
    let p0 = dir.write_level(&first).unwrap();
    assert!(p0.ends_with("level-001-c0002.json"));
    assert!(p1.ends_with("level-002-c0004.json"));
    // rewriting a level replaces it atomically
    dir.write_level(&first).unwrap();

    let loaded = load_levels(dir.path()).unwrap();
    assert_eq!(loaded, vec![first.clone(), second]);
    assert!(dir.load_summary::<serde_json::Value>().unwrap().is_none());
    no_tmp_files(dir.path());

    // the JSON is AIPerf-shaped
    let v: serde_json::Value = serde_json::from_slice(&fs::read(&p0).unwrap()).unwrap();
    assert_eq!(v["request_latency"]["unit"], "ms");
    assert_eq!(v["output_token_throughput"]["unit"], "tokens/sec");
    assert_eq!(v["error_request_count"]["avg"], 1.0);
}

#[test]
fn run_and_summary_files() {
    let root = TempRoot::new("run");
    let dir = ResultsDir::create(&root.0, "20261129-083012-sweep").unwrap();
    // a second run in the same second gets its own folder
    let again = ResultsDir::create(&root.0, "20261129-083012-sweep").unwrap();
    assert_eq!(again.run_id(), "20261129-083012-sweep-2");

    dir.write_run(&serde_json::json!({"tool_version": "0.1.0", "levels": [2, 4]}))
        .unwrap();
    dir.write_summary(&serde_json::json!({"knee": 4})).unwrap();
    let summary: serde_json::Value = dir.load_summary().unwrap().unwrap();
    assert_eq!(summary["knee"], 4);
    let run: serde_json::Value =
        serde_json::from_slice(&fs::read(dir.path().join("run.json")).unwrap()).unwrap();
    assert_eq!(run["levels"][1], 4);
    no_tmp_files(dir.path());
    // leftover temp files from a crash are not mistaken for levels
    fs::write(dir.path().join("level-003-c0008.json.tmp"), b"{trunc").unwrap();
    assert!(load_levels(dir.path()).unwrap().is_empty());
}

#[test]
fn request_log_lines_parse_with_their_level() {
    let root = TempRoot::new("requests");
    let dir = ResultsDir::create(&root.0, "r").unwrap();
    let mut log = dir.request_log().unwrap();
    let recs = records();
    for r in &recs[..2] {
        log.append(0, r).unwrap();
    }
    log.flush().unwrap();
    for r in &recs[2..] {
        log.append(1, r).unwrap();
    }
    log.flush().unwrap();
    drop(log);

    let text = fs::read_to_string(dir.path().join("requests.jsonl")).unwrap();
    assert_eq!(text.lines().count(), 4);
    for line in text.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        assert!(v["level"].is_u64() && v["start_ns"].is_u64());
        assert!(v.get("chunk_gaps_ns").is_none());
    }
    let lines = load_requests(&dir.path().join("requests.jsonl")).unwrap();
    let levels: Vec<u32> = lines.iter().map(|l| l.level).collect();
    assert_eq!(levels, vec![0, 0, 1, 1]);
    for (line, want) in lines.iter().zip(&recs) {
        // inter-chunk gaps are folded into histograms, not logged
        let mut want = want.clone();
        want.chunk_gaps_ns.clear();
        assert_eq!(line.record, want);
    }
    assert_eq!(
        lines[2].record.error.as_ref().map(|e| e.kind),
        Some(ErrorKind::HttpStatus)
    );
}
