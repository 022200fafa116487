//! The workload's source settings (tokenizer, dataset, sampling, calibration) from the
//! profile and the flags, flags winning; loading them turns a missing or malformed file into
//! bad input naming the file and line. See `docs/workloads.md`.

use super::file::{EndpointEntry, ProfileEntry};
use super::resolve::{EndpointTarget, InputError, WorkloadOverrides};
use crate::workload::dataset::{DatasetFormat, DatasetSpec, LengthFilter, Sampling};
use crate::workload::WorkloadSpec;

/// The dataset the flags or the profile name, if any.
pub(crate) fn dataset_spec(
    profile: &str,
    p: &ProfileEntry,
    o: &WorkloadOverrides,
) -> Result<Option<DatasetSpec>, InputError> {
    let Some(path) = o.dataset.clone().or_else(|| p.dataset.clone()) else {
        return Ok(None);
    };
    let in_profile = |key: &str, e: String| InputError(format!("profile `{profile}`: {key}: {e}"));
    let format = match (o.dataset_format, &p.dataset_format) {
        (Some(f), _) => Some(f),
        (None, Some(s)) => {
            Some(DatasetFormat::parse(s).map_err(|e| in_profile("dataset_format", e))?)
        }
        (None, None) => None,
    };
    let sampling = match (o.sampling, &p.dataset_sampling) {
        (Some(s), _) => s,
        (None, Some(s)) => Sampling::parse(s).map_err(|e| in_profile("dataset_sampling", e))?,
        (None, None) => Sampling::InOrder,
    };
    let mut spec = DatasetSpec::new(&path.display().to_string());
    spec.format = format;
    spec.sampling = sampling;
    if let Some(b) = o.block_tokens.or(p.block_tokens.map(|b| b.0)) {
        spec.block_tokens = b;
    }
    spec.filter = LengthFilter {
        min_input: o.filter.min_input.or(p.dataset_min_input),
        max_input: o.filter.max_input.or(p.dataset_max_input),
        min_output: o.filter.min_output.or(p.dataset_min_output),
        max_output: o.filter.max_output.or(p.dataset_max_output),
    };
    Ok(Some(spec))
}

/// Loads the workload's tokenizer and dataset.
pub(crate) fn load(w: WorkloadSpec) -> Result<WorkloadSpec, InputError> {
    w.load().map_err(|e| InputError(e.to_string()))
}

/// Calibration is on for HTTP endpoints and off for the simulator unless the flag or the
/// endpoint's `calibrate` says otherwise.
pub(crate) fn set_calibrate(
    w: &mut WorkloadSpec,
    o: &WorkloadOverrides,
    entry: Option<&EndpointEntry>,
    target: &EndpointTarget,
) {
    let default = matches!(target, EndpointTarget::Remote(_));
    w.calibrate = o
        .calibrate
        .or(entry.and_then(|e| e.calibrate))
        .unwrap_or(default);
}
