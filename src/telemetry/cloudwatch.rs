//! A SageMaker endpoint's own figures: it has no `/metrics`, but CloudWatch keeps per-minute
//! metrics of it, read after the run for each level's window with the AWS SDK's CloudWatch
//! client (`GetMetricData`; the SDK owns the protocol, signing and credentials).
//!
//! Which: `GPUUtilization`, `GPUMemoryUtilization` and `CPUUtilization` (namespace
//! `/aws/sagemaker/Endpoints`) and `ModelLatency` and `Invocations` (`AWS/SageMaker`), each
//! with the dimensions `EndpointName` and `VariantName` (the target variant, else
//! `AllTraffic`, the name SageMaker gives a single variant). A level's window is widened to
//! whole minutes, since that is what a value covers; CloudWatch publishes a minute or more
//! late, so the run's last minutes may have no value yet (said, not guessed).

use std::time::SystemTime;

use aws_sdk_cloudwatch as cw;
use cw::primitives::DateTime;
use cw::types::{Dimension, Metric, MetricDataQuery, MetricStat};

use crate::endpoint::SageMakerTarget;
use crate::record::{CloudWatchSummary, MeanMax};

/// Seconds one value covers.
pub const PERIOD_S: u32 = 60;

/// The metrics read: (query id, namespace, name, statistic).
const METRICS: [(&str, &str, &str, &str); 5] = [
    (
        "gpu",
        "/aws/sagemaker/Endpoints",
        "GPUUtilization",
        "Average",
    ),
    (
        "gpumem",
        "/aws/sagemaker/Endpoints",
        "GPUMemoryUtilization",
        "Average",
    ),
    (
        "cpu",
        "/aws/sagemaker/Endpoints",
        "CPUUtilization",
        "Average",
    ),
    ("latency", "AWS/SageMaker", "ModelLatency", "Average"),
    ("invocations", "AWS/SageMaker", "Invocations", "Sum"),
];

/// A level's wall-clock span.
#[derive(Debug, Clone, Copy)]
pub struct Window {
    pub start: SystemTime,
    pub end: SystemTime,
}

/// `t` in whole seconds since the epoch, rounded down (`up`: up) to a minute.
fn minute(t: SystemTime, up: bool) -> u64 {
    let s = t
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() + u64::from(up && d.subsec_nanos() > 0));
    let m = u64::from(PERIOD_S);
    if up {
        s.div_ceil(m) * m
    } else {
        s / m * m
    }
}

/// The whole minutes `w` touches, as seconds since the epoch: [from, to).
pub fn whole_minutes(w: Window) -> (u64, u64) {
    let from = minute(w.start, false);
    let to = minute(w.end, true).max(from + u64::from(PERIOD_S));
    (from, to)
}

fn query(
    id: &str,
    namespace: &str,
    name: &str,
    stat: &str,
    t: &SageMakerTarget,
) -> MetricDataQuery {
    let dim = |n: &str, v: &str| Dimension::builder().name(n).value(v).build();
    let variant = t.target_variant.as_deref().unwrap_or("AllTraffic");
    MetricDataQuery::builder()
        .id(id)
        .metric_stat(
            MetricStat::builder()
                .metric(
                    Metric::builder()
                        .namespace(namespace)
                        .metric_name(name)
                        .dimensions(dim("EndpointName", &t.endpoint_name))
                        .dimensions(dim("VariantName", variant))
                        .build(),
                )
                .period(PERIOD_S as i32)
                .stat(stat)
                .build(),
        )
        .return_data(true)
        .build()
}

fn mean_max(v: &[f64]) -> Option<MeanMax> {
    (!v.is_empty()).then(|| MeanMax {
        mean: v.iter().sum::<f64>() / v.len() as f64,
        max: v.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    })
}

