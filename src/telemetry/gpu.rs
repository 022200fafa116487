//! The GPUs' own figures from the exporters people run beside a serving engine: NVIDIA's
//! dcgm-exporter (`DCGM_FI_*` names, one series per GPU labelled `gpu`) and AMD's
//! device-metrics-exporter (`gpu_*` names, labelled `gpu_id`), read from any Prometheus
//! endpoint given as `--gpu-metrics URL`. Units are turned into one set here: percent, MiB,
//! watts and joules.

use super::prometheus::Sample;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One GPU's figures in one scrape; `None`: the exporter does not give it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GpuReading {
    /// The GPU's index as the exporter labels it.
    pub gpu: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub util_pct: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory_used_mib: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub power_w: Option<f64>,
    /// Energy since the exporter's counter began, joules.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub energy_j: Option<f64>,
    /// DCGM's profiling ratios (`DCGM_FI_PROF_*`, 0-1) by name, where the exporter has them.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub profiling: BTreeMap<String, f64>,
}

/// Every GPU of one scrape.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct GpuSample {
    /// Which names matched: `dcgm` or `amd` (read back as that scheme's name; empty for one
    /// no scheme has).
    pub exporter: &'static str,
    pub gpus: Vec<GpuReading>,
}

/// A name scheme: the metric for each figure, the factor to our unit, and the GPU label.
struct Names {
    exporter: &'static str,
    gpu_label: &'static str,
    util: &'static str,
    memory: &'static str,
    power: &'static str,
    energy: &'static str,
    /// Multiplies the energy counter into joules.
    energy_to_j: f64,
    profiling_prefix: Option<&'static str>,
}

const SCHEMES: [Names; 2] = [
    Names {
        exporter: "dcgm",
        gpu_label: "gpu",
        util: "DCGM_FI_DEV_GPU_UTIL",
        memory: "DCGM_FI_DEV_FB_USED",
        power: "DCGM_FI_DEV_POWER_USAGE",
        // millijoules
        energy: "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
        energy_to_j: 1e-3,
        profiling_prefix: Some("DCGM_FI_PROF_"),
    },
    Names {
        exporter: "amd",
        gpu_label: "gpu_id",
        util: "gpu_gfx_activity",
        memory: "gpu_used_vram",
        power: "gpu_power_usage",
        // microjoules
        energy: "gpu_energy_consumed",
        energy_to_j: 1e-6,
        profiling_prefix: None,
    },
];

/// A [`GpuSample`] as it is read back (a served run's events): the exporter by its name.
#[derive(Deserialize)]
struct Wire {
    exporter: String,
    gpus: Vec<GpuReading>,
}

// by hand, through `Wire`: a derived one would hold the input borrowed for the `&'static str`
impl<'de> Deserialize<'de> for GpuSample {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Wire::deserialize(d).map(GpuSample::from)
    }
}

impl From<Wire> for GpuSample {
    fn from(w: Wire) -> Self {
        GpuSample {
            exporter: SCHEMES
                .iter()
                .map(|s| s.exporter)
                .find(|s| *s == w.exporter)
                .unwrap_or(""),
            gpus: w.gpus,
        }
    }
}

/// The GPUs' figures in a scrape, or `None` when it has no names rightsize knows.
pub fn reduce_gpu(samples: &[Sample]) -> Option<GpuSample> {
    for n in &SCHEMES {
        let mut gpus: BTreeMap<String, GpuReading> = BTreeMap::new();
        for s in samples {
            let name = s.name.as_str();
            let is = |want: &str| name.eq_ignore_ascii_case(want);
            let known = [n.util, n.memory, n.power, n.energy].iter().any(|w| is(w))
                || n.profiling_prefix.is_some_and(|p| name.starts_with(p));
            if !known {
                continue;
            }
            let id = s
                .labels
                .iter()
                .find(|(k, _)| k == n.gpu_label)
                .map_or_else(|| "0".to_string(), |(_, v)| v.clone());
            let g = gpus.entry(id.clone()).or_insert_with(|| GpuReading {
                gpu: id,
                ..GpuReading::default()
            });
            let v = s.value;
            if is(n.util) {
                g.util_pct = Some(v);
            } else if is(n.memory) {
                g.memory_used_mib = Some(v);
            } else if is(n.power) {
                g.power_w = Some(v);
            } else if is(n.energy) {
                g.energy_j = Some(v * n.energy_to_j);
            } else {
                g.profiling.insert(name.to_string(), v);
            }
        }
        if !gpus.is_empty() {
            let mut gpus: Vec<GpuReading> = gpus.into_values().collect();
            // "10" after "9"
            gpus.sort_by_key(|g| (g.gpu.parse::<u64>().unwrap_or(u64::MAX), g.gpu.clone()));
            return Some(GpuSample {
                exporter: n.exporter,
                gpus,
            });
        }
    }
    None
}

