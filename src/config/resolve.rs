//! Files plus flags into one validated run specification. Flags win over files; names that
//! do not exist get an error listing the ones that do.

use super::file::{ConfigFile, EndpointKind};
use super::overrides::{
    EndpointOverrides, EndpointTarget, InputError, RunOverrides, SweepOverrides, WorkloadOverrides,
};
use crate::endpoint::EndpointSpec;
use crate::workload::WorkloadSpec;
use std::path::PathBuf;
use std::time::Duration;

/// Default per-request timeout when neither file nor flag gives one.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);
/// How long the pre-flight check waits for the endpoint by default (or the request timeout,
/// when shorter): a server that accepts and never answers is named within a minute, not
/// after the ten-minute request timeout.
pub const DEFAULT_PREFLIGHT_TIMEOUT: Duration = Duration::from_secs(60);
/// Default simulator time scale for the built-in endpoint.
pub const DEFAULT_SIM_TIME_SCALE: f64 = 20.0;

/// What every resolved run carries, sweep or search.
#[derive(Debug, Clone)]
pub struct RunSettings {
    pub endpoint: EndpointTarget,
    pub workload: WorkloadSpec,
    pub request_count: u32,
    /// Where the request count came from, as a message names it: `-n`, or the plan's
    /// `request_count` in the config.
    pub request_count_from: &'static str,
    /// Warmup per closed-loop level (unset: one round, `workload::warmup`).
    pub warmup: crate::workload::warmup::Warmup,
    pub timeout: Duration,
    /// How long the pre-flight check waits for the endpoint.
    pub preflight_timeout: Duration,
    /// Between two samples of the server's `/metrics`; zero: not sampled.
    pub telemetry_interval: Duration,
    /// The GPUs' exporter to sample with the server (`--gpu-metrics`).
    pub gpu_metrics: Option<String>,
    /// The error-rate limit every analysis applies without an error-rate SLA.
    pub max_error_rate: f64,
    /// Root folder for results (`--out`, the file's `results_dir`, or the platform default).
    pub results_root: Option<PathBuf>,
    /// Config files that were read, for the record.
    pub config_sources: Vec<String>,
    pub open: crate::workload::arrivals::OpenSettings,
    /// A distributed run (`--workers`); `None`: one process.
    pub fleet: Option<super::overrides::FleetChoice>,
    /// The server's prefix cache before each level (`--prefix-cache`, the file's
    /// `prefix_cache`; default: kept).
    pub prefix_cache: crate::record::PrefixCachePolicy,
    /// A POST that empties it instead of the server's own (`--prefix-cache-reset-url`).
    pub prefix_cache_reset_url: Option<String>,
}

/// The telemetry interval when none is given: a second, or against the built-in simulator a
/// second of its model time (it runs `time_scale` times faster: its levels are that much
/// shorter), but no less than [`MIN_SIM_INTERVAL`].
fn default_interval(endpoint: &EndpointTarget) -> std::time::Duration {
    let every = crate::telemetry::scrape::SCRAPE_EVERY;
    match endpoint {
        EndpointTarget::Simulator { time_scale, .. } if *time_scale > 1.0 => {
            every.div_f64(*time_scale).max(MIN_SIM_INTERVAL)
        }
        _ => every,
    }
}

/// The shortest default interval against the built-in simulator.
const MIN_SIM_INTERVAL: std::time::Duration = std::time::Duration::from_millis(100);

