//! What the server's own metrics said at one level, as the server chart draws it: the means
//! over the level's samples of its batch, its queue, its KV-cache use and its GPUs' power.

use crate::record::ServerSummary;

/// One level's server figures (means over the samples taken while it ran); a figure the
/// server did not expose is `None`.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ServerPoint {
    /// Requests the server was running (its batch).
    pub running: Option<f64>,
    /// Requests waiting in its queue.
    pub waiting: Option<f64>,
    /// KV-cache use, 0-1.
    pub kv_cache_usage: Option<f64>,
    /// GPU power, watts summed over the GPUs.
    pub gpu_power_w: Option<f64>,
    /// GPU utilisation, 0-1: the exporter's mean over the GPUs, else a SageMaker endpoint's
    /// CloudWatch `GPUUtilization` (per minute).
    pub gpu_use: Option<f64>,
    /// `gpu_use` is CloudWatch's per-minute figure.
    pub per_minute: bool,
}

impl ServerPoint {
    /// The means of a level's `server` summary; `None` when it holds none of the five.
    pub fn of(s: &ServerSummary) -> Option<ServerPoint> {
        let exporter = s.gpu.as_ref().and_then(|g| g.utilization_pct);
        let cloudwatch = s.cloudwatch.as_ref().and_then(|c| c.gpu_utilization_pct);
        let p = ServerPoint {
            running: s.running.map(|m| m.mean),
            waiting: s.waiting.map(|m| m.mean),
            kv_cache_usage: s.kv_cache_usage.map(|m| m.mean),
            gpu_power_w: s.gpu.as_ref().and_then(|g| g.power_w).map(|m| m.mean),
            // CloudWatch sums over the GPUs (up to 100 % each): held to the axis' 100 %
            gpu_use: exporter.or(cloudwatch).map(|m| (m.mean / 100.0).min(1.0)),
            per_minute: exporter.is_none() && cloudwatch.is_some(),
        };
        (p != ServerPoint::default()).then_some(p)
    }
}

/// The top of the GPU power scale (watts) for a largest power of `max_w`: the first of 1, 2
/// and 5 times a power of ten at or above it plus 10 %, so that the tenths of the scale, where
/// the percent axis has its ticks, are round numbers of watts.
pub fn power_top(max_w: f64) -> f64 {
    let want = (max_w * 1.1).max(1.0);
    let mut decade = 10f64.powf(want.log10().floor());
    loop {
        for m in [1.0, 2.0, 5.0] {
            if m * decade >= want {
                return m * decade;
            }
        }
        decade *= 10.0;
    }
}

/// Watts for a label: `450 W`, `1.2 kW`, `12 kW`.
pub fn fmt_watts(w: f64) -> String {
    if w.abs() >= 1000.0 {
        let kw = w / 1000.0;
        let s = if kw.abs() >= 10.0 {
            format!("{kw:.0}")
        } else {
            format!("{kw:.1}")
        };
        format!("{} kW", s.trim_end_matches(".0"))
    } else {
        format!("{w:.0} W")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{GpuSummary, MeanMax};

    #[test]
    fn a_summary_gives_its_means_and_an_empty_one_none() {
        let s = ServerSummary {
            scheme: "vllm".into(),
            samples: 5,
            running: Some(MeanMax {
                mean: 14.5,
                max: 16.0,
            }),
            waiting: Some(MeanMax {
                mean: 3.25,
                max: 9.0,
            }),
            kv_cache_usage: Some(MeanMax {
                mean: 0.5,
                max: 0.75,
            }),
            gpu: Some(GpuSummary {
                gpus: 2,
                power_w: Some(MeanMax {
                    mean: 612.0,
                    max: 700.0,
                }),
                ..GpuSummary::default()
            }),
            ..ServerSummary::default()
        };
        assert_eq!(
            ServerPoint::of(&s),
            Some(ServerPoint {
                running: Some(14.5),
                waiting: Some(3.25),
                kv_cache_usage: Some(0.5),
                gpu_power_w: Some(612.0),
                gpu_use: None,
                per_minute: false,
            })
        );
        // a SageMaker endpoint: CloudWatch's per-minute GPU use alone
        let cw = ServerSummary {
            cloudwatch: Some(crate::record::CloudWatchSummary {
                gpu_utilization_pct: Some(MeanMax {
                    mean: 42.0,
                    max: 60.0,
                }),
                ..Default::default()
            }),
            ..ServerSummary::default()
        };
        assert_eq!(
            ServerPoint::of(&cw),
            Some(ServerPoint {
                gpu_use: Some(0.42),
                per_minute: true,
                ..ServerPoint::default()
            })
        );
        // only the prefix-cache rate: nothing the chart draws
        let rate_only = ServerSummary {
            prefix_cache_hit_rate: Some(0.4),
            ..ServerSummary::default()
        };
        assert_eq!(ServerPoint::of(&rate_only), None);
    }

    #[test]
    fn the_power_scale_ends_on_one_two_or_five_times_a_power_of_ten() {
        for (max, top) in [
            (0.0, 1.0),
            (300.0, 500.0),
            (450.0, 500.0),
            (460.0, 1000.0),
            (1500.0, 2000.0),
            (2800.0, 5000.0),
            (5600.0, 10000.0),
        ] {
            assert_eq!(power_top(max), top, "{max}");
        }
    }

    #[test]
    fn watts_read_in_w_or_kw() {
        assert_eq!(fmt_watts(450.0), "450 W");
        assert_eq!(fmt_watts(1200.0), "1.2 kW");
        assert_eq!(fmt_watts(2000.0), "2 kW");
        assert_eq!(fmt_watts(12_000.0), "12 kW");
    }
}
