//! Answers with tool calls: what a chat request's `tools` and `tool_choice` ask for, whether
//! an answer is a tool call (a seeded share, `--tool-call-share`; always with `required` or a
//! named function, never with `none`), and its arguments streamed as vLLM streams them: the
//! first token's delta carries the call's `index`, `id`, `type` and `function.name` with empty
//! arguments, then each further token a fragment of the arguments. The arguments are a JSON
//! object of one string (the tool's first required string parameter) holding the answer's
//! words; a broken call (`--tool-call-broken-share`) leaves the object unclosed.

use serde_json::Value;

use super::output_words::token_word;

/// The tool an answer would call, as a request's `tools` and `tool_choice` give it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolAsk {
    /// The function called: the named one, else the first tool's.
    pub name: String,
    /// The string parameter the arguments fill.
    pub param: String,
    /// `tool_choice` is `required` or names a function: every answer calls it.
    pub forced: bool,
}

/// What `tools` and `tool_choice` ask for: `None` without tools or with `tool_choice`
/// `"none"`; an error text for tools the simulator cannot read.
pub fn tool_ask(
    tools: Option<&[Value]>,
    choice: Option<&Value>,
) -> Result<Option<ToolAsk>, String> {
    let Some(tools) = tools.filter(|t| !t.is_empty()) else {
        return Ok(None);
    };
    let name_of = |t: &Value| {
        t.pointer("/function/name")
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let names: Vec<String> = tools
        .iter()
        .enumerate()
        .map(|(i, t)| name_of(t).ok_or(format!("tools[{i}] has no function.name")))
        .collect::<Result<_, _>>()?;
    let (index, forced) = match choice {
        None => (0, false),
        Some(Value::String(s)) => match s.as_str() {
            "none" => return Ok(None),
            "auto" => (0, false),
            "required" => (0, true),
            other => {
                return Err(format!(
                    "tool_choice `{other}` is not none, auto or required"
                ))
            }
        },
        Some(c) => {
            let want = c
                .pointer("/function/name")
                .and_then(Value::as_str)
                .ok_or("tool_choice must be a string or {\"type\":\"function\",\"function\":{\"name\":...}}")?;
            let i = names.iter().position(|n| n == want).ok_or(format!(
                "tool_choice names `{want}`, which is not among the tools"
            ))?;
            (i, true)
        }
    };
    Ok(Some(ToolAsk {
        name: names[index].clone(),
        param: first_string_param(&tools[index]),
        forced,
    }))
}

/// The tool's first required parameter of type string, else its first string property,
/// else `text`.
fn first_string_param(tool: &Value) -> String {
    let params = tool.pointer("/function/parameters");
    let props = params.and_then(|p| p.get("properties"));
    let is_string = |name: &str| {
        props
            .and_then(|p| p.get(name))
            .and_then(|p| p.get("type"))
            .and_then(Value::as_str)
            == Some("string")
    };
    let required = params
        .and_then(|p| p.get("required"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .find(|n| is_string(n));
    let any = props
        .and_then(Value::as_object)
        .and_then(|o| o.keys().find(|k| is_string(k)).cloned());
    required
        .map(str::to_string)
        .or(any)
        .unwrap_or_else(|| "text".to_string())
}

/// One answer's tool call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCallPlan {
    /// The function's name and the parameter filled, as JSON string literals (quoted,
    /// escaped).
    pub name_json: String,
    param_json: String,
    /// The arguments are left unclosed.
    pub broken: bool,
}

impl ToolCallPlan {
    /// The call `ask` makes, broken or not.
    pub fn new(ask: &ToolAsk, broken: bool) -> ToolCallPlan {
        ToolCallPlan {
            name_json: Value::String(ask.name.clone()).to_string(),
            param_json: Value::String(ask.param.clone()).to_string(),
            broken,
        }
    }

    /// The arguments' fragment of output token `i` (0-based) of an answer whose tokens are
    /// `0..=last`: token 0 carries none (it is the name), unless it is the only one; token 1
    /// opens the object with its first word; each further token adds a word; the last closes
    /// the object (unless the call is broken).
    pub fn fragment(&self, text_seed: u64, i: u32, last: bool, out: &mut String) {
        if i == 0 {
            if last {
                out.push_str(if self.broken { "{" } else { "{}" });
            }
            return;
        }
        if i == 1 {
            out.push('{');
            out.push_str(&self.param_json);
            out.push_str(": \"");
        } else {
            out.push(' ');
        }
        out.push_str(token_word(text_seed, i));
        if last && !self.broken {
            out.push_str("\"}");
        }
    }

    /// The whole arguments of an answer of `tokens` tokens.
    pub fn arguments(&self, text_seed: u64, tokens: u32) -> String {
        let mut out = String::new();
        for i in 0..tokens.max(1) {
            self.fragment(text_seed, i, i + 1 == tokens.max(1), &mut out);
        }
        out
    }
}

/// Whether answer `n` (the request's number) is a tool call, and whether it is broken: seeded
/// draws from the simulator's seed, `share` of the answers (all when forced), `broken_share`
/// of those.
pub fn decide(
    ask: &ToolAsk,
    seed: u64,
    n: u64,
    share: f64,
    broken_share: f64,
) -> Option<ToolCallPlan> {
    let draw = |salt: u64| {
        let h = crate::rng::mix64(seed ^ crate::rng::mix64(salt ^ n.rotate_left(23)));
        (h >> 11) as f64 / (1u64 << 53) as f64
    };
    let call = ask.forced || draw(0x7001_CA11) < share;
    call.then(|| ToolCallPlan::new(ask, draw(0xB20C_E2A6) < broken_share))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tools() -> Vec<Value> {
        serde_json::from_str(
            r#"[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"unit":{"type":"string"},"city":{"type":"string"}},"required":["days","city"]}}},
                {"type":"function","function":{"name":"ping"}}]"#,
        )
        .unwrap()
    }

    #[test]
    fn asks() {
        let t = tools();
        let ask = |c: Option<Value>| tool_ask(Some(&t), c.as_ref());
        let weather = ToolAsk {
            name: "get_weather".into(),
            param: "city".into(),
            forced: false,
        };
        assert_eq!(ask(None), Ok(Some(weather.clone())));
        assert_eq!(ask(Some("auto".into())), Ok(Some(weather.clone())));
        assert_eq!(ask(Some("none".into())), Ok(None));
        assert_eq!(
            ask(Some("required".into())),
            Ok(Some(ToolAsk {
                forced: true,
                ..weather
            }))
        );
        assert_eq!(
            ask(Some(
                serde_json::json!({"type":"function","function":{"name":"ping"}})
            )),
            Ok(Some(ToolAsk {
                name: "ping".into(),
                param: "text".into(),
                forced: true
            }))
        );
        assert_eq!(
            ask(Some(
                serde_json::json!({"type":"function","function":{"name":"nope"}})
            )),
            Err("tool_choice names `nope`, which is not among the tools".into())
        );
        assert_eq!(tool_ask(None, None), Ok(None));
    }

    #[test]
    fn arguments_are_json_unless_broken() {
        let ask = tool_ask(Some(&tools()), None).unwrap().unwrap();
        for tokens in 1..6u32 {
            for broken in [false, true] {
                let plan = ToolCallPlan::new(&ask, broken);
                let args = plan.arguments(7, tokens);
                let parsed = serde_json::from_str::<Value>(&args);
                assert_eq!(parsed.is_ok(), !broken, "{tokens} {broken}: {args}");
                if !broken && tokens > 1 {
                    let v = parsed.unwrap();
                    let words: Vec<&str> = (1..tokens).map(|i| token_word(7, i)).collect();
                    assert_eq!(v, serde_json::json!({ "city": words.join(" ") }));
                }
            }
        }
    }

    /// Tool calls among answers 1 to 1000 at share 0.5 with seed 3 (decided once).
    const CALLS_OF_1000: usize = 525;

    #[test]
    fn shares_are_seeded() {
        let ask = tool_ask(Some(&tools()), None).unwrap().unwrap();
        let calls = (1..=1000)
            .filter(|n| decide(&ask, 3, *n, 0.5, 0.0).is_some())
            .count();
        let again = (1..=1000)
            .filter(|n| decide(&ask, 3, *n, 0.5, 0.0).is_some())
            .count();
        assert_eq!(calls, again);
        assert_eq!(calls, CALLS_OF_1000);
        assert!((1..=100).all(|n| decide(&ask, 3, n, 1.0, 0.0).is_some_and(|p| !p.broken)));
        assert!((1..=100).all(|n| decide(&ask, 3, n, 0.0, 0.0).is_none()));
        assert!((1..=100).all(|n| decide(&ask, 3, n, 1.0, 1.0).is_some_and(|p| p.broken)));
    }
}
