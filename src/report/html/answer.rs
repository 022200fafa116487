//! The answer box: the run's answer in large type with its bracket and confidence range,
//! then the binding SLA, knee, ideal balance, breaking point, right-size and cost, in the
//! words `rightsize show` prints (the same [`render_analysis`] text, one row per line).

use std::fmt::Write as _;

use super::esc;
use crate::plan::analysis::Axis;
use crate::plan::analysis_text::{boundary_text, render_analysis};
use crate::plan::RunAnalysis;

/// `96 concurrent requests` or `2.5 req/s`.
fn place(ax: Axis, load: u32) -> String {
    match ax {
        Axis::Concurrency => format!("{load} concurrent requests"),
        Axis::Rate => ax.load(load),
    }
}

/// The headline: what the answer is and what it rests on.
fn headline(a: &RunAnalysis) -> (String, String) {
    let ax = a.axis;
    let mut under = Vec::new();
    let head = match (&a.search, &a.answer) {
        (Some(s), Some(ans)) => {
            if let [Some(lo), Some(hi)] = s.bracket {
                under.push(format!(
                    "bracket {} (passes) to {} (fails)",
                    ax.load(lo),
                    ax.load(hi)
                ));
            }
            under.push(format!("confidence: {}", s.outcome.confidence));
            format!(
                "{} at {:.0} output tok/s",
                place(ax, ans.concurrency),
                ans.output_tps
            )
        }
        (Some(_), None) => "no answer: no level met the SLA".to_string(),
        (None, Some(ans)) if !a.slas.is_empty() => {
            if let Some(b) = a.planning.breaking_point {
                under.push(format!(
                    "bracket {} (passes) to {} (fails)",
                    ax.load(ans.concurrency),
                    ax.load(b)
                ));
            }
            format!(
                "highest passing level: {} at {:.0} output tok/s",
                place(ax, ans.concurrency),
                ans.output_tps
            )
        }
        (None, Some(ans)) => format!(
            "ideal balance: {} at {:.0} output tok/s",
            place(ax, ans.concurrency),
            ans.output_tps
        ),
        (None, None) if !a.slas.is_empty() => "no level met the SLA".to_string(),
        (None, None) => "no answer: no finished level".to_string(),
    };
    if let Some(b) = &a.boundary {
        under.push(boundary_text(ax, b));
    }
    (head, under.join("; "))
}

/// The answer box of one run (`label` heads it when several runs are compared).
pub fn answer_box(label: &str, a: &RunAnalysis) -> String {
    let (head, under) = headline(a);
    let mut h = String::from("<div class=\"answer\">");
    if !label.is_empty() {
        let _ = write!(h, "<h3>{}</h3>", esc(label));
    }
    let _ = write!(
        h,
        "<p class=\"headline\">{}</p><p class=\"bracket\">{}</p><dl>",
        esc(&head),
        esc(&under)
    );
    for line in render_analysis(a).lines() {
        // warnings and never-named levels have their own section
        if line.starts_with("warning:") || line.starts_with("never named:") {
            continue;
        }
        match line.split_once(": ") {
            Some((k, v)) => {
                let _ = write!(h, "<dt>{}</dt><dd>{}</dd>", esc(k), esc(v));
            }
            None => {
                let _ = write!(h, "<dt></dt><dd>{}</dd>", esc(line));
            }
        }
    }
    h += "</dl></div>";
    h
}