/// The summary of one window from the values each query returned (by query id).
pub fn summarise(from: u64, to: u64, values: &[(String, Vec<f64>)]) -> CloudWatchSummary {
    let of = |id: &str| -> Vec<f64> {
        values
            .iter()
            .filter(|(q, _)| q == id)
            .flat_map(|(_, v)| v.iter().copied())
            .collect()
    };
    let stamp = |s: u64| {
        crate::wallclock::rfc3339_utc(SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(s))
    };
    let minutes = values.iter().map(|(_, v)| v.len()).max().unwrap_or(0) as u32;
    let latency: Vec<f64> = of("latency").iter().map(|us| us / 1e3).collect();
    let invocations = of("invocations");
    CloudWatchSummary {
        period_s: PERIOD_S,
        from: stamp(from),
        to: stamp(to),
        minutes,
        gpu_utilization_pct: mean_max(&of("gpu")),
        gpu_memory_utilization_pct: mean_max(&of("gpumem")),
        cpu_utilization_pct: mean_max(&of("cpu")),
        model_latency_ms: mean_max(&latency),
        invocations: (!invocations.is_empty()).then(|| invocations.iter().sum()),
    }
}

/// Each window's CloudWatch summary, in order; the error says why CloudWatch could not be read
/// (credentials, permission: `cloudwatch:GetMetricData`, the network).
pub async fn read(
    target: &SageMakerTarget,
    timeout: std::time::Duration,
    windows: &[Window],
) -> Result<Vec<CloudWatchSummary>, String> {
    let config = crate::endpoint::sagemaker::sdk_config(target, timeout).await;
    let client = cw::Client::new(&config);
    let mut out = Vec::with_capacity(windows.len());
    for w in windows {
        let (from, to) = whole_minutes(*w);
        let mut req = client
            .get_metric_data()
            .start_time(DateTime::from_secs(from as i64))
            .end_time(DateTime::from_secs(to as i64));
        for (id, ns, name, stat) in METRICS {
            req = req.metric_data_queries(query(id, ns, name, stat, target));
        }
        let answer = req.send().await.map_err(|e| {
            use cw::error::ProvideErrorMetadata;
            match e.as_service_error() {
                Some(se) => format!(
                    "{}: {}",
                    se.code().unwrap_or("error"),
                    se.message().unwrap_or("no message")
                ),
                None => format!("{}", cw::error::DisplayErrorContext(&e)),
            }
        })?;
        let values: Vec<(String, Vec<f64>)> = answer
            .metric_data_results()
            .iter()
            .map(|r| (r.id().unwrap_or_default().to_string(), r.values().to_vec()))
            .collect();
        out.push(summarise(from, to, &values));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn windows_widen_to_whole_minutes_and_values_summarise() {
        let at = |s: u64| SystemTime::UNIX_EPOCH + Duration::from_secs(s);
        let cases = [
            // (start s, end s, from, to)
            (125, 170, 120, 180),
            (120, 180, 120, 180),
            (179, 181, 120, 240),
            (120, 120, 120, 180),
        ];
        for (start, end, from, to) in cases {
            let w = Window {
                start: at(start),
                end: at(end),
            };
            assert_eq!(whole_minutes(w), (from, to), "{start}..{end}");
        }
        let w = Window {
            start: at(120),
            end: at(180) + Duration::from_millis(1),
        };
        assert_eq!(whole_minutes(w), (120, 240));
        let s = summarise(
            120,
            240,
            &[
                ("gpu".into(), vec![50.0, 70.0]),
                ("latency".into(), vec![2000.0, 4000.0]),
                ("invocations".into(), vec![10.0, 5.0]),
                ("cpu".into(), vec![]),
            ],
        );
        assert_eq!(s.minutes, 2);
        assert_eq!(s.from, "1970-01-01T00:02:00.000Z");
        assert_eq!(
            s.gpu_utilization_pct,
            Some(MeanMax {
                mean: 60.0,
                max: 70.0
            })
        );
        assert_eq!(
            s.model_latency_ms,
            Some(MeanMax {
                mean: 3.0,
                max: 4.0
            })
        );
        assert_eq!(s.invocations, Some(15.0));
        assert_eq!(s.cpu_utilization_pct, None);
        assert_eq!(s.gpu_memory_utilization_pct, None);
    }
}
