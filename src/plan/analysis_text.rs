//! The answer, knee and planning numbers as text for people: one rendering shared by the
//! headless printer and `rightsize show`.

use super::analysis::{Axis, IterationRow};
use super::capacity::Peak;
use super::knee::DEFAULT_MIN_GAIN;
use super::range::BoundaryRange;
use super::RunAnalysis;
use crate::record::sla::fmt_value;
use crate::record::sla::Verdict;
use crate::values::sig3;

/// The answer's line: `answer: 86 concurrent requests at 53.7k output tok/s`, or `answer:
/// none (no level met the SLA)`; `None` where a run has no answer to give (a sweep without SLAs:
/// its ideal balance says what it found).
pub fn answer_line(a: &RunAnalysis) -> Option<String> {
    let ax = a.axis;
    if a.search.is_none() && a.slas.is_empty() {
        return None;
    }
    Some(match &a.answer {
        Some(ans) => format!(
            "answer: {} at {} output tok/s",
            match ax {
                Axis::Concurrency => format!("{} concurrent requests", ans.concurrency),
                Axis::Rate => ax.load(ans.concurrency),
            },
            sig3(ans.output_tps)
        ),
        None => "answer: none (no level met the SLA)".into(),
    })
}

/// How the level at `c` stands, in the bracket's words: `passed`, `failed`, `uncertain`,
/// `not held`, `cut short` (never `failed` for a level that was not decided).
pub fn standing_word(a: &RunAnalysis, c: u32) -> &'static str {
    let Some(r) = a.iterations.iter().rev().find(|r| r.concurrency == c) else {
        return "did not pass";
    };
    if r.partial {
        "cut short"
    } else if !r.held {
        "not held"
    } else {
        match r.verdict {
            Verdict::Pass => "passed",
            Verdict::Fail => "failed",
            Verdict::Uncertain => "uncertain",
        }
    }
}

/// The bracket's line: `bracket: 86 (passed) to 92 (uncertain)`: the answer and the lowest
/// level above it that did not pass; `None` without SLAs or a search.
pub fn bracket_line(a: &RunAnalysis) -> Option<String> {
    if a.search.is_none() && a.slas.is_empty() {
        return None;
    }
    let ax = a.axis;
    let end = |c: u32| format!("{} ({})", ax.load(c), standing_word(a, c));
    Some(match a.bracket {
        [Some(lo), Some(hi)] => format!("bracket: {} to {}", end(lo), end(hi)),
        [Some(lo), None] => format!(
            "bracket: {} to none (no level above it did not pass)",
            end(lo)
        ),
        [None, Some(hi)] => format!("bracket: none passed, lowest {}", end(hi)),
        [None, None] => return None,
    })
}

/// The estimated crossing and its 95 % range: `103 (95 % range 88 to 118)`.
pub fn crossing_text(ax: Axis, b: &BoundaryRange) -> String {
    let at = if b.estimate.is_finite() {
        ax.fmt(b.estimate)
    } else {
        "beyond the highest level".into()
    };
    let range = match (b.low.is_finite(), b.high.is_finite()) {
        (true, true) if ax.fmt(b.low) == ax.fmt(b.high) => {
            format!(" (95 % range: {})", ax.fmt(b.low))
        }
        (true, true) => format!(" (95 % range {} to {})", ax.fmt(b.low), ax.fmt(b.high)),
        (true, false) => format!(" (95 % range from {})", ax.fmt(b.low)),
        _ => String::new(),
    };
    format!("{at}{range}")
}

/// The estimated crossing's line: `estimated crossing: 103 (95 % range 88 to 118)`.
pub fn crossing_line(a: &RunAnalysis) -> Option<String> {
    a.boundary
        .as_ref()
        .map(|b| format!("estimated crossing: {}", crossing_text(a.axis, b)))
}

