//! The time view's series: an open-loop level (a rate, a schedule, a replay) against seconds
//! since it started: the offered, sent and finished rates, the requests pending and in flight,
//! and TTFT and e2e p50 and p99 with their SLA lines. Built from the run state's timeline in
//! update, so rendering only reads.

use crate::state::{RunState, TimelinePoint};
use crate::workload::arrivals::LoadShape;

/// Points kept per series: more than a wide terminal's braille columns, few enough to draw
/// every frame.
const MAX_POINTS: usize = 600;

/// A latency's p50 and p99 over time (the gap between them widens as a queue forms) and its
/// SLA line.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Spread {
    pub p50: Vec<(f64, f64)>,
    pub p99: Vec<(f64, f64)>,
    /// The SLA limit (ms), drawn as a line.
    pub sla_ms: Option<f64>,
    /// Top of the y axis (ms).
    pub max_ms: f64,
}

/// Everything the time view draws, in chart coordinates (x: s since the level started).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TimeView {
    /// 0-based index of the level.
    pub level: u32,
    /// The level's shape, as people read it (`steps 2,6 req/s, 3s each`).
    pub label: String,
    /// The shape's planned length (s), when it has one.
    pub planned_s: Option<f64>,
    pub x_bounds: [f64; 2],
    /// Requests/s: what the schedule offers (planned ahead for steps and ramps), what was
    /// sent, what finished.
    pub offered: Vec<(f64, f64)>,
    pub sent: Vec<(f64, f64)>,
    pub done: Vec<(f64, f64)>,
    pub rate_max: f64,
    /// Requests due and not finished, and requests sent and not finished.
    pub pending: Vec<(f64, f64)>,
    pub in_flight: Vec<(f64, f64)>,
    pub queue_max: f64,
    pub e2e: Spread,
    pub ttft: Spread,
    /// The newest point, for the charts' titles.
    pub latest: Option<TimelinePoint>,
}

/// 10% above the largest value, or 1 when there is nothing yet.
fn top(values: impl Iterator<Item = f64>) -> f64 {
    let m = values.fold(0.0, f64::max);
    if m > 0.0 {
        m * 1.1
    } else {
        1.0
    }
}

/// The next of 1, 1.5, 2, 2.5, 3, 4, 5, 6, 8 times a power of ten at or above `v` (> 0).
fn round_up(v: f64) -> f64 {
    let mag = 10f64.powf(v.log10().floor());
    [1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|x| *x >= v * (1.0 - 1e-9))
        .unwrap_or(10.0 * mag)
}

/// The offered rate as planned, for shapes that know their future: a step line or a ramp.
fn planned(shape: &LoadShape) -> Option<Vec<(f64, f64)>> {
    match shape {
        LoadShape::Steps { rates, each_s } => Some(
            rates
                .iter()
                .enumerate()
                .flat_map(|(i, r)| [(i as f64 * each_s, *r), ((i + 1) as f64 * each_s, *r)])
                .collect(),
        ),
        LoadShape::Ramp { from, to, over_s } => Some(vec![(0.0, *from), (*over_s, *to)]),
        LoadShape::Rate { .. } | LoadShape::Replay { .. } => None,
    }
}

/// At most [`MAX_POINTS`] of `points`, evenly spread, the last one always kept.
fn sample(points: &[TimelinePoint]) -> Vec<TimelinePoint> {
    let stride = points.len().div_ceil(MAX_POINTS).max(1);
    let mut out: Vec<TimelinePoint> = points.iter().step_by(stride).copied().collect();
    if let Some(last) = points.last() {
        if out.last() != Some(last) {
            out.push(*last);
        }
    }
    out
}

fn spread(
    points: &[TimelinePoint],
    of: impl Fn(&TimelinePoint) -> Option<[f64; 2]>,
    sla_ms: Option<f64>,
) -> Spread {
    let values: Vec<(f64, [f64; 2])> = points
        .iter()
        .filter_map(|p| of(p).map(|v| (p.elapsed_s, v)))
        .collect();
    Spread {
        p50: values.iter().map(|(t, v)| (*t, v[0])).collect(),
        p99: values.iter().map(|(t, v)| (*t, v[1])).collect(),
        sla_ms,
        max_ms: top(values.iter().map(|v| v.1[1]).chain(sla_ms)),
    }
}

