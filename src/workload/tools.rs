//! Tools a chat workload carries (`--tools FILE`, `--tool-choice`): OpenAI tool definitions
//! read once, checked, kept in the run's record, and turned once into the bytes every request
//! body carries. See `docs/workloads.md`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The tools sent with every chat request, and what to do with a broken tool call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolsSpec {
    /// The file they were read from, for the record.
    pub file: String,
    /// The `tools` array as the file gave it.
    pub tools: Value,
    /// `tool_choice`: `"auto"`, `"none"`, `"required"` or `{"type":"function",...}`; `None`
    /// leaves it to the server (which reads `auto` when tools are given).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<Value>,
    /// A tool call whose arguments are not JSON fails its request (`bad_tool_call`).
    #[serde(default)]
    pub fail_on_bad_tool_call: bool,
}

/// `--tool-choice`'s value: `auto`, `none`, `required`, or a function name (which the tools
/// must define).
pub fn parse_tool_choice(s: &str) -> Result<Value, String> {
    let s = s.trim();
    match s {
        "" => Err("give auto, none, required or the name of a function".to_string()),
        "auto" | "none" | "required" => Ok(Value::String(s.to_string())),
        name => Ok(serde_json::json!({ "type": "function", "function": { "name": name } })),
    }
}

impl ToolsSpec {
    /// Reads `path`: a JSON array of tool definitions, or an object with `tools` and
    /// optionally `tool_choice`; `choice` (the flag) wins over the file's. A file that is not
    /// that is an error saying what is wrong (the caller names the file and where it was
    /// given).
    pub fn load(path: &std::path::Path, choice: Option<Value>) -> Result<ToolsSpec, String> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read it: {e}"))?;
        Self::parse(&file, &text, choice)
    }

    /// [`ToolsSpec::load`] on a file's text.
    pub fn parse(file: &str, text: &str, choice: Option<Value>) -> Result<ToolsSpec, String> {
        let value: Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
        let (tools, file_choice) = match value {
            Value::Array(_) => (value, None),
            Value::Object(mut o) => {
                let tools = o.remove("tools").ok_or(
                    "an object needs a `tools` array (or give the array itself)".to_string(),
                )?;
                (tools, o.remove("tool_choice"))
            }
            _ => {
                return Err(
                    "give a JSON array of tool definitions, or an object with `tools`".into(),
                )
            }
        };
        let names = check_tools(&tools)?;
        let tool_choice = choice.or(file_choice);
        if let Some(c) = &tool_choice {
            check_choice(c, &names)?;
        }
        Ok(ToolsSpec {
            file: file.to_string(),
            tools,
            tool_choice,
            fail_on_bad_tool_call: false,
        })
    }

    /// The request body's fields, serialized once: `"tools":[...]` and `"tool_choice":...`
    /// (comma-separated, no braces), for [`crate::endpoint::openai::request_body`] to splice
    /// into every chat request.
    pub fn body_fields(&self) -> Vec<u8> {
        let mut out = b"\"tools\":".to_vec();
        // a Value serializes into a Vec without failing
        out.extend(serde_json::to_vec(&self.tools).unwrap_or_default());
        if let Some(c) = &self.tool_choice {
            out.extend_from_slice(b",\"tool_choice\":");
            out.extend(serde_json::to_vec(c).unwrap_or_default());
        }
        out
    }

    /// True when the answers may carry tool calls (`tool_choice` is not `none`).
    pub fn calls_possible(&self) -> bool {
        self.tool_choice.as_ref().and_then(Value::as_str) != Some("none")
    }
}

/// The function names of a `tools` array, or what is wrong with it.
fn check_tools(tools: &Value) -> Result<Vec<String>, String> {
    let list = tools
        .as_array()
        .ok_or("`tools` must be an array of tool definitions")?;
    if list.is_empty() {
        return Err("`tools` is empty: give at least one tool definition".into());
    }
    let mut names = Vec::with_capacity(list.len());
    for (i, t) in list.iter().enumerate() {
        let n = i + 1;
        let kind = t.get("type").and_then(Value::as_str);
        if kind != Some("function") {
            return Err(format!(
                "tool {n} has no \"type\": \"function\" (the only kind chat servers take)"
            ));
        }
        let name = t
            .pointer("/function/name")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .ok_or(format!("tool {n} has no function.name"))?;
        if let Some(p) = t.pointer("/function/parameters") {
            if !p.is_object() {
                return Err(format!(
                    "tool {n} ({name}): function.parameters must be a JSON Schema object"
                ));
            }
        }
        names.push(name.to_string());
    }
    Ok(names)
}