/// A run's settings: flags over the plan entry (`plan_requests`, `plan_warmup`,
/// `plan_max_error_rate`) over the file's defaults.
pub(crate) fn run_settings(
    cfg: &ConfigFile,
    sources: Vec<String>,
    (endpoint, workload): (EndpointTarget, WorkloadSpec),
    r: &RunOverrides,
    plan_requests: Option<u32>,
    plan_warmup: Option<u32>,
    plan_max_error_rate: Option<f64>,
) -> RunSettings {
    let telemetry_interval = r
        .telemetry_interval
        .unwrap_or_else(|| default_interval(&endpoint));
    let timeout = r
        .timeout
        .or(cfg.defaults.timeout.map(|d| d.0))
        .unwrap_or(DEFAULT_TIMEOUT);
    RunSettings {
        endpoint,
        workload,
        request_count: r.requests.or(plan_requests).unwrap_or(1024),
        request_count_from: match (r.requests, plan_requests) {
            (None, Some(_)) => "the plan's request_count",
            _ => "-n",
        },
        warmup: crate::workload::warmup::Warmup::given(r.warmup.or(plan_warmup)),
        timeout,
        preflight_timeout: r
            .preflight_timeout
            .unwrap_or(DEFAULT_PREFLIGHT_TIMEOUT.min(timeout)),
        telemetry_interval,
        gpu_metrics: r.gpu_metrics.clone(),
        max_error_rate: r
            .max_error_rate
            .or(plan_max_error_rate)
            .or(cfg.defaults.max_error_rate.map(|f| f.0))
            .unwrap_or(crate::plan::judge::DEFAULT_MAX_ERROR_RATE),
        results_root: r.out.clone().or_else(|| cfg.defaults.results_dir.clone()),
        config_sources: sources,
        open: crate::workload::arrivals::OpenSettings {
            requests: r.requests,
            ..r.open
        },
        fleet: r.fleet.clone(),
        prefix_cache: prefix_cache_policy(cfg, r),
        prefix_cache_reset_url: r
            .prefix_cache_reset_url
            .clone()
            .or_else(|| cfg.defaults.prefix_cache_reset_url.clone()),
    }
}

/// The prefix-cache policy: the flag over the file; unsaid, a reset URL given (flag or
/// file) asks for `reset`, else the cache is kept.
fn prefix_cache_policy(cfg: &ConfigFile, r: &RunOverrides) -> crate::record::PrefixCachePolicy {
    use crate::record::PrefixCachePolicy;
    let url = r.prefix_cache_reset_url.is_some() || cfg.defaults.prefix_cache_reset_url.is_some();
    r.prefix_cache
        .or(cfg.defaults.prefix_cache)
        .unwrap_or(if url {
            PrefixCachePolicy::Reset
        } else {
            PrefixCachePolicy::Keep
        })
}

/// A fully resolved concurrency sweep.
#[derive(Debug, Clone)]
pub struct SweepSpec {
    pub plan_name: String,
    pub levels: Vec<u32>,
    pub run: RunSettings,
}

pub(crate) fn unknown(what: &str, name: &str, known: impl Iterator<Item = String>) -> InputError {
    let known: Vec<String> = known.collect();
    InputError(format!(
        "unknown {what} `{name}`; the config defines: {}",
        if known.is_empty() {
            "none".to_string()
        } else {
            known.join(", ")
        }
    ))
}

/// An endpoint name that is no config entry but looks like a URL: what is wrong with it.
fn not_a_url(name: &str) -> Option<InputError> {
    let shown = crate::secrets::redact_url(name);
    if let Some((scheme, _)) = name.split_once("://") {
        return Some(InputError(format!(
            "--endpoint {shown}: `{scheme}://` is not an endpoint rightsize can reach; it \
             speaks http:// and https:// (and sagemaker:NAME for SageMaker)"
        )));
    }
    let host = name.split('/').next().unwrap_or(name);
    let with_port = host
        .rsplit_once(':')
        .is_some_and(|(_, port)| !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()));
    let looks_like_host =
        with_port || host == "localhost" || host.parse::<std::net::IpAddr>().is_ok();
    looks_like_host.then(|| {
        InputError(format!(
            "--endpoint {shown}: a URL needs its scheme, e.g. http://{shown} (or name an \
             endpoint of the config)"
        ))
    })
}

