//! Table tests of the analysis on scripted levels (every request of a level takes the same
//! time, so statistics and intervals are exact): which levels may be named, the knee without
//! them, the answer, the breaking point and the boundary range.

use super::*;
use crate::metrics::fixtures::level;
use crate::record::ErrorKind;

/// 16, 64, 256, 1024 with enough requests for a p99 and the 1 % limit to be decided:
/// throughput 1204.7, 2824.8, 4174.2, 4228.1 tok/s; e2e 3.4, 5.8, 15.7, 62 s.
fn sweep() -> Vec<LevelSummary> {
    vec![
        level(0, 16, 512, 220, 3400, 256, None),
        level(1, 64, 512, 560, 5800, 256, None),
        level(2, 256, 1024, 2500, 15700, 256, None),
        level(3, 1024, 2048, 21000, 62000, 256, None),
    ]
}

fn e2e(limit: &str) -> Analysis {
    Analysis {
        slas: SlaSet(vec![SlaThreshold::parse(SlaMetric::E2e, limit).unwrap()]),
        ..Analysis::default()
    }
}

#[test]
fn the_knee_and_the_ideal_skip_a_level_that_was_not_held() {
    let mut levels = sweep();
    let a = analyse(&Analysis::default(), &levels);
    assert_eq!(
        a.knee.as_ref().map(|k| (k.concurrency, k.below)),
        Some((256, Some(64)))
    );
    assert_eq!(a.planning.ideal.as_ref().map(|i| i.concurrency), Some(256));
    assert_eq!(a.planning.ideal.unwrap().range, Some([64.0, 256.0]));
    assert!(a.skipped.is_empty());

    levels[2].held = false;
    levels[2].achieved_concurrency = Some(230.4);
    let a = analyse(&Analysis::default(), &levels);
    // 64 doubled is read between 64 and 1024: 12.4 % more, not a knee; 1024 is the top
    assert_eq!(a.knee, None);
    assert_eq!(
        a.skipped,
        vec![Skipped {
            concurrency: 256,
            reason: "not held: achieved concurrency 230 of 256 (90 %)".into()
        }]
    );
    assert_eq!(a.planning.ideal.as_ref().map(|i| i.concurrency), Some(1024));
    assert_eq!(a.planning.ideal_basis, "max_throughput");
}

#[test]
fn the_answer_is_a_held_level_that_passed_and_the_range_comes_from_the_curve() {
    let levels = sweep();
    let a = analyse(&e2e("20s"), &levels);
    assert_eq!(a.answer.map(|x| x.concurrency), Some(256));
    assert_eq!(a.planning.breaking_point, Some(1024));
    let verdicts: Vec<Verdict> = a.iterations.iter().map(|r| r.verdict).collect();
    assert_eq!(
        verdicts,
        [Verdict::Pass, Verdict::Pass, Verdict::Pass, Verdict::Fail]
    );
    // e2e / limit: 0.785 at 256, 3.1 at 1024; exact data, so every curve crosses at once
    let cross = 256.0 * 4f64.powf(0.215 / 2.315);
    let b = a.boundary.unwrap();
    for v in [b.low, b.estimate, b.high] {
        assert!((v - cross).abs() < 1e-6, "{b:?} vs {cross}");
    }
    assert_eq!(
        a.planning.ideal.as_ref().and_then(|i| i.range),
        Some([b.low, b.high])
    );

    // 256 not held: the answer falls back to 64, 256 is not a failure either
    let mut levels = sweep();
    levels[2].held = false;
    let a = analyse(&e2e("20s"), &levels);
    assert_eq!(a.answer.map(|x| x.concurrency), Some(64));
    assert_eq!(a.planning.breaking_point, Some(1024));
    // the range reads the held levels only: 0.29 at 64, 3.1 at 1024
    let cross = 64.0 * 16f64.powf((1.0 - 0.29) / (3.1 - 0.29));
    assert!((a.boundary.unwrap().estimate - cross).abs() < 1e-6);
}

