//! The pre-flight check: before any load, ask the endpoint what it serves (`GET /models`, whose
//! absence is fine) and send one small request the way the run will send them. Whatever is
//! wrong comes back as one line that names the URL and says what to do.

use serde::{Deserialize, Serialize};

use super::client::{display_url, Endpoint};
use super::client::{FetchError, Fetched};
use super::openai;
use super::probe::Probe;
use super::probe::Transport;
use super::sse::Framing;
use crate::record::{ErrorKind, ExchangeOutcome};

/// Prompt of the pre-flight request.
const PREFLIGHT_PROMPT: &str = "Say hello.";
/// Output tokens asked for by the pre-flight request.
const PREFLIGHT_MAX_TOKENS: u32 = 4;
/// Generation requests pre-flight sends while the server answers 5xx or 429.
const PREFLIGHT_ATTEMPTS: u32 = 3;
const PREFLIGHT_RETRY_PAUSE: std::time::Duration = std::time::Duration::from_millis(500);
/// Characters of an unexpected body shown in a diagnosis.
const SHOWN_BODY_CHARS: usize = 200;

/// What the server says about itself (recorded with the run).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerIdentity {
    /// Model ids from `GET /models` (empty when the server has no such route).
    pub models: Vec<String>,
    /// The `Server` response header, when sent.
    pub server_header: Option<String>,
    /// `owned_by` of the model in use (e.g. `vllm`), when `/models` says.
    pub owned_by: Option<String>,
    /// SageMaker: the production variant that answered the pre-flight
    /// (`x-amzn-invoked-production-variant`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub production_variant: Option<String>,
}

/// What the pre-flight check found wrong. Each message is one line naming the URL and the fix.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PreflightError {
    #[error("connection refused at {url}: is the server running and listening on port {port}?")]
    ConnectionRefused { url: String, port: u16 },
    #[error("cannot resolve the host name '{host}' ({url}): check the host in the base URL")]
    Dns { url: String, host: String },
    #[error(
        "TLS handshake with {url} failed ({detail}): check http:// versus https:// and the \
         server's certificate"
    )]
    Tls { url: String, detail: String },
    #[error("cannot connect to {url}: {detail}")]
    Connect { url: String, detail: String },
    #[error(
        "{url} did not answer within {timeout_ms} ms: the server may be overloaded or still \
         loading the model; retry, or give it longer (--preflight-timeout, --timeout)"
    )]
    Timeout { url: String, timeout_ms: u64 },
    #[error("{url} answered HTTP {status}: {}", key_hint(.key_var))]
    Unauthorized {
        url: String,
        status: u16,
        /// The name (never the value) of the API key variable.
        key_var: Option<String>,
    },
    #[error("model '{model}' is not served at {url}: {}", offered(.available, .server_message))]
    UnknownModel {
        url: String,
        model: String,
        /// What `GET /models` lists (may be empty).
        available: Vec<String>,
        /// The server's own words, when it rejected the model.
        server_message: Option<String>,
    },
    #[error(
        "{url} answered HTTP 404: no OpenAI-compatible API there; check the base URL (it \
         usually ends in /v1)"
    )]
    NotFound { url: String },
    #[error("no model given and {url} {}: pass --model NAME (or model = \"NAME\" in the endpoint's config)", listed(.available))]
    ModelNeeded {
        url: String,
        /// What `GET /models` lists (may be empty).
        available: Vec<String>,
    },
    #[error("{url} redirects (HTTP {status}) to {location}: use that address as the base URL")]
    Redirect {
        url: String,
        status: u16,
        location: String,
    },
    #[error(
        "{url} did not stream (content type '{content_type}', {data_events} data events): the \
         server may not support streaming; try --no-stream"
    )]
    StreamingUnsupported {
        url: String,
        content_type: String,
        data_events: u64,
    },
    #[error(
        "{url} did not answer like an OpenAI-compatible API (HTTP {status}, content type \
         '{content_type}'); it sent: {head}"
    )]
    NotOpenAi {
        url: String,
        status: u16,
        content_type: String,
        /// The first ~200 characters of the body.
        head: String,
    },
    #[error("{url} answered HTTP {status}: {message}")]
    HttpStatus {
        url: String,
        status: u16,
        message: String,
    },
    #[error("{url} reported an error inside the stream: {message}")]
    InStreamError { url: String, message: String },
    #[error("{url}: the stream broke before it was complete ({detail}); check the server's logs")]
    BrokenStream { url: String, detail: String },
    /// A SageMaker endpoint's diagnosis (see [`sagemaker_diagnosis`]).
    #[error("{endpoint}: {message}")]
    SageMaker {
        /// `sagemaker:NAME`.
        endpoint: String,
        message: String,
    },
}

