//! The right-size section: how many instances the declared peak needs, with the 95 % range,
//! the headroom, one instance's capacity, the cost per hour and per million output tokens.
//! Only for a run sized by a peak (`--peak-concurrency`, `--peak-rps`, `--peak-output-tps`, or
//! the dashboard's `p`); without one the section is absent, not a placeholder. The words are
//! `rightsize show`'s `right-size:` line
//! ([`crate::plan::analysis_text::right_size_line`]), cut where it lists its parts:
//! the same figures (three significant digits), nothing said another way.

use std::fmt::Write as _;

use super::esc;
use crate::plan::RunAnalysis;

const PREFIX: &str = "right-size: ";

/// `rightsize show`'s right-size line of a run, without its `right-size: ` prefix; `None`
/// when the run was not sized.
pub fn right_size_line(a: &RunAnalysis) -> Option<String> {
    let line = crate::plan::analysis_text::right_size_line(a.planning.right_size.as_ref()?);
    line.strip_prefix(PREFIX).map(str::to_string)
}

/// The line's parts: the headline (`4 instances (4 to 8 at 95 %)`), what it is for (`for a
/// peak of 100 concurrent with 20 % headroom (32 concurrent per instance)`), and the rest as
/// (term, words): the costs and the fleet's GPU power.
fn parts(line: &str) -> (String, String, Vec<(&'static str, String)>) {
    let mut pieces = line.split(", ");
    let first = pieces.next().unwrap_or_default();
    let (head, under) = match first.find(" for a peak") {
        Some(i) => (first[..i].to_string(), first[i + 1..].to_string()),
        None => (first.to_string(), String::new()),
    };
    let mut rest = Vec::new();
    let mut cost_named = false;
    for p in pieces {
        let term = if p.starts_with("GPUs ") {
            "GPUs"
        } else if p.contains("per hour") || p.contains("per million") {
            if std::mem::replace(&mut cost_named, true) {
                ""
            } else {
                "cost"
            }
        } else {
            ""
        };
        let words = if term == "GPUs" {
            p["GPUs ".len()..].to_string()
        } else {
            p.to_string()
        };
        rest.push((term, words));
    }
    (head, under, rest)
}

/// One run's right-size box (`label` heads it when several runs are compared).
fn right_size_box(label: &str, line: &str) -> String {
    let (head, under, rest) = parts(line);
    let mut h = String::from("<div class=\"answer rightsize\">");
    if !label.is_empty() {
        let _ = write!(h, "<h3>{}</h3>", esc(label));
    }
    let _ = write!(
        h,
        "<p class=\"headline\">{}</p><p class=\"bracket\">{}</p>",
        esc(&head),
        esc(&under)
    );
    if !rest.is_empty() {
        h += "<dl>";
        for (term, words) in rest {
            let _ = write!(h, "<dt>{}</dt><dd>{}</dd>", esc(term), esc(&words));
        }
        h += "</dl>";
    }
    h + "</div>"
}

/// The section, for the runs that were sized (`labelled`: each run's label, empty for one
/// run); empty when none was.
pub fn section(labelled: &[(&str, &RunAnalysis)]) -> String {
    let boxes: Vec<String> = labelled
        .iter()
        .filter_map(|&(label, a)| Some(right_size_box(label, &right_size_line(a)?)))
        .collect();
    if boxes.is_empty() {
        return String::new();
    }
    format!(
        "<section id=\"right-size\"><h2>Right-size</h2><div class=\"answers\">{}</div></section>",
        boxes.concat()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINE: &str = "4 instances (4 to 8 at 95 %) for a peak of 100 concurrent with 20 % \
                        headroom (32 concurrent per instance), 16.0 per hour, 0.0717 per million \
                        output tokens, GPUs 0.89 kW (kWh an hour)";

    #[test]
    fn the_line_is_cut_into_the_headline_what_it_is_for_and_the_costs() {
        let (head, under, rest) = parts(LINE);
        assert_eq!(head, "4 instances (4 to 8 at 95 %)");
        assert_eq!(
            under,
            "for a peak of 100 concurrent with 20 % headroom (32 concurrent per instance)"
        );
        assert_eq!(
            rest,
            vec![
                ("cost", "16.0 per hour".to_string()),
                ("", "0.0717 per million output tokens".to_string()),
                ("GPUs", "0.89 kW (kWh an hour)".to_string()),
            ]
        );
    }

    #[test]
    fn the_box_says_the_line_in_its_own_words() {
        let h = right_size_box("", LINE);
        for want in [
            "4 instances (4 to 8 at 95 %)",
            "with 20 % headroom (32 concurrent per instance)",
            "16.0 per hour",
            "0.0717 per million output tokens",
            "0.89 kW (kWh an hour)",
        ] {
            assert!(h.contains(want), "no {want} in {h}");
        }
    }

    #[test]
    fn without_costs_the_box_has_no_list() {
        let h = right_size_box(
            "A: run",
            "3 instances for a peak of 9.5 req/s with 20 % headroom (4.10 req/s per instance)",
        );
        assert!(h.contains("<h3>A: run</h3>"));
        assert!(h.contains(">3 instances<"));
        assert!(!h.contains("<dl>"));
    }
}
