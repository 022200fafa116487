//! A served run's `/metrics`: its progress and live figures in the Prometheus text format
//! (0.0.4), read from the [`RunState`] both consumers fold and the analysis the CLI prints, so
//! a Grafana panel shows the figures the dashboard shows under the same names. Every name has
//! the `rightsize_` prefix and is in base units (seconds, tokens per second); the table of
//! names is `docs/watch.md`'s.

use crate::metrics::{LevelProgress, LevelSummary, Percentiles};
use crate::plan::RunAnalysis;
use crate::record::ErrorKind;
use crate::state::RunState;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// The run's identity, as labels on `rightsize_run_info`.
pub struct RunLabels<'a> {
    /// `sweep`, `search`, `replay`, ...: the `plan` label of every level series.
    pub plan: &'a str,
    /// In a served campaign, the candidate the run is (its `candidate` label).
    pub candidate: Option<&'a str>,
}

/// One metric family: its name, type, help and samples (labels as written, value).
struct Family {
    name: &'static str,
    kind: &'static str,
    help: &'static str,
    samples: Vec<(String, f64)>,
}

/// Every name `/metrics` may carry, with its type and help: the documented set (a test holds
/// `docs/watch.md`'s table to it).
pub const NAMES: &[(&str, &str, &str)] = &[
    ("rightsize_run_info", "gauge", "The run served: 1, labelled with its id, plan, endpoint and model."),
    ("rightsize_run_finished", "gauge", "1 once the run has ended, else 0."),
    ("rightsize_run_interrupted", "gauge", "1 when the run was stopped before its plan ended."),
    ("rightsize_levels_finished", "gauge", "Levels finished so far."),
    ("rightsize_levels_left", "gauge", "Levels that may still run after the running one: the fewest (bound=\"min\") and the most (bound=\"max\")."),
    ("rightsize_requests_total", "counter", "Measured requests finished, by outcome (ok, error), over the run."),
    ("rightsize_errors_total", "counter", "Failed measured requests by error kind, over the run (cancelled included)."),
    ("rightsize_in_flight", "gauge", "Requests of the running level sent and not finished."),
    ("rightsize_output_tokens_per_second", "gauge", "The running level's output tokens per second over its rolling window."),
    ("rightsize_ttft_seconds", "gauge", "The running level's time to first token so far, by quantile (0.5, 0.95, 0.99)."),
    ("rightsize_itl_seconds", "gauge", "The running level's inter-token latency so far, by quantile."),
    ("rightsize_e2e_seconds", "gauge", "The running level's end-to-end latency so far, by quantile."),
    ("rightsize_level_output_token_throughput", "gauge", "A finished level's output token throughput (tokens/s), as its level file's output_token_throughput."),
    ("rightsize_level_ttft_p95_seconds", "gauge", "A finished level's p95 time to first token."),
    ("rightsize_level_e2e_p99_seconds", "gauge", "A finished level's p99 end-to-end latency."),
    ("rightsize_level_error_rate", "gauge", "A finished level's share of failed requests."),
    ("rightsize_level_verdict", "gauge", "A finished level's verdict against the SLAs: 1 pass, 0 fail, -1 uncertain (absent without SLAs)."),
    ("rightsize_answer", "gauge", "The answer so far: the search's highest passing level, or a sweep's highest passing level (with SLAs) or ideal balance (without); a concurrency, or a rate in requests/s (axis label)."),
    ("rightsize_bracket", "gauge", "The bracket so far: the answer (bound=\"low\") and the lowest level above it that did not pass (bound=\"high\")."),
    ("rightsize_client_timer_late_p99_seconds", "gauge", "The client's own timer lateness at p99 in the latest finished level: large values mean the client, not the server, was the bottleneck."),
    ("rightsize_campaign_candidates", "gauge", "A served campaign's candidates by state (waiting, running, done, interrupted, failed); the other names are then the running (or last) candidate's run."),
];

fn family(name: &'static str) -> Family {
    let (_, kind, help) = NAMES
        .iter()
        .find(|(n, _, _)| *n == name)
        .copied()
        .unwrap_or((name, "gauge", ""));
    Family {
        name,
        kind,
        help,
        samples: Vec::new(),
    }
}

