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
}

impl SageMakerFormat {
    /// Every format, as the flag and the config spell it.
    pub const NAMES: [&'static str; 3] = ["openai-chat", "openai-completions", "tgi"];

    /// The format named `s` (`openai-chat`, `openai-completions`, `tgi`).
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "openai-chat" => Some(Self::OpenaiChat),
            "openai-completions" => Some(Self::OpenaiCompletions),
            "tgi" => Some(Self::Tgi),
            _ => None,
        }
    }

    /// The name the flag and the config use.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::OpenaiChat => "openai-chat",
            Self::OpenaiCompletions => "openai-completions",
            Self::Tgi => "tgi",
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
}

/// The `base_url` a SageMaker endpoint's spec carries (for tables and the record).
pub fn display_name(endpoint_name: &str) -> String {
    format!("sagemaker:{endpoint_name}")
}
