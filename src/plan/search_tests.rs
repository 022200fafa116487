//! Table tests of the search planner: the reference table of docs/search.md, synthetic monotonic, step and
//! noisy curves.

use super::*;
use crate::plan::search_points::{passes, Contradiction};
use std::collections::BTreeMap;

fn pt(c: u32, pass: bool) -> Point {
    Point::decided(c, pass, vec![])
}

fn next(cfg: &SearchConfig, pts: &[Point]) -> (u32, Why) {
    match decide(cfg, pts) {
        Step::Measure { concurrency, why } => (concurrency, why),
        Step::Done(o) => panic!("unexpected done: {o:?}"),
    }
}

/// Runs the planner until it stops, each level measured as `measure(c, why, levels so far)`
/// says.
fn run_with(
    cfg: &SearchConfig,
    measure: impl Fn(u32, Why, usize) -> Point,
) -> (Vec<(u32, Why)>, Outcome) {
    let mut pts: Vec<Point> = Vec::new();
    let mut trace = Vec::new();
    loop {
        match decide(cfg, &pts) {
            Step::Measure { concurrency, why } => {
                trace.push((concurrency, why));
                pts.push(measure(concurrency, why, pts.len()));
            }
            Step::Done(o) => return (trace, o),
        }
    }
}

/// Runs the planner against a metric curve `f(c)` (observed / limit) until it stops, every
/// level decided.
fn run_curve(cfg: &SearchConfig, f: impl Fn(u32, usize) -> f64) -> (Vec<(u32, Why)>, Outcome) {
    run_with(cfg, |c, _, n| {
        let r = f(c, n);
        Point::decided(c, r <= 1.0, vec![r])
    })
}

#[test]
fn spec_reference_table_in_order_flags_320_over_284() {
    let cfg = SearchConfig::default();
    let table = [
        (16, true),
        (32, true),
        (64, true),
        (128, true),
        (256, true),
        (512, false),
        (320, true),
        (284, false),
    ];
    let mut pts = Vec::new();
    // the exponential phase doubles from 16 as the reference did
    for (c, pass) in &table[..6] {
        assert_eq!(next(&cfg, &pts), (*c, Why::Exponential));
        pts.push(pt(*c, *pass));
    }
    // without metric values the first refinement bisects [256, 512]
    assert_eq!(next(&cfg, &pts), (362, Why::Bisect));
    pts.push(pt(320, true));
    assert_eq!(next(&cfg, &pts), (405, Why::Bisect));
    pts.push(pt(284, false));
    assert_eq!(
        contradictions(&pts),
        vec![Contradiction {
            passed: 320,
            failed: 284
        }]
    );
    // re-measure the failing level first, then the passing one
    assert_eq!(next(&cfg, &pts), (284, Why::Remeasure));
    pts.push(pt(284, false));
    assert_eq!(next(&cfg, &pts), (320, Why::Remeasure));
    pts.push(pt(320, false));
    // ten levels: the budget is spent; 320 (pass, fail) counts as a fail
    let Step::Done(o) = decide(&cfg, &pts) else {
        panic!("expected done")
    };
    assert_eq!(o.reason, StopReason::Budget);
    assert_eq!((o.max_passing, o.first_failing), (Some(256), Some(284)));
    assert_eq!(
        o.confidence,
        "contradiction: 320 passed but 284 failed; 320 passed once and failed once; \
         re-measured 284 (fail, fail), 320 (pass, fail); a level passes only if most of its measurements did; \
         bracket [256, 284] wider than 5 %: the iteration budget (10) ran out"
    );
    // with budget left it bisects the bracket that the re-measurements left
    let more = SearchConfig {
        max_iterations: 12,
        ..cfg
    };
    assert_eq!(next(&more, &pts), (270, Why::Bisect));
}

#[test]
fn a_contradiction_that_survives_remeasurement_is_reported_as_such() {
    let cfg = SearchConfig {
        max_iterations: 10,
        ..Default::default()
    };
    let mut pts: Vec<Point> = [16, 32, 64, 128, 256]
        .iter()
        .map(|c| pt(*c, true))
        .collect();
    pts.extend([pt(512, false), pt(320, true), pt(284, false)]);
    pts.extend([pt(284, false), pt(320, true)]);
    let Step::Done(o) = decide(&cfg, &pts) else {
        panic!("expected done")
    };
    assert_eq!((o.max_passing, o.first_failing), (Some(256), Some(284)));
    assert!(
        o.confidence
            .contains("re-measured 284 (fail, fail), 320 (pass, pass)")
            && o.confidence.contains("still non-monotonic"),
        "{}",
        o.confidence
    );
}

