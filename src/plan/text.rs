//! The answer, knee and planning numbers as text for people: one rendering shared by the
//! headless printer and `rightsize show`.

use super::capacity::Peak;
use super::sla::fmt_value;
use super::RunAnalysis;

/// The answer, knee and planning numbers, for people.
pub fn render_analysis(a: &RunAnalysis) -> String {
    let mut t = String::new();
    if let Some(s) = &a.search {
        let o = &s.outcome;
        match (o.max_passing, s.output_tps_at_answer) {
            (Some(c), Some(tps)) => {
                t += &format!("answer: {c} concurrent requests at {tps:.1} output tok/s\n")
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
                t += &format!(", {} at {f}", v(b.observed_at_first_failing));
            }
            t += "\n";
        }
        t += &format!("levels: {}; confidence: {}\n", o.levels_used, o.confidence);
    }
    match &a.knee {
        Some(k) => {
            t += &format!(
                "knee: {} (a further doubling adds {:.1} % throughput; p99 e2e {:.0} ms)",
                k.concurrency,
                k.doubling_gain * 100.0,
                k.e2e_p99_ms
            );
            if let Some(b) = k.below {
                t += &format!(", between {b} and {}", k.concurrency);
            }
            t += "\n";
        }
        None => t += "knee: not reached (throughput still rising at the highest level)\n",
    }
    let p = &a.planning;
    if let Some(i) = &p.ideal {
        t += &format!(
            "ideal balance: {} concurrent ({:.1} output tok/s, {:.2} req/s; by {})\n",
            i.concurrency,
            i.output_tps,
            i.rps,
            p.ideal_basis.replace('_', " ")
        );
    }
    if let Some(b) = p.breaking_point {
        t += &format!("breaking point: {b}\n");
    }
    if let Some(r) = &p.right_size {
        let (v, unit) = match r.peak {
            Peak::Concurrency(v) => (v, "concurrent"),
            Peak::Rps(v) => (v, "req/s"),
            Peak::OutputTps(v) => (v, "output tok/s"),
        };
        t += &format!(
            "right-size: {} instances for a peak of {v} {unit} with {:.0} % headroom ({:.1} {unit} per instance)",
            r.instances,
            r.headroom * 100.0,
            r.per_instance
        );
        if let Some(c) = r.cost_per_hour {
            t += &format!(", {c:.2} per hour");
        }
        if let Some(c) = r.cost_per_million_output_tokens {
            t += &format!(", {c:.3} per million output tokens");
        }
        t += "\n";
    }
    for w in &p.warnings {
        t += &format!("warning: {w}\n");
    }
    t
}
