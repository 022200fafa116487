//! The engine's side of a distributed run (`--workers N`, `docs/distributed.md`): what a run
//! asks of the workers that execute its levels' shares. Whoever starts the workers and talks
//! to them (the `fleet` module: a controller serving HTTP, local or Kubernetes workers)
//! implements [`Fleet`]; the engine splits each level ([`split_level`]), hands the shares over
//! and folds the records that come back into one level (`level::closed_fleet`, `level::open_fleet`).

use super::intended::Segment;
use crate::endpoint::EndpointSpec;
use crate::record::RequestRecord;
use crate::workload::arrivals::{Arrival, LoadShape};
use crate::workload::WorkloadSpec;
use futures_util::future::BoxFuture;
use serde::{Deserialize, Serialize};
use std::time::Duration;
use tokio::sync::mpsc;

/// What every worker needs to run shares of this run's levels: the endpoint (its model
/// resolved), the workload (calibrated) and the request timeout.
#[derive(Debug, Clone)]
pub struct FleetRunSpec {
    pub endpoint: EndpointSpec,
    pub workload: WorkloadSpec,
    pub timeout: Duration,
}

/// One worker's part of one batch of a closed-loop level, or of an open-loop level.
#[derive(Debug, Clone, PartialEq)]
pub struct Share {
    /// The worker's place in the fleet (0-based).
    pub worker: usize,
    /// The level's index and its measurement's position (prompts are that position's).
    pub level: u32,
    pub order: u32,
    /// Streams the worker holds.
    pub concurrency: u32,
    /// Measured requests the worker runs (cooldown requests past them keep its streams busy
    /// until its last one ends).
    pub requests: u32,
    /// Warmup requests it runs first (not measured).
    pub warmup: u32,
    /// Its first prompt index: the shares before it in the batch end there.
    pub prompt_base: u64,
    /// Its first stream's number in the level: the streams before it are other workers'.
    pub slot_base: u32,
    /// When it starts, on the controller's monotonic clock (ns); the fleet sends it in the
    /// worker's own clock.
    pub start_at_ns: u64,
    /// An open-loop level's share: the schedule and the worker's segment of it (its
    /// `concurrency` is then its part of the in-flight cap, 0 for none, and `requests` its
    /// arrivals, at most `u32::MAX` counted).
    pub open: Option<Box<OpenShare>>,
}

/// What a worker needs to send its segment of an open-loop level: the level's whole
/// schedule (every worker draws the same seeded times, or walks the same trace) and which
/// arrivals are its own. Its times count from the share's start instant.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpenShare {
    pub shape: LoadShape,
    pub arrival: Arrival,
    pub seed: u64,
    /// A replayed trace's times (ns from the level's start).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub times: Option<Vec<u64>>,
    /// The most requests the whole level sends.
    pub max_requests: u64,
    /// This worker's part of the level's in-flight cap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_in_flight: Option<u32>,
    pub segment: Segment,
}

/// What the workers say while a batch runs.
#[derive(Debug, Clone)]
pub enum FleetMsg {
    /// Finished requests, times counted from the share's start.
    Records {
        worker: usize,
        records: Vec<RequestRecord>,
    },
    /// Requests in flight, requests sent (an open-loop share's) and content chunks the
    /// share has received so far.
    Status {
        worker: usize,
        in_flight: u64,
        sent: u64,
        chunks: u64,
    },
    /// When the share's first request went out, on the controller's clock (ns).
    Started { worker: usize, at_ns: u64 },
    /// The share ended: every record was sent before this; its client lag (ms).
    Done {
        worker: usize,
        timer_late_p99_ms: f64,
        timer_late_max_ms: f64,
        /// CPU time the worker used while the share ran (s).
        cpu_s: f64,
    },
    /// The worker died, hung or lost its connection (no word for a heartbeat's time).
    Lost { worker: usize, why: String },
}

/// A worker as the fleet knows it.
#[derive(Debug, Clone, PartialEq)]
pub struct FleetWorker {
    /// Its index (a Kubernetes worker's `JOB_COMPLETION_INDEX`, else the order it joined in).
    pub index: u32,
    /// Host name and process id.
    pub host: String,
    /// Half the fastest round trip to it (ns): how far its clock offset may be off.
    pub clock_uncertainty_ns: u64,
}

/// The workers of a distributed run.
pub trait Fleet: Send + Sync {
    /// Workers the run has (every share set has at most this many).
    fn size(&self) -> usize;
    /// The workers, by place (after [`Fleet::prepare`]).
    fn workers(&self) -> Vec<FleetWorker>;
    /// Waits until every worker has joined and passed its own pre-flight with `spec` (again
    /// for each run the fleet serves); the error names the worker and says why.
    fn prepare(&self, spec: FleetRunSpec) -> BoxFuture<'_, Result<(), String>>;
    /// Sends one batch's shares; what the workers say arrives on the receiver, which closes
    /// once every share is done or lost.
    fn start(&self, shares: Vec<Share>) -> mpsc::UnboundedReceiver<FleetMsg>;
    /// Stops the running shares at once (an interrupt, a lost worker).
    fn stop_shares(&self);
    /// How long after a request ends its record may still be on its way here (the workers
    /// report periodically): views of a running level are taken that far back.
    fn records_lag(&self) -> std::time::Duration;
    /// The run is over: the workers exit. Returns what to tell the user (calls refused for
    /// a wrong token, workers that had to be killed).
    fn finish(&self) -> BoxFuture<'_, Vec<String>>;
}

