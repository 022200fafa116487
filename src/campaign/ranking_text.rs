//! The ranking as text: one row per candidate, each number with its range, ties marked with
//! `=`, candidates without an answer last with the reason; and the candidates' states.

use super::campaign_file::CampaignRecord;
use super::rank::{Ranged, RankedRow};
use crate::record::sla::fmt_value;

/// `0.231 (0.220-0.245)`; a range of one point prints the value alone.
fn ranged(r: Option<Ranged>, digits: usize) -> String {
    match r {
        None => "-".into(),
        Some(r) if (r.range[1] - r.range[0]).abs() < 0.5 * 10f64.powi(-(digits as i32)) => {
            format!("{:.digits$}", r.value)
        }
        Some(r) => format!(
            "{:.digits$} ({:.digits$}-{:.digits$})",
            r.value, r.range[0], r.range[1]
        ),
    }
}

/// [`ranged`] to three significant digits ([`crate::values::sig3`]): cost and tokens/s read
/// as on every other surface, `0.0150 (0.0141-0.0162)`, `7.19k`.
fn ranged_sig3(r: Option<Ranged>) -> String {
    use crate::values::sig3;
    match r {
        None => "-".into(),
        Some(r) if sig3(r.range[0]) == sig3(r.range[1]) => sig3(r.value),
        Some(r) => format!(
            "{} ({}-{})",
            sig3(r.value),
            sig3(r.range[0]),
            sig3(r.range[1])
        ),
    }
}

/// A row's rank: `2`, `=2` when tied with the row above, `-` unranked.
fn rank_cell(r: &RankedRow) -> String {
    match r.rank {
        Some(k) if r.tied => format!("={k}"),
        Some(k) => k.to_string(),
        None => "-".into(),
    }
}

/// The ranking table, then the reasons of candidates without an answer.
pub fn render_ranking(rows: &[RankedRow]) -> String {
    if rows.is_empty() {
        return "no candidate has finished yet\n".into();
    }
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let n = &r.numbers;
            let sla = match (n.sla_at_answer, n.sla_metric) {
                (Some(v), Some(m)) => fmt_value(m, v.value),
                _ => "-".into(),
            };
            vec![
                rank_cell(r),
                n.label.clone(),
                ranged_sig3(n.cost_per_million),
                ranged(n.answer, 0),
                ranged_sig3(n.output_tps),
                ranged(n.instances, 0),
                ranged_sig3(n.fleet_cost_per_hour),
                format!("{:.2}", n.price_per_hour),
                n.binding_sla.clone().unwrap_or_else(|| "-".into()),
                sla,
                n.knee.map_or("-".into(), |k| k.to_string()),
                n.bound.clone().unwrap_or_else(|| "-".into()),
                n.kwh_per_million.map_or("-".into(), |k| format!("{k:.3}")),
                n.fleet_power_kw.map_or("-".into(), |k| format!("{k:.2}")),
            ]
        })
        .collect();
    let mut out = crate::report::table::grid(
        &[
            "rank",
            "candidate",
            "cost/M out tok",
            "answer",
            "output tok/s",
            "instances",
            "fleet $/h",
            "$/h",
            "binding SLA",
            "at answer",
            "knee",
            "bound",
            "kWh/M out tok",
            "fleet kW",
        ],
        &cells,
        2,
    );
    if rows.iter().any(|r| r.tied) {
        out += "=: its range overlaps the row above: their order is not decided by the \
                measurements\n";
    }
    for r in rows.iter().filter(|r| r.rank.is_none()) {
        out += &format!(
            "{}: {}\n",
            r.numbers.label,
            r.numbers
                .failure
                .as_deref()
                .unwrap_or("no number to rank it by (a fleet cost needs a peak)")
        );
    }
    out
}

