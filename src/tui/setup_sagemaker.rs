//! The setup form's SageMaker rows (docs/sagemaker.md): shown under the endpoint when it is a
//! SageMaker one (`sagemaker:NAME` typed into the endpoint row, or a config entry of kind
//! `sagemaker`), and the custom format's three rows when the format is `custom`. Each row is
//! the flag of the same name: empty leaves it to the config entry (or the SDK's default).

use super::setup_fields::{Field, FieldId, FieldKind};
use crate::config::overrides::EndpointOverrides;
use crate::endpoint::custom_payload::{check_pointer, parse_template};
use crate::endpoint::SageMakerFormat;

/// The SageMaker rows, empty.
pub(super) fn fields() -> Vec<Field> {
    let f = |id, label, kind, hint| Field {
        id,
        label,
        kind,
        value: String::new(),
        error: None,
        hint,
    };
    let mut formats = vec![String::new()];
    formats.extend(SageMakerFormat::NAMES.iter().map(|n| n.to_string()));
    vec![
        f(
            FieldId::Region,
            "  region",
            FieldKind::Text,
            "AWS region; empty = the config's, AWS_REGION or the profile's",
        ),
        f(
            FieldId::AwsProfile,
            "  AWS profile",
            FieldKind::Text,
            "named profile for credentials; empty = the SDK's chain",
        ),
        f(
            FieldId::SageMakerFormat,
            "  format",
            FieldKind::Choice(formats),
            "the container's JSON; - = the config's, else openai-chat",
        ),
        f(
            FieldId::InferenceComponent,
            "  inference comp",
            FieldKind::Text,
            "for endpoints hosting inference components",
        ),
        f(
            FieldId::TargetVariant,
            "  target variant",
            FieldKind::Text,
            "production variant to invoke; empty = SageMaker's choice",
        ),
        f(
            FieldId::RequestTemplate,
            "   template",
            FieldKind::Text,
            "custom: JSON with \"{prompt}\", \"{max_tokens}\", or @FILE",
        ),
        f(
            FieldId::TextPointer,
            "   text pointer",
            FieldKind::Text,
            "custom: JSON pointer to each event's text, e.g. /token/text",
        ),
        f(
            FieldId::TokenCountPointer,
            "   count pointer",
            FieldKind::Text,
            "custom: JSON pointer to the token count; empty = tokenizer",
        ),
    ]
}

/// True when the endpoint row's value `endpoint` is a SageMaker endpoint: `sagemaker:NAME`,
/// or one of the config's endpoints of kind `sagemaker`.
pub(super) fn is_sagemaker(endpoint: &str, sagemaker_endpoints: &[String]) -> bool {
    endpoint.starts_with("sagemaker:") || sagemaker_endpoints.iter().any(|n| n == endpoint)
}

/// True when row `id` is on a form whose endpoint is a SageMaker one (`sagemaker`) and whose
/// format row reads `format` (every row but these is).
pub(super) fn shown(id: FieldId, sagemaker: bool, format: &str) -> bool {
    match id {
        FieldId::Region
        | FieldId::AwsProfile
        | FieldId::SageMakerFormat
        | FieldId::InferenceComponent
        | FieldId::TargetVariant => sagemaker,
        FieldId::RequestTemplate | FieldId::TextPointer | FieldId::TokenCountPointer => {
            sagemaker && format == "custom"
        }
        _ => true,
    }
}

/// The rows' settings into `e`; `value(id)` is a row's value, `None` for a row not shown or
/// empty (which leaves its setting unset).
pub(super) fn apply(value: impl Fn(FieldId) -> Option<String>, e: &mut EndpointOverrides) {
    e.region = value(FieldId::Region);
    e.aws_profile = value(FieldId::AwsProfile);
    e.sagemaker_format = value(FieldId::SageMakerFormat).and_then(|f| SageMakerFormat::parse(&f));
    e.inference_component = value(FieldId::InferenceComponent);
    e.target_variant = value(FieldId::TargetVariant);
    e.request_template = value(FieldId::RequestTemplate);
    e.text_pointer = value(FieldId::TextPointer);
    e.token_count_pointer = value(FieldId::TokenCountPointer);
}

/// The rows' values from the command line's `e`.
pub(super) fn values(e: &EndpointOverrides) -> Vec<(FieldId, Option<String>)> {
    vec![
        (FieldId::Region, e.region.clone()),
        (FieldId::AwsProfile, e.aws_profile.clone()),
        (
            FieldId::SageMakerFormat,
            e.sagemaker_format.map(|f| f.as_str().to_string()),
        ),
        (FieldId::InferenceComponent, e.inference_component.clone()),
        (FieldId::TargetVariant, e.target_variant.clone()),
        (FieldId::RequestTemplate, e.request_template.clone()),
        (FieldId::TextPointer, e.text_pointer.clone()),
        (FieldId::TokenCountPointer, e.token_count_pointer.clone()),
    ]
}