#[test]
fn smooth_curves_land_within_tolerance_in_seven_levels() {
    // e2e-like: a + b * c, crossing the limit at `truth`
    let cfg = SearchConfig {
        confirm: false,
        ..Default::default()
    };
    for truth in [40.5_f64, 55.3, 70.7, 90.2, 110.9, 126.4] {
        let f = |c: u32, _| (0.3 + 0.7 * c as f64 / truth).min(50.0);
        let (trace, o) = run_curve(&cfg, f);
        let ans = o.max_passing.unwrap() as f64;
        assert!(
            ans <= truth && ans >= 0.95 * truth,
            "{truth}: {trace:?} {o:?}"
        );
        assert!(trace.len() <= 7, "{truth}: {trace:?}");
        assert_eq!(o.reason, StopReason::Converged, "{truth}: {trace:?}");
        assert!(o.confidence.ends_with("no contradictions"));
    }
    // convex (queueing) curves too: flat, then rising steeply
    for truth in [60.6_f64, 100.3, 119.8] {
        let f = |c: u32, _| 0.2 + 0.8 * (c as f64 / truth).powi(3);
        let (trace, o) = run_curve(&cfg, f);
        let ans = o.max_passing.unwrap() as f64;
        assert!(ans >= 0.95 * truth && ans <= truth, "{truth}: {trace:?}");
        assert!(trace.len() <= 7, "{truth}: {trace:?}");
    }
}

#[test]
fn exact_trace_of_one_smooth_curve() {
    let cfg = SearchConfig::default();
    let (trace, o) = run_curve(&cfg, |c, _| 0.3 + 0.7 * c as f64 / 90.0);
    assert_eq!(
        trace,
        vec![
            (16, Why::Exponential),
            (32, Why::Exponential),
            (64, Why::Exponential),
            (128, Why::Exponential),
            (86, Why::Model),
            (91, Why::Model),
            (86, Why::Confirm),
            (91, Why::Confirm),
        ]
    );
    assert_eq!((o.max_passing, o.first_failing), (Some(86), Some(91)));
    assert_eq!(
        o.confidence,
        "bracket [86, 91] within 5 %, both ends measured twice; no contradictions"
    );
}

#[test]
fn a_step_curve_falls_back_to_bisection() {
    // an error rate: zero up to 100, then large
    let cfg = SearchConfig {
        confirm: false,
        ..Default::default()
    };
    let (trace, o) = run_curve(&cfg, |c, _| if c <= 100 { 0.0 } else { 40.0 });
    assert!(
        trace[4..].iter().all(|(_, w)| *w == Why::Bisect),
        "{trace:?}"
    );
    assert_eq!(
        trace[4..].iter().map(|t| t.0).collect::<Vec<_>>(),
        vec![91, 108, 99, 103]
    );
    assert_eq!(o.max_passing, Some(99), "{trace:?}");
    assert!(trace.len() <= 8, "{trace:?}");
}

#[test]
fn a_cliff_the_model_overshoots_is_bisected_not_crept_down_on() {
    // an open loop past capacity: e2e flat at 0.72 of its limit up to 8,880 (88.8 req/s),
    // then growing with the queue, 18 times the limit at 16,000. Before the overshoot rule
    // the model crept down from above by 5 % a level (15,002, 14,157, ... 11,609) and ran out
    // of levels at 8,400, 5.5 % under the boundary (measured against the simulator).
    let cfg = SearchConfig {
        min: 4000,
        max: 20000,
        ..Default::default()
    };
    let f = |c: u32, _| {
        let x = f64::from(c);
        if x <= 8880.0 {
            0.70 + 0.02 * x / 8880.0
        } else {
            0.72 + (x - 8880.0) / 8880.0 * 30.0
        }
    };
    let (trace, o) = run_curve(&cfg, f);
    let answer = o.max_passing.expect("an answer");
    assert!(
        (f64::from(answer) - 8880.0).abs() / 8880.0 <= 0.05 && o.reason == StopReason::Converged,
        "{trace:?} -> {o:?}"
    );
    assert!(trace.len() <= 10, "{trace:?}");
    // after the first overshoot, a bisection
    let first_fail_model = trace
        .iter()
        .position(|(c, w)| *w == Why::Model && f(*c, 0) > 1.0)
        .expect("a model step that overshot");
    assert_eq!(trace[first_fail_model + 1].1, Why::Bisect, "{trace:?}");
}