/// Resolves the endpoint; `stream` comes from the resolved workload.
pub fn resolve_endpoint(
    cfg: &ConfigFile,
    o: &EndpointOverrides,
    stream: bool,
) -> Result<EndpointTarget, InputError> {
    let name = o
        .endpoint
        .clone()
        .or_else(|| cfg.defaults.endpoint.clone())
        .unwrap_or_else(|| "sim".to_string());
    let is_url = name.starts_with("http://") || name.starts_with("https://");
    let direct_sagemaker = name.strip_prefix("sagemaker:").map(str::to_string);
    if direct_sagemaker
        .as_deref()
        .is_some_and(|n| n.trim().is_empty())
    {
        return Err(InputError(
            "--endpoint sagemaker: needs the endpoint's name, e.g. --endpoint sagemaker:my-llm"
                .to_string(),
        ));
    }
    let entry = if is_url || direct_sagemaker.is_some() {
        None
    } else {
        Some(config_entry(cfg, &name)?)
    };
    let kind = match direct_sagemaker {
        Some(_) => EndpointKind::Sagemaker,
        None => entry.map(|e| e.kind).unwrap_or_default(),
    };
    let sagemaker = match kind {
        EndpointKind::Sagemaker => Some(sagemaker_target(&name, direct_sagemaker, entry, o)?),
        _ => {
            no_sagemaker_flags(&name, o)?;
            None
        }
    };
    let base_url = if is_url {
        name.clone()
    } else if let Some(sm) = &sagemaker {
        crate::endpoint::sagemaker_spec::display_name(&sm.endpoint_name)
    } else {
        entry.and_then(|e| e.url.clone()).unwrap_or_default()
    };
    if kind == EndpointKind::Openai && base_url.is_empty() {
        return Err(InputError(format!(
            "endpoint `{name}` has no `url`; add url = \"http://host:port/v1\" to [endpoints.{name}]"
        )));
    }
    if is_url {
        // a file's url was checked as it was read (with its line); a flag's is checked here
        crate::endpoint::api_base(&base_url).map_err(|e| InputError(format!("--endpoint: {e}")))?;
    }
    let spec = EndpointSpec {
        name: name.clone(),
        base_url,
        model: o
            .model
            .clone()
            .or_else(|| entry.and_then(|e| e.model.clone()))
            .unwrap_or_default(),
        api: o.api.or(entry.and_then(|e| e.api)).unwrap_or_default(),
        stream,
        exact_output_length: !o.no_exact_length
            && entry.and_then(|e| e.exact_output_length).unwrap_or(true),
        headers: headers(entry, o),
        api_key_env: o
            .api_key_env
            .clone()
            .or_else(|| entry.and_then(|e| e.api_key_env.clone())),
        sim_timing: o.sim_timing,
        sagemaker,
    };
    Ok(match kind {
        EndpointKind::Simulator => simulator_target(spec, entry, o)?,
        EndpointKind::Openai | EndpointKind::Sagemaker => EndpointTarget::Remote(spec),
    })
}

/// The config's endpoint `name`; when there is none, the error says so (naming the ones
/// there are), or that a URL needs its scheme.
fn config_entry<'a>(
    cfg: &'a ConfigFile,
    name: &str,
) -> Result<&'a super::file::EndpointEntry, InputError> {
    cfg.endpoints.get(name).ok_or_else(|| {
        not_a_url(name).unwrap_or_else(|| unknown("endpoint", name, cfg.endpoints.keys().cloned()))
    })
}

/// Fails when a flag that only a SageMaker endpoint takes is given for endpoint `name`,
/// which is not one.
fn no_sagemaker_flags(name: &str, o: &EndpointOverrides) -> Result<(), InputError> {
    let flag = [
        ("--region", o.region.is_some()),
        ("--aws-profile", o.aws_profile.is_some()),
        ("--inference-component", o.inference_component.is_some()),
        ("--target-variant", o.target_variant.is_some()),
        ("--sagemaker-format", o.sagemaker_format.is_some()),
        ("--sagemaker-request-template", o.request_template.is_some()),
        ("--sagemaker-text-pointer", o.text_pointer.is_some()),
        (
            "--sagemaker-token-count-pointer",
            o.token_count_pointer.is_some(),
        ),
    ]
    .into_iter()
    .find(|(_, given)| *given);
    match flag {
        Some((flag, _)) => Err(InputError(format!(
            "{flag} applies to SageMaker endpoints only; endpoint `{name}` is not one \
             (use --endpoint sagemaker:NAME, or kind = \"sagemaker\" in its config)"
        ))),
        None => Ok(()),
    }
}