fn key_hint(key_var: &Option<String>) -> String {
    match key_var {
        Some(var) => format!("the API key was rejected; check the environment variable {var}"),
        None => "the server wants an API key; put it in an environment variable and name that \
                 variable in the endpoint's api_key_env"
            .to_string(),
    }
}

fn offered(available: &[String], server_message: &Option<String>) -> String {
    let said = server_message
        .as_deref()
        .map(|m| format!("the server says \"{m}\"; "))
        .unwrap_or_default();
    if available.is_empty() {
        format!("{said}check the model name")
    } else {
        format!("{said}it offers: {}", available.join(", "))
    }
}

/// A body shown in a message: lossy UTF-8, whitespace collapsed, cut to ~200 characters.
fn show_body(head: &[u8]) -> String {
    let text = String::from_utf8_lossy(head);
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    openai::truncate_chars(&text, SHOWN_BODY_CHARS)
}

fn transport_error(
    url: &url::Url,
    t: Transport,
    detail: String,
    timeout_ms: u64,
) -> PreflightError {
    let shown = display_url(url);
    match t {
        Transport::Refused => PreflightError::ConnectionRefused {
            url: shown,
            port: url.port_or_known_default().unwrap_or(0),
        },
        Transport::Dns => PreflightError::Dns {
            url: shown,
            host: url.host_str().unwrap_or_default().to_string(),
        },
        Transport::Tls => PreflightError::Tls { url: shown, detail },
        Transport::Timeout => PreflightError::Timeout {
            url: shown,
            timeout_ms,
        },
        Transport::Other => PreflightError::Connect { url: shown, detail },
    }
}

/// True for content types that carry a stream (SSE or JSON lines).
fn streaming_content_type(ct: &str) -> bool {
    let ct = ct.to_ascii_lowercase();
    ["event-stream", "ndjson", "jsonl", "jsonlines", "json-seq"]
        .iter()
        .any(|m| ct.contains(m))
}

fn listed(available: &[String]) -> String {
    match available.len() {
        0 => "lists no models".to_string(),
        _ => format!("serves several: {}", available.join(", ")),
    }
}

/// The model to use when none was given: the only one `GET /models` lists.
pub async fn only_model(ep: &Endpoint) -> Result<String, PreflightError> {
    let models_url = ep.models_url();
    let timeout = ep.request_timeout().min(std::time::Duration::from_secs(30));
    let timeout_ms = timeout.as_millis() as u64;
    let available = match tokio::time::timeout(timeout, ep.get_models()).await {
        Err(_) => {
            return Err(PreflightError::Timeout {
                url: display_url(models_url),
                timeout_ms,
            })
        }
        Ok(Err(FetchError::Transport(t, detail))) => {
            return Err(transport_error(models_url, t, detail, timeout_ms))
        }
        Ok(Err(FetchError::Body)) => Vec::new(),
        Ok(Ok(f)) if (200..300).contains(&f.status) => openai::parse_models(&f.body)
            .map(|m| m.into_iter().map(|m| m.id).collect())
            .unwrap_or_default(),
        Ok(Ok(_)) => Vec::new(),
    };
    match available.as_slice() {
        [one] => Ok(one.clone()),
        _ => Err(PreflightError::ModelNeeded {
            url: display_url(models_url),
            available,
        }),
    }
}

