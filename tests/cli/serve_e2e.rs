//! Acceptance (issue 50, the served run): a headless sweep with `--serve 127.0.0.1:0` streams
//! its engine events from the start, each finished level's event equal to its level file;
//! `/metrics` mid-run parses with the project's Prometheus reader and carries every documented
//! name; `POST /stop` needs the token and stops the run as Ctrl-C does (exit 130, the stream
//! ending with the interrupted run); the stream and the metrics carry no secret. Beyond
//! loopback the run needs its token: refused without it before anything runs, and every route
//! asks for it.

use crate::support::common::{
    bin, only_run_dir, read_json, start_served, stderr, tmpdir, SimProcess,
};
use rightsize::serve::metrics_text::NAMES;
use serde_json::Value;

const TOKEN: &str = "serve-token-7c1d";
const PASSWORD: &str = "served-password-51a";

/// The run's events as the stream sends them, one JSON value per line, until it ends.
async fn read_events(
    mut resp: reqwest::Response,
    mut on_event: impl FnMut(&Value),
) -> (Vec<Value>, String) {
    let (mut text, mut pending) = (String::new(), String::new());
    let mut events = Vec::new();
    while let Some(chunk) = resp.chunk().await.expect("the stream reads") {
        let s = std::str::from_utf8(&chunk).unwrap();
        text.push_str(s);
        pending.push_str(s);
        while let Some(nl) = pending.find('\n') {
            let line: String = pending.drain(..=nl).collect();
            let v: Value = serde_json::from_str(&line).expect("one JSON event per line");
            on_event(&v);
            events.push(v);
        }
    }
    assert!(pending.is_empty(), "a partial last line: {pending}");
    (events, text)
}