#[test]
fn failed_requests_count_against_a_level() {
    let mut levels = sweep();
    // a quarter of 64's requests fail: its latency is fine, its error rate is not
    levels[1] = level(1, 64, 512, 560, 5800, 256, Some((ErrorKind::HttpStatus, 4)));
    // nothing at 1024 succeeds
    levels[3] = level(3, 1024, 2048, 0, 1000, 256, Some((ErrorKind::Connect, 1)));
    let a = analyse(&e2e("20s"), &levels);
    assert_eq!(
        a.skipped,
        vec![
            Skipped {
                concurrency: 64,
                reason: "error rate 25.0 % is above the 1.0 % limit".into()
            },
            Skipped {
                concurrency: 1024,
                reason: "no request succeeded (2048 failed)".into()
            },
        ]
    );
    // 64 fails on its errors: the answer is 16, the breaking point 64
    assert_eq!(a.answer.map(|x| x.concurrency), Some(16));
    assert_eq!(a.planning.breaking_point, Some(64));
    let row = &a.iterations[1];
    assert_eq!(row.verdict, Verdict::Fail);
    assert_eq!(
        row.slas.iter().map(|c| c.verdict).collect::<Vec<_>>(),
        [Verdict::Pass, Verdict::Fail]
    );
    // a 30 % limit lets 64 pass; 1024 still fails on both counts
    let loose = Analysis {
        max_error_rate: 0.3,
        ..e2e("20s")
    };
    let a = analyse(&loose, &levels);
    assert_eq!(a.answer.map(|x| x.concurrency), Some(256));
    assert_eq!(a.skipped.len(), 1);
}

#[test]
fn too_few_requests_to_decide_say_so() {
    // 64 requests cannot bound a p99 from above (368 needed) nor pass a 1 % limit (381)
    let levels = vec![level(0, 16, 64, 220, 3400, 256, None)];
    let a = analyse(&e2e("20s"), &levels);
    assert_eq!(a.iterations[0].verdict, Verdict::Uncertain);
    assert_eq!(a.answer, None);
    assert_eq!(
        a.planning.warnings,
        vec![
            "p99 e2e <= 20.0 s is decided (pass or fail) only on at least 368 successful \
             requests per level; these levels had fewer and stay uncertain: 16 (64, 304 more) \
             (raise --requests)",
            "avg error rate <= 1.0 % is decided (pass or fail) only on at least 381 requests \
             per level; these levels had fewer and stay uncertain: 16 (64, 317 more) (raise \
             --requests)",
        ]
    );
    // without SLAs an uncertain error rate does not keep a level from being named
    let a = analyse(&Analysis::default(), &levels);
    assert_eq!(a.planning.ideal.map(|i| i.concurrency), Some(16));
}

#[test]
fn too_few_requests_on_a_rate_level_name_its_rate() {
    use crate::metrics::rate::RateSummary;
    use crate::workload::arrivals::{Arrival, LoadShape};
    let mut l = level(0, 16, 64, 220, 3400, 256, None);
    l.open_loop.rate = Some(RateSummary {
        shape: LoadShape::Rate { rps: 2.5 },
        arrival: Arrival::Poisson,
        offered_rps: 2.5,
        achieved_rps: 2.5,
        max_in_flight: None,
        saturated: None,
    });
    let a = analyse(&e2e("20s"), &[l]);
    assert_eq!(a.axis, Axis::Rate);
    assert!(
        a.planning.warnings[0]
            .ends_with("stay uncertain: 2.5 req/s (64, 304 more) (raise --requests)"),
        "{:?}",
        a.planning.warnings
    );
}

#[test]
fn a_knee_without_any_doubling_measured_says_so() {
    // 48 and 64: no level at twice another, so no level could be the knee
    let levels = vec![
        level(0, 48, 400, 220, 3400, 256, None),
        level(1, 64, 400, 220, 3600, 256, None),
    ];
    let text = crate::plan::analysis_text::render_analysis(&analyse(&Analysis::default(), &levels));
    assert!(
        text.contains(
            "knee: not measured (no level at twice another: the knee needs a level's double, \
             and the highest was 64)"
        ),
        "{text}"
    );
    // 16..1024 of the table's sweep has doublings: the knee is found there
    let text =
        crate::plan::analysis_text::render_analysis(&analyse(&Analysis::default(), &sweep()));
    assert!(text.contains("knee: 256"), "{text}");
}