/// The headers sent with every request: the config entry's, then the flags'.
fn headers(
    entry: Option<&super::file::EndpointEntry>,
    o: &EndpointOverrides,
) -> Vec<(String, String)> {
    let mut headers: Vec<(String, String)> = entry
        .map(|e| {
            e.headers
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        })
        .unwrap_or_default();
    headers.extend(o.headers.iter().cloned());
    headers
}

/// The built-in simulator serving `spec`, at the time scale the flag or the entry gives.
fn simulator_target(
    spec: EndpointSpec,
    entry: Option<&super::file::EndpointEntry>,
    o: &EndpointOverrides,
) -> Result<EndpointTarget, InputError> {
    let time_scale = o
        .sim_time_scale
        .or(entry.and_then(|e| e.time_scale))
        .unwrap_or(DEFAULT_SIM_TIME_SCALE);
    let most = crate::sim::MAX_TIME_SCALE;
    if !(time_scale > 0.0 && time_scale <= most) {
        let from = if o.sim_time_scale.is_some() {
            "--sim-time-scale"
        } else {
            "the endpoint's time_scale"
        };
        // 1e300 as written, not as 301 digits
        let value = if time_scale.abs() >= 1e6 {
            format!("{time_scale:e}")
        } else {
            time_scale.to_string()
        };
        return Err(InputError(format!(
            "{from} {value}: the simulator's time scale must be above 0 and at most {most}"
        )));
    }
    Ok(EndpointTarget::Simulator { time_scale, spec })
}

/// The SageMaker endpoint `name` names: `sagemaker:ENDPOINT` on the command line, or a config
/// entry with kind = "sagemaker"; flags win over the entry.
fn sagemaker_target(
    name: &str,
    direct: Option<String>,
    entry: Option<&super::file::EndpointEntry>,
    o: &EndpointOverrides,
) -> Result<crate::endpoint::SageMakerTarget, InputError> {
    let endpoint_name = match direct {
        Some(n) => n.trim().to_string(),
        None => entry
            .and_then(|e| e.endpoint_name.clone())
            .filter(|n| !n.trim().is_empty())
            .ok_or_else(|| {
                InputError(format!(
                    "endpoint `{name}` (kind = \"sagemaker\") has no `endpoint_name`; add \
                     endpoint_name = \"YOUR-ENDPOINT\" to [endpoints.{name}]"
                ))
            })?,
    };
    let pick = |flag: &Option<String>, file: Option<&Option<String>>| {
        flag.clone()
            .or_else(|| file.and_then(Clone::clone))
            .filter(|v| !v.trim().is_empty())
    };
    let format = o
        .sagemaker_format
        .or(entry.and_then(|e| e.format))
        .unwrap_or_default();
    Ok(crate::endpoint::SageMakerTarget {
        endpoint_name,
        region: pick(&o.region, entry.map(|e| &e.region)),
        profile: pick(&o.aws_profile, entry.map(|e| &e.profile)),
        inference_component: pick(
            &o.inference_component,
            entry.map(|e| &e.inference_component),
        ),
        target_variant: pick(&o.target_variant, entry.map(|e| &e.target_variant)),
        custom_attributes: entry.and_then(|e| e.custom_attributes.clone()),
        format,
        custom: super::custom_format::custom_payload(name, format, entry, o)?,
    })
}

