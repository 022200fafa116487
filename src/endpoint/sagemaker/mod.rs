//! Amazon SageMaker AI endpoints through the AWS SDK for Rust (docs/sagemaker.md).
//!
//! The SDK owns everything AWS-specific: the credential chain and region (`aws-config`), SigV4
//! signing, the endpoint URL (`AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME` / `AWS_ENDPOINT_URL` for a
//! custom one, which is how the tests reach the simulator), and the event-stream framing of
//! `InvokeEndpointWithResponseStream` (prelude and message CRCs, exception frames). What is
//! ours is what no library does: the container's payload inside the frames. Payload parts cut
//! the container's own stream at arbitrary bytes, so they are fed, as they come, to the same
//! SSE / JSON-lines splitter the HTTP path uses ([`super::sse`], with its line-length cap),
//! and each event is read as OpenAI or TGI JSON ([`super::tgi`]).
//!
//! Timing as on the HTTP path: the clock is read in this task the moment the SDK hands over a
//! payload part (the SDK's decoder sits between the socket and that stamp; docs/sagemaker.md
//! says how much it adds). The SDK's retries are off (a load tester counts every attempt), its
//! stalled-stream protection is off (a stall is for our `--timeout` to catch and count), and
//! its connect and operation timeouts are our `--timeout`.

use std::time::Duration;

use aws_sdk_sagemakerruntime as sm;
use sm::error::{ProvideErrorMetadata, SdkError};
use sm::operation::invoke_endpoint::InvokeEndpointError;
use sm::operation::invoke_endpoint_with_response_stream::InvokeEndpointWithResponseStreamError;
use sm::primitives::Blob;
use sm::types::error::ResponseStreamError;
use sm::types::ResponseStream;

use super::probe::{Probe, Transport};
use super::stream::{parse_whole, Dialect, StreamReader};
use super::{openai, tgi, Api, EndpointSpec, SageMakerFormat, SageMakerTarget};
use crate::clock::now_ns;
use crate::record::{ErrorKind, ExchangeOutcome, RequestError};
use crate::workload::messages::{flatten_for_completions, RequestInput};

/// The header asking the simulator for ground-truth send times (as on the HTTP path).
const SIM_TIMING_HEADER: &str = "x-rightsize-sim-timing";

/// The AWS configuration for `target`'s clients (the runtime's, and CloudWatch's for its
/// metrics): `target`'s region and profile, one attempt per request (a load tester counts
/// every attempt), no stalled-stream protection (a stall is for `--timeout`), `timeout` to
/// connect and for each operation.
pub(crate) async fn sdk_config(
    target: &SageMakerTarget,
    timeout: Duration,
) -> aws_config::SdkConfig {
    crate::aws::sdk_config(
        target.region.as_deref(),
        target.profile.as_deref(),
        timeout,
        crate::aws::Attempts::One,
    )
    .await
}

/// One SageMaker endpoint's SDK client, built on the first request (loading the AWS config is
/// async, and building an [`super::Endpoint`] is not).
pub(crate) struct SageMakerClient {
    target: SageMakerTarget,
    /// How the answer's events read (a custom format's pointers, shared by every request).
    dialect: Dialect,
    timeout: Duration,
    client: tokio::sync::OnceCell<sm::Client>,
}

impl SageMakerClient {
    pub fn new(target: &SageMakerTarget, timeout: Duration) -> Self {
        let dialect = match target.format {
            SageMakerFormat::Tgi => Dialect::Tgi,
            SageMakerFormat::OpenaiChat | SageMakerFormat::OpenaiCompletions => Dialect::OpenAi,
            // the config's resolution gives a custom format its template and pointers
            SageMakerFormat::Custom => Dialect::Custom(std::sync::Arc::new(
                target.custom.clone().unwrap_or_default(),
            )),
        };
        SageMakerClient {
            target: target.clone(),
            dialect,
            timeout,
            client: tokio::sync::OnceCell::new(),
        }
    }

    async fn client(&self) -> &sm::Client {
        self.client
            .get_or_init(|| async {
                sm::Client::new(&sdk_config(&self.target, self.timeout).await)
            })
            .await
    }

    /// The request body in the endpoint's format.
    pub fn request_body(
        &self,
        spec: &EndpointSpec,
        input: RequestInput<'_>,
        max_tokens: u32,
    ) -> Vec<u8> {
        let openai_as = |api| {
            let spec = EndpointSpec {
                api,
                ..spec.clone()
            };
            openai::request_body(&spec, input, max_tokens, None)
        };
        if let RequestInput::Captured { body, .. } = input {
            return super::captured::sagemaker_body(body, spec.stream, max_tokens);
        }
        match self.target.format {
            SageMakerFormat::OpenaiChat => openai_as(Api::Chat),
            SageMakerFormat::OpenaiCompletions => openai_as(Api::Completions),
            SageMakerFormat::Tgi => tgi::request_body(&prompt_text(input), max_tokens, spec.stream),
            SageMakerFormat::Custom => match &self.dialect {
                Dialect::Custom(c) => c.request_body(&prompt_text(input), max_tokens, spec.stream),
                _ => Vec::new(),
            },
        }
    }

