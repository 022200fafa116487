//! The answer box: the run's answer in large type with its bracket and confidence range,
//! then the binding SLA, knee, ideal balance and breaking point, in the words `rightsize show`
//! prints (the same [`render_analysis`] text, one row per line). The right-size and its cost
//! have their own section (`rightsize.rs`).

use std::fmt::Write as _;

use super::esc;
use crate::plan::analysis::Axis;
use crate::plan::analysis_text::{answer_line, bracket_line, crossing_line, render_analysis};
use crate::plan::RunAnalysis;
use crate::values::sig3;

/// The headline (the answer, or the ideal balance of a sweep without SLAs) and what it rests
/// on (the bracket and the estimated crossing), in the words of
/// `rightsize show` (docs/search.md, "Words").
fn headline(a: &RunAnalysis) -> (String, String) {
    let mut under = Vec::new();
    // the search's confidence is on its `levels` line below: said once
    under.extend(bracket_line(a));
    under.extend(crossing_line(a));
    let head = match (answer_line(a), &a.answer) {
        (Some(line), _) => line,
        (None, Some(ans)) => format!(
            "ideal balance: {} at {} output tok/s",
            match a.axis {
                Axis::Concurrency => format!("{} concurrent requests", ans.concurrency),
                Axis::Rate => a.axis.load(ans.concurrency),
            },
            sig3(ans.output_tps)
        ),
        (None, None) => "no answer: no finished level".to_string(),
    };
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
        // warnings, never-named levels and the right-size have their own sections; the
        // answer, its bracket and the estimated crossing are the headline's
        if [
            "warning:",
            "never named:",
            "right-size:",
            "answer:",
            "bracket:",
            "estimated crossing:",
        ]
        .iter()
        .any(|p| line.starts_with(p))
        {
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
