//! The first token is read and timed on the first-token lane, not by the worker: a worker
//! that cannot run when the first token arrives does not inflate TTFT, and the rest of the
//! stream is read by the worker once it runs again.

use rightsize::clock::now_ns;
use rightsize::endpoint::{Api, Endpoint, EndpointSpec};
use std::time::Duration;

mod common;

const MS: u64 = 1_000_000;

#[tokio::test(flavor = "current_thread")]
async fn first_token_is_timed_while_the_worker_is_blocked() {
    // one token every 40 ms, the first one step after the request
    let sim = common::SimProcess::start(&[
        "--decode-base-ms",
        "40",
        "--decode-per-seq-ms",
        "0",
        "--prefill-per-token-ms",
        "0",
    ]);
    let spec = EndpointSpec {
        name: "sim".into(),
        base_url: sim.url.clone(),
        model: "sim-moe-30b-a3b".into(),
        api: Api::Chat,
        stream: true,
        exact_output_length: true,
        headers: vec![],
        api_key_env: None,
        sim_timing: true,
        sagemaker: None,
    };
    let ep = Endpoint::new(&spec, 4, Duration::from_secs(10)).expect("endpoint");
    // a first exchange leaves a pooled connection: the next request is written at once
    let warm = ep.send("hello there", 4).await;
    assert_eq!(warm.error, None);

    let worker = ep.clone();
    let task = tokio::spawn(async move { worker.send("hello again", 4).await });
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
    // this runtime's only thread, the worker's, is stuck while the first tokens arrive
    std::thread::sleep(Duration::from_millis(300));
    let unblocked = now_ns();
    let o = task.await.expect("send task");

    assert_eq!(o.error, None);
    let sent = o.server_first_sent_ns.expect("sim stamp");
    let got = o.first_token_ns.expect("first token");
    assert!(
        sent + 100 * MS < unblocked,
        "the first token was sent {} ms before the worker ran again: the test proves nothing",
        (unblocked as i64 - sent as i64) / MS as i64
    );
    assert!(
        got >= sent && got - sent < 20 * MS,
        "first token read {:.1} ms after the simulator sent it",
        (got as f64 - sent as f64) / 1e6
    );
    // the last token came while the worker was stuck too: it is read once the worker runs
    assert!(o.last_token_ns.expect("last token") >= unblocked);
    assert_eq!(o.output_tokens, Some(4));
}
