//! What names a SageMaker AI endpoint (kind `sagemaker`, docs/sagemaker.md): its name, where
//! it is, and which payload format its container speaks. Plain data, in every build: a config
//! file naming a SageMaker endpoint reads the same with or without the `sagemaker` feature,
//! and only sending to it needs the AWS SDK. Holds no credentials (they come from the AWS
//! SDK's credential chain), so it is recorded in `run.json` as it is.

use serde::{Deserialize, Serialize};

/// The JSON the container reads and writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SageMakerFormat {
    /// OpenAI chat messages (LMI / vLLM / SGLang containers); streams OpenAI chunks.
    #[default]
    OpenaiChat,
    /// OpenAI completions (`prompt`).
    OpenaiCompletions,
    /// Hugging Face TGI / LLM container: `{"inputs", "parameters": {"max_new_tokens"},
    /// "stream"}`, streamed as `data:{"token":{"text"}}` lines with a final `generated_text`.
    Tgi,
    /// Any other JSON: a request template and JSON pointers ([`SageMakerTarget::custom`],
    /// [`super::custom_payload`]).
    Custom,
}

impl SageMakerFormat {
    /// Every format, as the flag and the config spell it.
    pub const NAMES: [&'static str; 4] = ["openai-chat", "openai-completions", "tgi", "custom"];

    /// The format named `s` (one of [`Self::NAMES`]).
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "openai-chat" => Some(Self::OpenaiChat),
            "openai-completions" => Some(Self::OpenaiCompletions),
            "tgi" => Some(Self::Tgi),
            "custom" => Some(Self::Custom),
            _ => None,
        }
    }

    /// The name the flag and the config use.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::OpenaiChat => "openai-chat",
            Self::OpenaiCompletions => "openai-completions",
            Self::Tgi => "tgi",
            Self::Custom => "custom",
        }
    }
}

/// One SageMaker AI real-time endpoint.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SageMakerTarget {
    /// The endpoint's name (`InvokeEndpoint`'s `EndpointName`).
    pub endpoint_name: String,
    /// AWS region; `None`: the SDK's chain (`AWS_REGION`, the profile's `region`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub region: Option<String>,
    /// AWS named profile for credentials and region; `None`: the default chain.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// Sent as `X-Amzn-SageMaker-Inference-Component`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inference_component: Option<String>,
    /// Sent as `X-Amzn-SageMaker-Target-Variant`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_variant: Option<String>,
    /// Sent as `X-Amzn-SageMaker-Custom-Attributes`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub custom_attributes: Option<String>,
    #[serde(default)]
    pub format: SageMakerFormat,
    /// With `format` custom: the request template and the pointers into the answer (never
    /// credentials: the template is the request body).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub custom: Option<super::custom_payload::CustomPayload>,
}

/// The `base_url` a SageMaker endpoint's spec carries (for tables and the record).
pub fn display_name(endpoint_name: &str) -> String {
    format!("sagemaker:{endpoint_name}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_format_name_reads_back() {
        for name in SageMakerFormat::NAMES {
            let f = SageMakerFormat::parse(name).unwrap();
            assert_eq!(f.as_str(), name);
            // the config and run.json spell it the same
            assert_eq!(serde_json::to_value(f).unwrap(), name);
        }
        assert_eq!(SageMakerFormat::parse("vllm"), None);
    }
}
