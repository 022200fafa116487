//! What one open-loop level runs ([`OpenPlan`]): its shape, arrivals and seed (or a trace's
//! times), its request count and in-flight cap; the intended send times it makes, and the
//! share of it one worker of a distributed run sends.

use super::fleet::OpenShare;
use super::intended::{Intended, Segment};
use crate::workload::arrivals::{Arrival, LoadShape, Schedule};
use std::sync::Arc;
use std::time::Duration;

/// What to run for one open-loop level.
#[derive(Debug, Clone)]
pub struct OpenPlan {
    /// 0-based position of the level in the run.
    pub index: u32,
    pub shape: LoadShape,
    pub arrival: Arrival,
    pub seed: u64,
    /// Intended send times given outright (a trace replay), instead of drawn from the shape.
    pub times: Option<Arc<Vec<u64>>>,
    /// The most requests the level sends (a fixed rate runs exactly this many).
    pub max_requests: u64,
    pub max_in_flight: Option<u32>,
    /// Per-window metrics width.
    pub window: Duration,
}

impl OpenPlan {
    /// The level's intended send times: the trace's (at most `max_requests` of them) or the
    /// seeded schedule's.
    pub fn intended(&self) -> Intended {
        match &self.times {
            Some(t) if t.len() as u64 <= self.max_requests => Intended::Trace(t.clone()),
            Some(t) => Intended::Trace(Arc::new(t[..self.max_requests as usize].to_vec())),
            None => Intended::Drawn {
                schedule: Schedule {
                    shape: self.shape.clone(),
                    arrival: self.arrival,
                    seed: self.seed,
                },
                max: self.max_requests,
            },
        }
    }

    /// What one worker of a distributed run is sent to run its `segment` of this level,
    /// holding at most `max_in_flight` of the level's in-flight cap.
    pub fn share(&self, segment: Segment, max_in_flight: Option<u32>) -> OpenShare {
        OpenShare {
            shape: self.shape.clone(),
            arrival: self.arrival,
            seed: self.seed,
            // only the times the level sends
            times: self.times.as_ref().map(|t| {
                let keep = t
                    .len()
                    .min(usize::try_from(self.max_requests).unwrap_or(usize::MAX));
                t[..keep].to_vec()
            }),
            max_requests: self.max_requests,
            max_in_flight,
            segment,
        }
    }

    /// A worker's plan of the level `index` its share is of.
    pub fn of_share(index: u32, share: &OpenShare) -> OpenPlan {
        OpenPlan {
            index,
            shape: share.shape.clone(),
            arrival: share.arrival,
            seed: share.seed,
            times: share.times.clone().map(Arc::new),
            max_requests: share.max_requests,
            max_in_flight: share.max_in_flight,
            window: Duration::from_secs(1),
        }
    }
}
