//! A distributed level's workers (`--workers`, `docs/distributed.md`): each worker's share of
//! the level, how sure the controller is of its clock, and how far apart the shares started.
//! The level's figures themselves are the union of every worker's records, folded as one
//! process folds its own; this block only says who measured what.

use serde::{Deserialize, Serialize};

/// Every worker of a distributed level.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FleetLevel {
    /// Workers that ran a share (a share of zero is never sent).
    pub workers: u32,
    /// How far apart the shares started (ms): the latest start minus the earliest, on the
    /// controller's clock, the largest over the level's batches.
    pub start_spread_ms: f64,
    /// The clock offsets' uncertainty (ms): half the fastest round trip, the largest of any
    /// worker; spreads below it are noise.
    pub clock_uncertainty_ms: f64,
    /// CPU time the controller process used during the level (s): folding the workers'
    /// records, and the built-in simulator's too when it runs in the same process.
    pub controller_cpu_s: f64,
    pub shares: Vec<WorkerShare>,
    /// Said when the spread is a large share of the level, or a worker was lost.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
}

/// One worker's part of a level.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkerShare {
    /// The worker's index (0-based; a Kubernetes worker's `JOB_COMPLETION_INDEX`).
    pub worker: u32,
    /// Where it ran (host name and process id).
    pub host: String,
    /// Concurrent streams it held (an open-loop share: its part of `--max-in-flight`, 0
    /// without one).
    pub concurrency: u32,
    /// Measured requests it finished (successes and failures), every batch of every
    /// measurement of the level (a search's level measured again adds to it).
    pub requests: u64,
    /// Of them, failures (requests cut by a stop are not counted: they are the level's
    /// `cancelled_count`).
    pub errors: u64,
    /// p99 of how late its timer fired (ms): its own client lag.
    pub timer_late_p99_ms: f64,
    /// CPU time its process used while its shares ran (s).
    pub cpu_s: f64,
    /// Requests in flight (live snapshots only; 0 in a level file).
    #[serde(skip)]
    pub in_flight: u64,
    /// Why its share did not finish (the worker died, hung or lost its connection).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lost: Option<String>,
}

/// A spread above this share of the level's duration is warned about: that long, part of the
/// level ran below its concurrency.
pub const SPREAD_WARN_SHARE: f64 = 0.02;

impl FleetLevel {
    /// The warning for a level that took `duration_s`, if any.
    pub fn spread_warning(&self, duration_s: f64) -> Option<String> {
        let spread_s = self.start_spread_ms / 1e3;
        (duration_s > 0.0 && spread_s > SPREAD_WARN_SHARE * duration_s).then(|| {
            format!(
                "the workers started {:.1} ms apart, {:.1} % of the level's {:.1} s: for that \
                 long the level ran below its concurrency (the steady window leaves it out)",
                self.start_spread_ms,
                100.0 * spread_s / duration_s,
                duration_s
            )
        })
    }

    /// Workers lost during the level, named.
    pub fn lost(&self) -> Vec<String> {
        self.shares
            .iter()
            .filter_map(|s| {
                s.lost
                    .as_ref()
                    .map(|why| format!("worker {} ({}): {why}", s.worker, s.host))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn level(spread_ms: f64) -> FleetLevel {
        FleetLevel {
            workers: 2,
            start_spread_ms: spread_ms,
            clock_uncertainty_ms: 0.1,
            controller_cpu_s: 0.0,
            shares: vec![],
            warning: None,
        }
    }

    #[test]
    fn spread_warned_above_two_percent_of_the_level() {
        // (spread ms, level s, warned)
        for (spread, dur, warned) in [
            (10.0, 10.0, false),
            (200.0, 10.0, false),
            (201.0, 10.0, true),
            (5.0, 0.0, false),
        ] {
            assert_eq!(
                level(spread).spread_warning(dur).is_some(),
                warned,
                "{spread} {dur}"
            );
        }
    }
}