/// Checks that the endpoint is reachable, accepts the key, serves the model and answers (and
/// streams, if asked) like an OpenAI-compatible API. Sends one small generation request (up to
/// three while the server answers 5xx or 429).
pub async fn preflight(ep: &Endpoint) -> Result<ServerIdentity, PreflightError> {
    if ep.is_sagemaker() {
        return preflight_sagemaker(ep).await;
    }
    let timeout = ep.request_timeout();
    let timeout_ms = u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX);
    let spec = ep.spec();
    let mut id = ServerIdentity::default();

    // 1. GET /models (optional route).
    let models_url = ep.models_url();
    match tokio::time::timeout(timeout, ep.get_models()).await {
        Err(_) => {
            return Err(PreflightError::Timeout {
                url: display_url(models_url),
                timeout_ms,
            })
        }
        Ok(Err(FetchError::Transport(t, detail))) => {
            return Err(transport_error(models_url, t, detail, timeout_ms));
        }
        // A body that broke off: leave the verdict to the generation request.
        Ok(Err(FetchError::Body)) => {}
        Ok(Ok(Fetched {
            status,
            server,
            body,
        })) => {
            id.server_header = server;
            if status == 401 || status == 403 {
                return Err(PreflightError::Unauthorized {
                    url: display_url(models_url),
                    status,
                    key_var: spec.api_key_env.clone(),
                });
            }
            // Anything else that is not a model list (404, 405, an HTML page) just skips the
            // model check: the generation request below decides.
            if (200..300).contains(&status) {
                if let Some(models) = openai::parse_models(&body) {
                    id.owned_by = models
                        .iter()
                        .find(|m| m.id == spec.model)
                        .and_then(|m| m.owned_by.clone());
                    id.models = models.into_iter().map(|m| m.id).collect();
                    if !id.models.is_empty() && !id.models.contains(&spec.model) {
                        return Err(PreflightError::UnknownModel {
                            url: display_url(models_url),
                            model: spec.model.clone(),
                            available: id.models,
                            server_message: None,
                        });
                    }
                }
            }
        }
    }

    // 2. One small generation request, exactly as the run sends them; asked again (twice at
    // most, half a second apart) while the server answers 5xx or 429: a server that fails a
    // share of its requests, or is busy a moment, is for the run to measure, and one that
    // fails them all still fails here.
    let (out, probe) = small_request(ep).await;
    if probe.server_header.is_some() {
        id.server_header = probe.server_header.clone();
    }
    match diagnose(ep, &id, &out.error, &probe, timeout_ms) {
        Some(e) => Err(e),
        None => Ok(id),
    }
}

/// One small generation request, exactly as the run sends them; asked again (up to
/// [`PREFLIGHT_ATTEMPTS`] in all, [`PREFLIGHT_RETRY_PAUSE`] apart) while the answer is a 5xx
/// or 429, so a server busy for a moment is left for the run to measure.
async fn small_request(ep: &Endpoint) -> (ExchangeOutcome, Probe) {
    let mut attempt = 1;
    loop {
        let mut probe = Probe::default();
        let out = ep
            .exchange(
                crate::workload::messages::RequestInput::Text(PREFLIGHT_PROMPT),
                PREFLIGHT_MAX_TOKENS,
                Some(&mut probe),
                None,
            )
            .await;
        let transient = out.error.as_ref().is_some_and(|e| {
            e.kind == ErrorKind::HttpStatus
                && e.status
                    .is_some_and(|s| s == 429 || (500..600).contains(&s))
        });
        if !transient || attempt == PREFLIGHT_ATTEMPTS {
            return (out, probe);
        }
        attempt += 1;
        tokio::time::sleep(PREFLIGHT_RETRY_PAUSE).await;
    }
}

/// A SageMaker endpoint's pre-flight: one small invocation, the way the run sends them (no
/// `/models` to ask: the container serves the model it holds). Asked again, twice at most,
/// while SageMaker throttles or the container answers 5xx, as on the HTTP path.
async fn preflight_sagemaker(ep: &Endpoint) -> Result<ServerIdentity, PreflightError> {
    let (out, probe) = small_request(ep).await;
    let spec = ep.spec();
    let target = spec.sagemaker.clone().unwrap_or_default();
    let message = sagemaker_diagnosis(
        &target,
        spec.stream,
        out.error.as_ref(),
        probe.data_events,
        ep.request_timeout().as_millis(),
    );
    match message {
        Some(message) => Err(PreflightError::SageMaker {
            endpoint: super::sagemaker_spec::display_name(&target.endpoint_name),
            message,
        }),
        None => Ok(ServerIdentity {
            models: Vec::new(),
            server_header: probe
                .production_variant
                .as_ref()
                .map(|variant| format!("SageMaker production variant {variant}")),
            owned_by: None,
            production_variant: probe.production_variant,
        }),
    }
}

