//! The answer, knee and planning numbers as text for people: one rendering shared by the
//! headless printer and `rightsize show`.

use super::analysis::{Axis, IterationRow};
use super::capacity::Peak;
use super::knee::DEFAULT_MIN_GAIN;
use super::range::BoundaryRange;
use super::RunAnalysis;
use crate::record::sla::fmt_value;
use crate::record::sla::Verdict;

/// The answer, knee and planning numbers, for people.
pub fn render_analysis(a: &RunAnalysis) -> String {
    let ax = a.axis;
    let mut t = String::new();
    if let Some(s) = &a.search {
        let o = &s.outcome;
        match (o.max_passing, s.output_tps_at_answer) {
            (Some(c), Some(tps)) => {
                t += &match ax {
                    Axis::Concurrency => {
                        format!("answer: {c} concurrent requests at {tps:.1} output tok/s")
                    }
                    Axis::Rate => format!("answer: {} at {tps:.1} output tok/s", ax.load(c)),
                };
                if let Some(b) = &a.boundary {
                    t += &format!(" ({})", boundary_text(ax, b));
                }
                t += "\n";
            }
            _ => t += "answer: none (no level met the SLA)\n",
        }
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
    } else if let Some(b) = &a.boundary {
        t += &format!("SLA boundary: {}\n", boundary_text(ax, b));
    }
    t += &knee_text(a, ax);
    if let Some(b) = &a.bound {
        t += &bound_text(b);
    }
    let p = &a.planning;
    if let Some(i) = &p.ideal {
        t += &format!(
            "ideal balance: {} ({:.1} output tok/s, {:.2} req/s{}; by {}{})\n",
            match ax {
                Axis::Concurrency => format!("{} concurrent", i.concurrency),
                Axis::Rate => format!("{} offered", ax.load(i.concurrency)),
            },
            i.output_tps,
            i.rps,
            i.energy.map_or(String::new(), energy_words),
            p.ideal_basis.replace('_', " "),
            i.range
                .filter(|[lo, _]| lo.is_finite())
                .map_or(String::new(), |[lo, hi]| format!(
                    "; {} at 95 %",
                    range_words(ax, lo, hi)
                ))
        );
    }
    if let Some(b) = p.breaking_point {
        t += &format!("breaking point: {}\n", ax.load(b));
    }
    if let Some(r) = &p.right_size {
        let (v, unit) = match r.peak {
            Peak::Concurrency(v) => (v, "concurrent"),
            Peak::Rps(v) => (v, "req/s"),
            Peak::OutputTps(v) => (v, "output tok/s"),
        };
        t += &format!(
            "right-size: {} instances{} for a peak of {v} {unit} with {:.0} % headroom ({:.1} {unit} per instance)",
            r.instances,
            r.instances_range
                .filter(|[lo, hi]| lo != hi)
                .map_or(String::new(), |[lo, hi]| format!(" ({lo} to {hi} at 95 %)")),
            r.headroom * 100.0,
            r.per_instance
        );
        if let Some(c) = r.cost_per_hour {
            t += &format!(", {c:.2} per hour");
        }
        if let Some(c) = r.cost_per_million_output_tokens {
            t += &format!(", {c:.3} per million output tokens");
        }
        if let Some(kw) = r.fleet_power_kw {
            t += &format!(", GPUs {kw:.2} kW (kWh an hour)");
        }
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

/// A screen left undecided, by what it observed: `~FAIL` when a limit's observed value is
/// beyond it, else `~pass`; `None` for any other row.
pub fn screen_label(r: &IterationRow) -> Option<&'static str> {
    r.screen.then(|| {
        if r.slas.iter().any(observed_beyond) {
            "~FAIL"
        } else {
            "~pass"
        }
    })
}

/// A row's result for tables: `partial`, `not held`, then the verdict with the limit that
/// decided it (`FAIL e2e 52.1 s`, `uncertain TTFT 1.48 s`; a screen's lean, `~FAIL e2e 732
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

/// `the 95 % intervals put the SLA boundary between 74 and 81 (observed crossing 78)`.
pub fn boundary_text(ax: Axis, b: &BoundaryRange) -> String {
    let est = if b.estimate.is_finite() && b.low.is_finite() {
        format!(" (observed crossing {})", ax.fmt(b.estimate))
    } else {
        String::new()
    };
    format!(
        "the 95 % intervals put the SLA boundary {}{est}",
        range_words(ax, b.low, b.high)
    )
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
        // the steady figures of the tables: the knee's, and at twice its load
        let gain = match k.gain_ci {
            Some([lo, hi]) => gain_text(k.doubling_gain, Some(lo), Some(hi)),
            None => format!("{:.1} %", k.doubling_gain * 100.0),
        };
        let mut t = format!(
            "knee: {} (steady {:.1} output tok/s there and {:.1} at twice the load: a further \
             doubling adds {gain}; p99 e2e {:.0} ms)",
            ax.load(k.concurrency),
            k.output_tps,
            k.output_tps * (1.0 + k.doubling_gain),
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
                    "{} -> twice: {:.1} -> {:.1} tok/s, {}",
                    ax.load(g.concurrency),
                    g.output_tps,
                    g.doubled_tps,
                    gain_text(g.gain, g.lo, g.hi)
                )
            })
            .collect();
        return format!(
            "knee: not decided from {} on (steady throughput per doubling, with 95 % \
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