/// Resolves the workload profile with flag overrides.
pub fn resolve_workload(
    cfg: &ConfigFile,
    o: &WorkloadOverrides,
) -> Result<WorkloadSpec, InputError> {
    let name = o
        .profile
        .clone()
        .or_else(|| cfg.defaults.profile.clone())
        .unwrap_or_else(|| "rag".to_string());
    let p = cfg
        .profiles
        .get(&name)
        .ok_or_else(|| unknown("profile", &name, cfg.profiles.keys().cloned()))?;
    let dataset = super::workload::dataset_spec(&name, p, o)?;
    let tools = super::workload::tools_spec(&name, p, o)?;
    let sessions = super::workload::session_spec(&name, p, o, dataset.is_some(), tools.is_some())?;
    let w = WorkloadSpec {
        name,
        input_tokens: o
            .input_tokens
            .or(p.input_tokens.map(|v| v.0))
            .unwrap_or(1024),
        input_tokens_stddev: o.input_stddev.or(p.input_tokens_stddev).unwrap_or(0),
        output_tokens: o
            .output_tokens
            .or(p.output_tokens.map(|v| v.0))
            .unwrap_or(256),
        output_tokens_stddev: o.output_stddev.or(p.output_tokens_stddev).unwrap_or(0),
        stream: o.stream.or(p.stream).unwrap_or(true),
        shared_prefix_tokens: o.prefix_tokens.or(p.shared_prefix_tokens).unwrap_or(0),
        shared_prefix_share: o
            .prefix_share
            .or(p.shared_prefix_share.map(|f| f.0))
            .unwrap_or(0.0),
        seed: o.seed.or(p.seed).unwrap_or(0),
        tokenizer: o
            .tokenizer
            .clone()
            .or_else(|| p.tokenizer.clone())
            .unwrap_or_else(|| "approx".into()),
        sessions,
        dataset,
        tools,
        ..WorkloadSpec::fixed(0, 0)
    };
    use crate::workload::bounds::{MAX_INPUT_TOKENS, MAX_OUTPUT_TOKENS};
    for (what, flag, v, max) in [
        ("input", "--input-tokens", w.input_tokens, MAX_INPUT_TOKENS),
        (
            "output",
            "--output-tokens",
            w.output_tokens,
            MAX_OUTPUT_TOKENS,
        ),
    ] {
        if v > max {
            return Err(InputError(format!(
                "profile `{}`: {v} {what} tokens is more than the largest supported ({max}); \
                 lower {flag} (or the profile's {what}_tokens)",
                w.name
            )));
        }
    }
    if w.shared_prefix_tokens > w.input_tokens {
        return Err(InputError(format!(
            "profile `{}`: shared prefix ({} tokens) is longer than the input ({} tokens)",
            w.name, w.shared_prefix_tokens, w.input_tokens
        )));
    }
    super::workload::load(w)
}

/// Resolves the workload, then the endpoint (streaming comes from the workload), then whether
/// to calibrate (it depends on the endpoint).
pub(crate) fn resolve_target(
    cfg: &ConfigFile,
    e: &EndpointOverrides,
    w: &WorkloadOverrides,
) -> Result<(EndpointTarget, WorkloadSpec), InputError> {
    let mut workload = resolve_workload(cfg, w)?;
    let endpoint = resolve_endpoint(cfg, e, workload.stream)?;
    super::workload::check_tools_endpoint(&workload, w, &endpoint)?;
    let entry = cfg.endpoints.get(&endpoint.spec().name);
    super::workload::set_calibrate(&mut workload, w, entry, &endpoint);
    Ok((endpoint, workload))
}

/// A sweep's levels run in the order given; none may be missing or repeated.
fn check_levels(plan: &str, from_flag: bool, levels: &[u32]) -> Result<(), InputError> {
    let from = if from_flag {
        "--concurrency".to_string()
    } else {
        format!("[sweeps.{plan}] concurrency")
    };
    if levels.is_empty() {
        return Err(InputError(format!(
            "{from} lists no level; give at least one, e.g. [16, 64, 256]"
        )));
    }
    if let Some(c) = levels
        .iter()
        .enumerate()
        .find(|(i, c)| levels[..*i].contains(c))
        .map(|(_, c)| c)
    {
        return Err(InputError(format!(
            "{from} lists {c} more than once; each level runs once (remove the repeat)"
        )));
    }
    Ok(())
}

