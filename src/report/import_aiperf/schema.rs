//! The parts of an AIPerf export whose place changed between schemas: the older one records
//! the load in `input_config.loadgen` (`concurrency`, `request_count`); 0.13 records it per
//! phase in `input_config.phases[]` (the `profiling` phase's `type`, `concurrency` or request
//! rate), names the model in `input_config.models.items[].name`, the URL in
//! `input_config.endpoint.urls[]`, and the lengths in `input_config.datasets[].prompts.isl` /
//! `osl` (see docs/export.md, "Importing AIPerf").

use serde_json::Value;

/// The profiling phase of a 0.13 `input_config`: the phase named or typed `profiling`, else
/// the last phase that is not a warmup.
pub fn phase_of(input_config: &Value) -> Option<&Value> {
    let phases = input_config.get("phases")?.as_array()?;
    let is = |p: &Value, what: &str| {
        ["name", "type", "phase"]
            .iter()
            .any(|k| p.get(*k).and_then(Value::as_str) == Some(what))
    };
    phases
        .iter()
        .find(|p| is(p, "profiling"))
        .or_else(|| phases.iter().rev().find(|p| !is(p, "warmup")))
}

/// The profiling phase of a whole export.
pub fn profiling_phase(export: &Value) -> Option<&Value> {
    phase_of(export.get("input_config")?)
}

/// A phase's request rate (requests/s), if it sends at a rate.
pub fn phase_rate(phase: &Value) -> Option<f64> {
    ["request_rate", "rate"]
        .iter()
        .find_map(|k| phase.get(*k).and_then(Value::as_f64))
}

/// A length: a number, or an object with its `mean`.
fn length(v: Option<&Value>) -> Option<u64> {
    let v = v?;
    v.as_f64()
        .or_else(|| v.get("mean").and_then(Value::as_f64))
        .map(|x| x.round() as u64)
}

/// Mean input and output lengths of the first dataset's prompts (0.13).
pub fn lengths(input_config: &Value) -> (Option<u64>, Option<u64>) {
    let prompts = input_config.pointer("/datasets/0/prompts");
    (
        length(prompts.and_then(|p| p.get("isl"))),
        length(prompts.and_then(|p| p.get("osl"))),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_profiling_phase_and_the_lengths() {
        let cfg = json!({
            "phases": [
                {"type": "warmup", "concurrency": 4},
                {"type": "profiling", "concurrency": 64, "request_count": 640}
            ],
            "datasets": [{"prompts": {"isl": {"mean": 1024, "stddev": 0}, "osl": 256}}]
        });
        assert_eq!(phase_of(&cfg).unwrap()["concurrency"], 64);
        assert_eq!(lengths(&cfg), (Some(1024), Some(256)));
        let rate = json!({"phases": [{"name": "profiling", "request_rate": 12.5}]});
        assert_eq!(phase_of(&rate).and_then(phase_rate), Some(12.5));
        assert!(phase_of(&json!({"loadgen": {"concurrency": 8}})).is_none());
    }
}