    /// One invocation, streamed or whole, into `out` (the caller bounds it with the request
    /// timeout and stamps its start and end).
    pub async fn exchange(
        &self,
        body: Vec<u8>,
        stream: bool,
        sim_timing: bool,
        out: &mut ExchangeOutcome,
        probe: Option<&mut Probe>,
    ) {
        let client = self.client().await;
        let t = &self.target;
        if stream {
            let req = client
                .invoke_endpoint_with_response_stream()
                .endpoint_name(&t.endpoint_name)
                .content_type("application/json")
                .body(Blob::new(body))
                .set_inference_component_name(t.inference_component.clone())
                .set_target_variant(t.target_variant.clone())
                .set_custom_attributes(t.custom_attributes.clone());
            let sent = if sim_timing {
                req.customize()
                    .mutate_request(|r| {
                        r.headers_mut().insert(SIM_TIMING_HEADER, "1");
                    })
                    .send()
                    .await
            } else {
                req.send().await
            };
            match sent {
                Ok(o) => self.read_stream(o, out, probe).await,
                Err(e) => {
                    let model = match &e {
                        SdkError::ServiceError(se) => match se.err() {
                            InvokeEndpointWithResponseStreamError::ModelError(m) => Some((
                                m.original_status_code(),
                                m.original_message().map(str::to_string),
                            )),
                            _ => None,
                        },
                        _ => None,
                    };
                    fail(out, probe, &e, model);
                }
            }
        } else {
            let req = client
                .invoke_endpoint()
                .endpoint_name(&t.endpoint_name)
                .content_type("application/json")
                .accept("application/json")
                .body(Blob::new(body))
                .set_inference_component_name(t.inference_component.clone())
                .set_target_variant(t.target_variant.clone())
                .set_custom_attributes(t.custom_attributes.clone());
            let sent = if sim_timing {
                req.customize()
                    .mutate_request(|r| {
                        r.headers_mut().insert(SIM_TIMING_HEADER, "1");
                    })
                    .send()
                    .await
            } else {
                req.send().await
            };
            match sent {
                Ok(o) => {
                    // the SDK returns once it has read the whole body
                    let at = now_ns();
                    let mut probe = probe;
                    if let Some(p) = probe.as_deref_mut() {
                        p.status = Some(200);
                        p.content_type = o.content_type().map(str::to_string);
                        p.production_variant = o.invoked_production_variant().map(str::to_string);
                    }
                    let body = o.body.map(Blob::into_inner).unwrap_or_default();
                    if let Some(p) = probe.as_deref_mut() {
                        p.head = body.iter().take(2048).copied().collect();
                    }
                    parse_whole(&self.dialect, &body, at, out, probe);
                }
                Err(e) => {
                    let model = match &e {
                        SdkError::ServiceError(se) => match se.err() {
                            InvokeEndpointError::ModelError(m) => Some((
                                m.original_status_code(),
                                m.original_message().map(str::to_string),
                            )),
                            _ => None,
                        },
                        _ => None,
                    };
                    fail(out, probe, &e, model);
                }
            }
        }
    }

    async fn read_stream(
        &self,
        mut o: sm::operation::invoke_endpoint_with_response_stream::InvokeEndpointWithResponseStreamOutput,
        out: &mut ExchangeOutcome,
        mut probe: Option<&mut Probe>,
    ) {
        if let Some(p) = probe.as_deref_mut() {
            p.status = Some(200);
            p.content_type = o.content_type().map(str::to_string);
            p.production_variant = o.invoked_production_variant().map(str::to_string);
        }
        let mut reader = StreamReader::new(self.dialect.clone());
        loop {
            match o.body.recv().await {
                Ok(Some(ResponseStream::PayloadPart(part))) => {
                    let at = now_ns();
                    let bytes = part.bytes().map(Blob::as_ref).unwrap_or_default();
                    if reader.on_bytes(bytes, at, out, probe.as_deref_mut()) {
                        break;
                    }
                }
                // an event type newer than this SDK: not part of the answer
                Ok(Some(_)) => {}
                Ok(None) => {
                    reader.on_end(out);
                    break;
                }
                Err(e) => {
                    out.error = Some(stream_error(&e));
                    break;
                }
            }
        }
        reader.finish(out, probe);
    }
}

