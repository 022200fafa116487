//! The workload's source settings (tokenizer, dataset, sampling, calibration) from the
//! profile and the flags, flags winning; loading them turns a missing or malformed file into
//! bad input naming the file and line. See `docs/workloads.md`.

use super::file::{EndpointEntry, ProfileEntry};
use super::overrides::{EndpointTarget, InputError, WorkloadOverrides};
use crate::endpoint::Api;
use crate::workload::dataset::{DatasetFormat, DatasetSpec, LengthFilter, Sampling};
use crate::workload::session::MAX_TURNS;
use crate::workload::session_spec::SessionSpec;
use crate::workload::tools::{parse_tool_choice, ToolsSpec};
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

/// Multi-turn sessions from the flags or the profile (flags winning); `None` for single
/// requests (`turns` 1 or not given). A session setting without `turns` above 1, or a turn
/// length with a dataset (whose conversations decide each turn), is bad input saying so.
pub(crate) fn session_spec(
    profile: &str,
    p: &ProfileEntry,
    o: &WorkloadOverrides,
    with_dataset: bool,
    with_tools: bool,
) -> Result<Option<SessionSpec>, InputError> {
    let in_profile = |key: &str, e: String| InputError(format!("profile `{profile}`: {key}: {e}"));
    let given_turns = match (o.turns, p.turns) {
        (Some(t), _) => Some(t),
        (None, Some(t)) => Some(
            crate::workload::session::parse_turns(&t.to_string())
                .map_err(|e| in_profile("turns", e))?,
        ),
        (None, None) => None,
    };
    let think_time = match (o.think_time, &p.think_time) {
        (Some(d), _) => Some(d),
        (None, Some(s)) => {
            Some(crate::values::parse_duration(s).map_err(|e| in_profile("think_time", e))?)
        }
        (None, None) => None,
    };
    let cx = super::agent::AgentContext {
        with_tools,
        with_dataset,
        turns: given_turns,
        think_time: think_time.is_some_and(|d| !d.is_zero()),
    };
    let agent = super::agent::agent_spec(profile, p, o, &cx)?;
    let turns = match (given_turns, agent) {
        (Some(t), _) => t,
        (None, Some(_)) => crate::workload::session_spec::DEFAULT_AGENT_TURNS,
        (None, None) => 1,
    };
    let turn_input_tokens = o.turn_input_tokens.or(p.turn_input_tokens.map(|v| v.0));
    let source = |flag: bool, flag_name: &str, key: &str| {
        if flag {
            flag_name.to_string()
        } else {
            format!("the profile `{profile}`'s {key}")
        }
    };
    if turns == 1 {
        if turn_input_tokens.is_some() {
            let from = source(
                o.turn_input_tokens.is_some(),
                "--turn-input-tokens",
                "turn_input_tokens",
            );
            return Err(InputError(format!(
                "{from} sizes the new message of turns 2 and later: give --turns N (N of 2 or \
                 more) too, or leave it out"
            )));
        }
        if think_time.is_some_and(|d| !d.is_zero()) {
            let from = source(o.think_time.is_some(), "--think-time", "think_time");
            return Err(InputError(format!(
                "{from} is the pause between the turns of a session: give --turns N (N of 2 \
                 or more) too, or leave it out"
            )));
        }
        return Ok(None);
    }
    debug_assert!(turns <= MAX_TURNS);
    if with_dataset && turn_input_tokens.is_some() {
        let from = source(
            o.turn_input_tokens.is_some(),
            "--turn-input-tokens",
            "turn_input_tokens",
        );
        return Err(InputError(format!(
            "{from} does not apply with a dataset: its conversations decide each turn's \
             message (leave it out)"
        )));
    }
    Ok(Some(SessionSpec {
        turns,
        turn_input_tokens,
        think_time_ms: think_time.map_or(0, |d| d.as_millis() as u64),
        agent,
    }))
}