/// The settings that shape a SageMaker request and read its answer.
fn format_flags(target: &super::SageMakerTarget) -> &'static str {
    match target.format {
        super::SageMakerFormat::Custom => {
            "--sagemaker-request-template and the pointers (--sagemaker-text-pointer, \
             --sagemaker-token-count-pointer)"
        }
        _ => "--sagemaker-format",
    }
}

/// What went wrong with a SageMaker pre-flight invocation, in one line, or `None`.
pub fn sagemaker_diagnosis(
    target: &super::SageMakerTarget,
    stream: bool,
    error: Option<&crate::record::RequestError>,
    data_events: u64,
    timeout_ms: u128,
) -> Option<String> {
    let action = if stream {
        "sagemaker:InvokeEndpointWithResponseStream"
    } else {
        "sagemaker:InvokeEndpoint"
    };
    let region = target.region.as_deref().unwrap_or("the default region");
    let name = &target.endpoint_name;
    let Some(err) = error else {
        if stream && data_events == 0 {
            return Some(
                "the response stream carried no events: the container may not support \
                 streaming; try --no-stream"
                    .to_string(),
            );
        }
        return None;
    };
    let m = &err.message;
    let lower = m.to_ascii_lowercase();
    let code = m.split([':', ' ']).next().unwrap_or_default();
    Some(match err.kind {
        ErrorKind::Connect if lower.contains("credential") => {
            let profile = target
                .profile
                .as_deref()
                .map(|p| format!(" (profile {p})"))
                .unwrap_or_default();
            format!(
                "no AWS credentials found: the SDK tried the environment (AWS_ACCESS_KEY_ID, \
                 AWS_SECRET_ACCESS_KEY), the shared config and credentials files{profile}, SSO, \
                 web identity, and container and instance metadata; set them, or pass \
                 --aws-profile NAME"
            )
        }
        ErrorKind::Connect if lower.contains("region") => {
            "no AWS region: pass --region REGION (or set AWS_REGION, or region in the \
             endpoint's config)"
                .to_string()
        }
        ErrorKind::Connect => format!("cannot reach SageMaker in {region}: {m}"),
        ErrorKind::Timeout => format!(
            "no answer within {timeout_ms} ms: the endpoint may be overloaded or scaling from \
             zero; retry, or raise --timeout"
        ),
        ErrorKind::HttpStatus => match code {
            "ExpiredTokenException" | "ExpiredToken" => {
                "the AWS credentials have expired: refresh them (e.g. aws sso login) and run again"
                    .to_string()
            }
            "AccessDeniedException" => format!(
                "access denied: the AWS identity may not call {action} on endpoint {name}; \
                 grant it that action (docs/sagemaker.md has the IAM policy)"
            ),
            "UnrecognizedClientException"
            | "InvalidSignatureException"
            | "InvalidClientTokenId"
            | "SignatureDoesNotMatch" => format!(
                "the AWS credentials were rejected ({code}): check the access key, the secret \
                 and the profile"
            ),
            "ValidationError" if lower.contains("inference component") => format!(
                "the inference component {} was not found on endpoint {name}: check \
                 --inference-component (SageMaker says: {m})",
                target
                    .inference_component
                    .as_deref()
                    .unwrap_or("(none given)")
            ),
            "ValidationError" if lower.contains("not found") => {
                format!("endpoint {name} was not found in {region}: check the name and --region")
            }
            "ValidationError"
                if lower.contains("not in service") || lower.contains("inservice") =>
            {
                format!(
                    "endpoint {name} is not InService yet: wait until its status is InService \
                     (SageMaker says: {m})"
                )
            }
            "ValidationError" if stream && lower.contains("stream") => format!(
                "the container does not support response streaming: try --no-stream \
                 (SageMaker says: {m})"
            ),
            "ModelError" => format!(
                "the container rejected the request in format {}: {m}; check {}",
                target.format.as_str(),
                format_flags(target)
            ),
            _ => format!("SageMaker answered HTTP {}: {m}", err.status.unwrap_or(0)),
        },
        ErrorKind::InStreamError => format!("the container failed inside the stream: {m}"),
        ErrorKind::BrokenStream => format!("the response stream broke: {m}"),
        ErrorKind::BadPayload => format!(
            "the container's answer is not {} JSON ({m}): check {}",
            target.format.as_str(),
            format_flags(target)
        ),
        // an answer the model got wrong says nothing of the endpoint (no tools go to SageMaker)
        ErrorKind::Cancelled | ErrorKind::BadToolCall => return None,
    })
}