/// Checks a custom-format row as the command line would (a template file is read when the
/// run starts).
pub(super) fn check(id: FieldId, v: &str) -> Result<(), String> {
    match id {
        _ if v.is_empty() => Ok(()),
        FieldId::RequestTemplate if v.starts_with('@') => Ok(()),
        FieldId::RequestTemplate => parse_template(v).map(|_| ()),
        FieldId::TextPointer | FieldId::TokenCountPointer => check_pointer(v),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::setup::{SetupChoices, SetupForm};

    fn form() -> SetupForm {
        SetupForm::new(&SetupChoices {
            endpoints: vec!["prod-sm".into(), "sim".into()],
            sagemaker_endpoints: vec!["prod-sm".into()],
            profiles: vec!["rag".into()],
            default_endpoint: "sim".into(),
            default_profile: "rag".into(),
            default_levels: vec![1, 2],
            default_requests: 8,
        })
    }

    /// The labels of the rows on the form, top to bottom, up to the model row.
    fn rows(f: &SetupForm) -> Vec<&'static str> {
        (0..f.fields.len())
            .filter(|i| f.shown(*i))
            .map(|i| f.fields[i].label.trim())
            .take_while(|l| *l != "model")
            .collect()
    }

    #[test]
    fn a_sagemaker_endpoint_shows_its_rows_and_runs_with_them() {
        let mut f = form();
        assert_eq!(rows(&f), ["plan", "endpoint"]);
        // typed into the endpoint row
        f.select(FieldId::Endpoint);
        f.activate();
        f.editing = Some("sagemaker:my-llm".into());
        f.finish_edit(true);
        assert_eq!(
            rows(&f),
            [
                "plan",
                "endpoint",
                "region",
                "AWS profile",
                "format",
                "inference comp",
                "target variant"
            ]
        );
        // the cursor walks them in order
        f.move_cursor(1);
        assert_eq!(f.fields[f.selected].id, FieldId::Region);
        f.set(FieldId::Region, "us-east-1");
        f.set(FieldId::InferenceComponent, "ic-1");
        f.select(FieldId::SageMakerFormat);
        f.cycle(1);
        assert_eq!(f.get(FieldId::SageMakerFormat), "openai-chat");
        f.cycle(-2);
        assert_eq!(f.get(FieldId::SageMakerFormat), "custom");
        assert_eq!(rows(&f)[7..], ["template", "text pointer", "count pointer"]);
        f.set(FieldId::RequestTemplate, r#"{"inputs": "hi"}"#);
        f.set(FieldId::TextPointer, "token.text");
        assert!(!f.validate());
        let errors: Vec<(FieldId, String)> = f
            .fields
            .iter()
            .filter_map(|x| x.error.clone().map(|e| (x.id, e)))
            .collect();
        assert_eq!(errors.len(), 2, "{errors:?}");
        assert!(errors[0]
            .1
            .starts_with("the request template has no \"{prompt}\""));
        assert!(errors[1]
            .1
            .starts_with("`token.text` is not a JSON pointer"));
        f.set(FieldId::RequestTemplate, r#"{"inputs": "{prompt}"}"#);
        f.set(FieldId::TextPointer, "/token/text");
        assert!(f.validate());
        let e = f.to_request().endpoint;
        assert_eq!(e.endpoint.as_deref(), Some("sagemaker:my-llm"));
        assert_eq!(e.region.as_deref(), Some("us-east-1"));
        assert_eq!(e.inference_component.as_deref(), Some("ic-1"));
        assert_eq!(e.aws_profile, None);
        assert_eq!(e.sagemaker_format, Some(SageMakerFormat::Custom));
        assert_eq!(
            e.request_template.as_deref(),
            Some(r#"{"inputs": "{prompt}"}"#)
        );
        assert_eq!(e.text_pointer.as_deref(), Some("/token/text"));
        assert_eq!(e.token_count_pointer, None);
        // back to the simulator: the rows go, and so do their settings
        f.set(FieldId::Endpoint, "sim");
        assert_eq!(rows(&f), ["plan", "endpoint"]);
        let e = f.to_request().endpoint;
        assert_eq!(
            (e.region, e.sagemaker_format, e.text_pointer),
            (None, None, None)
        );
        // a config entry of kind sagemaker shows them too, each empty = the entry's
        f.select(FieldId::Endpoint);
        f.cycle(-1);
        assert_eq!(f.get(FieldId::Endpoint), "prod-sm");
        // (the format is still custom: its rows too)
        assert_eq!(rows(&f).len(), 10);
        f.set(FieldId::SageMakerFormat, "");
        assert_eq!(rows(&f).len(), 7);
        assert_eq!(f.to_request().endpoint.sagemaker_format, None);
    }

    #[test]
    fn the_command_line_fills_the_sagemaker_rows() {
        let mut req = crate::launch::LaunchRequest::demo();
        req.endpoint.endpoint = Some("sagemaker:x".into());
        req.endpoint.region = Some("eu-west-1".into());
        req.endpoint.target_variant = Some("blue".into());
        req.endpoint.sagemaker_format = Some(SageMakerFormat::Tgi);
        let f = SetupForm::from_request(&SetupChoices::default(), &req);
        assert_eq!(f.get(FieldId::Region), "eu-west-1");
        assert_eq!(f.get(FieldId::TargetVariant), "blue");
        assert_eq!(f.get(FieldId::SageMakerFormat), "tgi");
        let again = f.to_request().endpoint;
        assert_eq!(again.region, req.endpoint.region);
        assert_eq!(again.target_variant, req.endpoint.target_variant);
        assert_eq!(again.sagemaker_format, req.endpoint.sagemaker_format);
        assert_eq!(check(FieldId::Endpoint, "sagemaker:"), Ok(()));
        assert_eq!(
            crate::tui::setup::check(FieldId::Endpoint, "sagemaker: "),
            Err("name the SageMaker endpoint: sagemaker:NAME".into())
        );
    }
}