/// The breaking point's line: `breaking point: 128` (the lowest held level that failed,
/// decided), else `breaking point: not decided (no level failed; estimated crossing 103, 95 %
/// range 88 to 118)`; `None` without SLAs.
pub fn breaking_line(a: &RunAnalysis) -> Option<String> {
    if a.slas.is_empty() {
        return None;
    }
    Some(match (a.planning.breaking_point, &a.boundary) {
        (Some(b), _) => format!("breaking point: {}", a.axis.load(b)),
        (None, Some(b)) if b.estimate.is_finite() || b.low.is_finite() => format!(
            "breaking point: not decided (no level failed; estimated crossing {})",
            crossing_text(a.axis, b)
        ),
        (None, _) => "breaking point: not reached (no level failed)".into(),
    })
}

/// The answer, knee and planning numbers, for people.
pub fn render_analysis(a: &RunAnalysis) -> String {
    let ax = a.axis;
    let mut t = String::new();
    for line in [answer_line(a), bracket_line(a), crossing_line(a)]
        .into_iter()
        .flatten()
    {
        t += &line;
        t += "\n";
    }
    if let Some(s) = &a.search {
        let o = &s.outcome;
        if let Some(b) = &s.binding_sla {
            let m = b.threshold.metric;
            let v = |x: Option<f64>| x.map_or("-".to_string(), |x| fmt_value(m, x));
            t += &format!(
                "binding SLA: {}; observed {} at the answer",
                b.threshold.describe(),
                v(b.observed_at_answer)
            );
            if let Some(f) = o.first_failing {
                t += &format!(", {} at {}", v(b.observed_at_first_failing), ax.load(f));
            }
            t += "\n";
        }
        let levels = if o.levels_used < o.measurements {
            format!("{} ({} measurements)", o.levels_used, o.measurements)
        } else {
            o.levels_used.to_string()
        };
        t += &format!("levels: {levels}; confidence: {}\n", o.confidence);
    }
    t += &knee_text(a, ax);
    if let Some(b) = &a.bound {
        t += &bound_text(b);
    }
    let p = &a.planning;
    if let Some(i) = &p.ideal {
        t += &format!(
            "ideal balance: {} ({} output tok/s, {:.2} req/s{}; by {}{})\n",
            match ax {
                Axis::Concurrency => format!("{} concurrent", i.concurrency),
                Axis::Rate => format!("{} offered", ax.load(i.concurrency)),
            },
            sig3(i.output_tps),
            i.rps,
            i.energy.map_or(String::new(), energy_words),
            p.ideal_basis.replace('_', " "),
            // by SLA its range is the estimated crossing's, on that line
            i.range
                .filter(|[lo, _]| lo.is_finite() && p.ideal_basis == "knee")
                .map_or(String::new(), |[lo, hi]| format!(
                    "; {} at 95 %",
                    range_words(ax, lo, hi)
                ))
        );
    }
    if let Some(line) = breaking_line(a) {
        t += &line;
        t += "\n";
    }
    if let Some(r) = &p.right_size {
        t += &right_size_line(r);
        t += "\n";
    }
    for w in &p.warnings {
        t += &format!("warning: {w}\n");
    }
    if !a.skipped.is_empty() {
        let list: Vec<String> = a
            .skipped
            .iter()
            .map(|s| format!("{} ({})", ax.load(s.concurrency), s.reason))
            .collect();
        t += &format!("never named: {}\n", list.join("; "));
    }
    t
}

/// Whether a limit's observed value is beyond it (whatever its interval says).
fn observed_beyond(c: &crate::record::sla::SlaCheck) -> bool {
    c.observed.is_some_and(|o| o > c.threshold.limit)
}

/// A screen left undecided, by what it observed: `~over` when a limit's observed value is
/// beyond it, else `~within`; `None` for any other row. Its verdict is uncertain: the words
/// say where it leans, never that it failed or passed (docs/search.md, "Words").
pub fn screen_label(r: &IterationRow) -> Option<&'static str> {
    r.screen.then(|| {
        if r.slas.iter().any(observed_beyond) {
            "~over"
        } else {
            "~within"
        }
    })
}