/// A label value as the text format writes it: backslash, quote and newline escaped.
fn escaped(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

fn labels(pairs: &[(&str, &str)]) -> String {
    pairs
        .iter()
        .map(|(k, v)| format!("{k}=\"{}\"", escaped(v)))
        .collect::<Vec<_>>()
        .join(",")
}

/// A level's labels: its 1-based number, its concurrency (an open-loop level's rate or
/// schedule, as the tables name it) and the plan.
fn level_labels(plan: &str, level: &LevelSummary) -> String {
    let load = match &level.open_loop.rate {
        None => level.concurrency.to_string(),
        Some(r) => r.shape.label(),
    };
    labels(&[
        ("level", &(level.index + 1).to_string()),
        ("concurrency", &load),
        ("plan", plan),
    ])
}

/// The metrics of `state` (and `analysis`, the analysis of its finished levels) as text.
pub fn render(run: &RunLabels<'_>, state: &RunState, analysis: &RunAnalysis) -> String {
    let mut families = run_families(run, state);
    families.extend(request_families(state));
    families.extend(running_families(run.plan, state));
    families.extend(level_families(run.plan, state));
    families.extend(answer_families(analysis));
    text_of(&families)
}

/// `rightsize_campaign_candidates`: how many candidates are in each state (every state
/// written, from 0).
pub fn campaign_candidates(counts: &[(&str, usize)]) -> String {
    let mut f = family("rightsize_campaign_candidates");
    f.samples.extend(
        counts
            .iter()
            .map(|(state, n)| (labels(&[("state", state)]), *n as f64)),
    );
    text_of(&[f])
}

/// The families as text: each with its help and type, its samples after; a family without
/// samples is left out.
fn text_of(families: &[Family]) -> String {
    let mut out = String::new();
    for f in families.iter().filter(|f| !f.samples.is_empty()) {
        let _ = writeln!(out, "# HELP {} {}", f.name, f.help);
        let _ = writeln!(out, "# TYPE {} {}", f.name, f.kind);
        for (l, v) in &f.samples {
            let braces = if l.is_empty() {
                String::new()
            } else {
                format!("{{{l}}}")
            };
            let _ = writeln!(out, "{}{braces} {}", f.name, number(*v));
        }
    }
    out
}

/// A sample value: integers without a fraction, others as Rust writes them (shortest exact).
fn number(v: f64) -> String {
    if v.is_finite() && v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else {
        format!("{v}")
    }
}

fn run_families(run: &RunLabels<'_>, state: &RunState) -> Vec<Family> {
    let mut info = family("rightsize_run_info");
    let mut identity = vec![
        ("run_id", state.run_id.as_deref().unwrap_or("")),
        ("plan", run.plan),
        ("endpoint", state.endpoint.as_deref().unwrap_or("")),
        ("model", state.model.as_deref().unwrap_or("")),
    ];
    identity.extend(run.candidate.map(|c| ("candidate", c)));
    info.samples.push((labels(&identity), 1.0));
    let flag = |name, on: bool| {
        let mut f = family(name);
        f.samples.push((String::new(), if on { 1.0 } else { 0.0 }));
        f
    };
    let mut finished = family("rightsize_levels_finished");
    finished
        .samples
        .push((String::new(), state.levels.len() as f64));
    let mut left = family("rightsize_levels_left");
    if let Some([min, max]) = state.levels_left.filter(|_| !state.finished) {
        left.samples
            .push((labels(&[("bound", "min")]), f64::from(min)));
        left.samples
            .push((labels(&[("bound", "max")]), f64::from(max)));
    }
    vec![
        info,
        flag("rightsize_run_finished", state.finished),
        flag("rightsize_run_interrupted", state.interrupted),
        finished,
        left,
    ]
}

/// The run's measured requests by outcome and its failures by kind: each finished level's
/// and the running level's so far. A level measured again (a search re-measuring it) is both:
/// its entry holds its earlier measurements, and its progress counts only the new one (a
/// measurement's live figures start afresh), so the sum never goes back, and when it ends its
/// entry holds both.
fn request_families(state: &RunState) -> Vec<Family> {
    let mut ok = 0u64;
    // every kind, from 0: a series is there before its first failure
    let mut kinds: BTreeMap<ErrorKind, u64> = ErrorKind::ALL.iter().map(|k| (*k, 0)).collect();
    for l in &state.levels {
        ok += l.ok_count();
        for (k, n) in &l.errors_by_kind {
            *kinds.entry(*k).or_default() += n;
        }
        if l.cancelled_count > 0 {
            *kinds.entry(ErrorKind::Cancelled).or_default() += l.cancelled_count;
        }
    }
    if let Some(p) = running_progress(state) {
        ok += p.ok;
        for (k, n) in &p.errors_by_kind {
            *kinds.entry(*k).or_default() += n;
        }
    }
    let failed: u64 = kinds.values().sum();
    let mut requests = family("rightsize_requests_total");
    requests
        .samples
        .push((labels(&[("outcome", "ok")]), ok as f64));
    requests
        .samples
        .push((labels(&[("outcome", "error")]), failed as f64));
    let mut errors = family("rightsize_errors_total");
    errors.samples = kinds
        .iter()
        .map(|(k, n)| (labels(&[("kind", k.as_str())]), *n as f64))
        .collect();
    vec![requests, errors]
}

fn running_progress(state: &RunState) -> Option<&LevelProgress> {
    let (index, ..) = state.running?;
    state.progress.as_ref().filter(|p| p.index == index)
}

/// The running level's gauges, labelled with it.
fn running_families(plan: &str, state: &RunState) -> Vec<Family> {
    let (Some((index, concurrency, _)), Some(p)) = (state.running, running_progress(state)) else {
        return vec![];
    };
    let load = match &state.running_shape {
        Some(shape) => shape.label(),
        None => concurrency.to_string(),
    };
    let level = (index + 1).to_string();
    let at = labels(&[("level", &level), ("concurrency", &load), ("plan", plan)]);
    let gauge = |name, v: f64| {
        let mut f = family(name);
        f.samples.push((at.clone(), v));
        f
    };
    let quantiles = |name, q: Option<Percentiles>| {
        let mut f = family(name);
        if let Some(q) = q {
            for (label, ms) in [("0.5", q.p50), ("0.95", q.p95), ("0.99", q.p99)] {
                let with_q = format!("{at},{}", labels(&[("quantile", label)]));
                f.samples.push((with_q, ms / 1e3));
            }
        }
        f
    };
    vec![
        gauge("rightsize_in_flight", p.in_flight as f64),
        gauge(
            "rightsize_output_tokens_per_second",
            p.output_tokens_per_sec,
        ),
        quantiles("rightsize_ttft_seconds", p.live.ttft_ms),
        quantiles("rightsize_itl_seconds", p.live.itl_ms),
        quantiles("rightsize_e2e_seconds", p.live.e2e_ms),
    ]
}

/// Each finished level's figures, labelled with it.
fn level_families(plan: &str, state: &RunState) -> Vec<Family> {
    let mut tps = family("rightsize_level_output_token_throughput");
    let mut ttft = family("rightsize_level_ttft_p95_seconds");
    let mut e2e = family("rightsize_level_e2e_p99_seconds");
    let mut errors = family("rightsize_level_error_rate");
    let mut verdict = family("rightsize_level_verdict");
    for l in &state.levels {
        let at = level_labels(plan, l);
        tps.samples.push((at.clone(), l.output_tps()));
        if let Some(ms) = l.ttft_p95_ms() {
            ttft.samples.push((at.clone(), ms / 1e3));
        }
        if let Some(ms) = l.e2e_p99_ms() {
            e2e.samples.push((at.clone(), ms / 1e3));
        }
        errors.samples.push((at.clone(), l.error_rate));
        if let Some(v) = l.verdict {
            use crate::record::sla::Verdict;
            let n = match v {
                Verdict::Pass => 1.0,
                Verdict::Fail => 0.0,
                Verdict::Uncertain => -1.0,
            };
            verdict.samples.push((at, n));
        }
    }
    let mut lag = family("rightsize_client_timer_late_p99_seconds");
    if let Some(c) = state.levels.last().and_then(|l| l.client_lag.as_ref()) {
        lag.samples.push((String::new(), c.timer_late_p99_ms / 1e3));
    }
    vec![tps, ttft, e2e, errors, verdict, lag]
}

/// The answer and bracket so far, on the run's axis (`axis` label): a concurrency, or a rate
/// in requests per second.
fn answer_families(analysis: &RunAnalysis) -> Vec<Family> {
    use crate::plan::analysis::Axis;
    let (axis, value): (&str, fn(u32) -> f64) = match analysis.axis {
        Axis::Concurrency => ("concurrency", f64::from),
        Axis::Rate => ("rate", crate::metrics::summary::load_to_rps),
    };
    let mut answer = family("rightsize_answer");
    if let Some(a) = &analysis.answer {
        answer
            .samples
            .push((labels(&[("axis", axis)]), value(a.concurrency)));
    }
    let mut bracket = family("rightsize_bracket");
    for (bound, v) in [("low", analysis.bracket[0]), ("high", analysis.bracket[1])] {
        if let Some(v) = v {
            bracket
                .samples
                .push((labels(&[("axis", axis), ("bound", bound)]), value(v)));
        }
    }
    vec![answer, bracket]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::EngineEvent;
    use crate::metrics::fixtures::level;
    use crate::metrics::LevelProgress;
    use crate::plan::{analyse, Analysis};
    use crate::record::sla::{SlaMetric, SlaThreshold};

    /// The lines of `text` that start with `name` followed by `{` or a space.
    fn samples<'a>(text: &'a str, name: &str) -> Vec<&'a str> {
        text.lines()
            .filter(|l| {
                l.strip_prefix(name)
                    .is_some_and(|r| r.starts_with('{') || r.starts_with(' '))
            })
            .collect()
    }

    fn served_state() -> RunState {
        let mut state = RunState::default();
        state.apply(&EngineEvent::RunStarted {
            run_id: "20261206-120000-sweep".into(),
            dir: "/runs/x".into(),
            endpoint: "http://h:8000/v1".into(),
            model: "m \"q\"".into(),
            server: Default::default(),
        });
        // 200 requests at 4, 100 ms TTFT, 1 s each, 100 tokens; every 10th fails (20
        // timeouts: under the 20 % limit with room to decide)
        let first = level(0, 4, 200, 100, 1000, 100, Some((ErrorKind::Timeout, 10)));
        state.apply(&EngineEvent::LevelFinished(Box::new(first)));
        state.apply(&EngineEvent::LevelsLeft([0, 2]));
        state.apply(&EngineEvent::LevelStarted {
            index: 1,
            concurrency: 16,
            request_count: 32,
            request_cap: 32,
            earlier: 0,
            warmup: 0,
            shape: None,
        });
        let live = crate::metrics::LiveFigures {
            ttft_ms: Some(Percentiles {
                p50: 120.0,
                p95: 250.0,
                p99: 500.0,
            }),
            ..Default::default()
        };
        state.apply(&EngineEvent::Progress(LevelProgress {
            index: 1,
            concurrency: 16,
            done: 5,
            total: 32,
            in_flight: 16,
            ok: 4,
            errors_by_kind: [(ErrorKind::HttpStatus, 1)].into_iter().collect(),
            output_tokens: 400,
            output_tokens_per_sec: 812.5,
            output_tps_series: vec![],
            elapsed_s: 2.0,
            chunks: 0,
            sent: 21,
            live: Box::new(live),
            open: None,
        }));
        state
    }

    #[test]
    fn a_running_sweep_reads_as_its_figures() {
        let state = served_state();
        let analysis = Analysis {
            slas: crate::plan::judge::SlaSet(vec![
                SlaThreshold::parse(SlaMetric::E2e, "avg:2s").unwrap()
            ]),
            max_error_rate: 0.2,
            ..Analysis::default()
        };
        let planner = crate::plan::SweepPlanner {
            levels: vec![4, 16],
            refine_knee: false,
            analysis: analysis.clone(),
            open: vec![],
            auto_rates: None,
        };
        let mut levels = state.levels.clone();
        for l in &mut levels {
            crate::plan::LevelPlanner::judge(&planner, l);
        }
        let mut judged = state.clone();
        judged.levels = levels;
        let text = render(
            &RunLabels {
                plan: "sweep",
                candidate: None,
            },
            &judged,
            &analyse(&analysis, &judged.levels),
        );
        let at1 = "level=\"1\",concurrency=\"4\",plan=\"sweep\"";
        let at2 = "level=\"2\",concurrency=\"16\",plan=\"sweep\"";
        let cases: Vec<(&str, Vec<String>)> = vec![
            (
                "rightsize_run_info",
                vec![format!(
                    "rightsize_run_info{{run_id=\"20261206-120000-sweep\",plan=\"sweep\",\
                     endpoint=\"http://h:8000/v1\",model=\"m \\\"q\\\"\"}} 1"
                )],
            ),
            (
                "rightsize_run_finished",
                vec!["rightsize_run_finished 0".into()],
            ),
            (
                "rightsize_levels_finished",
                vec!["rightsize_levels_finished 1".into()],
            ),
            (
                "rightsize_levels_left",
                vec![
                    "rightsize_levels_left{bound=\"min\"} 0".into(),
                    "rightsize_levels_left{bound=\"max\"} 2".into(),
                ],
            ),
            // 180 of level 1 and 4 of level 2 ok; 20 timeouts and one HTTP error
            (
                "rightsize_requests_total",
                vec![
                    "rightsize_requests_total{outcome=\"ok\"} 184".into(),
                    "rightsize_requests_total{outcome=\"error\"} 21".into(),
                ],
            ),
            (
                "rightsize_in_flight",
                vec![format!("rightsize_in_flight{{{at2}}} 16")],
            ),
            (
                "rightsize_output_tokens_per_second",
                vec![format!("rightsize_output_tokens_per_second{{{at2}}} 812.5")],
            ),
            (
                "rightsize_ttft_seconds",
                vec![
                    format!("rightsize_ttft_seconds{{{at2},quantile=\"0.5\"}} 0.12"),
                    format!("rightsize_ttft_seconds{{{at2},quantile=\"0.95\"}} 0.25"),
                    format!("rightsize_ttft_seconds{{{at2},quantile=\"0.99\"}} 0.5"),
                ],
            ),
            // no inter-token or e2e figures yet: no series
            ("rightsize_itl_seconds", vec![]),
            ("rightsize_e2e_seconds", vec![]),
            (
                "rightsize_level_error_rate",
                vec![format!("rightsize_level_error_rate{{{at1}}} 0.1")],
            ),
            (
                "rightsize_level_e2e_p99_seconds",
                vec![format!("rightsize_level_e2e_p99_seconds{{{at1}}} 1")],
            ),
            (
                "rightsize_level_verdict",
                vec![format!("rightsize_level_verdict{{{at1}}} 1")],
            ),
            (
                "rightsize_answer",
                vec!["rightsize_answer{axis=\"concurrency\"} 4".into()],
            ),
        ];
        for (name, want) in cases {
            assert_eq!(samples(&text, name), want, "{name} in:\n{text}");
        }
        // every kind of error is a series, from 0
        let errors = samples(&text, "rightsize_errors_total");
        assert_eq!(errors.len(), ErrorKind::ALL.len(), "{text}");
        assert!(
            errors.contains(&"rightsize_errors_total{kind=\"timeout\"} 20"),
            "{text}"
        );
        assert!(
            errors.contains(&"rightsize_errors_total{kind=\"http_status\"} 1"),
            "{text}"
        );
        // each family once, with its help and type, and only documented names
        for (name, kind, _) in NAMES {
            let types = text.matches(&format!("# TYPE {name} {kind}\n")).count();
            assert!(types <= 1, "{name}");
        }
        for line in text.lines().filter(|l| !l.starts_with('#')) {
            let name = line.split(['{', ' ']).next().unwrap();
            assert!(NAMES.iter().any(|(n, _, _)| *n == name), "{line}");
        }
        // the project's reader takes every line
        let parsed = crate::telemetry::prometheus::parse(&text);
        assert_eq!(
            parsed.len(),
            text.lines().filter(|l| !l.starts_with('#')).count()
        );
    }

    /// A search measuring level 1 again: its earlier requests stay counted while the new
    /// measurement's progress starts from zero, and its pooled entry at the end holds both.
    #[test]
    fn a_level_measured_again_never_takes_its_requests_back() {
        let ok_total = |state: &RunState| {
            let text = render(
                &RunLabels {
                    plan: "search",
                    candidate: None,
                },
                state,
                &analyse(&Analysis::default(), &state.levels),
            );
            samples(&text, "rightsize_requests_total")[0].to_string()
        };
        let mut state = RunState::default();
        state.apply(&EngineEvent::LevelFinished(Box::new(level(
            0, 4, 64, 100, 1000, 100, None,
        ))));
        assert_eq!(
            ok_total(&state),
            "rightsize_requests_total{outcome=\"ok\"} 64"
        );
        state.apply(&EngineEvent::LevelStarted {
            index: 0,
            concurrency: 4,
            request_count: 64,
            request_cap: 64,
            earlier: 64,
            warmup: 4,
            shape: None,
        });
        let mut p = match served_state().progress {
            Some(p) => p,
            None => unreachable!("the scripted state has progress"),
        };
        (p.index, p.ok, p.errors_by_kind) = (0, 10, Default::default());
        state.apply(&EngineEvent::Progress(p));
        assert_eq!(
            ok_total(&state),
            "rightsize_requests_total{outcome=\"ok\"} 74"
        );
        state.apply(&EngineEvent::LevelFinished(Box::new(level(
            0, 4, 128, 100, 1000, 100, None,
        ))));
        assert_eq!(
            ok_total(&state),
            "rightsize_requests_total{outcome=\"ok\"} 128"
        );
    }

    #[test]
    fn docs_watch_lists_every_name_with_its_type() {
        let doc = include_str!("../../docs/watch.md");
        let documented: Vec<(String, String)> = doc
            .lines()
            .filter_map(|l| {
                let cells: Vec<&str> = l.split('|').map(str::trim).collect();
                let name = cells
                    .get(1)?
                    .strip_prefix("`rightsize_")?
                    .strip_suffix('`')?;
                Some((format!("rightsize_{name}"), cells.get(2)?.to_string()))
            })
            .collect();
        let written: Vec<(String, String)> = NAMES
            .iter()
            .map(|(n, k, _)| (n.to_string(), k.to_string()))
            .collect();
        assert_eq!(documented, written);
    }

    #[test]
    fn the_grafana_dashboard_names_only_documented_metrics() {
        let dash: serde_json::Value =
            serde_json::from_str(include_str!("../../assets/grafana-dashboard.json")).unwrap();
        let exprs: Vec<String> = dash["panels"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|p| p["targets"].as_array().unwrap().iter())
            .map(|t| t["expr"].as_str().unwrap().to_string())
            .collect();
        let mut used = std::collections::BTreeSet::new();
        for e in &exprs {
            let mut rest = e.as_str();
            while let Some(at) = rest.find("rightsize_") {
                let name: String = rest[at..]
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                rest = &rest[at + name.len()..];
                used.insert(name);
            }
        }
        for name in &used {
            assert!(
                NAMES.iter().any(|(n, _, _)| n == name),
                "{name} is not documented"
            );
        }
        // and every documented metric has a panel
        for (n, _, _) in NAMES.iter().filter(|(n, _, _)| *n != "rightsize_run_info") {
            assert!(used.contains(*n), "{n} has no panel");
        }
    }

    #[test]
    fn numbers_are_written_short() {
        for (v, want) in [(3.0, "3"), (0.25, "0.25"), (-1.0, "-1"), (f64::NAN, "NaN")] {
            assert_eq!(number(v), want);
        }
    }
}
