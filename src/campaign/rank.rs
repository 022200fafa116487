//! The ranking (docs/campaigns.md): per candidate the numbers at its SLA answer, each with the
//! range its confidence intervals allow; candidates sorted by one of them, neighbours whose
//! ranges overlap shown as tied, candidates with no answer last with the reason. Pure.

use crate::plan::analysis::RunAnalysis;
use crate::plan::capacity::capacity_at;
use crate::record::sla::{fmt_value, SlaMetric, Verdict};
use serde::{Deserialize, Serialize};

/// What the ranking sorts by (`--rank-by`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum RankBy {
    /// Cost per million output tokens at the answer, lowest first
    CostPerMillion,
    /// Cost per hour of the fleet the peak needs, lowest first (needs a peak)
    FleetCost,
    /// Output tokens/s of one instance at the answer, highest first
    Throughput,
    /// The binding SLA's statistic at the answer, lowest first
    Latency,
}

impl RankBy {
    /// The column name.
    pub fn label(self) -> &'static str {
        match self {
            RankBy::CostPerMillion => "cost per million output tokens",
            RankBy::FleetCost => "fleet cost per hour",
            RankBy::Throughput => "output tok/s at the answer",
            RankBy::Latency => "SLA statistic at the answer",
        }
    }
}

/// A value with the range its confidence intervals allow (`[low, high]`, low <= high). An
/// unbounded end is written `null` (JSON has no infinity) and read back as infinite.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Ranged {
    pub value: f64,
    #[serde(with = "unbounded_ends")]
    pub range: [f64; 2],
}

/// `[low, high]` with `null` for an end that is not bounded (`-inf`, `+inf`).
mod unbounded_ends {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(r: &[f64; 2], s: S) -> Result<S::Ok, S::Error> {
        r.map(|v| v.is_finite().then_some(v)).serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<[f64; 2], D::Error> {
        let [lo, hi] = <[Option<f64>; 2]>::deserialize(d)?;
        Ok([lo.unwrap_or(f64::NEG_INFINITY), hi.unwrap_or(f64::INFINITY)])
    }
}

impl Ranged {
    fn point(v: f64) -> Ranged {
        Ranged {
            value: v,
            range: [v, v],
        }
    }

    fn overlaps(&self, o: &Ranged) -> bool {
        self.range[0] <= o.range[1] && o.range[0] <= self.range[1]
    }
}

/// One candidate's numbers at its SLA answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CandidateNumbers {
    pub label: String,
    pub price_per_hour: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpus: Option<u32>,
    /// The highest concurrency meeting every SLA, with where the SLA boundary may lie.
    pub answer: Option<Ranged>,
    /// Output tokens/s of one instance at the answer.
    pub output_tps: Option<Ranged>,
    /// price per hour / (output tokens/s x 3600) x 1e6.
    pub cost_per_million: Option<Ranged>,
    /// Instances for the peak (with headroom), and the cost per hour of that fleet.
    pub instances: Option<Ranged>,
    pub fleet_cost_per_hour: Option<Ranged>,
    /// The SLA that stops the answer from going higher, e.g. `p99 request_latency <= 8 s`.
    pub binding_sla: Option<String>,
    /// That SLA's statistic at the answer (ms, or a fraction for the error rate).
    pub sla_at_answer: Option<Ranged>,
    /// The metric of `sla_at_answer`, for formatting.
    pub sla_metric: Option<SlaMetric>,
    pub knee: Option<u32>,
    /// What bounds the server past its knee (`batch slots`, `KV-cache memory`, `compute`,
    /// `not known`), from its recorded telemetry; absent in campaigns from before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bound: Option<String>,
    /// The GPUs' energy per million output tokens at the answer (kWh), when the candidate's
    /// GPU metrics were read; absent in campaigns from before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kwh_per_million: Option<f64>,
    /// The fleet's GPU power for the peak (kW, so kWh an hour), beside its cost.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fleet_power_kw: Option<f64>,
    /// Why there is no answer.
    pub failure: Option<String>,
}