#[test]
fn a_pooled_level_gives_the_search_one_point_per_measurement_in_run_order() {
    use crate::metrics::Measurement;
    use crate::record::sla::Verdict;
    let m = |order: u32, requests: u64, verdict: Verdict| Measurement {
        order,
        batches: 1,
        requests,
        screen: false,
        verdict,
        held: true,
        ratios: vec![Some(1.5), None],
    };
    // 16 (measured 1st and again 4th), 64 (2nd), 256 (3rd)
    let mut levels = sweep()[..3].to_vec();
    levels[0].measurements = vec![m(0, 256, Verdict::Fail), m(3, 256, Verdict::Pass)];
    levels[1].measurements = vec![m(1, 512, Verdict::Pass)];
    levels[2].measurements = vec![m(2, 1024, Verdict::Pass)];
    let a = e2e("p99:60s");
    let pts = points(&a.limits(), &levels);
    let seen: Vec<(u32, Verdict, u64, bool)> = pts
        .iter()
        .map(|p| (p.concurrency, p.verdict, p.requests, p.pooled))
        .collect();
    // the first measurement of 16 keeps its recorded verdict and ratios (null: unmeasured);
    // its last point is 16 judged now, on all 512 requests
    assert_eq!(
        seen,
        vec![
            (16, Verdict::Fail, 256, false),
            (64, Verdict::Pass, 512, false),
            (256, Verdict::Pass, 1024, false),
            (16, Verdict::Pass, 512, true),
        ]
    );
    assert_eq!(pts[0].ratios, vec![1.5, f64::INFINITY]);
    // one iteration row per level, with its measurements
    let rows = analyse(&a, &levels).iterations;
    assert_eq!(
        rows.iter()
            .map(|r| (r.concurrency, r.measurements, r.requests))
            .collect::<Vec<_>>(),
        vec![(16, 2, 512), (64, 1, 512), (256, 1, 1024)]
    );
}

#[test]
fn the_breaking_point_is_read_from_levels_as_they_stand() {
    use crate::metrics::Measurement;
    use crate::record::sla::Verdict;
    // 64 failed when first measured and passes on all its requests once measured again: it
    // is not the breaking point; 1024 fails
    let mut levels = sweep();
    let m = |order: u32, verdict: Verdict| Measurement {
        order,
        batches: 1,
        requests: 256,
        screen: false,
        verdict,
        held: true,
        ratios: vec![Some(1.2), Some(0.0)],
    };
    levels[0].measurements = vec![m(0, Verdict::Pass)];
    levels[1].measurements = vec![m(1, Verdict::Fail), m(4, Verdict::Pass)];
    levels[2].measurements = vec![m(2, Verdict::Pass)];
    levels[3].measurements = vec![m(3, Verdict::Fail)];
    let a = analyse(&e2e("p99:30s"), &levels);
    assert_eq!(a.planning.breaking_point, Some(1024));
}

/// The words for where it breaks (docs/search.md, "Words"): an uncertain level or one not
/// held is never the breaking point nor called failed; with no decided fail the breaking point
/// says it is not decided and gives the estimate.
#[test]
fn the_breaking_point_is_the_lowest_held_decided_fail() {
    use crate::plan::analysis_text::{bracket_line, breaking_line};
    // 16 and 64 pass under 10 s; 128 on 256 requests cannot decide a p99 (uncertain); 256
    // fails but was not held; 1024 fails
    let mut levels = sweep();
    levels.insert(2, level(4, 128, 256, 400, 8000, 256, None));
    levels[3].held = false;
    levels[3].achieved_concurrency = Some(200.0);
    let a = analyse(&e2e("10s"), &levels);
    assert_eq!(a.answer.map(|x| x.concurrency), Some(64));
    assert_eq!(a.bracket, [Some(64), Some(128)]);
    assert_eq!(
        bracket_line(&a).unwrap(),
        "bracket: 64 (passed) to 128 (uncertain)"
    );
    assert_eq!(a.planning.breaking_point, Some(1024));
    assert_eq!(breaking_line(&a).unwrap(), "breaking point: 1024");
    // without 1024 nothing failed decided: no breaking point, the estimate instead
    levels.pop();
    let a = analyse(&e2e("10s"), &levels);
    assert_eq!(a.planning.breaking_point, None);
    let line = breaking_line(&a).unwrap();
    assert!(
        line.starts_with("breaking point: not decided (no level failed; estimated crossing "),
        "{line}"
    );
    let text = crate::plan::analysis_text::render_analysis(&a);
    assert_eq!(text.matches("breaking point").count(), 1, "{text}");
    assert!(!text.contains("(failed)"), "{text}");
}
