//! Server telemetry scraped from the simulator's vLLM-named `/metrics` during load.

use rightsize::engine::EngineEvent;
use rightsize::sim::SimConfig;
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
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (tx, mut rx) = tokio::sync::mpsc::channel(16);
    let stop = CancellationToken::new();
    let task = tokio::spawn(rightsize::telemetry::scrape::scrape(
        reqwest::Client::new(),
        sim.base_url.clone(),
        tx,
        stop.clone(),
    ));
    let ev = tokio::time::timeout(Duration::from_secs(5), rx.recv())
        .await
        .expect("a scrape within 5 s")
        .expect("an event");
    stop.cancel();
    task.await.unwrap();
    let EngineEvent::Telemetry(s) = ev else {
        panic!("expected telemetry, got {ev:?}");
    };
    assert_eq!(s.server, Some("vllm"));
    assert_eq!(s.running, Some(2.0));
    assert_eq!(s.waiting, Some(2.0));
    assert!(s.kv_cache_usage.is_some_and(|k| k > 0.0));
    sim.shutdown();
}
