//! Open-loop levels against the simulator (issue 14): a rate past the server's capacity
//! builds a queue that the saturation watch sees (and stops the level, with the evidence in
//! its file) before the simulator's bounded waiting queue starts refusing; below capacity
//! the rate holds. A client capped by `--max-in-flight` shows the wait in the latency from
//! the intended send and in the schedule lag.

use crate::support::search_support;
use rightsize::engine::EngineEvent;
use rightsize::plan::{Analysis, LevelLoad, SweepPlanner};
use rightsize::workload::arrivals::{Arrival, LoadShape, OpenSettings};
use search_support::*;
use std::time::Duration;

/// 8 batch slots at real time: a 32-token answer takes about 32 x 11 ms, so the server
/// finishes about 22 requests/s. Its waiting queue holds 256; past that it answers 503.
fn small_server() -> rightsize::sim::SimConfig {
    let mut cfg = rightsize::sim::SimConfig::fast(1.0);
    cfg.max_num_seqs = 8;
    cfg.max_waiting = Some(256);
    cfg
}

fn rates(r: &[f64]) -> Box<SweepPlanner> {
    Box::new(SweepPlanner::open(
        r.iter()
            .map(|rps| LevelLoad::Open(LoadShape::Rate { rps: *rps }))
            .collect(),
        Analysis::default(),
    ))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rate_past_capacity_is_stopped_as_saturated_before_the_queue_overflows() {
    let server = rightsize::sim::start(small_server()).await.unwrap();
    let open = OpenSettings {
        arrival: Arrival::Constant,
        // 10 s of sends per level: 80 requests at 8/s, 600 at 60/s (if never stopped)
        level_s: Duration::from_secs(10),
        ..OpenSettings::default()
    };
    let w = workload(64, 32);
    let (out, events) = run_plan_with(
        &server,
        rates(&[8.0, 60.0]),
        &w,
        0,
        Duration::from_secs(60),
        open,
    )
    .await;
    server.shutdown();
    let [below, past] = &out.levels[..] else {
        panic!("two levels, got {}", out.levels.len());
    };

    // below capacity: every request sent on time and answered, not saturated, held
    let r = below.open_loop.rate.as_ref().expect("a rate level");
    let r0 = r.clone();
    assert!(r.saturated.is_none(), "8 req/s saturated: {r:?}");
    assert_eq!((below.ok_count(), below.error_count()), (80, 0));
    assert!(below.held, "8 req/s sent at {:.2}", r.achieved_rps);

    // past capacity: stopped early, with the evidence
    let r = past.open_loop.rate.as_ref().expect("a rate level");
    println!("below: {r0:?}\npast: {:?}", past.open_loop.rate);
    let s = r.saturated.as_ref().expect("60 req/s is past capacity");
    assert!(
        !past.partial,
        "a saturated level is complete, not interrupted"
    );
    let sent = past.ok_count() + past.error_count() + past.cancelled_count;
    assert!(sent < 600, "stopped early: {sent} of 600 requests sent");
    assert!(
        s.pending_last >= 2.0 * s.pending_first && s.pending_slope_per_s > 6.0,
        "waiting requests grew: {s:?}"
    );
    // excess arrivals of about 38/s would overflow the 256-deep queue after about 7 s: the
    // watch saw the growth before that, so not one request was refused
    let refused = past
        .errors_by_kind
        .get(&rightsize::record::ErrorKind::HttpStatus)
        .copied()
        .unwrap_or(0);
    assert_eq!(refused, 0, "the watch stops the level before the 503s");
    assert!(
        !past.verdict.is_some_and(|v| v.is_pass()),
        "a saturated level never passes"
    );

    // the live figures showed the queue growing while the level ran
    let pending: Vec<u64> = events
        .iter()
        .filter_map(|e| match e {
            EngineEvent::Progress(p) if p.index == 1 => p.open.map(|o| o.pending),
            _ => None,
        })
        .collect();
    assert!(pending.len() >= 8, "progress every 250 ms: {pending:?}");
    assert!(
        pending.last() > Some(&(4 * pending[1])),
        "pending requests over time: {pending:?}"
    );

    // the level file says so too
    let file = out.dir.join("level-002-rate-60rps.json");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert!(
        v["rate"]["saturated"]["pending_slope_per_s"]
            .as_f64()
            .unwrap()
            > 6.0
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_capped_in_flight_shows_the_wait_from_the_intended_send() {
    let server = rightsize::sim::start(small_server()).await.unwrap();
    // 4 in flight hold about 11 requests/s; 30/s are offered
    let open = OpenSettings {
        arrival: Arrival::Constant,
        max_in_flight: Some(4),
        requests: Some(90),
        ..OpenSettings::default()
    };
    let w = workload(64, 32);
    let (out, _) = run_plan_with(
        &server,
        rates(&[30.0]),
        &w,
        0,
        Duration::from_secs(60),
        open,
    )
    .await;
    server.shutdown();
    let l = &out.levels[0];
    let actual = l.request_latency.as_ref().expect("successes").p50;
    let intended = l
        .open_loop
        .request_latency_from_intended
        .as_ref()
        .expect("open-loop latencies")
        .p50;
    let lag = l.open_loop.schedule_lag.as_ref().expect("lag").p50;
    // the server answers in about 360 ms of model time (a floor); requests wait seconds for
    // a slot, which only the latency from the intended send and the lag carry
    assert!(
        intended > actual + 500.0 && lag > 500.0,
        "from the intended send {intended:.0} ms, lag {lag:.0} ms, from the actual send \
         {actual:.0} ms"
    );
    let r = l.open_loop.rate.as_ref().unwrap();
    println!("actual {actual:.0} ms, intended {intended:.0} ms, lag {lag:.0} ms; {r:?}");
    assert_eq!(r.max_in_flight, Some(4));
    assert!(
        r.achieved_rps < 0.6 * r.offered_rps,
        "the cap held the sends back: {:.1} of {:.1}",
        r.achieved_rps,
        r.offered_rps
    );
    if let Some(s) = &r.saturated {
        assert!(s.at_cap, "the cap, not the server, held the rate: {s:?}");
    }
}
