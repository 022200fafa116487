//! A SageMaker endpoint's `custom` payload format from the flags and the config
//! (docs/sagemaker.md): the request template (`--sagemaker-request-template JSON|@FILE`, or
//! `request_template` in `[endpoints.NAME]`) and the pointers (`--sagemaker-text-pointer`,
//! `--sagemaker-token-count-pointer`, or `text_pointer`, `token_count_pointer`). Flags win
//! over the file. Every mistake is an [`InputError`] (exit 2) naming the flag or the key.

use super::file::EndpointEntry;
use super::overrides::{EndpointOverrides, InputError};
use crate::endpoint::custom_payload::{check_pointer, parse_template, CustomPayload};
use crate::endpoint::SageMakerFormat;

/// One setting and where it came from (a flag, or a key of `[endpoints.NAME]`).
struct Given {
    value: String,
    from: String,
}

fn given(
    flag: &str,
    flag_value: &Option<String>,
    key: &str,
    entry: Option<&EndpointEntry>,
    key_value: fn(&EndpointEntry) -> &Option<String>,
    name: &str,
) -> Option<Given> {
    match (flag_value, entry.and_then(|e| key_value(e).as_ref())) {
        (Some(v), _) => Some(Given {
            value: v.clone(),
            from: flag.to_string(),
        }),
        (None, Some(v)) => Some(Given {
            value: v.clone(),
            from: format!("[endpoints.{name}] {key}"),
        }),
        (None, None) => None,
    }
}

