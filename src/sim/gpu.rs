//! The simulator's modelled GPU and its NVIDIA DCGM exporter: power that rises with the share of
//! each step spent on per-sequence and prefill work, energy as power integrated over the
//! model's time, utilisation as the busy share of the last second, and the frame buffer vLLM
//! reserves at start. Served at `/dcgm/metrics` with the names and units of dcgm-exporter, so
//! `--gpu-metrics` is tested against it.
//!
//! Everything is in model time: at `--time-scale 20` one wall second is 20 model seconds, and
//! the energy counter grows by 20 seconds' worth of power in it. Joules per token therefore do
//! not depend on the time scale.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};

/// Power with nothing to run, watts (an H100 SXM at rest).
pub const IDLE_W: f64 = 70.0;
/// Power at the board limit, watts.
pub const MAX_W: f64 = 700.0;
/// The share of the span from idle to the limit a step draws however small its batch (the
/// weights are read from memory every step).
const FLOOR_SHARE: f64 = 0.3;
/// Frame buffer of the modelled GPU, MiB (80 GB HBM3).
pub const MEMORY_TOTAL_MIB: u64 = 81_559;
/// What the serving engine reserves at start (vLLM's default `gpu_memory_utilization`).
const MEMORY_RESERVED_SHARE: f64 = 0.9;
/// Utilisation is the busy share of about this much model time, seconds.
const UTIL_WINDOW_S: f64 = 1.0;
/// The modelled card's name, as dcgm-exporter labels it.
pub const MODEL_NAME: &str = "NVIDIA H100 80GB HBM3 (simulated)";

/// The power a step draws, watts: idle plus a share of the span to the limit that grows with
/// the part of the step spent on per-sequence and prefill work (`work_ms` of `step_ms`). A
/// step's power does not change with `--gpu-idle-watts`, which sets only the power at rest.
pub fn step_power_w(step_ms: f64, work_ms: f64) -> f64 {
    let busy = if step_ms > 0.0 {
        (work_ms / step_ms).clamp(0.0, 1.0)
    } else {
        0.0
    };
    IDLE_W + (MAX_W - IDLE_W) * (FLOOR_SHARE + (1.0 - FLOOR_SHARE) * busy)
}

/// The GPU's counters, written by the scheduler thread only, read by the HTTP tasks.
#[derive(Debug)]
pub struct GpuMeter {
    /// Energy since start, millijoules (`f64` bits), up to `at_ns`.
    energy_mj: AtomicU64,
    /// Power of the last step, watts (`f64` bits).
    power_w: AtomicU64,
    /// Busy share of the last [`UTIL_WINDOW_S`], 0-1 (`f64` bits), as of `at_ns`.
    util: AtomicU64,
    /// Real time (ns, the process clock) the figures above are as of.
    at_ns: AtomicU64,
    /// No step is running: power is idle and energy grows at `idle_w` since `at_ns`.
    idle: AtomicBool,
    /// Power with nothing to run, watts (`f64` bits; [`IDLE_W`] unless the simulator is told
    /// otherwise).
    idle_w: AtomicU64,
}

impl Default for GpuMeter {
    /// At rest from now.
    fn default() -> Self {
        GpuMeter::new(crate::clock::now_ns())
    }
}

fn load(a: &AtomicU64) -> f64 {
    f64::from_bits(a.load(Relaxed))
}

fn store(a: &AtomicU64, v: f64) {
    a.store(v.to_bits(), Relaxed);
}

/// One reading of the GPU, as of a moment.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GpuReading {
    pub energy_mj: f64,
    pub power_w: f64,
    pub util: f64,
}

impl GpuMeter {
    /// A GPU at rest from `now_ns`.
    pub fn new(now_ns: u64) -> Self {
        GpuMeter {
            energy_mj: AtomicU64::new(0f64.to_bits()),
            power_w: AtomicU64::new(IDLE_W.to_bits()),
            util: AtomicU64::new(0f64.to_bits()),
            at_ns: AtomicU64::new(now_ns),
            idle: AtomicBool::new(true),
            idle_w: AtomicU64::new(IDLE_W.to_bits()),
        }
    }

    /// Sets the power drawn with nothing to run (before the first request).
    pub fn set_idle_w(&self, watts: f64) {
        store(&self.idle_w, watts);
        store(&self.power_w, watts);
    }

    /// The reading at real time `now_ns`, the idle time since the last step counted in.
    pub fn reading(&self, now_ns: u64, time_scale: f64) -> GpuReading {
        let (energy, power, util) = (load(&self.energy_mj), load(&self.power_w), load(&self.util));
        if !self.idle.load(Relaxed) {
            return GpuReading {
                energy_mj: energy,
                power_w: power,
                util,
            };
        }
        let idle_s = now_ns.saturating_sub(self.at_ns.load(Relaxed)) as f64 / 1e9 * time_scale;
        let idle_w = load(&self.idle_w);
        GpuReading {
            energy_mj: energy + idle_w * idle_s * 1e3,
            power_w: idle_w,
            util: util * (-idle_s / UTIL_WINDOW_S).exp(),
        }
    }