/// Resolves a whole sweep.
pub fn resolve_sweep(
    cfg: &ConfigFile,
    sources: Vec<String>,
    e: &EndpointOverrides,
    w: &WorkloadOverrides,
    s: &SweepOverrides,
) -> Result<SweepSpec, InputError> {
    let (endpoint, workload) = resolve_target(cfg, e, w)?;
    let plan_name = s
        .plan
        .clone()
        .or_else(|| cfg.defaults.sweep.clone())
        .unwrap_or_else(|| "reference".to_string());
    let plan = match cfg.sweeps.get(&plan_name) {
        Some(p) => p.clone(),
        None if s.concurrency.is_some() && s.plan.is_none() => Default::default(),
        None => return Err(unknown("sweep", &plan_name, cfg.sweeps.keys().cloned())),
    };
    let levels = s
        .concurrency
        .clone()
        .or_else(|| plan.concurrency.map(|v| v.iter().map(|p| p.0).collect()))
        .ok_or_else(|| {
            InputError(format!(
                "sweep `{plan_name}` gives no concurrency levels; pass --concurrency 16,64,256"
            ))
        })?;
    check_levels(&plan_name, s.concurrency.is_some(), &levels)?;
    // levels given on the command line without a plan name make an ad hoc plan
    let plan_name = if s.concurrency.is_some() && s.plan.is_none() {
        "custom".to_string()
    } else {
        plan_name
    };
    Ok(SweepSpec {
        plan_name,
        levels,
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

    fn shipped() -> ConfigFile {
        ConfigFile::parse(SHIPPED, SHIPPED_NAME).unwrap()
    }

    #[test]
    fn a_url_without_its_scheme_or_with_another_says_so() {
        let cases = [
            (
                "ftp://h:8000/v1",
                "--endpoint ftp://h:8000/v1: `ftp://` is not an endpoint rightsize can reach; \
                 it speaks http:// and https:// (and sagemaker:NAME for SageMaker)",
            ),
            (
                "localhost:8000/v1",
                "--endpoint localhost:8000/v1: a URL needs its scheme, e.g. \
                 http://localhost:8000/v1 (or name an endpoint of the config)",
            ),
            (
                "10.0.0.5",
                "--endpoint 10.0.0.5: a URL needs its scheme, e.g. http://10.0.0.5 (or name an \
                 endpoint of the config)",
            ),
            (
                "llama.cpp",
                "unknown endpoint `llama.cpp`; the config defines: sim",
            ),
        ];
        for (name, want) in cases {
            let e = EndpointOverrides {
                endpoint: Some(name.into()),
                ..Default::default()
            };
            let err = resolve_endpoint(&shipped(), &e, true).unwrap_err();
            assert_eq!(err.to_string(), want, "{name}");
        }
    }

    #[test]
    fn defaults_resolve_to_sim_rag_reference() {
        let s = resolve_sweep(
            &shipped(),
            vec![],
            &Default::default(),
            &Default::default(),
            &Default::default(),
        )
        .unwrap();
        assert!(
            matches!(s.run.endpoint, EndpointTarget::Simulator { time_scale, .. } if time_scale == 20.0)
        );
        assert_eq!(s.run.workload.input_tokens, 1024);
        assert_eq!(s.run.workload.output_tokens, 256);
        assert!(s.run.workload.stream);
        assert_eq!(s.levels, vec![64, 256, 1024]);
        assert_eq!(s.run.request_count, 1024);
        assert_eq!(s.run.timeout, Duration::from_secs(600));
    }

    #[test]
    fn an_unset_warmup_is_one_round_and_a_plans_count_is_kept() {
        use crate::workload::warmup::Warmup;
        let text = format!("{SHIPPED}\n[sweeps.cold]\nconcurrency = [8]\nwarmup = 0\n");
        let cfg = ConfigFile::parse(&text, "test").unwrap();
        let warmup = |plan: &str, flag: Option<u32>| {
            let s = SweepOverrides {
                plan: Some(plan.into()),
                run: RunOverrides {
                    warmup: flag,
                    ..Default::default()
                },
                ..Default::default()
            };
            let spec = resolve_sweep(&cfg, vec![], &Default::default(), &Default::default(), &s);
            spec.unwrap().run.warmup
        };
        assert_eq!(warmup("reference", None), Warmup::Round);
        assert_eq!(warmup("cold", None), Warmup::Requests(0));
        assert_eq!(warmup("cold", Some(100)), Warmup::Requests(100));
        assert_eq!(warmup("reference", Some(0)), Warmup::Requests(0));
    }

    #[test]
    fn the_prefix_cache_flag_wins_over_the_file_and_a_reset_url_asks_for_a_reset() {
        use crate::record::PrefixCachePolicy::{Keep, Reset};
        let url = "http://h:1/flush";
        // (the file's [defaults] lines, --prefix-cache, --prefix-cache-reset-url, want)
        let cases = [
            ("", None, None, (Keep, None)),
            ("prefix_cache = \"reset\"", None, None, (Reset, None)),
            ("prefix_cache = \"reset\"", Some(Keep), None, (Keep, None)),
            ("", Some(Reset), None, (Reset, None)),
            ("", None, Some(url), (Reset, Some(url))),
            ("", Some(Keep), Some(url), (Keep, Some(url))),
            (
                "prefix_cache_reset_url = \"http://h:1/flush\"",
                None,
                None,
                (Reset, Some(url)),
            ),
        ];
        for (file, flag, given, want) in cases {
            let text = SHIPPED.replacen("[defaults]\n", &format!("[defaults]\n{file}\n"), 1);
            let cfg = ConfigFile::parse(&text, "test").unwrap();
            let s = SweepOverrides {
                run: RunOverrides {
                    prefix_cache: flag,
                    prefix_cache_reset_url: given.map(String::from),
                    ..Default::default()
                },
                ..Default::default()
            };
            let run = resolve_sweep(&cfg, vec![], &Default::default(), &Default::default(), &s)
                .unwrap()
                .run;
            let got = (run.prefix_cache, run.prefix_cache_reset_url);
            assert_eq!(
                got,
                (want.0, want.1.map(String::from)),
                "{file} {flag:?} {given:?}"
            );
        }
        let bad = SHIPPED.replacen("[defaults]\n", "[defaults]\nprefix_cache = \"flush\"\n", 1);
        let e = ConfigFile::parse(&bad, "bad.toml").unwrap_err().to_string();
        assert!(e.contains("prefix_cache") && e.contains("keep"), "{e}");
    }

    #[test]
    fn flags_win_over_files() {
        let w = WorkloadOverrides {
            profile: Some("chat".into()),
            output_tokens: Some(7),
            stream: Some(false),
            ..Default::default()
        };
        let sw = SweepOverrides {
            concurrency: Some(vec![2, 4]),
            run: RunOverrides {
                requests: Some(10),
                ..Default::default()
            },
            ..Default::default()
        };
        let e = EndpointOverrides {
            endpoint: Some("http://127.0.0.1:9/v1".into()),
            model: Some("m".into()),
            no_exact_length: true,
            ..Default::default()
        };
        let s = resolve_sweep(&shipped(), vec![], &e, &w, &sw).unwrap();
        assert_eq!(s.run.workload.input_tokens, 256);
        assert_eq!(s.run.workload.output_tokens, 7);
        assert!(!s.run.workload.stream);
        assert_eq!(s.levels, vec![2, 4]);
        assert_eq!(s.run.request_count, 10);
        let EndpointTarget::Remote(spec) = &s.run.endpoint else {
            panic!("expected a remote endpoint")
        };
        assert_eq!(spec.base_url, "http://127.0.0.1:9/v1");
        assert!(!spec.stream && !spec.exact_output_length);
    }

    #[test]
    fn unknown_names_list_the_known_ones() {
        let e = EndpointOverrides {
            endpoint: Some("nope".into()),
            ..Default::default()
        };
        let err = resolve_endpoint(&shipped(), &e, true)
            .unwrap_err()
            .to_string();
        assert_eq!(err, "unknown endpoint `nope`; the config defines: sim");
        let w = WorkloadOverrides {
            profile: Some("x".into()),
            ..Default::default()
        };
        let err = resolve_workload(&shipped(), &w).unwrap_err().to_string();
        assert_eq!(err, "unknown profile `x`; the config defines: chat, rag");
    }

    #[test]
    fn sagemaker_endpoints_from_the_flag_and_from_the_config() {
        use crate::endpoint::{SageMakerFormat, SageMakerTarget};
        let e = EndpointOverrides {
            endpoint: Some("sagemaker:my-llm".into()),
            region: Some("eu-west-1".into()),
            sagemaker_format: Some(SageMakerFormat::Tgi),
            ..Default::default()
        };
        let EndpointTarget::Remote(spec) = resolve_endpoint(&shipped(), &e, true).unwrap() else {
            panic!("expected a remote endpoint")
        };
        assert_eq!(spec.base_url, "sagemaker:my-llm");
        assert_eq!(
            spec.sagemaker,
            Some(SageMakerTarget {
                endpoint_name: "my-llm".into(),
                region: Some("eu-west-1".into()),
                format: SageMakerFormat::Tgi,
                ..Default::default()
            })
        );
        let file = "[endpoints.prod]\nkind = \"sagemaker\"\nendpoint_name = \"llama-prod\"\n\
                    region = \"us-west-2\"\nprofile = \"ml\"\ninference_component = \"ic-1\"\n\
                    target_variant = \"blue\"\ncustom_attributes = \"trace=1\"\n\
                    format = \"openai-completions\"\n";
        let cfg = shipped().merge(ConfigFile::parse(file, "my.toml").unwrap());
        let e = EndpointOverrides {
            endpoint: Some("prod".into()),
            inference_component: Some("ic-2".into()),
            ..Default::default()
        };
        let EndpointTarget::Remote(spec) = resolve_endpoint(&cfg, &e, true).unwrap() else {
            panic!("expected a remote endpoint")
        };
        assert_eq!(
            spec.sagemaker,
            Some(SageMakerTarget {
                endpoint_name: "llama-prod".into(),
                region: Some("us-west-2".into()),
                profile: Some("ml".into()),
                // the flag wins over the file
                inference_component: Some("ic-2".into()),
                target_variant: Some("blue".into()),
                custom_attributes: Some("trace=1".into()),
                format: SageMakerFormat::OpenaiCompletions,
                custom: None,
            })
        );
    }

    #[test]
    fn sagemaker_mistakes_name_the_flag_or_key() {
        let cases: Vec<(ConfigFile, EndpointOverrides, &str)> = vec![
            (
                shipped(),
                EndpointOverrides {
                    endpoint: Some("sagemaker:".into()),
                    ..Default::default()
                },
                "--endpoint sagemaker: needs the endpoint's name, e.g. --endpoint sagemaker:my-llm",
            ),
            (
                shipped(),
                EndpointOverrides {
                    endpoint: Some("http://127.0.0.1:9/v1".into()),
                    region: Some("us-east-1".into()),
                    ..Default::default()
                },
                "--region applies to SageMaker endpoints only; endpoint `http://127.0.0.1:9/v1` \
                 is not one (use --endpoint sagemaker:NAME, or kind = \"sagemaker\" in its config)",
            ),
            (
                shipped().merge(
                    ConfigFile::parse("[endpoints.sm]\nkind = \"sagemaker\"\n", "my.toml").unwrap(),
                ),
                EndpointOverrides {
                    endpoint: Some("sm".into()),
                    ..Default::default()
                },
                "endpoint `sm` (kind = \"sagemaker\") has no `endpoint_name`; add endpoint_name \
                 = \"YOUR-ENDPOINT\" to [endpoints.sm]",
            ),
        ];
        for (cfg, e, want) in cases {
            let err = resolve_endpoint(&cfg, &e, true).unwrap_err().to_string();
            assert_eq!(err, want);
        }
        let bad =
            "[endpoints.sm]\nkind = \"sagemaker\"\nendpoint_name = \"x\"\nformat = \"vllm\"\n";
        let e = ConfigFile::parse(bad, "my.toml").unwrap_err().to_string();
        assert!(e.contains("line 4"), "{e}");
        assert!(e.contains("unknown variant `vllm`"), "{e}");
    }
}