/// A row's result for tables: `partial`, `not held`, then the verdict with the limit that
/// decided it (`FAIL e2e 52.1 s`, `uncertain TTFT 1.48 s`; a screen's lean, `~over e2e 732
/// ms`). With `user_slas` false only the default error-rate limit applies: a row shows it
/// only when its error rate is over it.
pub fn row_verdict(r: &IterationRow, user_slas: bool) -> String {
    if r.partial {
        return "partial".into();
    }
    if !r.held {
        return "not held".into();
    }
    if !user_slas && !r.slas.iter().any(observed_beyond) {
        return String::new();
    }
    if r.verdict == Verdict::Pass {
        return "pass".into();
    }
    if let Some(lean) = screen_label(r) {
        let beyond = r.slas.iter().find(|c| observed_beyond(c)).map(|c| {
            format!(
                " {} {}",
                c.threshold.metric.label(),
                c.observed
                    .map_or("-".into(), |v| fmt_value(c.threshold.metric, v))
            )
        });
        return format!("{lean}{}", beyond.unwrap_or_default());
    }
    let deciding = r.slas.iter().find(|c| c.verdict == r.verdict).map(|c| {
        format!(
            " {} {}",
            c.threshold.metric.label(),
            c.observed
                .map_or("-".into(), |v| fmt_value(c.threshold.metric, v))
        )
    });
    format!("{}{}", r.verdict.label(), deciding.unwrap_or_default())
}

/// Where a concurrency (or rate) lies: `between 74 and 81`, `at or above 74` (no upper
/// end), or `beyond the highest level`.
pub fn range_words(ax: Axis, lo: f64, hi: f64) -> String {
    match (lo.is_finite(), hi.is_finite()) {
        (true, true) if ax.fmt(lo) == ax.fmt(hi) => format!("at {}", ax.fmt(lo)),
        (true, true) => format!("between {} and {}", ax.fmt(lo), ax.fmt(hi)),
        (true, false) => format!("at or above {}", ax.fmt(lo)),
        _ => "beyond the highest level".into(),
    }
}

/// A gain and its interval as the knee lines print them: `15.2 % [-3.1, 33.5]`.
fn gain_text(gain: f64, lo: Option<f64>, hi: Option<f64>) -> String {
    let side = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{:.1}", v * 100.0));
    format!("{:.1} % [{}, {}]", gain * 100.0, side(lo), side(hi))
}

/// What bounds the server, where, on what evidence, and what would move it: the bound line's
/// sentence, which the HTML report shows too.
pub fn bound_sentence(b: &super::bound::Bound) -> String {
    let at = b.at.map_or(String::new(), |c| format!(" at {c}"));
    let hint = b.hint.as_ref().map_or(String::new(), |h| format!("; {h}"));
    format!("{}{at} ({}){hint}", b.kind.label(), b.evidence)
}

/// The bound line of the printed analysis.
fn bound_text(b: &super::bound::Bound) -> String {
    format!("bound: {}\n", bound_sentence(b))
}

