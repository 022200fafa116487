//! A campaign resolved against the config: every candidate's search run as a
//! [`LaunchRequest`] (checked by resolving it before any load), or the finished run it names.

use crate::config::campaign::{CampaignEntry, CandidateEntry, SimModelEntry};
use crate::config::file::{load_layered, ConfigFile, EndpointKind, SearchEntry};
use crate::config::overrides::{EndpointOverrides, InputError, RunOverrides, WorkloadOverrides};
use crate::config::search::{entry_slas, SearchOverrides};
use crate::launch::{GateChoice, Launch, LaunchRequest, PlanChoice};
use crate::plan::capacity::{CapacityInputs, Peak};
use std::path::{Path, PathBuf};

/// Where a candidate's numbers come from.
#[derive(Debug, Clone)]
pub enum CandidateSource {
    /// Measured now: an SLA search against its endpoint (or its own simulator).
    Live {
        request: Box<LaunchRequest>,
        sim_model: Option<Box<crate::sim::SimConfig>>,
        /// What the endpoint is, in a few words, for the record (no secrets).
        describe: String,
    },
    /// A finished run folder, ranked as recorded.
    Finished(PathBuf),
}

/// One candidate, resolved.
#[derive(Debug, Clone)]
pub struct Candidate {
    pub label: String,
    pub price_per_hour: f64,
    pub gpus: Option<u32>,
    pub notes: Option<String>,
    pub source: CandidateSource,
}

/// A campaign ready to run.
#[derive(Debug, Clone)]
pub struct CampaignSpec {
    /// The `[campaigns.NAME]` name, or the file's stem.
    pub name: String,
    pub description: Option<String>,
    /// The search plan every candidate runs.
    pub search: SearchOverrides,
    pub workload: WorkloadOverrides,
    pub capacity: CapacityInputs,
    pub candidates: Vec<Candidate>,
}

/// Run settings the command line gives every candidate (`--requests`, `--out`, ...).
#[derive(Debug, Clone, Default)]
pub struct CampaignFlags {
    pub run: RunOverrides,
    /// `--sim-time-scale`: over every simulated candidate's own.
    pub sim_time_scale: Option<f64>,
}

/// The entry `--plan NAME` names in the config.
pub fn entry_from_config(
    config: Option<&Path>,
    name: &str,
) -> anyhow::Result<(CampaignEntry, ConfigFile)> {
    let (cfg, _) = load_layered(config)?;
    let entry = cfg.campaigns.get(name).cloned().ok_or_else(|| {
        crate::config::resolve::unknown("campaign", name, cfg.campaigns.keys().cloned())
    })?;
    Ok((entry, cfg))
}

