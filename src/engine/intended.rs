//! An open-loop level's intended send times, held or drawn: a replayed trace's times were
//! read whole from its file, so they are shared as they are; a shape's (rate, steps, ramp)
//! are drawn from the seeded schedule as the dispatcher reaches them, so a long high-rate
//! level holds none of them ahead (10 million requests would be 80 MB of times). Whoever needs
//! them again (the count of requests due for progress) draws the same times from the same
//! seed.

use crate::workload::arrivals::Schedule;
use std::iter::Peekable;
use std::sync::Arc;

/// Where a level's intended send times come from.
#[derive(Debug, Clone)]
pub enum Intended {
    /// A replayed trace's times, at most the level's request count.
    Trace(Arc<Vec<u64>>),
    /// Drawn from the schedule, at most `max` of them.
    Drawn { schedule: Schedule, max: u64 },
}

impl Intended {
    /// The times in order (ns since the level's start); the iterator holds what it needs
    /// (the trace's shared times, the schedule's seed).
    pub fn iter(&self) -> Box<dyn Iterator<Item = u64> + Send + Sync> {
        match self {
            Intended::Trace(t) => {
                let t = t.clone();
                Box::new((0..t.len()).map(move |i| t[i]))
            }
            Intended::Drawn { schedule, max } => Box::new(schedule.iter().take(*max as usize)),
        }
    }

    /// One worker's part of the times, with each one's place in the whole (`Segment`):
    /// every worker walks the same times and keeps its own, so together they send exactly
    /// the schedule one process would.
    pub fn segment(&self, segment: Segment) -> impl Iterator<Item = (u64, u64)> + Send + Sync {
        let of = segment.of.max(1) as usize;
        self.iter()
            .enumerate()
            .skip(segment.part as usize)
            .step_by(of)
            .map(|(i, t)| (i as u64, t))
    }

    /// How many requests the level sends: a drawn schedule is walked once to count them (a
    /// fixed rate runs to `max`, a steps or ramp shape to its end), none of the times kept.
    pub fn count(&self) -> u64 {
        match self {
            Intended::Trace(t) => t.len() as u64,
            Intended::Drawn { .. } => self.iter().count() as u64,
        }
    }

    /// The trace's times, when the level replays one.
    pub fn trace(&self) -> Option<&[u64]> {
        match self {
            Intended::Trace(t) => Some(t),
            Intended::Drawn { .. } => None,
        }
    }
}

/// Which of a level's arrivals one worker of a distributed run sends (as k6's execution
/// segments): arrival `i` is worker `i % of`'s. Interleaved rather than cut into runs, so
/// every worker sends throughout the level at `1/of` of its rate, and the workers' streams
/// of arrivals together are the level's, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Segment {
    pub part: u32,
    pub of: u32,
}

impl Segment {
    /// The whole level: one process sends every arrival.
    pub const WHOLE: Segment = Segment { part: 0, of: 1 };

    /// How many of `n` arrivals are this segment's.
    pub fn share_of(&self, n: u64) -> u64 {
        let (part, of) = (u64::from(self.part), u64::from(self.of.max(1)));
        n / of + u64::from(part < n % of)
    }
}

/// Counts the requests due by a time that only moves forward, walking the times once.
pub struct Due {
    times: Peekable<Box<dyn Iterator<Item = u64> + Send + Sync>>,
    count: u64,
}

impl Due {
    pub fn new(intended: &Intended) -> Due {
        Due {
            times: intended.iter().peekable(),
            count: 0,
        }
    }

    /// Requests whose intended time is at or before `now` (ns since the level's start);
    /// `now` never goes back between calls.
    pub fn by(&mut self, now: u64) -> u64 {
        while self.times.next_if(|t| *t <= now).is_some() {
            self.count += 1;
        }
        self.count
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::arrivals::{Arrival, LoadShape};

    #[test]
    fn drawn_times_are_the_schedules_and_due_counts_them_as_time_moves() {
        let schedule = Schedule {
            shape: LoadShape::Steps {
                rates: vec![2.0, 4.0],
                each_s: 1.0,
            },
            arrival: Arrival::Constant,
            seed: 3,
        };
        let drawn = Intended::Drawn {
            schedule: schedule.clone(),
            max: 100,
        };
        let ms = 1_000_000;
        // 2/s for a second, then 4/s to the end of the second step (inclusive): the steps end
        // it before the maximum
        let want = vec![
            0,
            500 * ms,
            1_000 * ms,
            1_250 * ms,
            1_500 * ms,
            1_750 * ms,
            2_000 * ms,
        ];
        assert_eq!(drawn.iter().collect::<Vec<_>>(), want);
        assert_eq!(drawn.count(), 7);
        assert_eq!(schedule.times(100), want);
        // a maximum cuts the drawing short
        let capped = Intended::Drawn { schedule, max: 4 };
        assert_eq!(capped.count(), 4);
        let held = Intended::Trace(Arc::new(want.clone()));
        assert_eq!(held.count(), 7);
        assert_eq!(held.trace(), Some(&want[..]));
        assert_eq!(drawn.trace(), None);
        for intended in [&drawn, &held] {
            let mut due = Due::new(intended);
            let got: Vec<u64> = [0, 499, 500, 1_100, 1_100, 1_750, 9_000]
                .iter()
                .map(|t| due.by(t * ms))
                .collect();
            assert_eq!(got, [1, 1, 2, 3, 3, 6, 7]);
        }
        // three workers' segments: every time once, in its place, the counts as said
        let parts: Vec<Vec<(u64, u64)>> = (0..3)
            .map(|part| drawn.segment(Segment { part, of: 3 }).collect())
            .collect();
        assert_eq!(parts[0], vec![(0, 0), (3, 1_250 * ms), (6, 2_000 * ms)]);
        assert_eq!(parts[1], vec![(1, 500 * ms), (4, 1_500 * ms)]);
        assert_eq!(parts[2], vec![(2, 1_000 * ms), (5, 1_750 * ms)]);
        let lens: Vec<u64> = (0..3)
            .map(|part| Segment { part, of: 3 }.share_of(7))
            .collect();
        assert_eq!(lens, [3, 2, 2]);
        assert_eq!(Segment::WHOLE.share_of(7), 7);
        let mut merged: Vec<(u64, u64)> = parts.concat();
        merged.sort();
        let whole: Vec<(u64, u64)> = drawn.segment(Segment::WHOLE).collect();
        assert_eq!(merged, whole);
        assert_eq!(whole.iter().map(|p| p.1).collect::<Vec<_>>(), want);
    }
}
