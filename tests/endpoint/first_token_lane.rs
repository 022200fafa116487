//! The first token is read and timed on the first-token lane, not by the worker: a worker
//! that cannot run when the first token arrives does not keep it from being read (and so
//! from being timed when it came), and the rest of the stream is read once the worker runs
//! again. Decided by the order of events, not by how long anything took: the worker's only
//! thread is held until the first token has been read, which only the lane can do then.

use rightsize::clock::now_ns;
use rightsize::endpoint::{Api, Endpoint, EndpointSpec};
use rightsize::workload::RequestInput;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::support::common;

/// How long the held thread waits for the lane at most: a bound for a broken lane (the test
/// then fails), not a measurement.
const LANE_BOUND: Duration = Duration::from_secs(30);

#[tokio::test(flavor = "current_thread")]
async fn first_token_is_read_while_the_worker_is_blocked() {
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
    let ep = Endpoint::new(&spec, 4, Duration::from_secs(60)).expect("endpoint");
    // a first exchange leaves a pooled connection: the next request is written at once
    let warm = ep.send("hello there", 4).await;
    assert_eq!(warm.error, None);

    // the stream reader adds one to `chunks` per content chunk, the moment it reads it
    let chunks = Arc::new(AtomicU64::new(0));
    let worker = ep.clone();
    let counted = chunks.clone();
    let task = tokio::spawn(async move {
        worker
            .send_counting(RequestInput::Text("hello again"), 4, counted)
            .await
    });
    // the worker's task writes the request and hands the connection to the lane in its
    // first poll, which it gets when this task yields (one runtime thread: it runs next)
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
    // hold this runtime's only thread, the worker's, until a chunk has been read: only the
    // lane's thread can read it now; a broken lane fails at the bound
    let bound = now_ns() + LANE_BOUND.as_nanos() as u64;
    while chunks.load(Ordering::Relaxed) == 0 {
        assert!(
            now_ns() < bound,
            "no chunk was read within {LANE_BOUND:?} while the worker's thread was held"
        );
        std::thread::yield_now();
    }
    let unblocked = now_ns();
    let o = task.await.expect("send task");

    assert_eq!(o.error, None, "{o:?}");
    let sent = o.server_first_sent_ns.expect("sim stamp");
    let got = o.first_token_ns.expect("first token");
    assert!(
        got < unblocked,
        "the first token was read only after the worker's thread ran again"
    );
    assert!(got >= sent, "the first token was read before it was sent");
    assert!(o.last_token_ns.expect("last token") >= got);
    assert_eq!(o.output_tokens, Some(4));
}