/// Resolves a campaign: every live candidate's run is resolved as its search would be (an
/// unknown endpoint, profile or search is an error here, before any load).
pub fn resolve(
    name: &str,
    entry: &CampaignEntry,
    config: Option<&Path>,
    flags: &CampaignFlags,
) -> anyhow::Result<CampaignSpec> {
    let (cfg, _) = load_layered(config)?;
    let at = |what: &str| format!("campaign {name}: {what}");
    if entry.candidates.is_empty() {
        return Err(InputError(at(
            "no candidates; add [[candidates]] with a label, an endpoint (or sim, or run) and \
             price_per_hour",
        ))
        .into());
    }
    let sla_entry = SearchEntry {
        e2e_sla_ms: entry.e2e_sla_ms.clone(),
        ttft_sla_ms: entry.ttft_sla_ms.clone(),
        tpot_sla_ms: entry.tpot_sla_ms.clone(),
        error_rate_sla: entry.error_rate_sla.clone(),
        ..SearchEntry::default()
    };
    let slas = entry_slas(name, &sla_entry)
        .map_err(|e| InputError(e.0.replacen("[searches.", "[campaigns.", 1)))?;
    let mut run = flags.run.clone();
    run.requests = run.requests.or(entry.request_count.map(|p| p.0));
    run.max_error_rate = run.max_error_rate.or(entry.max_error_rate.map(|f| f.0));
    let search = SearchOverrides {
        plan: entry.search.clone(),
        slas,
        run,
        min: entry.concurrency_min.map(|p| p.0),
        max: entry.concurrency_max.map(|p| p.0),
        max_iterations: entry.search_max_iterations.map(|p| p.0),
        ..SearchOverrides::default()
    };
    let workload = WorkloadOverrides {
        profile: entry.profile.clone(),
        input_tokens: entry.input_tokens.map(|p| p.0),
        output_tokens: entry.output_tokens.map(|p| p.0),
        ..WorkloadOverrides::default()
    };
    let peaks = [
        entry.peak_concurrency.map(Peak::Concurrency),
        entry.peak_rps.map(Peak::Rps),
        entry.peak_output_tps.map(Peak::OutputTps),
    ];
    let given: Vec<Peak> = peaks.into_iter().flatten().collect();
    if given.len() > 1 {
        return Err(InputError(at(
            "give one of peak_concurrency, peak_rps and peak_output_tps, not several",
        ))
        .into());
    }
    if let Some(Peak::Concurrency(v) | Peak::Rps(v) | Peak::OutputTps(v)) = given.first() {
        if !(v.is_finite() && *v > 0.0) {
            return Err(
                InputError(at(&format!("the peak must be a positive number, got {v}"))).into(),
            );
        }
    }
    let capacity = CapacityInputs {
        peak: given.first().copied(),
        headroom: entry.headroom.map_or(0.2, |f| f.0),
        price_per_hour: None,
    };
    let mut candidates = Vec::new();
    let mut labels = std::collections::HashSet::new();
    for (i, c) in entry.candidates.iter().enumerate() {
        let where_ = format!("candidate {} ({})", i + 1, c.label);
        if c.label.trim().is_empty() {
            return Err(InputError(at(&format!("candidate {} has an empty label", i + 1))).into());
        }
        if !labels.insert(c.label.clone()) {
            return Err(InputError(at(&format!(
                "{where_}: two candidates have this label; labels name the rows of the ranking"
            )))
            .into());
        }
        if !(c.price_per_hour.is_finite() && c.price_per_hour >= 0.0) {
            return Err(InputError(at(&format!(
                "{where_}: price_per_hour must be a number >= 0, got {}",
                c.price_per_hour
            )))
            .into());
        }
        let source = candidate_source(&cfg, c, &search, &workload, capacity, flags)
            .map_err(|m| InputError(at(&format!("{where_}: {m}"))))?;
        if let CandidateSource::Live { request, .. } = &source {
            // resolving is what a search does first: bad names fail here, before any load
            crate::launch::resolve(request, config).map_err(|e| {
                let code_2 = crate::headless::exit::exit_code_for(&e)
                    == crate::headless::exit::EXIT_BAD_INPUT;
                let text = at(&format!("{where_}: {e:#}"));
                if code_2 {
                    anyhow::Error::new(InputError(text))
                } else {
                    anyhow::anyhow!(text)
                }
            })?;
        }
        candidates.push(Candidate {
            label: c.label.clone(),
            price_per_hour: c.price_per_hour,
            gpus: c.gpus.map(|p| p.0),
            notes: c.notes.clone(),
            source,
        });
    }
    Ok(CampaignSpec {
        name: name.to_string(),
        description: entry.description.clone(),
        search,
        workload,
        capacity,
        candidates,
    })
}

fn candidate_source(
    cfg: &ConfigFile,
    c: &CandidateEntry,
    search: &SearchOverrides,
    workload: &WorkloadOverrides,
    capacity: CapacityInputs,
    flags: &CampaignFlags,
) -> Result<CandidateSource, String> {
    let given = [c.endpoint.is_some(), c.sim.is_some(), c.run.is_some()];
    match given.iter().filter(|g| **g).count() {
        1 => {}
        0 => return Err("give one of endpoint, sim or run".into()),
        _ => return Err("give only one of endpoint, sim and run".into()),
    }
    if let Some(run) = &c.run {
        if !run.is_dir() {
            return Err(format!("run {}: no such folder", run.display()));
        }
        return Ok(CandidateSource::Finished(run.clone()));
    }
    let capacity = CapacityInputs {
        price_per_hour: Some(c.price_per_hour),
        ..capacity
    };
    let mut endpoint = EndpointOverrides {
        endpoint: c.endpoint.clone(),
        model: c.model.clone(),
        ..EndpointOverrides::default()
    };
    let (sim_model, describe) = match &c.sim {
        Some(sim) => {
            let name = simulator_endpoint(cfg)?;
            endpoint.endpoint = Some(name);
            endpoint.sim_time_scale = flags.sim_time_scale.or(sim.time_scale);
            let model = sim_config(sim)?;
            let describe = format!(
                "simulator: {} slots, step {} ms + {} ms/seq",
                model.max_num_seqs, model.decode_base_ms, model.decode_per_seq_ms
            );
            (Some(Box::new(model)), describe)
        }
        None => (
            None,
            crate::secrets::redact_url(c.endpoint.as_deref().unwrap_or_default()),
        ),
    };
    Ok(CandidateSource::Live {
        request: Box::new(LaunchRequest {
            plan: PlanChoice::Search(search.clone()),
            endpoint,
            workload: workload.clone(),
            capacity,
            gate: GateChoice::default(),
        }),
        sim_model,
        describe,
    })
}