/// The GPUs' kWh per million output tokens at concurrency `c`: the mean over the complete
/// levels measured there that have it.
pub fn kwh_per_million_at(levels: &[crate::metrics::LevelSummary], c: u32) -> Option<f64> {
    let v: Vec<f64> = levels
        .iter()
        .filter(|l| !l.partial && l.load() == c)
        .filter_map(|l| {
            l.server
                .as_ref()?
                .gpu
                .as_ref()?
                .kwh_per_million_output_tokens
        })
        .collect();
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// One row of the ranking.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankedRow {
    /// 1 for the best; tied candidates share the rank of the first of them; `None` for a
    /// candidate without an answer.
    pub rank: Option<u32>,
    /// Its range overlaps the previous row's: their order is not decided.
    pub tied: bool,
    #[serde(flatten)]
    pub numbers: CandidateNumbers,
}

/// The numbers of one candidate from its run's analysis (analysed with the campaign's SLAs,
/// peak and the candidate's price).
pub fn numbers(
    label: &str,
    price_per_hour: f64,
    gpus: Option<u32>,
    a: &RunAnalysis,
) -> CandidateNumbers {
    let mut n = CandidateNumbers {
        label: label.to_string(),
        price_per_hour,
        gpus,
        answer: None,
        output_tps: None,
        cost_per_million: None,
        instances: None,
        fleet_cost_per_hour: None,
        binding_sla: None,
        sla_at_answer: None,
        sla_metric: None,
        knee: a.knee.as_ref().map(|k| k.concurrency),
        bound: a.bound.as_ref().map(|b| b.kind.label().to_string()),
        kwh_per_million: None,
        fleet_power_kw: a
            .planning
            .right_size
            .as_ref()
            .and_then(|r| r.fleet_power_kw),
        failure: None,
    };
    let Some(ans) = a.answer else {
        n.failure = Some(failure_reason(a));
        return n;
    };
    let c = ans.concurrency as f64;
    let answer_range = a
        .boundary
        .map(|b| [b.low.min(c), b.high.max(c)])
        .unwrap_or([c, c]);
    n.answer = Some(Ranged {
        value: c,
        range: answer_range,
    });
    // throughput where the boundary's two ends lie, read off the measured curve
    let curve: Vec<(f64, f64, f64)> = curve(a);
    let tps_at = |x: f64| capacity_at(&curve, x).map(|p| p.0);
    let lo = tps_at(answer_range[0]).unwrap_or(ans.output_tps);
    let hi = tps_at(answer_range[1]).unwrap_or(ans.output_tps);
    let tps = Ranged {
        value: ans.output_tps,
        range: [
            lo.min(hi).min(ans.output_tps),
            lo.max(hi).max(ans.output_tps),
        ],
    };
    n.output_tps = Some(tps);
    let per_million = |t: f64| price_per_hour / (t * 3600.0) * 1e6;
    if tps.value > 0.0 {
        n.cost_per_million = Some(Ranged {
            value: per_million(tps.value),
            range: [
                per_million(tps.range[1]),
                per_million(tps.range[0].max(1e-9)),
            ],
        });
    }
    if let Some(r) = &a.planning.right_size {
        let [few, many] = r.instances_range.unwrap_or([r.instances, r.instances]);
        n.instances = Some(Ranged {
            value: r.instances as f64,
            range: [few as f64, many as f64],
        });
        n.fleet_cost_per_hour = Some(Ranged {
            value: r.instances as f64 * price_per_hour,
            range: [few as f64 * price_per_hour, many as f64 * price_per_hour],
        });
    }
    let binding = a
        .search
        .as_ref()
        .and_then(|s| s.binding_sla.as_ref())
        .map(|b| b.threshold)
        .or_else(|| a.slas.0.first().copied());
    if let Some(t) = binding {
        n.binding_sla = Some(t.describe());
        n.sla_metric = Some(t.metric);
        let check = a
            .iterations
            .iter()
            .filter(|r| r.concurrency == ans.concurrency && !r.partial)
            .flat_map(|r| r.slas.iter())
            .find(|s| s.threshold == t);
        n.sla_at_answer = check.and_then(|s| {
            let v = s.observed?;
            let lo = s.ci.and_then(|i| i.0).unwrap_or(v);
            let hi = s.ci.and_then(|i| i.1).unwrap_or(v);
            let range = [lo.min(v), hi.max(v)];
            Some(Ranged { value: v, range })
        });
    }
    n
}