fn kind(v: &Value) -> &str {
    v["event"]
        .as_object()
        .and_then(|o| o.keys().next())
        .map_or("", |k| k.as_str())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_served_sweep_streams_its_events_and_metrics_and_stops_with_the_token() {
    // 4 slots at 10x: 4 streams pass a 300 ms mean, 64 queue past it, 128 run long enough to
    // be stopped
    let sim = SimProcess::start(&["--max-num-seqs", "4", "--time-scale", "10"]);
    let endpoint = sim
        .url
        .replace("http://", &format!("http://watcher:{PASSWORD}@"));
    let out = tmpdir("serve-sweep");
    let (mut child, base, _stderr) = start_served(
        bin()
            .args(["sweep", "-e", &endpoint, "-c", "4,64,128", "-n", "128"])
            .args(["--input-tokens", "64", "--output-tokens", "64"])
            // 0 failures in 73 requests decide a 5 % error limit (128 cannot decide 1 %)
            .args(["--e2e-sla", "avg:300ms", "--max-error-rate", "0.05"])
            .args(["--no-tui", "--json"])
            .args(["--serve", "127.0.0.1:0", "--out"])
            .arg(&out)
            .env("RIGHTSIZE_SERVE_TOKEN", TOKEN),
    );
    assert!(base.starts_with("http://127.0.0.1:"), "{base}");
    let client = reqwest::Client::new();
    let stream = client
        .get(format!("{base}/events"))
        .send()
        .await
        .expect("GET /events");
    assert_eq!(stream.status(), 200);
    // once level 2 has finished and level 3 has finished requests, scrape and stop
    let (scrape_tx, mut scrape_rx) = tokio::sync::mpsc::unbounded_channel::<()>();
    let mut asked = false;
    let reader = tokio::spawn(read_events(stream, move |v| {
        let ev = &v["event"];
        let third_running =
            ev["progress"]["index"] == 2 && ev["progress"]["ok"].as_u64().is_some_and(|ok| ok > 0);
        if third_running && !asked {
            asked = true;
            let _ = scrape_tx.send(());
        }
    }));
    scrape_rx.recv().await.expect("level 3 ran");
    let metrics = client
        .get(format!("{base}/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let samples = rightsize::telemetry::prometheus::parse(&metrics);
    // every documented name but the one only a campaign writes
    for (name, _, _) in NAMES
        .iter()
        .filter(|(n, _, _)| *n != "rightsize_campaign_candidates")
    {
        assert!(
            samples.iter().any(|s| s.name == *name),
            "{name} is documented but not in /metrics:\n{metrics}"
        );
    }
    let value = |name: &str, label: (&str, &str)| {
        samples
            .iter()
            .find(|s| {
                s.name == name
                    && s.labels
                        .iter()
                        .any(|(k, v)| (k.as_str(), v.as_str()) == label)
            })
            .map(|s| s.value)
    };
    assert_eq!(
        value("rightsize_answer", ("axis", "concurrency")),
        Some(4.0),
        "{metrics}"
    );
    assert_eq!(
        value("rightsize_bracket", ("bound", "high")),
        Some(64.0),
        "{metrics}"
    );
    assert!(
        value("rightsize_in_flight", ("level", "3")).is_some(),
        "{metrics}"
    );
    // a stop needs the token
    let refused = client.post(format!("{base}/stop")).send().await.unwrap();
    assert_eq!(refused.status(), 401);
    let stopped = client
        .post(format!("{base}/stop"))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(stopped.status(), 200);
    let (events, text) = reader.await.unwrap();
    let status = tokio::task::spawn_blocking(move || child.wait())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(status.code(), Some(130));
    // numbered from 0, in order, from the run's start to its interrupted end
    let seqs: Vec<u64> = events.iter().map(|e| e["seq"].as_u64().unwrap()).collect();
    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "{seqs:?}");
    assert_eq!(seqs[0], 0);
    assert_eq!(kind(&events[0]), "run_started");
    let last = &events[events.len() - 1]["event"];
    assert_eq!(last["run_finished"]["interrupted"], true, "{last}");
    // each finished level as its level file has it
    let run = only_run_dir(&out);
    let finished: Vec<&Value> = events
        .iter()
        .filter(|e| kind(e) == "level_finished")
        .map(|e| &e["event"]["level_finished"])
        .collect();
    assert_eq!(finished.len(), 3, "{text}");
    for level in finished {
        let n = level["index"].as_u64().unwrap() + 1;
        let name = std::fs::read_dir(&run)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .find(|f| f.starts_with(&format!("level-{n:03}-")))
            .unwrap_or_else(|| panic!("no file of level {n} in {}", run.display()));
        let file = read_json(&run.join(name));
        assert_eq!(level, &file, "level {n}");
    }
    for secret in [PASSWORD, TOKEN] {
        assert!(!text.contains(secret), "the stream holds {secret}");
        assert!(!metrics.contains(secret), "/metrics holds {secret}");
    }
}

#[test]
fn beyond_loopback_the_run_needs_its_token() {
    let out = tmpdir("serve-open");
    let o = bin()
        .args(["sweep", "-e", "sim", "-c", "1", "-n", "2", "--no-tui"])
        .args(["--serve", "0.0.0.0:0", "--out"])
        .arg(&out)
        .env_remove("RIGHTSIZE_SERVE_TOKEN")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("--serve 0.0.0.0:0") && err.contains("RIGHTSIZE_SERVE_TOKEN"),
        "{err}"
    );
    assert!(!out.exists() || std::fs::read_dir(&out).unwrap().next().is_none());
    let runtime = tokio::runtime::Runtime::new().unwrap();
    // with the token: every route asks for it
    let (mut child, base, _stderr) = start_served(
        bin()
            .args(["sweep", "-e", "sim", "--sim-time-scale", "1", "-c", "1"])
            .args(["-n", "100000", "--output-tokens", "4096", "--no-tui"])
            .args(["--serve", "0.0.0.0:0", "--out"])
            .arg(&out)
            .env("RIGHTSIZE_SERVE_TOKEN", TOKEN),
    );
    let local = base.replace("0.0.0.0", "127.0.0.1");
    runtime.block_on(async {
        let client = reqwest::Client::new();
        for path in ["/events", "/metrics"] {
            let r = client.get(format!("{local}{path}")).send().await.unwrap();
            assert_eq!(r.status(), 401, "{path}");
            let r = client
                .get(format!("{local}{path}"))
                .bearer_auth("not-the-token")
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), 401, "{path} with a wrong token");
        }
        let r = client
            .get(format!("{local}/metrics"))
            .bearer_auth(TOKEN)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        let r = client
            .post(format!("{local}/stop"))
            .bearer_auth(TOKEN)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
    });
    assert_eq!(child.wait().unwrap().code(), Some(130));
}

