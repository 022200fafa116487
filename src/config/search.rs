//! Resolution of an SLA search: a `[searches.NAME]` plan (if named) with flags on top, into
//! one validated [`SearchSpec`].

use super::file::{ConfigFile, SearchEntry};
use super::overrides::{EndpointOverrides, InputError, RunOverrides, WorkloadOverrides};
use super::resolve::{resolve_target, run_settings, unknown, RunSettings};
use super::sla_value::SlaValue;
use crate::metrics::summary::{load_to_rps, rps_to_load};
use crate::plan::judge::SlaSet;
use crate::plan::search_config::SearchConfig;
use crate::record::sla::{SlaMetric, SlaThreshold};

/// Search choices given on the command line.
#[derive(Debug, Clone, Default)]
pub struct SearchOverrides {
    pub plan: Option<String>,
    /// SLAs from flags; each replaces the plan's threshold on the same metric.
    pub slas: Vec<SlaThreshold>,
    pub min: Option<u32>,
    pub max: Option<u32>,
    pub max_iterations: Option<u32>,
    /// Do not re-measure the bracket's ends once it is narrow.
    pub no_confirm: bool,
    /// The most requests one level may run while its verdict is uncertain.
    pub max_requests_per_level: Option<u32>,
    pub run: RunOverrides,
    /// `--by rate`: search request rates (open loop) instead of concurrencies.
    pub by_rate: bool,
    /// `--min-rate`, `--max-rate` (requests/s), with `by_rate`.
    pub min_rate: Option<f64>,
    pub max_rate: Option<f64>,
}

/// A fully resolved SLA search.
#[derive(Debug, Clone)]
pub struct SearchSpec {
    pub plan_name: String,
    pub slas: SlaSet,
    /// `config.min`/`max` and every level are request rates in hundredths of a request/s.
    pub by_rate: bool,
    pub config: SearchConfig,
    pub run: RunSettings,
}

/// The thresholds a plan entry gives, with the file's key in any error.
pub fn entry_slas(name: &str, e: &SearchEntry) -> Result<Vec<SlaThreshold>, InputError> {
    let fields = [
        (SlaMetric::E2e, &e.e2e_sla_ms),
        (SlaMetric::Ttft, &e.ttft_sla_ms),
        (SlaMetric::Tpot, &e.tpot_sla_ms),
        (SlaMetric::ErrorRate, &e.error_rate_sla),
    ];
    let mut out = Vec::new();
    for (metric, v) in fields {
        let text = match v {
            None => continue,
            Some(SlaValue::Number(n)) if metric == SlaMetric::ErrorRate => n.to_string(),
            Some(SlaValue::Number(n)) => format!("{n}ms"),
            Some(SlaValue::Text(t)) => t.clone(),
        };
        let t = SlaThreshold::parse(metric, &text)
            .map_err(|m| InputError(format!("[searches.{name}] {}: {m}", metric.key())))?;
        out.push(t);
    }
    Ok(out)
}

/// Lays flag thresholds over a plan's: one threshold per metric, flags winning.
pub fn merge_slas(plan: Vec<SlaThreshold>, flags: &[SlaThreshold]) -> SlaSet {
    let mut out: Vec<SlaThreshold> = plan
        .into_iter()
        .filter(|t| !flags.iter().any(|f| f.metric == t.metric))
        .collect();
    out.extend(flags.iter().copied());
    out.sort_by_key(|t| match t.metric {
        SlaMetric::E2e => 0,
        SlaMetric::Ttft => 1,
        SlaMetric::Tpot => 2,
        SlaMetric::ErrorRate => 3,
    });
    SlaSet(out)
}

/// Default rate bounds of `--by rate` (requests/s).
pub const DEFAULT_MIN_RATE: f64 = 1.0;
pub const DEFAULT_MAX_RATE: f64 = 1000.0;

/// The search's bounds: concurrencies, or with `--by rate` rates in hundredths of a
/// request/s (the config's concurrency bounds do not apply to rates).
fn bounds(
    s: &SearchOverrides,
    plan: &SearchEntry,
    defaults: &SearchConfig,
) -> Result<(u32, u32), InputError> {
    if s.by_rate {
        if s.min.is_some() || s.max.is_some() {
            return Err(InputError(
                "--min and --max are concurrencies; a search --by rate takes --min-rate and \
                 --max-rate (requests/s)"
                    .into(),
            ));
        }
        return Ok((
            rps_to_load(s.min_rate.unwrap_or(DEFAULT_MIN_RATE)),
            rps_to_load(s.max_rate.unwrap_or(DEFAULT_MAX_RATE)),
        ));
    }
    if s.min_rate.is_some() || s.max_rate.is_some() {
        return Err(InputError(
            "--min-rate and --max-rate go with --by rate (or search concurrencies with --min \
             and --max)"
                .into(),
        ));
    }
    Ok((
        s.min
            .or(plan.concurrency_min.map(|p| p.0))
            .unwrap_or(defaults.min),
        s.max
            .or(plan.concurrency_max.map(|p| p.0))
            .unwrap_or(defaults.max),
    ))
}