/// The custom format of endpoint `name` in `format`: `None` for the other formats (which take
/// none of its settings).
pub(crate) fn custom_payload(
    name: &str,
    format: SageMakerFormat,
    entry: Option<&EndpointEntry>,
    o: &EndpointOverrides,
) -> Result<Option<CustomPayload>, InputError> {
    let template = given(
        "--sagemaker-request-template",
        &o.request_template,
        "request_template",
        entry,
        |e| &e.request_template,
        name,
    );
    let text = given(
        "--sagemaker-text-pointer",
        &o.text_pointer,
        "text_pointer",
        entry,
        |e| &e.text_pointer,
        name,
    );
    let count = given(
        "--sagemaker-token-count-pointer",
        &o.token_count_pointer,
        "token_count_pointer",
        entry,
        |e| &e.token_count_pointer,
        name,
    );
    if format != SageMakerFormat::Custom {
        if let Some(g) = [&template, &text, &count].into_iter().flatten().next() {
            return Err(InputError(format!(
                "{} applies to the custom payload format only, and endpoint `{name}` is in \
                 format {}: add --sagemaker-format custom (or format = \"custom\" in its \
                 config), or leave it out",
                g.from,
                format.as_str()
            )));
        }
        return Ok(None);
    }
    let in_config = entry.is_some();
    let needs = |what: &str, flag: &str, key: &str, example: &str| {
        InputError(if in_config {
            format!(
                "endpoint `{name}` is in the custom payload format and has no {what}: add \
                 {key} = {example} to [endpoints.{name}] (or pass {flag})"
            )
        } else {
            format!(
                "--sagemaker-format custom needs {what}: pass {flag} {example} (docs/sagemaker.md)"
            )
        })
    };
    let template = template.ok_or_else(|| {
        needs(
            "request template",
            "--sagemaker-request-template",
            "request_template",
            "'{\"inputs\": \"{prompt}\", \"parameters\": {\"max_new_tokens\": \"{max_tokens}\"}}'",
        )
    })?;
    let (template_text, template_from) = match template.value.strip_prefix('@') {
        // only a flag reads a file: a config holds the JSON itself (a TOML ''' string)
        Some(path) if template.from.starts_with("--") => {
            let text = std::fs::read_to_string(path).map_err(|e| {
                InputError(format!(
                    "{} @{path}: cannot read the template file: {e}",
                    template.from
                ))
            })?;
            (text, format!("{} @{path}", template.from))
        }
        _ => (template.value.clone(), template.from.clone()),
    };
    let request_template =
        parse_template(&template_text).map_err(|e| InputError(format!("{template_from}: {e}")))?;
    let text = text.ok_or_else(|| {
        needs(
            "text pointer",
            "--sagemaker-text-pointer",
            "text_pointer",
            "'/token/text'",
        )
    })?;
    for g in [Some(&text), count.as_ref()].into_iter().flatten() {
        check_pointer(&g.value).map_err(|e| InputError(format!("{}: {e}", g.from)))?;
    }
    Ok(Some(CustomPayload {
        request_template,
        text_pointer: text.value,
        token_count_pointer: count.map(|c| c.value),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::resolve::resolve_endpoint;
    use crate::config::ConfigFile;

    fn flags(format: Option<SageMakerFormat>, extra: &[(&str, &str)]) -> EndpointOverrides {
        let mut o = EndpointOverrides {
            endpoint: Some("sagemaker:my-llm".into()),
            sagemaker_format: format,
            ..EndpointOverrides::default()
        };
        for (k, v) in extra {
            let v = Some(v.to_string());
            match *k {
                "template" => o.request_template = v,
                "text" => o.text_pointer = v,
                "count" => o.token_count_pointer = v,
                _ => unreachable!(),
            }
        }
        o
    }

    fn custom_of(cfg: &ConfigFile, o: &EndpointOverrides) -> Result<CustomPayload, String> {
        resolve_endpoint(cfg, o, true)
            .map(|t| t.spec().sagemaker.clone().unwrap().custom.unwrap())
            .map_err(|e| e.0)
    }

    #[test]
    fn from_the_flags_and_from_the_config() {
        let o = flags(
            Some(SageMakerFormat::Custom),
            &[
                ("template", r#"{"inputs":"{prompt}","n":"{max_tokens}"}"#),
                ("text", "/token/text"),
                ("count", "/details/generated_tokens"),
            ],
        );
        let c = custom_of(&ConfigFile::default(), &o).unwrap();
        assert_eq!(
            c.request_template,
            serde_json::json!({"inputs": "{prompt}", "n": "{max_tokens}"})
        );
        assert_eq!(c.text_pointer, "/token/text");
        assert_eq!(
            c.token_count_pointer.as_deref(),
            Some("/details/generated_tokens")
        );
        let file = "[endpoints.mine]\nkind = \"sagemaker\"\nendpoint_name = \"x\"\n\
                    format = \"custom\"\nrequest_template = '''{\"prompt\": \"{prompt}\"}'''\n\
                    text_pointer = \"/choices/0/text\"\n";
        let cfg = ConfigFile::parse(file, "my.toml").unwrap();
        let mut o = EndpointOverrides {
            endpoint: Some("mine".into()),
            ..EndpointOverrides::default()
        };
        let c = custom_of(&cfg, &o).unwrap();
        assert_eq!(
            c.request_template,
            serde_json::json!({"prompt": "{prompt}"})
        );
        assert_eq!(
            (c.text_pointer.as_str(), c.token_count_pointer),
            ("/choices/0/text", None)
        );
        // a flag wins over the key
        o.text_pointer = Some("/text".into());
        assert_eq!(custom_of(&cfg, &o).unwrap().text_pointer, "/text");
    }

    #[test]
    fn a_template_file_from_the_flag() {
        let dir = std::env::temp_dir().join(format!("rightsize-custom-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("template.json");
        std::fs::write(&path, "{\"inputs\": \"{prompt}\"}\n").unwrap();
        let at = format!("@{}", path.display());
        let o = flags(
            Some(SageMakerFormat::Custom),
            &[("template", &at), ("text", "/t")],
        );
        let c = custom_of(&ConfigFile::default(), &o).unwrap();
        assert_eq!(
            c.request_template,
            serde_json::json!({"inputs": "{prompt}"})
        );
        std::fs::write(&path, "{\"inputs\": \"hi\"}").unwrap();
        let e = custom_of(&ConfigFile::default(), &o).unwrap_err();
        assert!(
            e.starts_with(&format!(
                "--sagemaker-request-template {at}: the request template has no \"{{prompt}}\""
            )),
            "{e}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
        let e = custom_of(&ConfigFile::default(), &o).unwrap_err();
        assert!(
            e.starts_with(&format!(
                "--sagemaker-request-template {at}: cannot read the template file: "
            )),
            "{e}"
        );
    }

    #[test]
    fn mistakes_name_the_flag_or_key() {
        let custom = Some(SageMakerFormat::Custom);
        let template = ("template", r#"{"inputs":"{prompt}"}"#);
        let cases: Vec<(EndpointOverrides, &str)> = vec![
            (
                flags(custom, &[("text", "/t")]),
                "--sagemaker-format custom needs request template: pass \
                 --sagemaker-request-template '{\"inputs\": \"{prompt}\", \"parameters\": \
                 {\"max_new_tokens\": \"{max_tokens}\"}}' (docs/sagemaker.md)",
            ),
            (
                flags(custom, &[template]),
                "--sagemaker-format custom needs text pointer: pass --sagemaker-text-pointer \
                 '/token/text' (docs/sagemaker.md)",
            ),
            (
                flags(custom, &[("template", "{inputs: 1}"), ("text", "/t")]),
                "--sagemaker-request-template: the request template is not JSON (key must be \
                 a string at line 1 column 2): write the body as JSON with \"{prompt}\" where \
                 the prompt goes, e.g. {\"inputs\": \"{prompt}\", \"max_new_tokens\": \
                 \"{max_tokens}\"}",
            ),
            (
                flags(custom, &[template, ("text", "token.text")]),
                "--sagemaker-text-pointer: `token.text` is not a JSON pointer (RFC 6901): \
                 start it with / and name each key or array index, e.g. /token/text or \
                 /choices/0/text (~1 for a / in a key, ~0 for a ~)",
            ),
            (
                flags(custom, &[template, ("text", "/t"), ("count", "details")]),
                "--sagemaker-token-count-pointer: `details` is not a JSON pointer",
            ),
            (
                flags(Some(SageMakerFormat::Tgi), &[("text", "/t")]),
                "--sagemaker-text-pointer applies to the custom payload format only, and \
                 endpoint `sagemaker:my-llm` is in format tgi: add --sagemaker-format custom \
                 (or format = \"custom\" in its config), or leave it out",
            ),
        ];
        for (o, want) in cases {
            let e = custom_of(&ConfigFile::default(), &o).unwrap_err();
            assert!(e.starts_with(want), "{e}\nwant: {want}");
        }
        let file = "[endpoints.mine]\nkind = \"sagemaker\"\nendpoint_name = \"x\"\n\
                    format = \"custom\"\nrequest_template = '{\"p\": 1}'\n\
                    text_pointer = \"/t\"\n";
        let cfg = ConfigFile::parse(file, "my.toml").unwrap();
        let o = EndpointOverrides {
            endpoint: Some("mine".into()),
            ..EndpointOverrides::default()
        };
        assert!(custom_of(&cfg, &o)
            .unwrap_err()
            .starts_with("[endpoints.mine] request_template: the request template has no"));
        let file = "[endpoints.mine]\nkind = \"sagemaker\"\nendpoint_name = \"x\"\n\
                    format = \"custom\"\nrequest_template = '{\"p\": \"{prompt}\"}'\n";
        let cfg = ConfigFile::parse(file, "my.toml").unwrap();
        assert_eq!(
            custom_of(&cfg, &o).unwrap_err(),
            "endpoint `mine` is in the custom payload format and has no text pointer: add \
             text_pointer = '/token/text' to [endpoints.mine] (or pass --sagemaker-text-pointer)"
        );
    }
}