/// A proxy to `upstream` whose first connection breaks off after `cut` bytes of the answer;
/// later ones pass everything. Returns its address and the count of connections it took.
async fn breaking_proxy(
    upstream: std::net::SocketAddr,
    cut: usize,
) -> (
    std::net::SocketAddr,
    std::sync::Arc<std::sync::atomic::AtomicUsize>,
) {
    use std::sync::atomic::Ordering;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let taken = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let count = taken.clone();
    tokio::spawn(async move {
        while let Ok((client, _)) = listener.accept().await {
            let first = count.fetch_add(1, Ordering::SeqCst) == 0;
            let server = tokio::net::TcpStream::connect(upstream).await.unwrap();
            let (mut cr, mut cw) = client.into_split();
            let (mut sr, mut sw) = server.into_split();
            tokio::spawn(async move {
                let _ = tokio::io::copy(&mut cr, &mut sw).await;
            });
            tokio::spawn(async move {
                let mut passed = 0usize;
                let mut buf = vec![0u8; 4096];
                loop {
                    let n = match sr.read(&mut buf).await {
                        Ok(0) | Err(_) => break,
                        Ok(n) => n,
                    };
                    let n = if first { n.min(cut - passed) } else { n };
                    if cw.write_all(&buf[..n]).await.is_err() {
                        break;
                    }
                    passed += n;
                    if first && passed >= cut {
                        // the connection drops mid-answer (mid-line, most likely)
                        break;
                    }
                }
            });
        }
    });
    (addr, taken)
}

/// The events of kinds kept whole (every one but the snapshots), as JSON.
fn kept(events: &[rightsize::engine::EngineEvent]) -> Vec<String> {
    events
        .iter()
        .map(|e| serde_json::to_value(e).unwrap())
        .filter(|v| {
            !["progress", "telemetry", "workers"]
                .iter()
                .any(|k| v.get(k).is_some())
        })
        .map(|v| v.to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_stream_is_taken_up_again_without_losing_or_doubling_an_event() {
    use rightsize::serve::follow::{Followed, Watched};
    let out = tmpdir("serve-drop");
    let (mut child, base, _stderr) = start_served(
        bin()
            .args([
                "sweep",
                "-e",
                "sim",
                "--sim-time-scale",
                "10",
                "-c",
                "2,4,8",
            ])
            .args(["-n", "64", "--input-tokens", "64", "--output-tokens", "32"])
            .args(["--no-tui", "--serve", "127.0.0.1:0", "--out"])
            .arg(&out),
    );
    let upstream: std::net::SocketAddr = base.trim_start_matches("http://").parse().unwrap();
    // the first answer breaks off 1500 bytes in, inside the run's first events: the stream is
    // taken up again half a second later, seconds before the run (three levels of 64
    // requests) ends
    let (proxy, connections) = breaking_proxy(upstream, 1500).await;
    let follow = |url: String| async move {
        let w = Watched::new(&url, None).unwrap();
        let (tx, mut rx) = tokio::sync::mpsc::channel(1024);
        let leave = tokio_util::sync::CancellationToken::new();
        let reading = tokio::spawn(async move {
            let mut all = Vec::new();
            while let Some(ev) = rx.recv().await {
                all.push(ev);
            }
            all
        });
        let ended = w.follow(tx, leave).await;
        (ended, reading.await.unwrap())
    };
    let ((direct_end, direct), (proxied_end, proxied)) =
        tokio::join!(follow(base.clone()), follow(format!("http://{proxy}")));
    assert_eq!(direct_end, Ok(Followed::Finished));
    assert_eq!(proxied_end, Ok(Followed::Finished));
    assert!(
        connections.load(std::sync::atomic::Ordering::SeqCst) >= 2,
        "the proxy never broke a stream"
    );
    let (direct, proxied) = (kept(&direct), kept(&proxied));
    let finished = |v: &[String]| v.iter().filter(|e| e.contains("level_finished")).count();
    assert_eq!(finished(&direct), 3);
    assert_eq!(
        proxied, direct,
        "the taken-up stream differs from the whole one"
    );
    let status = tokio::task::spawn_blocking(move || child.wait())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(status.code(), Some(0));
}

#[test]
fn watch_says_what_it_needs_before_it_opens_the_dashboard() {
    for (url, said) in [
        ("ftp://h:1", "watch: `ftp://h:1` is not an http URL"),
        (
            "http://127.0.0.1:1",
            "stdout is not a terminal: run it in one (for the figures alone, `curl http://127.0.0.1:1/metrics`)",
        ),
    ] {
        let o = bin().args(["watch", url]).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{url}: {}", stderr(&o));
        assert!(stderr(&o).contains(said), "{url}: {}", stderr(&o));
    }
}