/// The diagnosis of the generation request, or `None` when it went well.
fn diagnose(
    ep: &Endpoint,
    id: &ServerIdentity,
    error: &Option<crate::record::RequestError>,
    probe: &Probe,
    timeout_ms: u64,
) -> Option<PreflightError> {
    let gen_url = ep.generate_url();
    let url = display_url(gen_url);
    let spec = ep.spec();
    let status = probe.status.unwrap_or(0);
    let content_type = probe.content_type.clone().unwrap_or_default();
    let not_openai = || PreflightError::NotOpenAi {
        url: url.clone(),
        status,
        content_type: content_type.clone(),
        head: show_body(&probe.head),
    };
    let looks_html = content_type.to_ascii_lowercase().contains("html")
        || probe.head.trim_ascii_start().first() == Some(&b'<');

    if let Some(err) = error {
        match err.kind {
            ErrorKind::Connect => {
                let t = probe.transport.unwrap_or(Transport::Other);
                let detail = probe.transport_detail.clone().unwrap_or_default();
                return Some(transport_error(gen_url, t, detail, timeout_ms));
            }
            ErrorKind::Timeout => {
                return Some(PreflightError::Timeout { url, timeout_ms });
            }
            ErrorKind::HttpStatus => return Some(http_status(ep, id, err, probe, looks_html)),
            _ => {}
        }
    }
    // A 2xx answer from here on.
    if looks_html {
        return Some(not_openai());
    }
    if spec.stream {
        let streamed = probe.data_events > 0
            && (probe.framing == Some(Framing::Sse) || streaming_content_type(&content_type));
        if !streamed {
            return Some(PreflightError::StreamingUnsupported {
                url,
                content_type,
                data_events: probe.data_events,
            });
        }
    }
    // a broken tool call is the model's answer, not the endpoint's failure
    if let Some(err) = error.as_ref().filter(|e| e.kind != ErrorKind::BadToolCall) {
        return Some(match err.kind {
            ErrorKind::InStreamError => PreflightError::InStreamError {
                url,
                message: err.message.clone(),
            },
            ErrorKind::BrokenStream => PreflightError::BrokenStream {
                url,
                detail: err.message.clone(),
            },
            _ => not_openai(),
        });
    }
    if probe.openai_chunks == 0 {
        return Some(not_openai());
    }
    None
}

/// The diagnosis of a non-2xx answer to the generation request.
fn http_status(
    ep: &Endpoint,
    id: &ServerIdentity,
    err: &crate::record::RequestError,
    probe: &Probe,
    looks_html: bool,
) -> PreflightError {
    let url = display_url(ep.generate_url());
    let status = err.status.unwrap_or(0);
    let server_message = openai::error_message(&probe.head);
    if status == 401 || status == 403 {
        return PreflightError::Unauthorized {
            url,
            status,
            key_var: ep.spec().api_key_env.clone(),
        };
    }
    if (300..400).contains(&status) {
        return PreflightError::Redirect {
            url,
            status,
            location: probe.location.clone().unwrap_or_else(|| "?".to_string()),
        };
    }
    if let Some(m) = &server_message {
        let lower = m.to_ascii_lowercase();
        let about_model = lower.contains("model")
            && [
                "not exist",
                "does not",
                "not found",
                "unknown",
                "invalid",
                "no such",
            ]
            .iter()
            .any(|w| lower.contains(w));
        if matches!(status, 400 | 404 | 422) && about_model {
            return PreflightError::UnknownModel {
                url,
                model: ep.spec().model.clone(),
                available: id.models.clone(),
                server_message: Some(m.clone()),
            };
        }
    }
    if status == 404 && server_message.is_none() {
        return PreflightError::NotFound { url };
    }
    if looks_html && server_message.is_none() {
        return PreflightError::NotOpenAi {
            url,
            status,
            content_type: probe.content_type.clone().unwrap_or_default(),
            head: show_body(&probe.head),
        };
    }
    PreflightError::HttpStatus {
        url,
        status,
        message: err.message.clone(),
    }
}