/// (concurrency, output tok/s, req/s) of the complete, held levels, one point per
/// concurrency (the last measurement), sorted.
fn curve(a: &RunAnalysis) -> Vec<(f64, f64, f64)> {
    let mut pts: Vec<(f64, f64, f64)> = Vec::new();
    for r in a.iterations.iter().filter(|r| r.held && !r.partial) {
        let c = r.concurrency as f64;
        pts.retain(|p| p.0 != c);
        pts.push((c, r.output_tps, 0.0));
    }
    pts.sort_by(|x, y| x.0.total_cmp(&y.0));
    pts
}

/// Why a run has no answer, in one line.
fn failure_reason(a: &RunAnalysis) -> String {
    let complete: Vec<_> = a.iterations.iter().filter(|r| !r.partial).collect();
    let Some(lowest) = complete.iter().min_by_key(|r| r.concurrency) else {
        return "no level finished".into();
    };
    if let Some(s) = a
        .skipped
        .iter()
        .find(|s| s.concurrency == lowest.concurrency)
    {
        return format!(
            "no level met the SLA; at the lowest ({}): {}",
            lowest.concurrency, s.reason
        );
    }
    let broke = lowest
        .slas
        .iter()
        .find(|s| s.verdict == Verdict::Fail)
        .or_else(|| lowest.slas.iter().find(|s| s.verdict != Verdict::Pass));
    match broke {
        Some(s) => format!(
            "no level met the SLA; at the lowest ({}): {} was {} ({})",
            lowest.concurrency,
            s.threshold.describe(),
            s.observed
                .map_or("-".into(), |v| fmt_value(s.threshold.metric, v)),
            s.verdict.label()
        ),
        None => format!(
            "no level met the SLA (the lowest measured was {})",
            lowest.concurrency
        ),
    }
}

/// The key a row sorts by, oriented so that lower is better.
fn key(n: &CandidateNumbers, by: RankBy) -> Option<Ranged> {
    let neg = |r: Ranged| Ranged {
        value: -r.value,
        range: [-r.range[1], -r.range[0]],
    };
    match by {
        RankBy::CostPerMillion => n.cost_per_million,
        RankBy::FleetCost => n.fleet_cost_per_hour,
        RankBy::Throughput => n.output_tps.map(neg),
        RankBy::Latency => n.sla_at_answer,
    }
}

