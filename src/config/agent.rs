//! Agent loops from the flags or the profile (flags winning): `--agent` / `agent = true`,
//! `--tool-latency` / `tool_latency`, `--tool-result-tokens` / `tool_result_tokens`. An agent
//! needs tools, runs synthetic sessions of 2 or more turns, and pauses for its tools, not for
//! a user's think time; anything else is bad input naming the flag or key. See
//! `docs/workloads.md`.

use super::file::ProfileEntry;
use super::overrides::{InputError, WorkloadOverrides};
use crate::workload::session_spec::{AgentSpec, DEFAULT_TOOL_RESULT_TOKENS};

/// What an agent loop may not go without, or with.
pub(crate) struct AgentContext {
    /// Tools are given (`--tools` or the profile's `tools`).
    pub with_tools: bool,
    /// A dataset is given.
    pub with_dataset: bool,
    /// `--turns` or the profile's `turns`, when given.
    pub turns: Option<u32>,
    /// A think time other than zero is given.
    pub think_time: bool,
}

/// The agent loop the flags or the profile ask for; `None` without `--agent` (or with
/// `agent = false`).
pub(crate) fn agent_spec(
    profile: &str,
    p: &ProfileEntry,
    o: &WorkloadOverrides,
    cx: &AgentContext,
) -> Result<Option<AgentSpec>, InputError> {
    let name = |flag: bool, flag_name: &str, key: &str| {
        if flag {
            flag_name.to_string()
        } else {
            format!("the profile `{profile}`'s {key}")
        }
    };
    let tool_latency = match (o.tool_latency, &p.tool_latency) {
        (Some(d), _) => Some(d),
        (None, Some(s)) => Some(
            crate::values::parse_duration(s)
                .map_err(|e| InputError(format!("profile `{profile}`: tool_latency: {e}")))?,
        ),
        (None, None) => None,
    };
    let result_tokens = o.tool_result_tokens.or(p.tool_result_tokens.map(|v| v.0));
    let agent = o.agent.or(p.agent).unwrap_or(false);
    let from = name(o.agent.is_some(), "--agent", "agent");
    if !agent {
        let stray = [
            (
                tool_latency.is_some(),
                o.tool_latency.is_some(),
                "--tool-latency",
                "tool_latency",
            ),
            (
                result_tokens.is_some(),
                o.tool_result_tokens.is_some(),
                "--tool-result-tokens",
                "tool_result_tokens",
            ),
        ];
        if let Some((_, flag, f, k)) = stray.into_iter().find(|s| s.0) {
            return Err(InputError(format!(
                "{} belongs to agent loops: give --agent (and --tools FILE) too, or leave it out",
                name(flag, f, k)
            )));
        }
        return Ok(None);
    }
    if !cx.with_tools {
        return Err(InputError(format!(
            "{from} runs agent loops, which need tools to call: give --tools FILE (OpenAI tool \
             definitions) too"
        )));
    }
    if cx.with_dataset {
        return Err(InputError(format!(
            "{from} runs synthetic agent loops: leave out the dataset (its conversations' tool \
             messages are sent as they are without --agent)"
        )));
    }
    if cx.turns == Some(1) {
        return Err(InputError(format!(
            "{from} runs sessions of several requests: give --turns N of 2 or more (default {}), \
             or leave --turns out",
            crate::workload::session_spec::DEFAULT_AGENT_TURNS
        )));
    }
    if cx.think_time {
        return Err(InputError(format!(
            "{from} pauses for its tools (--tool-latency), not for a user: leave --think-time \
             out"
        )));
    }
    Ok(Some(AgentSpec {
        tool_latency_ms: tool_latency.map_or(0, |d| d.as_millis() as u64),
        tool_result_tokens: result_tokens.unwrap_or(DEFAULT_TOOL_RESULT_TOKENS),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn cx(with_tools: bool) -> AgentContext {
        AgentContext {
            with_tools,
            with_dataset: false,
            turns: None,
            think_time: false,
        }
    }

    #[test]
    fn a_profile_or_the_flags_run_agent_loops_and_flags_win() {
        let p: ProfileEntry =
            toml::from_str("agent = true\ntool_latency = \"250ms\"\ntool_result_tokens = 600\n")
                .unwrap();
        let none = WorkloadOverrides::default();
        let got = agent_spec("coding", &p, &none, &cx(true)).unwrap();
        assert_eq!(
            got,
            Some(AgentSpec {
                tool_latency_ms: 250,
                tool_result_tokens: 600
            })
        );
        let flags = WorkloadOverrides {
            tool_latency: Some(Duration::from_millis(40)),
            tool_result_tokens: Some(500),
            ..Default::default()
        };
        let got = agent_spec("coding", &p, &flags, &cx(true)).unwrap();
        assert_eq!(
            got,
            Some(AgentSpec {
                tool_latency_ms: 40,
                tool_result_tokens: 500
            })
        );
        let off = WorkloadOverrides {
            agent: Some(true),
            ..Default::default()
        };
        let got = agent_spec("x", &ProfileEntry::default(), &off, &cx(true)).unwrap();
        assert_eq!(
            got,
            Some(AgentSpec {
                tool_latency_ms: 0,
                tool_result_tokens: DEFAULT_TOOL_RESULT_TOKENS
            })
        );
    }

    #[test]
    fn what_an_agent_cannot_go_without_or_with() {
        let agent = WorkloadOverrides {
            agent: Some(true),
            ..Default::default()
        };
        let p = ProfileEntry::default();
        let e = |o: &WorkloadOverrides, p: &ProfileEntry, cx: AgentContext| {
            agent_spec("coding", p, o, &cx).unwrap_err().to_string()
        };
        assert_eq!(
            e(&agent, &p, cx(false)),
            "--agent runs agent loops, which need tools to call: give --tools FILE (OpenAI tool \
             definitions) too"
        );
        let in_profile: ProfileEntry = toml::from_str("agent = true\n").unwrap();
        assert_eq!(
            e(&Default::default(), &in_profile, cx(false)),
            "the profile `coding`'s agent runs agent loops, which need tools to call: give \
             --tools FILE (OpenAI tool definitions) too"
        );
        let one = AgentContext {
            turns: Some(1),
            ..cx(true)
        };
        assert_eq!(
            e(&agent, &p, one),
            "--agent runs sessions of several requests: give --turns N of 2 or more (default \
             10), or leave --turns out"
        );
        let think = AgentContext {
            think_time: true,
            ..cx(true)
        };
        assert_eq!(
            e(&agent, &p, think),
            "--agent pauses for its tools (--tool-latency), not for a user: leave --think-time out"
        );
        let stray = WorkloadOverrides {
            tool_result_tokens: Some(500),
            ..Default::default()
        };
        assert_eq!(
            e(&stray, &p, cx(true)),
            "--tool-result-tokens belongs to agent loops: give --agent (and --tools FILE) too, \
             or leave it out"
        );
        let bad: ProfileEntry = toml::from_str("agent = true\ntool_latency = \"soon\"\n").unwrap();
        assert!(e(&Default::default(), &bad, cx(true))
            .starts_with("profile `coding`: tool_latency: `soon` is not a duration"));
    }
}
