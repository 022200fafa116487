//! Server telemetry scraped from the simulator's vLLM-named `/metrics` during load.

use rightsize::sim::SimConfig;
use rightsize::telemetry::scrape::Scraped;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scraper_reads_the_simulators_vllm_metrics_under_load() {
    let mut cfg = SimConfig::fast(1.0);
    cfg.max_num_seqs = 2;
    let sim = rightsize::sim::start(cfg).await.unwrap();
    // four slow requests: two run, two wait
    let client = reqwest::Client::new();
    let url = format!("{}/completions", sim.base_url);
    for _ in 0..4 {
        let c = client.clone();
        let url = url.clone();
        tokio::spawn(async move {
            let body = r#"{"model":"sim-moe-30b-a3b","prompt":"hello","max_tokens":400,"ignore_eos":true}"#;
            // hold the response to its end: dropping it would abort the request
            if let Ok(r) = c
                .post(url)
                .header("content-type", "application/json")
                .body(body)
                .send()
                .await
            {
                let _ = r.text().await;
            }
        });
    }
    // the scraper samples once a second: its samples are read until the four requests are in
    // the simulator (two running, two waiting), with no sleep to guess when they arrive
    let (tx, mut rx) = tokio::sync::mpsc::channel(16);
    let stop = CancellationToken::new();
    let targets = rightsize::telemetry::scrape::Targets {
        server: Some((
            rightsize::endpoint::control::ControlClient::default(),
            sim.base_url.clone(),
        )),
        gpu: None,
    };
    let task = tokio::spawn(rightsize::telemetry::scrape::scrape(
        targets,
        rightsize::telemetry::scrape::SCRAPE_EVERY,
        tx,
        stop.clone(),
    ));
    let loaded = tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            match rx.recv().await.expect("the scraper runs") {
                Scraped::Sample { sample: s, .. }
                    if s.running == Some(2.0) && s.waiting == Some(2.0) =>
                {
                    break s
                }
                Scraped::Sample { sample: s, .. } => assert_eq!(s.server, Some("vllm"), "{s:?}"),
                Scraped::Missing(note) => panic!("the simulator's metrics were not read: {note}"),
            }
        }
    })
    .await
    .expect("a sample with two requests running and two waiting within 20 s");
    stop.cancel();
    task.await.unwrap();
    assert_eq!(loaded.server, Some("vllm"));
    assert!(loaded.kv_cache_usage.is_some_and(|k| k > 0.0));
    sim.shutdown();
}