impl GpuSample {
    /// `f` over every GPU that has it, reduced by `fold`; `None` unless all have it.
    fn all(&self, f: impl Fn(&GpuReading) -> Option<f64>) -> Option<Vec<f64>> {
        self.gpus.iter().map(f).collect::<Option<Vec<f64>>>()
    }

    /// Utilisation averaged over the GPUs, percent.
    pub fn util_pct(&self) -> Option<f64> {
        let v = self.all(|g| g.util_pct)?;
        (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
    }

    /// Memory used, summed over the GPUs, MiB.
    pub fn memory_used_mib(&self) -> Option<f64> {
        Some(self.all(|g| g.memory_used_mib)?.iter().sum())
    }

    /// Power, summed over the GPUs, watts.
    pub fn power_w(&self) -> Option<f64> {
        Some(self.all(|g| g.power_w)?.iter().sum())
    }

    /// Energy counters, summed over the GPUs, joules.
    pub fn energy_j(&self) -> Option<f64> {
        Some(self.all(|g| g.energy_j)?.iter().sum())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::telemetry::prometheus::parse;

    #[test]
    fn dcgm_and_amd_names_in_our_units() {
        let dcgm = reduce_gpu(&parse(
            "DCGM_FI_DEV_GPU_UTIL{gpu=\"1\",UUID=\"b\"} 50\n\
             DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UUID=\"a\"} 100\n\
             DCGM_FI_DEV_FB_USED{gpu=\"0\"} 70000\nDCGM_FI_DEV_FB_USED{gpu=\"1\"} 1000\n\
             DCGM_FI_DEV_POWER_USAGE{gpu=\"0\"} 400.5\nDCGM_FI_DEV_POWER_USAGE{gpu=\"1\"} 99.5\n\
             DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu=\"0\"} 2000\n\
             DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu=\"1\"} 500\n\
             DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu=\"0\"} 0.75\n\
             DCGM_FI_DEV_SM_CLOCK{gpu=\"0\"} 1980\n",
        ))
        .unwrap();
        assert_eq!(dcgm.exporter, "dcgm");
        let ids: Vec<&str> = dcgm.gpus.iter().map(|g| g.gpu.as_str()).collect();
        assert_eq!(ids, ["0", "1"]);
        assert_eq!(dcgm.util_pct(), Some(75.0));
        assert_eq!(dcgm.memory_used_mib(), Some(71000.0));
        assert_eq!(dcgm.power_w(), Some(500.0));
        // millijoules to joules
        assert_eq!(dcgm.energy_j(), Some(2.5));
        assert_eq!(
            dcgm.gpus[0].profiling.get("DCGM_FI_PROF_GR_ENGINE_ACTIVE"),
            Some(&0.75)
        );
        let amd = reduce_gpu(&parse(
            "gpu_gfx_activity{gpu_id=\"0\"} 30\ngpu_power_usage{gpu_id=\"0\"} 550\n\
             gpu_energy_consumed{gpu_id=\"0\"} 3000000\ngpu_used_vram{gpu_id=\"0\"} 120000\n",
        ))
        .unwrap();
        assert_eq!(
            (
                amd.exporter,
                amd.util_pct(),
                amd.power_w(),
                amd.energy_j(),
                amd.memory_used_mib()
            ),
            ("amd", Some(30.0), Some(550.0), Some(3.0), Some(120000.0))
        );
        // a GPU without a figure: the sum is not claimed
        let partial = reduce_gpu(&parse(
            "DCGM_FI_DEV_POWER_USAGE{gpu=\"0\"} 1\nDCGM_FI_DEV_GPU_UTIL{gpu=\"1\"} 5\n",
        ))
        .unwrap();
        assert_eq!(partial.power_w(), None);
        assert_eq!(reduce_gpu(&parse("vllm:num_requests_running 1\n")), None);
    }
}