#[test]
fn ends_of_the_range() {
    let cfg = SearchConfig {
        min: 16,
        max: 100,
        ..Default::default()
    };
    let (trace, o) = run_curve(&cfg, |_, _| 0.5);
    assert_eq!(
        trace.iter().map(|t| t.0).collect::<Vec<_>>(),
        vec![16, 32, 64, 100]
    );
    assert_eq!(o.reason, StopReason::MaxPasses);
    assert_eq!(o.max_passing, Some(100));
    assert!(o
        .confidence
        .starts_with("every level passed up to concurrency_max 100"));
    let (trace, o) = run_curve(&cfg, |_, _| 2.0);
    assert_eq!(trace.len(), 1);
    assert_eq!((o.reason, o.max_passing), (StopReason::MinFails, None));
    assert_eq!(
        o.confidence,
        "no level passes, from concurrency_min 16 up; no contradictions"
    );
}

#[test]
fn noisy_curves_report_contradictions_and_answer_inside_the_bracket() {
    // a deterministic wobble of +-15 % around a smooth curve crossing at 200
    let cfg = SearchConfig {
        max_iterations: 14,
        ..Default::default()
    };
    for seed in 0..40u64 {
        let f = |c: u32, i: usize| {
            let h = crate::rng::mix64(seed * 1000 + i as u64);
            let z = (h >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0;
            (0.3 + 0.7 * c as f64 / 200.0) * (1.0 + 0.15 * z)
        };
        let (trace, o) = run_curve(&cfg, f);
        let (lo, hi) = (o.max_passing, o.first_failing);
        if let (Some(l), Some(h)) = (lo, hi) {
            assert!(l < h, "{seed}: {trace:?}");
        }
        assert!(trace.len() <= 14);
        if !o.contradictions.is_empty() {
            assert!(
                o.confidence.starts_with("contradiction: "),
                "{}",
                o.confidence
            );
        }
        // no level is measured more than twice
        for c in trace.iter().map(|t| t.0) {
            assert!(trace.iter().filter(|t| t.0 == c).count() <= 2, "{trace:?}");
        }
    }
}

#[test]
fn a_bracket_end_that_fails_its_confirmation_is_a_contradiction() {
    let cfg = SearchConfig::default();
    let mut pts: Vec<Point> = [16, 32, 64].iter().map(|c| pt(*c, true)).collect();
    pts.extend([pt(128, false), pt(86, true), pt(91, false)]);
    assert_eq!(next(&cfg, &pts), (86, Why::Confirm));
    pts.push(pt(86, false));
    // 86 (pass, fail) counts as a fail: the bracket falls back to [64, 86]
    assert_eq!(bracket(&pts), (Some(64), Some(86)));
    assert_eq!(
        contradictions(&pts),
        vec![Contradiction {
            passed: 86,
            failed: 86
        }]
    );
    let (c, why) = next(&cfg, &pts);
    assert!(c > 64 && c < 86 && why == Why::Bisect, "{c} {why:?}");
    pts.push(pt(c, true));
    let Step::Done(o) = decide(
        &SearchConfig {
            max_iterations: 8,
            ..cfg
        },
        &pts,
    ) else {
        panic!("expected done")
    };
    assert_eq!(o.max_passing, Some(c));
    assert!(
        o.confidence.starts_with(
            "contradiction: 86 passed once and failed once; re-measured 86 (pass, fail)"
        ),
        "{}",
        o.confidence
    );
}

#[test]
fn a_level_uncertain_once_and_passed_when_remeasured_passes() {
    // the noisy run that answered 7: 8 stayed uncertain at its cap during a slow moment, then
    // passed on confirmation; an undecided measurement does not vote against it
    let cfg = SearchConfig {
        min: 1,
        max: 64,
        ..SearchConfig::default()
    };
    let uncertain = |c: u32| Point {
        requests: 0,
        pooled: false,
        screen: false,
        concurrency: c,
        pass: false,
        verdict: Verdict::Uncertain,
        held: true,
        ratios: vec![],
    };
    let mut pts: Vec<Point> = [1, 2, 4].iter().map(|c| pt(*c, true)).collect();
    pts.push(uncertain(8));
    assert_eq!(bracket(&pts), (Some(4), Some(8)));
    pts.extend([pt(6, true), pt(7, true), pt(7, true), pt(8, true)]);
    assert_eq!(bracket(&pts), (Some(8), None));
    assert_eq!(next(&cfg, &pts), (16, Why::Exponential));
    // a decided failure still outvotes nothing, and a tie of decided votes fails
    assert!(!passes(&[None, Some(false)]));
    assert!(!passes(&[Some(true), Some(false)]));
    assert!(!passes(&[None]));
    assert!(passes(&[None, Some(true)]));
}

#[test]
fn a_top_left_uncertain_is_probed_one_tolerance_below_once() {
    // the error-rate search that answered 40 below a boundary at 43: 45 failed, 43 stayed
    // uncertain at its cap, then bisection spent 37 and 40 and the budget ran out
    let cfg = SearchConfig {
        max_iterations: 7,
        confirm: false,
        ..SearchConfig::default()
    };
    let uncertain = |c: u32, held: bool| Point {
        requests: 0,
        pooled: false,
        screen: false,
        concurrency: c,
        pass: false,
        verdict: Verdict::Uncertain,
        held,
        ratios: vec![1.0],
    };
    let mut pts = vec![
        pt(16, true),
        pt(32, true),
        pt(64, false),
        pt(45, false),
        uncertain(43, true),
    ];
    // 41 is the lowest level whose pass puts the bracket within 5 %: ceil(41 x 1.05) = 44
    assert_eq!(next(&cfg, &pts), (41, Why::Edge));
    let mut passed = pts.clone();
    passed.push(pt(41, true));
    match decide(&cfg, &passed) {
        Step::Done(o) => {
            assert_eq!(o.reason, StopReason::Converged);
            assert_eq!((o.max_passing, o.levels_used), (Some(41), 6));
        }
        s => panic!("{s:?}"),
    }
    // a failing edge probe makes it the bracket's top, refined as usual
    let mut failed = pts.clone();
    failed.push(pt(41, false));
    assert_ne!(next(&cfg, &failed).1, Why::Edge);
    // an edge probe left uncertain too: a flat stretch near the limit, no second edge step
    pts.push(uncertain(41, true));
    assert_ne!(next(&cfg, &pts).1, Why::Edge);
    // a top that was not held says nothing of where the boundary is
    let unheld = vec![pt(16, true), pt(32, true), uncertain(43, false)];
    assert_ne!(next(&cfg, &unheld).1, Why::Edge);
    // a narrow bracket: the edge is the level just under the top
    let small = vec![pt(1, true), pt(2, true), pt(4, true), uncertain(8, true)];
    assert_eq!(next(&cfg, &small), (7, Why::Edge));
}

#[test]
fn a_level_measured_again_is_judged_on_all_its_requests() {
    let cfg = SearchConfig::default();
    // 45 passed above 40, which failed: 40 is measured again and its requests pooled
    let mut pts = vec![
        pt(16, true),
        pt(32, true),
        pt(64, false),
        pt(45, true),
        pt(40, false),
    ];
    assert_eq!(next(&cfg, &pts), (40, Why::Remeasure));
    // pooled, 40 passes on all its requests: its first verdict is replaced, not outvoted (a
    // tie of separate measurements would fail), and the contradiction is gone
    pts.push(pt(40, true).pooled());
    assert!(contradictions(&pts).is_empty());
    assert_eq!(bracket(&pts), (Some(45), Some(64)));
    // 40 is not measured a third time, and 45 needs no re-measure
    assert_ne!(next(&cfg, &pts).1, Why::Remeasure);
    // the other way: pooled, 40 still fails, and the contradiction stands on its pooled verdict
    let mut failed = pts[..5].to_vec();
    failed.push(pt(40, false).pooled());
    assert_eq!(
        contradictions(&failed),
        vec![Contradiction {
            passed: 45,
            failed: 40
        }]
    );
    assert_eq!(next(&cfg, &failed), (45, Why::Remeasure));
    failed.push(pt(45, false).pooled());
    assert_eq!(bracket(&failed), (Some(32), Some(40)));
    // five levels, seven measurements: the two pooled ones spend no level
    let Step::Done(o) = decide(
        &SearchConfig {
            max_iterations: 5,
            ..cfg
        },
        &failed,
    ) else {
        panic!("expected done")
    };
    assert_eq!((o.levels_used, o.measurements), (5, 7));
    assert!(o.contradictions.is_empty(), "{o:?}");
    assert_eq!(
        o.remeasured,
        BTreeMap::from([(40, vec![false, false]), (45, vec![true, false])])
    );
    assert!(
        o.confidence
            .starts_with("bracket [32, 40] wider than 5 %: the iteration budget (5) ran out"),
        "{}",
        o.confidence
    );
}

#[test]
fn the_outcome_says_how_many_requests_decided_each_end() {
    let cfg = SearchConfig {
        confirm: false,
        ..SearchConfig::default()
    };
    let with = |p: Point, n: u64| Point { requests: n, ..p };
    let pts = vec![
        with(pt(16, true), 1024),
        with(pt(32, true), 2048),
        with(pt(64, false), 1024),
        with(pt(45, true), 1024),
        with(pt(47, false), 3072),
    ];
    let Step::Done(o) = decide(&cfg, &pts) else {
        panic!("expected done")
    };
    assert_eq!(
        (o.max_passing_requests, o.first_failing_requests),
        (Some(1024), Some(3072))
    );
    assert_eq!(
        o.confidence,
        "bracket [45, 47] within 5 %; no contradictions; 45 passed on 1024 requests, 47 failed \
         on 3072 requests"
    );
}

#[test]
fn screens_steer_and_only_the_bracket_ends_are_decided() {
    // the llama.cpp-like case: p99 e2e against 8 s, from 1 to 16; each screen ran one batch
    // that left its p99 undecided, observed at these ratios to the limit
    let cfg = SearchConfig {
        min: 1,
        max: 16,
        ..SearchConfig::default()
    };
    let ratio = |c: u32| match c {
        1 => 0.17,
        2 => 0.2,
        4 => 0.45,
        5 => 0.7,
        6 => 0.9,
        7 => 1.1,
        _ => 1.8,
    };
    let (trace, outcome) = run_with(&cfg, |c, why, _| {
        if why.decides() {
            // measured until decided, pooled with its screen
            pt(c, ratio(c) <= 1.0).pooled()
        } else {
            Point::screened(c, vec![ratio(c)])
        }
    });
    assert_eq!(
        trace,
        vec![
            (1, Why::Exponential),
            (2, Why::Exponential),
            (4, Why::Exponential),
            (8, Why::Exponential),
            (6, Why::Model),
            (7, Why::Model),
            (6, Why::Decide),
            (7, Why::Decide),
        ]
    );
    // two levels decided, six screened; 1, 2 and 4 follow from 6's decided pass
    assert_eq!(outcome.reason, StopReason::Converged);
    assert_eq!(
        (outcome.max_passing, outcome.first_failing),
        (Some(6), Some(7))
    );
    assert!(outcome.uncertain.is_empty(), "{outcome:?}");
}

#[test]
fn a_decided_end_that_turns_moves_the_bracket() {
    let cfg = SearchConfig {
        min: 1,
        max: 16,
        ..SearchConfig::default()
    };
    // 6 leaned pass on its screen but fails once decided: the bracket falls to [5, 6]
    let mut pts = vec![
        Point::screened(1, vec![0.2]),
        Point::screened(2, vec![0.3]),
        Point::screened(4, vec![0.5]),
        Point::screened(8, vec![1.6]),
        Point::screened(6, vec![0.97]),
        Point::screened(7, vec![1.2]),
    ];
    assert_eq!(next(&cfg, &pts), (6, Why::Decide));
    pts.push(pt(6, false).pooled());
    assert_eq!(bracket(&pts), (Some(4), Some(6)));
    assert_eq!(next(&cfg, &pts), (5, Why::Bisect));
    pts.push(Point::screened(5, vec![0.8]));
    assert_eq!(next(&cfg, &pts), (5, Why::Decide));
    pts.push(pt(5, true).pooled());
    // 6 is decided already: no second decide, its confirmation is its pooled measurement
    let Step::Done(o) = decide(&cfg, &pts) else {
        panic!("expected done: {:?}", decide(&cfg, &pts))
    };
    assert_eq!((o.max_passing, o.first_failing), (Some(5), Some(6)));

    // every screen within the limit up to max: max is decided before it is the answer
    let mut top = vec![
        Point::screened(4, vec![0.2]),
        Point::screened(8, vec![0.3]),
        Point::screened(16, vec![0.5]),
    ];
    let cfg = SearchConfig { min: 4, ..cfg };
    assert_eq!(next(&cfg, &top), (16, Why::Decide));
    top.push(pt(16, true).pooled());
    assert!(matches!(decide(&cfg, &top), Step::Done(o) if o.reason == StopReason::MaxPasses));
    // min beyond the limit on its screen: decided before "nothing passes"
    let mut low = vec![Point::screened(4, vec![1.4])];
    assert_eq!(next(&cfg, &low), (4, Why::Decide));
    low.push(pt(4, false).pooled());
    assert!(matches!(decide(&cfg, &low), Step::Done(o) if o.reason == StopReason::MinFails));
}

#[test]
fn out_of_levels_the_ends_are_still_decided_and_a_pooled_measurement_is_free() {
    let cfg = SearchConfig {
        min: 1,
        max: 64,
        max_iterations: 3,
        ..SearchConfig::default()
    };
    // three screens spend the budget; the bracket's ends are decided all the same
    let mut pts = vec![
        Point::screened(1, vec![0.3]),
        Point::screened(2, vec![0.6]),
        Point::screened(4, vec![1.4]),
    ];
    assert_eq!(next(&cfg, &pts), (2, Why::Decide));
    pts.push(pt(2, true).pooled());
    assert_eq!(next(&cfg, &pts), (4, Why::Decide));
    pts.push(pt(4, false).pooled());
    let Step::Done(o) = decide(&cfg, &pts) else {
        panic!("expected done")
    };
    assert_eq!(o.reason, StopReason::Budget);
    assert_eq!((o.max_passing, o.first_failing), (Some(2), Some(4)));
    assert_eq!((o.levels_used, o.measurements), (3, 5));
    // every screen leaning pass: the top is decided before the search stops
    let top = vec![
        Point::screened(1, vec![0.1]),
        Point::screened(2, vec![0.2]),
        Point::screened(4, vec![0.4]),
    ];
    assert_eq!(next(&cfg, &top), (4, Why::Decide));
}

#[test]
fn a_level_left_uncertain_at_its_cap_after_its_screen_is_probed_at_the_edge() {
    // tests/search/search_sim.rs's e2e + TTFT case, as a run measured it: 64 screened
    // uncertain, 60 screened and then measured to its request cap, pooled and still
    // uncertain. The pooled verdict replaces the screen's, so the boundary lies at 60 within
    // its interval and the next level is one tolerance step below it. Reading the superseded
    // screen too, the planner took 60 for a screen, went on by model from the bracket's bottom
    // (34, 36, 38, each a tolerance step) and ran out of levels at 38, under a boundary the
    // dense sweeps put at 46-72.
    let cfg = SearchConfig {
        max_iterations: 7,
        confirm: false,
        ..SearchConfig::default()
    };
    let passed = |c: u32, r: Vec<f64>| Point {
        screen: true,
        ..Point::decided(c, true, r)
    };
    let mut pts = vec![
        passed(16, vec![0.352, 0.389]),
        passed(32, vec![0.55, 0.569]),
        Point::screened(64, vec![1.003, 1.035]),
        Point::screened(60, vec![0.95, 1.02]),
        Point {
            verdict: Verdict::Uncertain,
            ..Point::decided(60, false, vec![0.924, 0.972])
        }
        .pooled(),
    ];
    assert_eq!(next(&cfg, &pts), (57, Why::Edge));
    // a pass there closes the bracket within the tolerance
    pts.push(passed(57, vec![0.9, 0.93]));
    match decide(&cfg, &pts) {
        Step::Done(o) => {
            assert_eq!((o.max_passing, o.reason), (Some(57), StopReason::Converged));
        }
        step => panic!("{step:?}"),
    }
}