impl TimeView {
    /// The time view of the open-loop level running (or last run) in `run`, with the e2e and
    /// TTFT SLA limits (ms); `None` when that level is a closed loop.
    pub fn build(
        run: &RunState,
        e2e_sla_ms: Option<f64>,
        ttft_sla_ms: Option<f64>,
    ) -> Option<Self> {
        let shape = run.running_shape.as_ref()?;
        let level = run
            .running
            .map(|r| r.0)
            .or_else(|| run.levels.last().map(|l| l.index))
            .unwrap_or(0);
        let points = sample(&run.timeline);
        let series = |f: &dyn Fn(&TimelinePoint) -> f64| -> Vec<(f64, f64)> {
            points.iter().map(|p| (p.elapsed_s, f(p))).collect()
        };
        let offered = planned(shape).unwrap_or_else(|| series(&|p| p.open.offered_rps));
        let sent = series(&|p| p.open.sent_rps);
        let done = series(&|p| p.open.done_rps);
        let pending = series(&|p| p.open.pending as f64);
        let in_flight = series(&|p| p.in_flight as f64);
        // a fixed rate runs its request count; past the plan (the last requests finishing,
        // or no plan) the axis grows in round steps
        let planned_s = match shape {
            LoadShape::Rate { rps } if *rps > 0.0 => run.running.map(|r| r.2 as f64 / rps),
            s => s.duration_s(),
        };
        let last = points.last().map_or(0.0, |p| p.elapsed_s);
        let end = match planned_s {
            Some(p) if p >= last && p > 0.0 => p,
            _ => round_up(last.max(1.0)),
        };
        Some(TimeView {
            level,
            label: shape.label(),
            planned_s,
            x_bounds: [0.0, end],
            rate_max: top(offered.iter().chain(&sent).chain(&done).map(|p| p.1)),
            queue_max: top(pending.iter().chain(&in_flight).map(|p| p.1)),
            e2e: spread(&points, |p| p.open.e2e_ms, e2e_sla_ms),
            ttft: spread(&points, |p| p.open.ttft_ms, ttft_sla_ms),
            latest: run.timeline.last().copied(),
            offered,
            sent,
            done,
            pending,
            in_flight,
        })
    }

    /// Seconds since the level started, at the newest point.
    pub fn elapsed_s(&self) -> f64 {
        self.latest.map_or(0.0, |p| p.elapsed_s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::progress::OpenProgress;

    fn point(t: f64, pending: u64) -> TimelinePoint {
        TimelinePoint {
            elapsed_s: t,
            in_flight: pending,
            open: OpenProgress {
                offered_rps: 2.0,
                sent_rps: 2.0,
                done_rps: 1.5,
                pending,
                ttft_ms: Some([10.0, 30.0]),
                e2e_ms: (t > 1.0).then_some([100.0, 300.0]),
            },
        }
    }

    #[test]
    fn steps_are_planned_ahead_and_the_axis_spans_the_schedule() {
        let run = RunState {
            running: Some((0, 0, 40)),
            running_shape: Some(LoadShape::Steps {
                rates: vec![2.0, 6.0],
                each_s: 3.0,
            }),
            timeline: (1..=8).map(|i| point(i as f64 * 0.25, i)).collect(),
            ..RunState::default()
        };
        let v = TimeView::build(&run, Some(500.0), None).expect("an open-loop level");
        assert_eq!(v.x_bounds, [0.0, 6.0]);
        assert_eq!(
            v.offered,
            vec![(0.0, 2.0), (3.0, 2.0), (3.0, 6.0), (6.0, 6.0)]
        );
        assert!((v.rate_max - 6.6).abs() < 1e-9);
        assert_eq!(v.sent.len(), 8);
        // e2e only from 1.25 s on
        assert_eq!(v.e2e.p99.len(), 4);
        assert_eq!(v.e2e.p50[0], (1.25, 100.0));
        assert!((v.e2e.max_ms - 550.0).abs() < 1e-9, "the SLA line fits");
        assert_eq!(v.ttft.sla_ms, None);
        assert_eq!(v.latest.map(|p| p.open.pending), Some(8));
    }

    #[test]
    fn a_closed_loop_level_has_no_time_view_and_a_long_one_is_sampled() {
        assert_eq!(TimeView::build(&RunState::default(), None, None), None);
        let run = RunState {
            running_shape: Some(LoadShape::Rate { rps: 2.0 }),
            timeline: (1..=2000).map(|i| point(i as f64 * 0.25, 1)).collect(),
            ..RunState::default()
        };
        let v = TimeView::build(&run, None, None).expect("an open-loop level");
        assert!(v.sent.len() <= MAX_POINTS + 1);
        assert_eq!(v.sent.last().map(|p| p.0), Some(500.0));
        assert_eq!(v.x_bounds, [0.0, 500.0]);
        // a running fixed rate spans its request count; past it, round steps
        let running = RunState {
            running: Some((0, 0, 2400)),
            ..run.clone()
        };
        let v = TimeView::build(&running, None, None).expect("an open-loop level");
        assert_eq!((v.planned_s, v.x_bounds), (Some(1200.0), [0.0, 1200.0]));
        let past = RunState {
            running: Some((0, 0, 600)),
            ..run
        };
        let v = TimeView::build(&past, None, None).expect("an open-loop level");
        assert_eq!(v.x_bounds, [0.0, 500.0]);
        assert_eq!(
            [2.2, 1.0, 4.3, 5.75, 15.3, 99.0, 101.0].map(round_up),
            [2.5, 1.0, 5.0, 6.0, 20.0, 100.0, 150.0]
        );
        assert_eq!(
            v.offered.len(),
            v.sent.len(),
            "a rate's offered line is measured"
        );
    }
}