/// A fleet lent to one run of several (a campaign's candidates, one after another): each run
/// prepares it with its own endpoint and workload, and its end leaves the workers waiting
/// for the next; the owner finishes it once the last run is over.
pub struct Lent(pub std::sync::Arc<dyn Fleet>);

impl Fleet for Lent {
    fn size(&self) -> usize {
        self.0.size()
    }
    fn workers(&self) -> Vec<FleetWorker> {
        self.0.workers()
    }
    fn prepare(&self, spec: FleetRunSpec) -> BoxFuture<'_, Result<(), String>> {
        self.0.prepare(spec)
    }
    fn start(&self, shares: Vec<Share>) -> mpsc::UnboundedReceiver<FleetMsg> {
        self.0.start(shares)
    }
    fn stop_shares(&self) {
        self.0.stop_shares()
    }
    fn records_lag(&self) -> std::time::Duration {
        self.0.records_lag()
    }
    fn finish(&self) -> BoxFuture<'_, Vec<String>> {
        Box::pin(async { Vec::new() })
    }
}

/// `total` in `parts` as even as possible, the larger parts first.
pub fn split_even(total: u64, parts: usize) -> Vec<u64> {
    let parts = parts.max(1) as u64;
    (0..parts)
        .map(|i| total / parts + u64::from(i < total % parts))
        .collect()
}

/// `total` in proportion to `weights` (largest remainders first, ties to the earlier):
/// parts sum to `total` exactly.
pub fn split_by(total: u64, weights: &[u64]) -> Vec<u64> {
    let sum: u64 = weights.iter().sum();
    if sum == 0 {
        return vec![0; weights.len()];
    }
    let exact: Vec<(u64, u64)> = weights
        .iter()
        .map(|w| {
            let p = u128::from(total) * u128::from(*w);
            ((p / u128::from(sum)) as u64, (p % u128::from(sum)) as u64)
        })
        .collect();
    let mut parts: Vec<u64> = exact.iter().map(|e| e.0).collect();
    let mut order: Vec<usize> = (0..weights.len()).collect();
    order.sort_by(|a, b| exact[*b].1.cmp(&exact[*a].1).then(a.cmp(b)));
    let short = total - parts.iter().sum::<u64>();
    for &i in order.iter().take(short as usize) {
        parts[i] += 1;
    }
    parts
}

/// What to split: one batch of a level.
#[derive(Debug, Clone, Copy)]
pub struct BatchSplit {
    pub level: u32,
    pub order: u32,
    pub concurrency: u32,
    pub requests: u64,
    pub warmup: u32,
    /// The batch's first prompt index (the batches before it end there).
    pub prompt_base: u64,
    pub start_at_ns: u64,
}

/// The shares of one batch over `workers` workers: concurrency as even as possible, requests
/// and warmup in proportion to it, consecutive prompt ranges and stream numbers; a worker
/// whose share would be zero streams gets none.
pub fn split_level(b: BatchSplit, workers: usize) -> Vec<Share> {
    let streams = split_even(u64::from(b.concurrency), workers);
    let requests = split_by(b.requests, &streams);
    let warmup = split_by(u64::from(b.warmup), &streams);
    let (mut prompt, mut slot) = (b.prompt_base, 0u32);
    let mut out = Vec::new();
    for w in 0..workers {
        if streams[w] == 0 {
            continue;
        }
        out.push(Share {
            worker: w,
            level: b.level,
            order: b.order,
            concurrency: streams[w] as u32,
            requests: requests[w] as u32,
            warmup: warmup[w] as u32,
            prompt_base: prompt,
            slot_base: slot,
            start_at_ns: b.start_at_ns,
            open: None,
        });
        prompt += requests[w];
        slot += streams[w] as u32;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn even_splits() {
        for (total, parts, want) in [
            (10u64, 4usize, vec![3u64, 3, 2, 2]),
            (3, 4, vec![1, 1, 1, 0]),
            (1024, 4, vec![256, 256, 256, 256]),
            (0, 2, vec![0, 0]),
        ] {
            assert_eq!(split_even(total, parts), want, "{total} in {parts}");
        }
    }

    #[test]
    fn proportional_splits_sum_exactly() {
        for (total, weights, want) in [
            (
                2048u64,
                vec![256u64, 256, 256, 256],
                vec![512u64, 512, 512, 512],
            ),
            (10, vec![3, 3, 2, 2], vec![3, 3, 2, 2]),
            (7, vec![3, 3, 2, 2], vec![2, 2, 2, 1]),
            (5, vec![1, 1, 1, 0], vec![2, 2, 1, 0]),
            (0, vec![1, 2], vec![0, 0]),
        ] {
            let got = split_by(total, &weights);
            assert_eq!(got, want, "{total} by {weights:?}");
            assert_eq!(got.iter().sum::<u64>(), total);
        }
    }

    #[test]
    fn a_level_splits_into_consecutive_ranges_without_empty_shares() {
        let b = BatchSplit {
            level: 2,
            order: 3,
            concurrency: 3,
            requests: 7,
            warmup: 2,
            prompt_base: 100,
            start_at_ns: 9,
        };
        let shares = split_level(b, 4);
        assert_eq!(shares.len(), 3, "{shares:?}");
        let got: Vec<(usize, u32, u32, u32, u64, u32)> = shares
            .iter()
            .map(|s| {
                (
                    s.worker,
                    s.concurrency,
                    s.requests,
                    s.warmup,
                    s.prompt_base,
                    s.slot_base,
                )
            })
            .collect();
        assert_eq!(
            got,
            vec![
                (0, 1, 3, 1, 100, 0),
                (1, 1, 2, 1, 103, 1),
                (2, 1, 2, 0, 105, 2)
            ]
        );
    }
}