/// Sorts the candidates by `by`: those with a key best first (ties in the estimate keep the
/// given order), then those without one (no answer, or no number for this key) in the given
/// order. A row is tied with the one before it when their ranges overlap.
pub fn rank(candidates: Vec<CandidateNumbers>, by: RankBy) -> Vec<RankedRow> {
    let (mut keyed, rest): (Vec<_>, Vec<_>) = candidates
        .into_iter()
        .map(|n| (key(&n, by), n))
        .partition(|(k, _)| k.is_some());
    keyed.sort_by(|a, b| {
        let (ka, kb) = (
            a.0.unwrap_or(Ranged::point(0.0)),
            b.0.unwrap_or(Ranged::point(0.0)),
        );
        ka.value.total_cmp(&kb.value)
    });
    let mut rows = Vec::new();
    let mut prev: Option<(Ranged, u32)> = None;
    for (i, (k, n)) in keyed.into_iter().enumerate() {
        let k = k.unwrap_or(Ranged::point(0.0));
        let tied = prev.is_some_and(|(p, _)| p.overlaps(&k));
        let rank = match prev {
            Some((_, r)) if tied => r,
            _ => i as u32 + 1,
        };
        prev = Some((k, rank));
        rows.push(RankedRow {
            rank: Some(rank),
            tied,
            numbers: n,
        });
    }
    rows.extend(rest.into_iter().map(|(_, n)| RankedRow {
        rank: None,
        tied: false,
        numbers: n,
    }));
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unbounded_range_end_round_trips_as_null() {
        let r = Ranged {
            value: 16.0,
            range: [16.0, f64::INFINITY],
        };
        let text = serde_json::to_string(&r).unwrap();
        assert_eq!(text, r#"{"value":16.0,"range":[16.0,null]}"#);
        assert_eq!(serde_json::from_str::<Ranged>(&text).unwrap(), r);
        let low: Ranged = serde_json::from_str(r#"{"value":1.0,"range":[null,2.0]}"#).unwrap();
        assert_eq!(low.range, [f64::NEG_INFINITY, 2.0]);
    }

    fn cand(label: &str, cost: Option<[f64; 3]>) -> CandidateNumbers {
        CandidateNumbers {
            label: label.into(),
            price_per_hour: 1.0,
            gpus: None,
            answer: cost.map(|_| Ranged::point(64.0)),
            output_tps: None,
            cost_per_million: cost.map(|[v, lo, hi]| Ranged {
                value: v,
                range: [lo, hi],
            }),
            instances: None,
            fleet_cost_per_hour: None,
            binding_sla: None,
            sla_at_answer: None,
            sla_metric: None,
            knee: None,
            bound: None,
            kwh_per_million: None,
            fleet_power_kw: None,
            failure: cost.is_none().then(|| "no level met the SLA".to_string()),
        }
    }

    fn order(rows: &[RankedRow]) -> Vec<(Option<u32>, bool, &str)> {
        rows.iter()
            .map(|r| (r.rank, r.tied, r.numbers.label.as_str()))
            .collect()
    }

    #[test]
    fn cheapest_first_overlaps_tied_failures_last() {
        let rows = rank(
            vec![
                cand("dead", None),
                cand("c", Some([0.9, 0.85, 0.95])),
                cand("a", Some([0.30, 0.28, 0.33])),
                cand("b", Some([0.32, 0.31, 0.36])),
            ],
            RankBy::CostPerMillion,
        );
        assert_eq!(
            order(&rows),
            vec![
                (Some(1), false, "a"),
                (Some(1), true, "b"),
                (Some(3), false, "c"),
                (None, false, "dead"),
            ]
        );
    }

    #[test]
    fn a_chain_of_overlaps_keeps_the_first_rank_and_disjoint_ranges_are_decided() {
        let rows = rank(
            vec![
                cand("x", Some([1.0, 0.9, 1.1])),
                cand("y", Some([1.15, 1.05, 1.25])),
                cand("z", Some([1.3, 1.2, 1.4])),
                cand("w", Some([2.0, 1.9, 2.1])),
            ],
            RankBy::CostPerMillion,
        );
        assert_eq!(
            order(&rows),
            vec![
                (Some(1), false, "x"),
                (Some(1), true, "y"),
                (Some(1), true, "z"),
                (Some(4), false, "w"),
            ]
        );
    }

    #[test]
    fn throughput_ranks_highest_first() {
        let mut a = cand("a", Some([1.0, 1.0, 1.0]));
        a.output_tps = Some(Ranged {
            value: 100.0,
            range: [90.0, 110.0],
        });
        let mut b = cand("b", Some([2.0, 2.0, 2.0]));
        b.output_tps = Some(Ranged {
            value: 300.0,
            range: [280.0, 320.0],
        });
        let rows = rank(vec![a, b], RankBy::Throughput);
        assert_eq!(
            order(&rows),
            vec![(Some(1), false, "b"), (Some(2), false, "a")]
        );
    }
}
