//! The server table of `rightsize show`: per level, what the server's own metrics said while
//! it ran (the level files' `server`, see `docs/telemetry.md`): its batch and queue, KV-cache
//! use, prefix-cache hits and preemptions, and the GPUs' power and energy per output token
//! when they were recorded.

use crate::metrics::LevelSummary;
use crate::record::{MeanMax, ServerSummary};

/// `mean / max` of a count, one decimal for the mean.
fn count(m: Option<MeanMax>) -> String {
    m.map_or("-".into(), |m| format!("{:.1} / {:.0}", m.mean, m.max))
}

/// `mean / max` of a 0-1 share, in percent.
fn share(m: Option<MeanMax>) -> String {
    m.map_or("-".into(), |m| {
        format!("{:.0} / {:.0}", m.mean * 100.0, m.max * 100.0)
    })
}

fn gpu_power(s: &ServerSummary) -> Option<f64> {
    Some(s.gpu.as_ref()?.power_w?.mean)
}

fn joules(s: &ServerSummary) -> Option<f64> {
    s.gpu.as_ref()?.joules_per_output_token
}

/// One row per level that recorded a `server`, under a header; the GPU columns only when a
/// level has them; then a SageMaker endpoint's CloudWatch table when levels have one. Empty
/// when no level recorded one.
pub fn server_table(levels: &[LevelSummary]) -> String {
    let engine = engine_table(levels);
    let cloudwatch = cloudwatch_table(levels);
    match (engine.is_empty(), cloudwatch.is_empty()) {
        (false, false) => format!("{engine}\n{cloudwatch}"),
        _ => engine + &cloudwatch,
    }
}

/// `mean / max` of a percentage.
fn pct(m: Option<MeanMax>) -> String {
    m.map_or("-".into(), |m| format!("{:.0} / {:.0}", m.mean, m.max))
}

/// A SageMaker endpoint's per-minute CloudWatch figures, one row per level that has them.
fn cloudwatch_table(levels: &[LevelSummary]) -> String {
    let open = levels.iter().any(|l| l.open_loop.rate.is_some());
    let rows: Vec<Vec<String>> = levels
        .iter()
        .filter_map(|l| Some((l, l.server.as_ref()?.cloudwatch.as_ref()?)))
        .map(|(l, c)| {
            vec![
                if open {
                    crate::metrics::summary::load_label(l)
                } else {
                    l.concurrency.to_string()
                },
                format!("{} ({} to {})", c.minutes, hhmm(&c.from), hhmm(&c.to)),
                c.invocations.map_or("-".into(), |v| format!("{v:.0}")),
                c.model_latency_ms
                    .map_or("-".into(), |m| format!("{:.1} / {:.1}", m.mean, m.max)),
                pct(c.gpu_utilization_pct),
                pct(c.gpu_memory_utilization_pct),
                pct(c.cpu_utilization_pct),
            ]
        })
        .collect();
    if rows.is_empty() {
        return String::new();
    }
    format!(
        "CloudWatch, per minute (the whole minutes each level touched; a minute shared by two \
         levels counts in both)\n{}",
        super::table::grid(
            &[
                if open { "load" } else { "concurrency" },
                "minutes (UTC)",
                "invocations",
                "model latency ms mean / max",
                "GPU % mean / max",
                "GPU memory %",
                "CPU % mean / max",
            ],
            &rows,
            0
        )
    )
}

/// `16:05` of an RFC 3339 time.
fn hhmm(t: &str) -> &str {
    t.get(11..16).unwrap_or(t)
}

