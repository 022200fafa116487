//! `rightsize import aiperf PATH`: AIPerf exports made elsewhere (one
//! `profile_export_aiperf.json` per concurrency level) brought into a run folder, so they can
//! be listed, shown, charted, compared and planned from like a run recorded here.
//!
//! PATH is one export file, a folder searched for them, or the `.tar.gz` a SageMaker benchmark
//! job writes (every `profile_export_aiperf.json` inside, at any depth). Each file is one
//! level; its concurrency is `input_config.loadgen.concurrency` (the older schema), else the
//! profiling phase's in `input_config.phases[]` (0.13, [`schema`]), else a `concurrency_64` /
//! `c64` part of its path. Levels are numbered by concurrency.

pub mod level;
mod schema;

use std::fs::File;
use std::io::Read;
use std::path::Path;

use serde_json::{json, Value};

pub use level::{parse_level, LevelExtras};

use crate::report::import_run::{
    endpoint_name, files_and_heads, files_under, import_levels, level_notes, number_by_concurrency,
    read_limited, workload_name, ImportOutcome, ImportedEcho, MAX_FILE,
};
pub use crate::report::import_run::{ImportError, ImportNames, ImportedLevel};

/// The file name AIPerf writes.
pub const EXPORT_FILE: &str = "profile_export_aiperf.json";

/// One export file's text and where it came from (a path, or `archive.tar.gz:inner/path`).
#[derive(Debug, Clone)]
pub struct ExportText {
    pub source: String,
    pub text: String,
}

fn is_tarball(p: &Path) -> bool {
    let n = p.to_string_lossy().to_ascii_lowercase();
    n.ends_with(".tar.gz") || n.ends_with(".tgz")
}

fn read_tarball(path: &Path) -> Result<Vec<ExportText>, ImportError> {
    let io = |e| ImportError::Io(path.to_path_buf(), e);
    let file = File::open(path).map_err(io)?;
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(file));
    let mut out = Vec::new();
    for entry in archive.entries().map_err(io)? {
        let entry = entry.map_err(io)?;
        let inner = entry.path().map_err(io)?.into_owned();
        if inner.file_name().is_some_and(|n| n == EXPORT_FILE) {
            let mut text = String::new();
            entry.take(MAX_FILE).read_to_string(&mut text).map_err(io)?;
            out.push(ExportText {
                source: format!("{}:{}", path.display(), inner.display()),
                text,
            });
        }
    }
    Ok(out)
}

/// Every export under `path` (a file, a folder or a `.tar.gz`), in path order.
pub fn read_exports(path: &Path) -> Result<Vec<ExportText>, ImportError> {
    if !path.exists() {
        return Err(ImportError::NotFound(path.to_path_buf()));
    }
    let mut out = if path.is_dir() {
        files_under(path, &|f| f.file_name().is_some_and(|n| n == EXPORT_FILE))?
            .into_iter()
            .map(|f| {
                Ok(ExportText {
                    source: f.display().to_string(),
                    text: read_limited(&f)?,
                })
            })
            .collect::<Result<Vec<_>, ImportError>>()?
    } else if is_tarball(path) {
        read_tarball(path)?
    } else {
        vec![ExportText {
            source: path.display().to_string(),
            text: read_limited(path)?,
        }]
    };
    out.sort_by(|a, b| a.source.cmp(&b.source));
    if out.is_empty() {
        return Err(ImportError::NoFiles {
            path: path.to_path_buf(),
            what: format!(
                "no {EXPORT_FILE} found (give one export file, a folder of them, or a SageMaker \
                 .tar.gz)"
            ),
        });
    }
    Ok(out)
}

/// A concurrency named in a path: `concurrency_64`, `concurrency-64`, `concurrency64`, `c64`.
pub fn concurrency_in_path(source: &str) -> Option<u32> {
    let positive = |t: &str| t.parse::<u32>().ok().filter(|n| *n > 0);
    for part in source.rsplit(['/', '\\', ':']) {
        let tokens: Vec<String> = part
            .split(['_', '-', '.'])
            .map(str::to_ascii_lowercase)
            .collect();
        for (i, t) in tokens.iter().enumerate() {
            if t == "concurrency" || t == "c" {
                if let Some(n) = tokens.get(i + 1).and_then(|n| positive(n)) {
                    return Some(n);
                }
            }
            let digits = t
                .strip_prefix("concurrency")
                .or_else(|| t.strip_prefix('c'));
            if let Some(n) = digits.and_then(positive) {
                return Some(n);
            }
        }
    }
    None
}