/// The tools the flags or the profile give (flags winning), read and checked; `None` without
/// any. `--tool-choice` or `--fail-on-bad-tool-call` without tools is bad input saying so.
pub(crate) fn tools_spec(
    profile: &str,
    p: &ProfileEntry,
    o: &WorkloadOverrides,
) -> Result<Option<ToolsSpec>, InputError> {
    let choice = match (&o.tool_choice, &p.tool_choice) {
        (Some(c), _) => Some(c.clone()),
        (None, Some(s)) => Some(
            parse_tool_choice(s)
                .map_err(|e| InputError(format!("profile `{profile}`: tool_choice: {e}")))?,
        ),
        (None, None) => None,
    };
    let fail = o
        .fail_on_bad_tool_call
        .or(p.fail_on_bad_tool_call)
        .unwrap_or(false);
    let Some(path) = o.tools.clone().or_else(|| p.tools.clone()) else {
        if o.tool_choice.is_some() || o.fail_on_bad_tool_call.is_some() {
            let flag = if o.tool_choice.is_some() {
                "--tool-choice"
            } else {
                "--fail-on-bad-tool-call"
            };
            return Err(InputError(format!(
                "{flag} applies to the tools chat requests carry: give --tools FILE too, or \
                 leave it out"
            )));
        }
        return Ok(None);
    };
    let from = if o.tools.is_some() {
        format!("--tools {}", path.display())
    } else {
        format!("profile `{profile}`: tools {}", path.display())
    };
    let mut spec =
        ToolsSpec::load(&path, choice).map_err(|e| InputError(format!("{from}: {e}")))?;
    spec.fail_on_bad_tool_call = fail;
    Ok(Some(spec))
}