/// The knee line: named with its gain and interval, not decided with the gains that leave it
/// open, or not reached / not measured.
fn knee_text(a: &RunAnalysis, ax: Axis) -> String {
    if let Some(k) = &a.knee {
        // the level's throughput, as the tables show it: the knee's, and at twice its load
        let gain = match k.gain_ci {
            Some([lo, hi]) => gain_text(k.doubling_gain, Some(lo), Some(hi)),
            None => format!("{:.1} %", k.doubling_gain * 100.0),
        };
        let mut t = format!(
            "knee: {} ({} output tok/s there and {} at twice the load: a further doubling \
             adds {gain}; p99 e2e {:.0} ms)",
            ax.load(k.concurrency),
            sig3(k.output_tps),
            sig3(k.output_tps * (1.0 + k.doubling_gain)),
            k.e2e_p99_ms
        );
        if let Some(b) = k.below {
            t += &format!(", between {} and {}", ax.load(b), ax.load(k.concurrency));
        }
        if !k.straddling.is_empty() {
            let s: Vec<String> = k
                .straddling
                .iter()
                .map(|g| {
                    format!(
                        "{} adds {}",
                        ax.load(g.concurrency),
                        gain_text(g.gain, g.lo, g.hi)
                    )
                })
                .collect();
            t += &format!(
                " ({}: an interval that straddles {:.0} % may hold the knee)",
                s.join(", "),
                DEFAULT_MIN_GAIN * 100.0
            );
        }
        return t + "\n";
    }
    if let Some(u) = &a.knee_undecided {
        let gains: Vec<String> = u
            .gains
            .iter()
            .map(|g| {
                format!(
                    "{} -> twice: {} -> {} output tok/s, {}",
                    ax.load(g.concurrency),
                    sig3(g.output_tps),
                    sig3(g.doubled_tps),
                    gain_text(g.gain, g.lo, g.hi)
                )
            })
            .collect();
        return format!(
            "knee: not decided from {} on (output tok/s per doubling, with 95 % \
             intervals: {}; the knee is named where the whole interval is under {:.0} %: more \
             requests per level narrow them)\n",
            ax.load(u.from),
            gains.join("; "),
            DEFAULT_MIN_GAIN * 100.0
        );
    }
    let loads: Vec<u32> = a.iterations.iter().map(|r| r.concurrency).collect();
    let top = loads.iter().copied().max().unwrap_or(0);
    let doubled = loads.iter().any(|&c| c > 0 && c <= top / 2);
    if doubled || loads.is_empty() {
        "knee: not reached (throughput still rising at the highest level)\n".to_string()
    } else {
        format!(
            "knee: not measured (no level at twice another: the knee needs a level's \
             double, and the highest was {})\n",
            ax.load(top)
        )
    }
}

/// An operating point's GPU figures for its line: `, GPUs 412 W, 0.171 J (0.048 kWh per
/// million) per output token`.
pub fn energy_words(e: crate::plan::capacity::PointEnergy) -> String {
    let mut t = String::new();
    if let Some(w) = e.power_w {
        t += &format!(", GPUs {w:.0} W");
    }
    if let (Some(j), Some(k)) = (e.joules_per_output_token, e.kwh_per_million_output_tokens) {
        t += &format!(", {j:.3} J ({k:.3} kWh per million) per output token");
    }
    t
}

/// `right-size: 14 instances (12 to 14 at 95 %) for a peak of 2000 concurrent with 20 %
/// headroom (180 concurrent per instance), 56.0 per hour, ...`: the words `show`, the report
/// and the charts give the right-size.
pub fn right_size_line(r: &crate::plan::capacity::RightSize) -> String {
    let (v, unit) = match r.peak {
        Peak::Concurrency(v) => (v, "concurrent"),
        Peak::Rps(v) => (v, "req/s"),
        Peak::OutputTps(v) => (v, "output tok/s"),
    };
    let mut t = format!(
        "right-size: {} instances{} for a peak of {v} {unit} with {:.0} % headroom ({} {unit} per instance)",
        r.instances,
        r.instances_range
            .filter(|[lo, hi]| lo != hi)
            .map_or(String::new(), |[lo, hi]| format!(" ({lo} to {hi} at 95 %)")),
        r.headroom * 100.0,
        // a concurrency is a whole number of requests; a rate to three digits
        match r.peak {
            Peak::Concurrency(_) => format!("{:.0}", r.per_instance),
            _ => sig3(r.per_instance),
        }
    );
    if let Some(c) = r.cost_per_hour {
        t += &format!(", {} per hour", sig3(c));
    }
    if let Some(c) = r.cost_per_million_output_tokens {
        t += &format!(", {} per million output tokens", sig3(c));
    }
    if let Some(kw) = r.fleet_power_kw {
        t += &format!(", GPUs {kw:.2} kW (kWh an hour)");
    }
    t
}