/// A `tool_choice` the server can take with these tools.
fn check_choice(choice: &Value, names: &[String]) -> Result<(), String> {
    if let Some(s) = choice.as_str() {
        return match s {
            "auto" | "none" | "required" => Ok(()),
            other => Err(format!(
                "tool_choice \"{other}\" is not auto, none, required or a function object"
            )),
        };
    }
    let name = choice
        .pointer("/function/name")
        .and_then(Value::as_str)
        .ok_or("tool_choice must be auto, none, required or {\"type\":\"function\",\"function\":{\"name\":...}}")?;
    if names.iter().any(|n| n == name) {
        Ok(())
    } else {
        Err(format!(
            "tool_choice names the function {name}, which the tools do not define (they \
             define {})",
            names.join(", ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const WEATHER: &str = r#"[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}]"#;

    #[test]
    fn files_and_choices() {
        // serialized once, keys in serde_json's (sorted) order
        let sorted = serde_json::from_str::<Value>(WEATHER).unwrap().to_string();
        let t = ToolsSpec::parse("t.json", WEATHER, None).unwrap();
        assert_eq!(t.tool_choice, None);
        assert!(t.calls_possible());
        assert_eq!(
            String::from_utf8(t.body_fields()).unwrap(),
            format!("\"tools\":{sorted}")
        );
        let obj = format!(r#"{{"tools":{WEATHER},"tool_choice":"required"}}"#);
        let t = ToolsSpec::parse("t.json", &obj, None).unwrap();
        assert_eq!(
            String::from_utf8(t.body_fields()).unwrap(),
            format!("\"tools\":{sorted},\"tool_choice\":\"required\"")
        );
        // the flag wins over the file
        let t = ToolsSpec::parse("t.json", &obj, Some(parse_tool_choice("none").unwrap())).unwrap();
        assert!(!t.calls_possible());
        let t = ToolsSpec::parse(
            "t.json",
            WEATHER,
            Some(parse_tool_choice("get_weather").unwrap()),
        )
        .unwrap();
        assert!(String::from_utf8(t.body_fields())
            .unwrap()
            .ends_with(r#""tool_choice":{"function":{"name":"get_weather"},"type":"function"}"#));
    }

    #[test]
    fn bad_files_say_what_is_wrong() {
        let cases = [
            ("[{\"type\":", "not JSON: EOF while parsing a value at line 1 column 9"),
            ("42", "give a JSON array of tool definitions, or an object with `tools`"),
            ("{\"x\":1}", "an object needs a `tools` array (or give the array itself)"),
            ("[]", "`tools` is empty: give at least one tool definition"),
            ("[{\"function\":{\"name\":\"f\"}}]", "tool 1 has no \"type\": \"function\" (the only kind chat servers take)"),
            ("[{\"type\":\"function\",\"function\":{}}]", "tool 1 has no function.name"),
            (
                "[{\"type\":\"function\",\"function\":{\"name\":\"f\",\"parameters\":[]}}]",
                "tool 1 (f): function.parameters must be a JSON Schema object",
            ),
            (
                "{\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"f\"}}],\"tool_choice\":\"any\"}",
                "tool_choice \"any\" is not auto, none, required or a function object",
            ),
        ];
        for (text, want) in cases {
            assert_eq!(
                ToolsSpec::parse("t.json", text, None).unwrap_err(),
                want,
                "{text}"
            );
        }
        let e = ToolsSpec::parse(
            "t.json",
            WEATHER,
            Some(parse_tool_choice("lookup").unwrap()),
        )
        .unwrap_err();
        assert_eq!(
            e,
            "tool_choice names the function lookup, which the tools do not define (they define get_weather)"
        );
        let e = ToolsSpec::load(std::path::Path::new("/nonexistent/t.json"), None).unwrap_err();
        assert!(e.starts_with("cannot read it: "), "{e}");
    }
}