fn engine_table(levels: &[LevelSummary]) -> String {
    let with: Vec<(&LevelSummary, &ServerSummary)> = levels
        .iter()
        .filter_map(|l| Some((l, l.server.as_ref()?)))
        .filter(|(_, s)| {
            s.running.is_some()
                || s.waiting.is_some()
                || s.kv_cache_usage.is_some()
                || s.gpu.is_some()
        })
        .collect();
    if with.is_empty() {
        return String::new();
    }
    let open = levels.iter().any(|l| l.open_loop.rate.is_some());
    let power = with.iter().any(|(_, s)| gpu_power(s).is_some());
    let energy = with.iter().any(|(_, s)| joules(s).is_some());
    let rows: Vec<Vec<String>> = with
        .iter()
        .map(|(l, s)| {
            let mut row = vec![
                if open {
                    crate::metrics::summary::load_label(l)
                } else {
                    l.concurrency.to_string()
                },
                count(s.running),
                count(s.waiting),
                share(s.kv_cache_usage),
                s.prefix_cache_hit_rate
                    .map_or("-".into(), |v| format!("{:.0}", v * 100.0)),
                s.preemptions.map_or("-".into(), |v| format!("{v:.0}")),
            ];
            if power {
                row.push(gpu_power(s).map_or("-".into(), |w| format!("{w:.0}")));
            }
            if energy {
                row.push(joules(s).map_or("-".into(), |j| format!("{j:.3}")));
            }
            row
        })
        .collect();
    let mut headers = vec![
        if open { "load" } else { "concurrency" },
        "running mean / max",
        "waiting mean / max",
        "KV use % mean / max",
        "prefix hits %",
        "preemptions",
    ];
    if power {
        headers.push("GPU power W");
    }
    if energy {
        headers.push("J / out token");
    }
    let scheme = with
        .iter()
        .map(|(_, s)| s.scheme.as_str())
        .find(|s| !s.is_empty())
        .map_or(String::new(), |s| format!(" ({s})"));
    format!(
        "server{scheme}: its own metrics during each level\n{}",
        super::table::grid(&headers, &rows, 0)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::fixtures::level;
    use crate::record::GpuSummary;

    fn mm(mean: f64, max: f64) -> Option<MeanMax> {
        Some(MeanMax { mean, max })
    }

    fn with_server(c: u32, s: ServerSummary) -> LevelSummary {
        let mut l = level(0, c, 64, 20, 200, 64, None);
        l.server = Some(s);
        l
    }

    #[test]
    fn cloudwatch_per_minute_table_exact_text() {
        let cw = crate::record::CloudWatchSummary {
            period_s: 60,
            from: "2026-12-04T16:05:00.000Z".into(),
            to: "2026-12-04T16:07:00.000Z".into(),
            minutes: 2,
            gpu_utilization_pct: mm(40.0, 55.0),
            gpu_memory_utilization_pct: mm(90.0, 90.0),
            cpu_utilization_pct: None,
            model_latency_ms: mm(812.5, 900.25),
            invocations: Some(311.0),
        };
        let levels = vec![with_server(
            4,
            ServerSummary {
                cloudwatch: Some(cw),
                ..Default::default()
            },
        )];
        assert_eq!(
            server_table(&levels),
            "CloudWatch, per minute (the whole minutes each level touched; a minute shared by \
             two levels counts in both)\n\
             concurrency       minutes (UTC)  invocations  model latency ms mean / max  \
             GPU % mean / max  GPU memory %  CPU % mean / max\n\
             -----------  ------------------  -----------  ---------------------------  \
             ----------------  ------------  ----------------\n          \
             4  2 (16:05 to 16:07)          311                812.5 / 900.2           \
             40 / 55       90 / 90                 -\n"
        );
    }

    #[test]
    fn one_row_per_level_with_a_server_exact_text() {
        let levels = vec![
            // no sample taken during it: no row
            level(0, 4, 64, 20, 200, 64, None),
            with_server(
                16,
                ServerSummary {
                    scheme: "vllm".into(),
                    samples: 3,
                    running: mm(14.6, 16.0),
                    waiting: mm(0.0, 0.0),
                    kv_cache_usage: mm(0.284, 0.31),
                    prefix_cache_hit_rate: Some(0.057),
                    preemptions: Some(0.0),
                    gpu: None,
                    cloudwatch: None,
                },
            ),
            with_server(
                64,
                ServerSummary {
                    scheme: "vllm".into(),
                    samples: 5,
                    running: mm(32.0, 32.0),
                    waiting: mm(30.25, 33.0),
                    kv_cache_usage: mm(0.62, 0.64),
                    prefix_cache_hit_rate: None,
                    preemptions: Some(2.0),
                    gpu: None,
                    cloudwatch: None,
                },
            ),
        ];
        let want = "\
server (vllm): its own metrics during each level
concurrency  running mean / max  waiting mean / max  KV use % mean / max  prefix hits %  preemptions
-----------  ------------------  ------------------  -------------------  -------------  -----------
         16           14.6 / 16             0.0 / 0              28 / 31              6            0
         64           32.0 / 32           30.2 / 33              62 / 64              -            2
";
        assert_eq!(server_table(&levels), want);
        assert_eq!(server_table(&levels[..1]), "");
    }

    #[test]
    fn gpu_columns_appear_when_a_level_has_them() {
        let gpu = GpuSummary {
            gpus: 2,
            power_w: mm(612.4, 700.0),
            joules_per_output_token: Some(0.0216),
            ..GpuSummary::default()
        };
        let levels = vec![with_server(
            8,
            ServerSummary {
                samples: 2,
                gpu: Some(gpu),
                ..ServerSummary::default()
            },
        )];
        let want = "\
server: its own metrics during each level
concurrency  running mean / max  waiting mean / max  KV use % mean / max  prefix hits %  preemptions  GPU power W  J / out token
-----------  ------------------  ------------------  -------------------  -------------  -----------  -----------  -------------
          8                   -                   -                    -              -            -          612          0.022
";
        assert_eq!(server_table(&levels), want);
    }
}