/// Parses every export into a level, sorted by concurrency then start time, numbered 0.. .
pub fn parse_exports(exports: &[ExportText]) -> Result<Vec<ImportedLevel>, ImportError> {
    let mut levels = Vec::new();
    for e in exports {
        let bad = |message: String| ImportError::Bad {
            source_name: e.source.clone(),
            message,
        };
        let obj: Value =
            serde_json::from_str(&e.text).map_err(|err| bad(format!("not JSON: {err}")))?;
        if !obj.is_object() {
            return Err(bad(
                "not an AIPerf export: the top level is not an object".into()
            ));
        }
        let positive = |v: Option<&Value>| {
            v.and_then(Value::as_u64)
                .and_then(|c| u32::try_from(c).ok())
                .filter(|c| *c > 0)
        };
        let phase = schema::profiling_phase(&obj);
        let concurrency = positive(obj.pointer("/input_config/loadgen/concurrency"))
            .or_else(|| positive(phase.and_then(|p| p.get("concurrency"))))
            .or_else(|| concurrency_in_path(&e.source))
            .ok_or_else(|| {
                let rate = phase
                    .and_then(schema::phase_rate)
                    .map_or(String::new(), |r| {
                        format!(
                            "; its profiling phase sends {r} requests/s without a concurrency, \
                         which this import cannot place on a concurrency axis"
                        )
                    });
                bad(format!(
                    "no concurrency: the export has no input_config.loadgen.concurrency nor a \
                     profiling phase's concurrency (input_config.phases[]), and its path names \
                     none (e.g. concurrency_64/){rate}"
                ))
            })?;
        if obj.get("request_latency").is_none() && obj.get("output_token_throughput").is_none() {
            return Err(bad(
                "not an AIPerf export: neither request_latency nor output_token_throughput".into(),
            ));
        }
        if let Some(m) = negative_metric(&obj) {
            return Err(bad(m));
        }
        let (summary, extras) = parse_level(&obj, concurrency);
        levels.push(ImportedLevel {
            source: e.source.clone(),
            summary,
            notes: extras.notes,
            head: json!({
                "aiperf_version": obj.get("aiperf_version"),
                "schema_version": obj.get("schema_version"),
                "benchmark_id": obj.get("benchmark_id"),
            }),
            config: extras.input_config,
        });
    }
    number_by_concurrency(&mut levels);
    Ok(levels)
}

/// The first metric value below zero (a metric is an object with a `unit`: latencies,
/// throughputs, counts, none of which can be negative), said for people.
fn negative_metric(obj: &Value) -> Option<String> {
    let metrics = obj.as_object()?;
    metrics.iter().find_map(|(name, m)| {
        let fields = m.as_object().filter(|f| f.contains_key("unit"))?;
        fields.iter().find_map(|(k, v)| {
            let x = v.as_f64().filter(|x| *x < 0.0)?;
            Some(format!(
                "`{name}.{k}` is {x}: a {name} cannot be negative (is the export damaged?)"
            ))
        })
    })
}

/// The `run.json` of an imported run, shaped like a recorded run's echo.
pub fn import_echo(path: &Path, levels: &[ImportedLevel], names: &ImportNames) -> ImportedEcho {
    let cfg = levels
        .first()
        .map(|l| l.config.clone())
        .unwrap_or(Value::Null);
    let model = names.model.clone().unwrap_or_else(|| {
        cfg.pointer("/endpoint/model_names/0")
            .or_else(|| cfg.pointer("/models/items/0/name"))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    });
    let base_url = cfg
        .pointer("/endpoint/url")
        .or_else(|| cfg.pointer("/endpoint/urls/0"))
        .cloned()
        .unwrap_or(json!(""));
    let (isl, osl) = schema::lengths(&cfg);
    let mean = |p: &str| {
        cfg.pointer(p)
            .and_then(Value::as_f64)
            .map(|v| v.round() as u64)
    };
    let input_tokens = mean("/input/prompt/input_tokens/mean").or(isl);
    let output_tokens = mean("/input/prompt/output_tokens/mean").or(osl);
    ImportedEcho {
        tool: "aiperf",
        path: path.display().to_string(),
        endpoint: endpoint_name(&names.endpoint, &base_url, "aiperf"),
        base_url,
        model,
        stream: cfg.pointer("/endpoint/streaming").and_then(Value::as_bool),
        workload: workload_name(&names.workload, "aiperf", input_tokens, output_tokens),
        input_tokens,
        output_tokens,
        request_count: cfg
            .pointer("/loadgen/request_count")
            .or_else(|| {
                levels
                    .first()
                    .and_then(|l| schema::phase_of(&l.config)?.get("request_count"))
            })
            .cloned()
            .unwrap_or(Value::Null),
        // a rightsize export carries its run's SLAs and error-rate limit
        slas: cfg
            .pointer("/rightsize_plan/slas")
            .cloned()
            .unwrap_or(json!([])),
        max_error_rate: cfg
            .pointer("/rightsize_plan/max_error_rate")
            .cloned()
            .unwrap_or(Value::Null),
        source: files_and_heads(levels, "exports"),
        notes: level_notes(levels, &[]),
    }
}

/// Reads the exports under `path` and writes them as a new run under `root`.
pub fn import_aiperf(
    path: &Path,
    root: &Path,
    names: &ImportNames,
) -> anyhow::Result<ImportOutcome> {
    let levels = parse_exports(&read_exports(path)?)?;
    import_levels(root, &levels, &import_echo(path, &levels, names))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negative_metrics_are_refused_naming_the_file_and_field() {
        let text = r#"{"input_config": {"loadgen": {"concurrency": 4}},
            "request_latency": {"unit": "ms", "avg": 120.0, "p99": -5.5},
            "output_token_throughput": {"unit": "tokens/sec", "avg": 10.0}}"#;
        let e = parse_exports(&[ExportText {
            source: "c4/profile_export_aiperf.json".into(),
            text: text.into(),
        }])
        .expect_err("refused");
        assert_eq!(
            e.to_string(),
            "c4/profile_export_aiperf.json: `request_latency.p99` is -5.5: a request_latency \
             cannot be negative (is the export damaged?)"
        );
    }

    #[test]
    fn concurrency_from_paths() {
        assert_eq!(
            concurrency_in_path("out/concurrency_64/profile_export_aiperf.json"),
            Some(64)
        );
        assert_eq!(
            concurrency_in_path("job.tar.gz:run/c256/profile_export_aiperf.json"),
            Some(256)
        );
        assert_eq!(concurrency_in_path("x/concurrency-8/p.json"), Some(8));
        assert_eq!(concurrency_in_path("x/level-001-c0016/p.json"), Some(16));
        assert_eq!(
            concurrency_in_path("x/results/profile_export_aiperf.json"),
            None
        );
    }
}