    /// The scheduler wakes at `now_ns` after an idle spell: the spell's energy is added.
    pub fn wake(&self, now_ns: u64, time_scale: f64) {
        let r = self.reading(now_ns, time_scale);
        store(&self.energy_mj, r.energy_mj);
        store(&self.util, r.util);
        self.at_ns.store(now_ns, Relaxed);
        self.idle.store(false, Relaxed);
    }

    /// A step of `model_ms` at `watts` ended at `now_ns`; `idle_after`: nothing is left to run.
    pub fn step(&self, model_ms: f64, watts: f64, now_ns: u64, idle_after: bool) {
        store(&self.energy_mj, load(&self.energy_mj) + watts * model_ms);
        store(
            &self.power_w,
            if idle_after {
                load(&self.idle_w)
            } else {
                watts
            },
        );
        let keep = (-model_ms / 1e3 / UTIL_WINDOW_S).exp();
        store(&self.util, load(&self.util) * keep + (1.0 - keep));
        self.at_ns.store(now_ns, Relaxed);
        self.idle.store(idle_after, Relaxed);
    }
}

/// The reading as dcgm-exporter writes it for GPU 0: utilisation (%), frame buffer used and
/// free (MiB), power (W), energy since start (mJ, a counter) and the profiling engine-active
/// ratio.
pub fn render_dcgm(r: &GpuReading) -> String {
    let used = (MEMORY_TOTAL_MIB as f64 * MEMORY_RESERVED_SHARE).round() as u64;
    let labels = format!(
        "gpu=\"0\",UUID=\"GPU-5157e000-0000-4000-8000-000000000000\",device=\"nvidia0\",\
         modelName=\"{MODEL_NAME}\",Hostname=\"rightsize-sim\""
    );
    super::exposition::write(
        &[
            (
                "DCGM_FI_DEV_GPU_UTIL",
                "gauge",
                "GPU utilization (in %).",
                format!("{}", (r.util * 100.0).round() as u64),
            ),
            (
                "DCGM_FI_DEV_FB_FREE",
                "gauge",
                "Framebuffer memory free (in MiB).",
                (MEMORY_TOTAL_MIB - used).to_string(),
            ),
            (
                "DCGM_FI_DEV_FB_USED",
                "gauge",
                "Framebuffer memory used (in MiB).",
                used.to_string(),
            ),
            (
                "DCGM_FI_DEV_POWER_USAGE",
                "gauge",
                "Power draw (in W).",
                format!("{:.3}", r.power_w),
            ),
            (
                "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
                "counter",
                "Total energy consumption since boot (in mJ).",
                format!("{}", r.energy_mj.round() as u64),
            ),
            (
                "DCGM_FI_PROF_GR_ENGINE_ACTIVE",
                "gauge",
                "Ratio of time the graphics engine is active.",
                format!("{:.6}", r.util),
            ),
        ],
        &labels,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn power_rises_with_the_work_share() {
        let cases = [
            // (step ms, work ms, watts): idle + 630 * (0.3 + 0.7 * share)
            (10.0, 0.0, 259.0),
            (10.12, 0.12, 70.0 + 630.0 * (0.3 + 0.7 * 0.12 / 10.12)),
            (20.0, 10.0, 259.0 + 630.0 * 0.35),
            (40.0, 40.0, 700.0),
            (0.0, 0.0, 259.0),
        ];
        for (step, work, want) in cases {
            assert!(
                (step_power_w(step, work) - want).abs() < 1e-9,
                "{step} {work}"
            );
        }
    }

    #[test]
    fn energy_is_power_over_model_time_and_idle_counts() {
        // at rest from t=0; at time scale 10, 1 s of wall time is 10 s of model time at 70 W
        let m = GpuMeter::new(0);
        let r = m.reading(1_000_000_000, 10.0);
        assert_eq!((r.energy_mj, r.power_w), (700_000.0, 70.0));
        m.wake(1_000_000_000, 10.0);
        // two steps of 20 model ms at 400 W, then idle
        m.step(20.0, 400.0, 1_002_000_000, false);
        assert_eq!(m.reading(1_003_000_000, 10.0).power_w, 400.0);
        m.step(20.0, 400.0, 1_004_000_000, true);
        let r = m.reading(1_004_000_000, 10.0);
        assert_eq!(r.energy_mj, 700_000.0 + 16_000.0);
        assert_eq!(r.power_w, IDLE_W);
        // 0.1 s of wall idle at scale 10: 1 model second at 70 W
        let r = m.reading(1_104_000_000, 10.0);
        assert!((r.energy_mj - (716_000.0 + 70_000.0)).abs() < 1e-6);
        let text = render_dcgm(&r);
        assert!(text.contains("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu=\"0\""));
        assert!(text.contains("} 786000\n"), "{text}");
        assert!(text.contains("DCGM_FI_DEV_FB_USED{gpu=\"0\""));
    }
}