/// Resolves a whole search.
pub fn resolve_search(
    cfg: &ConfigFile,
    sources: Vec<String>,
    e: &EndpointOverrides,
    w: &WorkloadOverrides,
    s: &SearchOverrides,
) -> Result<SearchSpec, InputError> {
    let (endpoint, workload) = resolve_target(cfg, e, w)?;
    let name = s.plan.clone().or_else(|| cfg.defaults.search.clone());
    let plan = match &name {
        Some(n) => cfg
            .searches
            .get(n)
            .cloned()
            .ok_or_else(|| unknown("search", n, cfg.searches.keys().cloned()))?,
        None => SearchEntry::default(),
    };
    let plan_name = name.unwrap_or_else(|| "custom".into());
    let slas = merge_slas(entry_slas(&plan_name, &plan)?, &s.slas);
    if slas.is_empty() {
        return Err(InputError(
            "a search needs at least one SLA: --e2e-sla, --ttft-sla, --tpot-sla or \
             --error-rate-sla (or --plan NAME from the config)"
                .into(),
        ));
    }
    if let Some(m) = slas.streaming_error(workload.stream) {
        return Err(InputError(m));
    }
    let defaults = SearchConfig::default();
    let (min, max) = bounds(s, &plan, &defaults)?;
    let config = SearchConfig {
        min,
        max,
        max_iterations: s
            .max_iterations
            .or(plan.search_max_iterations.map(|p| p.0))
            .unwrap_or(defaults.max_iterations),
        tolerance: defaults.tolerance,
        confirm: !s.no_confirm,
        max_requests_per_level: s
            .max_requests_per_level
            .or(plan.max_requests_per_level.map(|p| p.0)),
    };
    if config.min > config.max {
        return Err(InputError(if s.by_rate {
            format!(
                "--min-rate {} is above --max-rate {}",
                load_to_rps(config.min),
                load_to_rps(config.max)
            )
        } else {
            format!(
                "concurrency_min {} is above concurrency_max {}",
                config.min, config.max
            )
        }));
    }
    Ok(SearchSpec {
        by_rate: s.by_rate,
        plan_name,
        slas,
        config,
        run: run_settings(
            cfg,
            sources,
            (endpoint, workload),
            &s.run,
            plan.request_count.map(|p| p.0),
            plan.warmup,
            plan.max_error_rate.map(|f| f.0),
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::file::{SHIPPED, SHIPPED_NAME};
    use crate::record::sla::Statistic;

    fn shipped() -> ConfigFile {
        ConfigFile::parse(SHIPPED, SHIPPED_NAME).unwrap()
    }

    fn search(plan: Option<&str>, slas: Vec<SlaThreshold>) -> Result<SearchSpec, InputError> {
        let s = SearchOverrides {
            plan: plan.map(String::from),
            slas,
            ..Default::default()
        };
        resolve_search(
            &shipped(),
            vec![],
            &Default::default(),
            &Default::default(),
            &s,
        )
    }

    #[test]
    fn reference_plan_resolves_to_specs_numbers() {
        let s = search(Some("reference"), vec![]).unwrap();
        assert_eq!(
            s.slas.0,
            vec![SlaThreshold {
                metric: SlaMetric::E2e,
                stat: Statistic::P(99),
                limit: 50_000.0
            }]
        );
        assert_eq!(
            (s.config.min, s.config.max, s.config.max_iterations),
            (16, 4096, 10)
        );
        assert_eq!(s.run.request_count, 1024);
    }

    #[test]
    fn flags_replace_the_plans_threshold_on_the_same_metric() {
        let ttft = SlaThreshold::parse(SlaMetric::Ttft, "p99:800ms").unwrap();
        let e2e = SlaThreshold::parse(SlaMetric::E2e, "20s").unwrap();
        let s = search(Some("interactive"), vec![ttft, e2e]).unwrap();
        assert_eq!(s.slas.0, vec![e2e, ttft]);
    }

    #[test]
    fn bad_searches_are_input_errors() {
        assert_eq!(
            search(None, vec![]).unwrap_err().to_string(),
            "a search needs at least one SLA: --e2e-sla, --ttft-sla, --tpot-sla or \
             --error-rate-sla (or --plan NAME from the config)"
        );
        assert_eq!(
            search(Some("nope"), vec![]).unwrap_err().to_string(),
            "unknown search `nope`; the config defines: interactive, reference"
        );
        let cfg = ConfigFile::parse("[searches.x]\nttft_sla_ms = \"p42:1s\"\n", "u.toml").unwrap();
        let e = entry_slas("x", &cfg.searches["x"]).unwrap_err().to_string();
        assert_eq!(
            e,
            "[searches.x] ttft_sla_ms: `p42` is not a statistic (use avg, p50, p90, p95, p99 or max)"
        );
        let e = ConfigFile::parse("[searches.x]\ne2e_sla = 5\n", "u.toml")
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown field `e2e_sla`"), "{e}");
    }

    #[test]
    fn ttft_without_streaming_is_a_clear_error() {
        let w = WorkloadOverrides {
            stream: Some(false),
            ..Default::default()
        };
        let s = SearchOverrides {
            slas: vec![SlaThreshold::parse(SlaMetric::Ttft, "1s").unwrap()],
            ..Default::default()
        };
        let e = resolve_search(&shipped(), vec![], &Default::default(), &w, &s)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("ttft_sla_ms needs streamed responses"), "{e}");
    }
}
