//! The controller's bookkeeping, driven through its route handlers without a network.

use super::*;
use crate::fleet::protocol::WireRecord;

fn joined(workers: usize) -> Shared {
    let shared = Shared::new("t".into(), workers);
    for i in 0..workers {
        let j = Join {
            index: Some(i as u32),
            host: format!("h{i}"),
            version: env!("CARGO_PKG_VERSION").into(),
            clock: Vec::new(),
        };
        assert_eq!(join(&shared, j).status(), StatusCode::OK);
    }
    shared
}

fn ready(shared: &Shared, answer: Result<(), String>, ready_for: u64) {
    let r = Report {
        ready: Some(answer),
        ready_for,
        ..Report::default()
    };
    assert_eq!(report(shared, 0, r).status(), StatusCode::OK);
}

fn readiness(shared: &Shared) -> Option<Result<(), String>> {
    shared.lock().slots[0]
        .as_ref()
        .and_then(|s| s.ready.clone())
}

#[test]
fn a_ready_counts_only_for_the_spec_it_answers() {
    let shared = joined(1);
    // a campaign's second candidate: the fleet is on its second spec
    shared.lock().generation = 2;
    // the first candidate's pre-flight answers late: not this run's readiness
    ready(&shared, Ok(()), 1);
    assert_eq!(readiness(&shared), None);
    // this run's answer is taken, a pass or a failure
    ready(&shared, Err("no route to the endpoint".into()), 2);
    assert_eq!(
        readiness(&shared),
        Some(Err("no route to the endpoint".into()))
    );
    ready(&shared, Ok(()), 2);
    assert_eq!(readiness(&shared), Some(Ok(())));
}

#[test]
fn a_report_sent_again_gives_its_records_once() {
    let shared = joined(1);
    let (tx, mut rx) = mpsc::unbounded_channel();
    shared.lock().slots[0].as_mut().unwrap().share = Some(Active {
        id: 7,
        tx,
        stop: false,
        measured_done: false,
        last_report: 0,
        taken: 0,
    });
    let send = |number: u64, index: u64| {
        let r = Report {
            share: Some(7),
            number,
            records: vec![WireRecord::of(&crate::metrics::fixtures::record(
                index, 0, 1_000,
            ))],
            ..Report::default()
        };
        assert_eq!(report(&shared, 0, r).status(), StatusCode::OK);
    };
    // report 1 arrives, its answer is lost, and the worker sends it again; then report 2
    send(1, 0);
    send(1, 0);
    send(2, 1);
    let mut taken = Vec::new();
    while let Ok(msg) = rx.try_recv() {
        if let FleetMsg::Records { records, .. } = msg {
            taken.extend(records.iter().map(|r| r.index));
        }
    }
    assert_eq!(taken, vec![0, 1]);
}