/// The config's simulator endpoint (`sim` if it is one, else the first of that kind).
fn simulator_endpoint(cfg: &ConfigFile) -> Result<String, String> {
    let is_sim = |n: &str| {
        cfg.endpoints
            .get(n)
            .is_some_and(|e| e.kind == EndpointKind::Simulator)
    };
    if is_sim("sim") {
        return Ok("sim".into());
    }
    cfg.endpoints
        .iter()
        .find(|(_, e)| e.kind == EndpointKind::Simulator)
        .map(|(n, _)| n.clone())
        .ok_or_else(|| {
            "a sim candidate needs an [endpoints.NAME] with kind = \"simulator\" in the config"
                .to_string()
        })
}

/// The simulator's model: its defaults with the candidate's parameters over them, checked
/// as the simulator's flags are; a bad value is named by its key.
fn sim_config(s: &SimModelEntry) -> Result<crate::sim::SimConfig, String> {
    let model = crate::sim::SimModel {
        max_num_seqs: s.max_num_seqs.map(|p| p.0),
        max_num_batched_tokens: s.max_num_batched_tokens.map(|p| p.0),
        kv_cache_tokens: s.kv_cache_tokens,
        decode_base_ms: s.decode_base_ms,
        decode_per_seq_ms: s.decode_per_seq_ms,
        prefill_per_token_ms: s.prefill_per_token_ms,
        noise: s.noise,
        noise_period_ms: s.noise_period_ms,
        seed: s.seed,
        model: s.model.clone(),
        ..crate::sim::SimModel::default()
    };
    crate::sim::SimConfig::with_model(&model).map_err(|e| format!("sim: {}", e.as_key()))
}

impl CandidateSource {
    /// The run this candidate asks for, resolved (live candidates only).
    pub fn launch(&self, config: Option<&Path>) -> anyhow::Result<Option<Launch>> {
        match self {
            CandidateSource::Live {
                request, sim_model, ..
            } => {
                let mut l = crate::launch::resolve(request, config)?;
                l.sim_model = sim_model.as_deref().cloned();
                Ok(Some(l))
            }
            CandidateSource::Finished(_) => Ok(None),
        }
    }

    /// What it is, in a few words.
    pub fn describe(&self) -> String {
        match self {
            CandidateSource::Live { describe, .. } => describe.clone(),
            CandidateSource::Finished(p) => format!("finished run {}", p.display()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A simulated candidate is checked by the simulator's own constructor; its error names
    /// the campaign key (with the value as given, a negative one too).
    #[test]
    fn a_bad_simulated_candidate_names_its_key() {
        let entry = |e: SimModelEntry| sim_config(&e);
        assert_eq!(
            entry(SimModelEntry {
                decode_base_ms: Some(-2.5),
                ..SimModelEntry::default()
            })
            .unwrap_err(),
            "sim: decode_base_ms must be a finite number >= 0, got -2.5"
        );
        assert_eq!(
            entry(SimModelEntry {
                kv_cache_tokens: Some(0),
                ..SimModelEntry::default()
            })
            .unwrap_err(),
            "sim: kv_cache_tokens must be at least 1"
        );
        let ok = entry(SimModelEntry {
            max_num_seqs: Some(crate::values::Positive(16)),
            ..SimModelEntry::default()
        })
        .unwrap();
        assert_eq!(ok.max_num_seqs, 16);
        assert_eq!(
            ok.decode_base_ms,
            crate::sim::SimConfig::default().decode_base_ms
        );
    }
}