/// The ranking in few columns (a narrow terminal): each number without its range, ties still
/// marked.
pub fn render_ranking_compact(rows: &[RankedRow]) -> String {
    if rows.is_empty() {
        return "no candidate has finished yet\n".into();
    }
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let n = &r.numbers;
            let v =
                |x: Option<Ranged>, d: usize| x.map_or("-".into(), |x| format!("{:.d$}", x.value));
            vec![
                rank_cell(r),
                n.label.chars().take(28).collect(),
                n.cost_per_million
                    .map_or("-".into(), |x| crate::values::sig3(x.value)),
                v(n.answer, 0),
                n.output_tps
                    .map_or("-".into(), |x| crate::values::sig3(x.value)),
                v(n.instances, 0),
            ]
        })
        .collect();
    crate::report::table::grid(
        &[
            "rank",
            "candidate",
            "cost/M",
            "answer",
            "output tok/s",
            "inst",
        ],
        &cells,
        2,
    )
}

/// The candidates and their states, one line each.
pub fn render_states(rec: &CampaignRecord) -> String {
    let mut out = String::new();
    for (i, c) in rec.candidates.iter().enumerate() {
        out += &format!(
            "{:>2}. {:<12} {}  ({}, {:.2}/h){}\n",
            i + 1,
            c.state.label(),
            c.label,
            c.endpoint,
            c.price_per_hour,
            c.run_dir
                .as_ref()
                .map_or(String::new(), |d| format!("  {}", d.display()))
        );
    }
    out
}

/// `show` of a campaign folder: what it is, its candidates, its ranking.
pub fn render_campaign(rec: &CampaignRecord) -> String {
    let mut out = format!(
        "campaign {}{}\nstarted {}{}, ranked by {}\n\n",
        rec.name,
        rec.description
            .as_deref()
            .map_or(String::new(), |d| format!(": {d}")),
        rec.started_at,
        rec.ended_at
            .as_deref()
            .map_or(" (not finished)".to_string(), |e| format!(", ended {e}")),
        rec.rank_by.label()
    );
    out += &render_states(rec);
    out += "\n";
    out += &render_ranking(&rec.ranking);
    out
}

/// `compare` of two campaign folders: each candidate label of either, with its rank and cost
/// per million in A and in B.
pub fn render_campaign_compare(a: &CampaignRecord, b: &CampaignRecord) -> String {
    let mut labels: Vec<&str> = a.ranking.iter().map(|r| r.numbers.label.as_str()).collect();
    for r in &b.ranking {
        if !labels.contains(&r.numbers.label.as_str()) {
            labels.push(&r.numbers.label);
        }
    }
    let find = |rec: &'_ CampaignRecord, l: &str| {
        rec.ranking.iter().find(|r| r.numbers.label == l).cloned()
    };
    let rank = |r: &Option<RankedRow>| match r {
        Some(RankedRow {
            rank: Some(k),
            tied,
            ..
        }) => format!("{}{k}", if *tied { "=" } else { "" }),
        Some(_) => "-".into(),
        None => "absent".into(),
    };
    let cost = |r: &Option<RankedRow>| {
        r.as_ref()
            .map_or("-".into(), |r| ranged(r.numbers.cost_per_million, 3))
    };
    let rows: Vec<Vec<String>> = labels
        .iter()
        .map(|l| {
            let (ra, rb) = (find(a, l), find(b, l));
            let change = match (
                ra.as_ref().and_then(|r| r.numbers.cost_per_million),
                rb.as_ref().and_then(|r| r.numbers.cost_per_million),
            ) {
                (Some(x), Some(y)) if x.value > 0.0 => {
                    format!("{:+.1} %", (y.value / x.value - 1.0) * 100.0)
                }
                _ => "-".into(),
            };
            vec![
                l.to_string(),
                rank(&ra),
                cost(&ra),
                rank(&rb),
                cost(&rb),
                change,
            ]
        })
        .collect();
    format!(
        "A: campaign {} started {}\nB: campaign {} started {}\n\n{}",
        a.name,
        a.started_at,
        b.name,
        b.started_at,
        crate::report::table::grid(
            &[
                "candidate",
                "rank A",
                "cost/M A",
                "rank B",
                "cost/M B",
                "B vs A"
            ],
            &rows,
            1
        )
    )
}