/// A prompt as one text: a chat-message workload flattened to one labelled prompt, as on the
/// completions API.
fn prompt_text(input: RequestInput<'_>) -> std::borrow::Cow<'_, str> {
    match input.prompt() {
        RequestInput::Text(t) => std::borrow::Cow::Borrowed(t),
        RequestInput::Messages(list) => std::borrow::Cow::Owned(flatten_for_completions(list)),
        RequestInput::Captured { .. } => unreachable!("prompt() unwraps a capture"),
    }
}

/// An error frame inside the stream, or a stream that broke (bad CRC, truncated frame, reset).
fn stream_error(
    e: &SdkError<ResponseStreamError, aws_smithy_types::event_stream::RawMessage>,
) -> RequestError {
    match e {
        SdkError::ServiceError(se) => {
            let err = se.err();
            let code = err.code().unwrap_or("error frame");
            let message = err.message().unwrap_or("no message");
            let kind = match err {
                ResponseStreamError::InternalStreamFailure(_) => ErrorKind::BrokenStream,
                _ => ErrorKind::InStreamError,
            };
            let code = match err {
                ResponseStreamError::ModelStreamError(m) => match m.error_code() {
                    Some(c) => format!("ModelStreamError ({c})"),
                    None => "ModelStreamError".to_string(),
                },
                ResponseStreamError::InternalStreamFailure(_) => {
                    "InternalStreamFailure".to_string()
                }
                _ => code.to_string(),
            };
            RequestError {
                kind,
                status: None,
                message: openai::truncate_chars(
                    &format!("{code}: {message}"),
                    openai::MAX_MESSAGE_CHARS,
                ),
            }
        }
        other => RequestError {
            kind: ErrorKind::BrokenStream,
            status: None,
            message: format!("reading the event stream failed: {}", chain(other)),
        },
    }
}

/// The SageMaker error codes that mean "slow down" rather than "broken": recorded with
/// status 429 like an HTTP server's throttling.
const THROTTLED: [&str; 3] = [
    "ThrottlingException",
    "ModelNotReadyException",
    "TooManyRequestsException",
];

/// A failed invocation into `out` (and `probe`): a service error keeps its code (the name
/// users search for) and message; a ModelError the container's own status and message.
fn fail<E>(
    out: &mut ExchangeOutcome,
    probe: Option<&mut Probe>,
    e: &SdkError<E, sm::config::http::HttpResponse>,
    model_error: Option<(Option<i32>, Option<String>)>,
) where
    E: ProvideErrorMetadata + std::error::Error + 'static,
{
    let (error, transport) = match e {
        SdkError::ServiceError(se) => {
            let status = se.raw().status().as_u16();
            let code = se.err().code().unwrap_or("UnknownError").to_string();
            let message = se.err().message().unwrap_or("no message").to_string();
            let (status, message) = match model_error {
                Some((original, original_message)) => (
                    original
                        .and_then(|s| u16::try_from(s).ok())
                        .unwrap_or(status),
                    format!(
                        "ModelError: the container answered {}: {}",
                        original.map_or("an error".to_string(), |s| s.to_string()),
                        original_message.as_deref().unwrap_or(&message)
                    ),
                ),
                None if THROTTLED.contains(&code.as_str()) => {
                    (429, format!("{code} (throttled): {message}"))
                }
                None => (status, format!("{code}: {message}")),
            };
            (
                RequestError {
                    kind: ErrorKind::HttpStatus,
                    status: Some(status),
                    message: openai::truncate_chars(&message, openai::MAX_MESSAGE_CHARS),
                },
                None,
            )
        }
        SdkError::TimeoutError(_) => (
            RequestError {
                kind: ErrorKind::Timeout,
                status: None,
                message: "the SDK's timeout ran out before the response".to_string(),
            },
            Some(Transport::Timeout),
        ),
        SdkError::ResponseError(_) => (
            RequestError {
                kind: ErrorKind::BadPayload,
                status: None,
                message: format!("the response could not be read: {}", chain(e)),
            },
            None,
        ),
        SdkError::DispatchFailure(d) => {
            let text = chain(e);
            let transport = if d.is_timeout() {
                Transport::Timeout
            } else {
                classify_text(&text)
            };
            (
                RequestError {
                    kind: if transport == Transport::Timeout {
                        ErrorKind::Timeout
                    } else {
                        ErrorKind::Connect
                    },
                    status: None,
                    message: text,
                },
                Some(transport),
            )
        }
        // no credentials, no region, a bad endpoint URL: nothing was sent
        _ => (
            RequestError {
                kind: ErrorKind::Connect,
                status: None,
                message: chain(e),
            },
            Some(Transport::Other),
        ),
    };
    if let Some(p) = probe {
        p.status = error.status;
        p.transport = transport;
        p.transport_detail = transport.map(|_| error.message.clone());
    }
    out.error = Some(error);
}

/// An error and its causes, each said once, joined with `: ` (their `Display` only: the
/// `Debug` forms carry raw frame bytes).
fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut next = Some(e);
    while let Some(err) = next {
        let text = err.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        next = err.source();
    }
    parts.join(": ")
}

/// How a transport failure looked, from the SDK's error text.
fn classify_text(text: &str) -> Transport {
    let t = text.to_ascii_lowercase();
    if t.contains("connection refused") {
        Transport::Refused
    } else if [
        "dns error",
        "failed to lookup address",
        "name or service not known",
    ]
    .iter()
    .any(|m| t.contains(m))
    {
        Transport::Dns
    } else if ["certificate", "tls", "handshake"]
        .iter()
        .any(|m| t.contains(m))
    {
        Transport::Tls
    } else {
        Transport::Other
    }
}
