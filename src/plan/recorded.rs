//! Reading a recorded plan back: the `plan` object of a run's `run.json` into the
//! [`Analysis`] it was run with, so a past (or imported) run is analysed exactly as a live one.

use super::capacity::{CapacityInputs, Peak};
use super::search_config::SearchConfig;
use super::Analysis;
use crate::plan::judge::{SlaSet, DEFAULT_MAX_ERROR_RATE};
use crate::record::sla::{parse_statistic, SlaMetric, SlaThreshold};
use serde_json::Value;

fn metric(name: &str) -> Option<SlaMetric> {
    match name {
        "ttft" => Some(SlaMetric::Ttft),
        "tpot" => Some(SlaMetric::Tpot),
        "e2e" => Some(SlaMetric::E2e),
        "error_rate" => Some(SlaMetric::ErrorRate),
        _ => None,
    }
}

/// The SLAs in a recorded plan (`"slas": [{"metric", "stat", "limit"}]`); unreadable entries
/// are skipped.
pub fn slas(plan: &Value) -> SlaSet {
    let list = plan.get("slas").and_then(Value::as_array);
    SlaSet(
        list.into_iter()
            .flatten()
            .filter_map(|t| {
                Some(SlaThreshold {
                    metric: metric(t.get("metric")?.as_str()?)?,
                    stat: parse_statistic(t.get("stat")?.as_str()?).ok()?,
                    limit: t.get("limit")?.as_f64()?,
                })
            })
            .collect(),
    )
}

/// The capacity inputs a run was read with, from its `summary.json`'s right-size (the peak,
/// the headroom, and the price per instance-hour as its cost per hour over its instances):
/// `run.json` does not record them, and without them `show`, the report and the dashboard
/// would drop the right-size and the peak warning the run printed.
pub fn capacity(summary: &Value) -> Option<CapacityInputs> {
    let r = summary.get("planning")?.get("right_size")?;
    let value = r.get("peak")?.get("value")?.as_f64()?;
    let peak = match r.get("peak")?.get("unit")?.as_str()? {
        "concurrency" => Peak::Concurrency(value),
        "rps" => Peak::Rps(value),
        "output_tps" => Peak::OutputTps(value),
        _ => return None,
    };
    let instances = r.get("instances").and_then(Value::as_f64);
    let price_per_hour = r
        .get("cost_per_hour")
        .and_then(Value::as_f64)
        .zip(instances.filter(|n| *n > 0.0))
        .map(|(c, n)| c / n);
    Some(CapacityInputs {
        peak: Some(peak),
        headroom: r.get("headroom").and_then(Value::as_f64).unwrap_or(0.2),
        price_per_hour,
    })
}

/// The analysis a recorded plan asks for (capacity inputs are not in the plan: see
/// [`capacity`]).
pub fn analysis(plan: &Value) -> Analysis {
    let search = (plan.get("kind").and_then(Value::as_str) == Some("search")).then(|| {
        let d = SearchConfig::default();
        let num = |k: &str| plan.get(k).and_then(Value::as_u64).map(|v| v as u32);
        SearchConfig {
            min: num("concurrency_min").unwrap_or(d.min),
            max: num("concurrency_max").unwrap_or(d.max),
            max_iterations: num("search_max_iterations").unwrap_or(d.max_iterations),
            tolerance: plan
                .get("tolerance")
                .and_then(Value::as_f64)
                .unwrap_or(d.tolerance),
            confirm: plan
                .get("confirm")
                .and_then(Value::as_bool)
                .unwrap_or(d.confirm),
            max_requests_per_level: num("max_requests_per_level"),
        }
    });
    Analysis {
        slas: slas(plan),
        // runs recorded before the limit existed get the default one
        max_error_rate: plan
            .get("max_error_rate")
            .and_then(Value::as_f64)
            .unwrap_or(DEFAULT_MAX_ERROR_RATE),
        search,
        ..Analysis::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn capacity_comes_back_from_the_right_size() {
        let s = json!({"planning": {"right_size": {"peak": {"unit": "concurrency", "value": 100.0},
            "headroom": 0.3, "instances": 15, "cost_per_hour": 60.0}}});
        assert_eq!(
            capacity(&s),
            Some(CapacityInputs {
                peak: Some(Peak::Concurrency(100.0)),
                headroom: 0.3,
                price_per_hour: Some(4.0),
            })
        );
        assert_eq!(capacity(&json!({"planning": {"right_size": null}})), None);
    }

    #[test]
    fn round_trips_what_the_planners_record() {
        let live = Analysis {
            slas: SlaSet(vec![
                SlaThreshold::parse(SlaMetric::E2e, "50s").unwrap(),
                SlaThreshold::parse(SlaMetric::Ttft, "p99:800ms").unwrap(),
                SlaThreshold::parse(SlaMetric::ErrorRate, "0.01").unwrap(),
            ]),
            search: Some(SearchConfig {
                min: 8,
                max: 512,
                max_iterations: 7,
                tolerance: 0.05,
                confirm: false,
                max_requests_per_level: Some(2048),
            }),
            max_error_rate: 0.05,
            ..Analysis::default()
        };
        let plan = json!({
            "kind": "search",
            "concurrency_min": 8,
            "concurrency_max": 512,
            "search_max_iterations": 7,
            "tolerance": 0.05,
            "confirm": false,
            "max_requests_per_level": 2048,
            "max_error_rate": 0.05,
            "slas": live.slas,
        });
        assert_eq!(analysis(&plan), live);
        let sweep = json!({"kind": "sweep", "concurrency": [16, 64]});
        assert_eq!(analysis(&sweep), Analysis::default());
    }
}