/// Tools go on chat requests: an endpoint on the completions API (or a SageMaker container,
/// whose formats carry none) with tools is bad input naming the flag.
pub(crate) fn check_tools_endpoint(
    w: &WorkloadSpec,
    o: &WorkloadOverrides,
    endpoint: &EndpointTarget,
) -> Result<(), InputError> {
    let Some(tools) = &w.tools else {
        return Ok(());
    };
    let from = if o.tools.is_some() {
        format!("--tools {}", tools.file)
    } else {
        format!("the profile `{}`'s tools", w.name)
    };
    let spec = endpoint.spec();
    if spec.sagemaker.is_some() {
        return Err(InputError(format!(
            "{from}: tools are sent on OpenAI-compatible chat endpoints; endpoint {} is a \
             SageMaker endpoint (leave --tools out)",
            spec.name
        )));
    }
    if spec.api == Api::Completions {
        return Err(InputError(format!(
            "{from}: tools are sent on chat requests, and endpoint {} uses the completions \
             API; use --api chat (or leave --tools out)",
            spec.name
        )));
    }
    Ok(())
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

#[cfg(test)]
mod tests {
    use crate::config::file::{ConfigFile, SHIPPED, SHIPPED_NAME};
    use crate::config::overrides::WorkloadOverrides;
    use crate::config::resolve::resolve_target;

    fn with_profile(extra: &str) -> ConfigFile {
        let shipped = ConfigFile::parse(SHIPPED, SHIPPED_NAME).unwrap();
        shipped.merge(ConfigFile::parse(&format!("[profiles.traffic]\n{extra}"), "u.toml").unwrap())
    }

    fn profile() -> WorkloadOverrides {
        WorkloadOverrides {
            profile: Some("traffic".into()),
            ..Default::default()
        }
    }

    #[test]
    #[cfg(feature = "exact-tokenizers")]
    fn a_profile_names_its_dataset_and_flags_win() {
        use crate::config::overrides::{EndpointOverrides, EndpointTarget};
        use crate::workload::dataset::{DatasetFormat, Sampling};
        let dir = std::env::temp_dir().join(format!("rightsize-cfg-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.jsonl");
        std::fs::write(&path, "{\"input_length\": 10, \"output_length\": 2}\n").unwrap();
        let cfg = with_profile(&format!(
            "dataset = {:?}\ndataset_sampling = \"shuffle\"\nblock_tokens = 16\n\
             tokenizer = \"cl100k\"\n",
            path.display().to_string()
        ));
        let (target, w) = resolve_target(&cfg, &Default::default(), &profile()).unwrap();
        assert!(matches!(target, EndpointTarget::Simulator { .. }));
        assert!(!w.calibrate, "the simulator is not calibrated by default");
        assert_eq!(w.tokenizer, "cl100k_base");
        let d = w.dataset.as_ref().unwrap();
        assert_eq!(
            (d.format, d.sampling, d.block_tokens),
            (Some(DatasetFormat::Mooncake), Sampling::Shuffle, 16)
        );
        assert_eq!(d.records, Some(1));
        let flags = WorkloadOverrides {
            sampling: Some(Sampling::Replace),
            calibrate: Some(true),
            ..profile()
        };
        let e = EndpointOverrides {
            endpoint: Some("http://127.0.0.1:9/v1".into()),
            ..Default::default()
        };
        let (_, w) = resolve_target(&cfg, &e, &flags).unwrap();
        assert_eq!(w.dataset.unwrap().sampling, Sampling::Replace);
        assert!(w.calibrate);
        let (_, w) = resolve_target(&cfg, &e, &profile()).unwrap();
        assert!(w.calibrate, "http endpoints are calibrated by default");
    }

    #[test]
    fn bad_profile_values_name_the_profile_and_key() {
        let cfg = with_profile("dataset = \"x.jsonl\"\ndataset_format = \"csv\"\n");
        let e = resolve_target(&cfg, &Default::default(), &profile()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "profile `traffic`: dataset_format: `csv` is not a dataset format: use jsonl, \
             sharegpt, mooncake or sagemaker-capture"
        );
        #[cfg(feature = "exact-tokenizers")]
        {
            let cfg = with_profile("tokenizer = \"nope.json\"\n");
            let e = resolve_target(&cfg, &Default::default(), &profile()).unwrap_err();
            assert!(
                e.to_string()
                    .starts_with("tokenizer `nope.json`: no such file"),
                "{e}"
            );
        }
    }

    #[test]
    fn a_profile_carries_tools_and_flags_win() {
        let path =
            std::env::temp_dir().join(format!("rightsize-tools-{}.json", std::process::id()));
        std::fs::write(
            &path,
            r#"[{"type":"function","function":{"name":"f"}},{"type":"function","function":{"name":"g"}}]"#,
        )
        .unwrap();
        let cfg = with_profile(&format!(
            "tools = {:?}\ntool_choice = \"g\"\nfail_on_bad_tool_call = true\n",
            path.display().to_string()
        ));
        let (_, w) = resolve_target(&cfg, &Default::default(), &profile()).unwrap();
        let t = w.tools.expect("tools from the profile");
        assert_eq!(
            t.tool_choice,
            Some(serde_json::json!({"type": "function", "function": {"name": "g"}}))
        );
        assert!(t.fail_on_bad_tool_call);
        let flags = WorkloadOverrides {
            tool_choice: Some(serde_json::json!("none")),
            ..profile()
        };
        let (_, w) = resolve_target(&cfg, &Default::default(), &flags).unwrap();
        assert_eq!(
            w.tools.unwrap().tool_choice,
            Some(serde_json::json!("none"))
        );
        let cfg = with_profile("tools = \"/nonexistent/tools.json\"\n");
        let e = resolve_target(&cfg, &Default::default(), &profile()).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("profile `traffic`: tools /nonexistent/tools.json: cannot read it: "),
            "{e}"
        );
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn a_profile_runs_sessions_and_flags_win() {
        use crate::workload::SessionSpec;
        use std::time::Duration;
        let cfg = with_profile(
            "turns = 5
turn_input_tokens = 64
think_time = \"500ms\"\n",
        );
        let (_, w) = resolve_target(&cfg, &Default::default(), &profile()).unwrap();
        assert_eq!(
            w.sessions,
            Some(SessionSpec {
                turns: 5,
                turn_input_tokens: Some(64),
                think_time_ms: 500,
                agent: None,
            })
        );
        let flags = WorkloadOverrides {
            turns: Some(3),
            think_time: Some(Duration::from_secs(2)),
            ..profile()
        };
        let (_, w) = resolve_target(&cfg, &Default::default(), &flags).unwrap();
        assert_eq!(
            w.sessions,
            Some(SessionSpec {
                turns: 3,
                turn_input_tokens: Some(64),
                think_time_ms: 2000,
                agent: None,
            })
        );
        // --turns 1 on the command line turns the profile's sessions off, and its turn
        // length is then an error naming the profile's key
        let single = WorkloadOverrides {
            turns: Some(1),
            ..profile()
        };
        let e = resolve_target(&cfg, &Default::default(), &single).unwrap_err();
        assert_eq!(
            e.to_string(),
            "the profile `traffic`'s turn_input_tokens sizes the new message of turns 2 and \
             later: give --turns N (N of 2 or more) too, or leave it out"
        );
        let (_, w) = resolve_target(&with_profile(""), &Default::default(), &profile()).unwrap();
        assert_eq!(w.sessions, None);
    }

    #[test]
    fn bad_session_keys_name_the_profile_and_key() {
        for (text, want) in [
            (
                "turns = 0\n",
                "profile `traffic`: turns: a session has at least 1 turn (`0`); --turns 1 \
                 sends single requests",
            ),
            (
                "turns = 2\nthink_time = \"soon\"\n",
                "profile `traffic`: think_time: `soon` is not a duration (use e.g. 800ms, 1.5s, \
                 2m)",
            ),
        ] {
            let e =
                resolve_target(&with_profile(text), &Default::default(), &profile()).unwrap_err();
            assert_eq!(e.to_string(), want, "{text}");
        }
    }
}
