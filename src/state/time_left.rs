//! How long a run has left, from what it measured so far: the running level at its own pace
//! (requests finished per second of the level), and the levels the plan may still run at
//! the pace of those finished (a sweep knows how many; a search gives a range, since it may
//! end after any level).

use crate::state::RunState;
use crate::values::fmt_duration;

/// Seconds left, each as a range: the running level's, and the whole run's.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TimeLeft {
    pub level_s: [f64; 2],
    pub run_s: [f64; 2],
}

impl RunState {
    /// The time left, once the running level has finished a request; `None` before.
    pub fn time_left(&self) -> Option<TimeLeft> {
        let p = self.progress.as_ref().filter(|p| p.done > 0)?;
        let per_request = p.elapsed_s / p.done as f64;
        // a level that grows by batches until decided may run up to its cap
        let cap = self.running_cap.max(p.total);
        let level_s = [
            p.total.saturating_sub(p.done) as f64 * per_request,
            cap.saturating_sub(p.done) as f64 * per_request,
        ];
        // a level still to run takes what the finished ones took on average, or what this
        // one will
        let finished: Vec<f64> = self
            .levels
            .iter()
            .map(|l| l.benchmark_duration.avg)
            .filter(|d| d.is_finite() && *d > 0.0)
            .collect();
        let per_level = if finished.is_empty() {
            p.elapsed_s + level_s[0]
        } else {
            finished.iter().sum::<f64>() / finished.len() as f64
        };
        let [fewest, most] = self.levels_left.unwrap_or([0, 0]);
        Some(TimeLeft {
            level_s,
            run_s: [
                level_s[0] + f64::from(fewest) * per_level,
                level_s[1] + f64::from(most) * per_level,
            ],
        })
    }
}

/// `12 s` for one value, `40 s to 1.5 min` for a range.
pub fn fmt_range([lo, hi]: [f64; 2]) -> String {
    let (a, b) = (fmt_duration(lo), fmt_duration(hi));
    if a == b {
        a
    } else {
        format!("{a} to {b}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::{LevelProgress, LiveLevel};
    use std::time::Duration;

    fn progress(done: u64, total: u64, elapsed_s: f64) -> LevelProgress {
        let mut p = LiveLevel::new(1, 64, total, Duration::from_secs(1), 2).snapshot(0);
        p.done = done;
        p.elapsed_s = elapsed_s;
        p
    }

    #[test]
    fn the_running_level_at_its_pace_and_the_rest_at_the_finished_levels_pace() {
        let mut s = RunState {
            running: Some((1, 64, 1024)),
            running_cap: 1024,
            ..RunState::default()
        };
        // nothing finished yet: nothing to go by
        s.progress = Some(progress(0, 1024, 2.0));
        assert_eq!(s.time_left(), None);
        // 256 of 1024 in 8 s: 24 s left in the level; no level finished, so each later one
        // takes what this one will (32 s); a sweep with two more
        s.progress = Some(progress(256, 1024, 8.0));
        s.levels_left = Some([2, 2]);
        assert_eq!(
            s.time_left(),
            Some(TimeLeft {
                level_s: [24.0, 24.0],
                run_s: [88.0, 88.0],
            })
        );
        // a search level that may grow to 4096, up to 5 more levels of the finished ones'
        // 10 s and 20 s
        let mut a = crate::metrics::fixtures::level(0, 1, 8, 100, 200, 4, None);
        a.benchmark_duration.avg = 10.0;
        let mut b = a.clone();
        b.benchmark_duration.avg = 20.0;
        s.levels = vec![a, b];
        s.running_cap = 4096;
        s.levels_left = Some([0, 5]);
        assert_eq!(
            s.time_left(),
            Some(TimeLeft {
                level_s: [24.0, 120.0],
                run_s: [24.0, 195.0],
            })
        );
        assert_eq!(fmt_range([24.0, 195.0]), "24 s to 3.2 min");
        assert_eq!(fmt_range([24.0, 24.4]), "24 s");
    }
}
