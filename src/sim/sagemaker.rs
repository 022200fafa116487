//! The simulator's SageMaker AI runtime API (docs/simulator.md, docs/sagemaker.md):
//! `POST /endpoints/{name}/invocations` answers the container's body whole;
//! `POST /endpoints/{name}/invocations-response-stream` wraps the container's stream (OpenAI
//! SSE or TGI lines) in AWS event-stream frames, one `PayloadPart` per piece, the pieces cut
//! at random byte boundaries as SageMaker cuts them. Frames are written with the SDK's own
//! `aws-smithy-eventstream` (prelude and message CRCs); with test credentials configured,
//! each request's SigV4 `Authorization` is recomputed with the SDK's signer (`aws-sigv4`) and
//! compared. Errors answer in the SageMaker runtime's restJson shape (`X-Amzn-ErrorType`,
//! `{"Message"}`), so the SDK reads them as the errors a real endpoint gives.

use aws_sigv4::http_request::{sign, SignableBody, SignableRequest, SigningSettings};
use aws_sigv4::sign::v4;
use aws_smithy_types::event_stream::{Header, HeaderValue, Message};
use bytes::{BufMut, Bytes};

use crate::rng::SplitMix64;

/// A way the simulated SageMaker endpoint refuses every invocation (`--sagemaker-refuse`),
/// for testing the pre-flight's diagnoses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// `AccessDeniedException` (HTTP 403): the identity may not invoke.
    AccessDenied,
    /// `ExpiredTokenException` (HTTP 403): the session credentials expired.
    ExpiredToken,
    /// `ValidationError` (HTTP 400): no endpoint of that name.
    NoEndpoint,
    /// `ValidationError` (HTTP 400): the endpoint is not InService.
    NotInService,
    /// `ValidationError` (HTTP 400): no inference component of that name.
    NoComponent,
    /// `ValidationError` (HTTP 400): the container does not stream.
    NoStreaming,
    /// `ThrottlingException` (HTTP 400).
    Throttled,
}

impl Refusal {
    /// Every refusal, as the flag spells it.
    pub const NAMES: [&'static str; 7] = [
        "access-denied",
        "expired-token",
        "no-endpoint",
        "not-in-service",
        "no-component",
        "no-streaming",
        "throttled",
    ];

    /// The refusal named `s`.
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "access-denied" => Self::AccessDenied,
            "expired-token" => Self::ExpiredToken,
            "no-endpoint" => Self::NoEndpoint,
            "not-in-service" => Self::NotInService,
            "no-component" => Self::NoComponent,
            "no-streaming" => Self::NoStreaming,
            "throttled" => Self::Throttled,
            _ => return None,
        })
    }

    /// The status, error type and message SageMaker answers with, for `endpoint` (and the
    /// inference component asked for).
    pub fn answer(self, endpoint: &str, component: Option<&str>) -> (u16, &'static str, String) {
        match self {
            Self::AccessDenied => (
                403,
                "AccessDeniedException",
                format!(
                    "User: arn:aws:iam::000000000000:user/sim is not authorized to perform: \
                     sagemaker:InvokeEndpointWithResponseStream on resource: \
                     arn:aws:sagemaker:us-east-1:000000000000:endpoint/{endpoint} because no \
                     identity-based policy allows the sagemaker:InvokeEndpointWithResponseStream \
                     action"
                ),
            ),
            Self::ExpiredToken => (
                403,
                "ExpiredTokenException",
                "The security token included in the request is expired".to_string(),
            ),
            Self::NoEndpoint => (
                400,
                "ValidationError",
                format!("Endpoint {endpoint} of account 000000000000 not found."),
            ),
            Self::NotInService => (
                400,
                "ValidationError",
                format!("Endpoint {endpoint} of account 000000000000 is not in service: Creating."),
            ),
            Self::NoComponent => (
                400,
                "ValidationError",
                format!(
                    "Inference Component {} not found for endpoint {endpoint}.",
                    component.unwrap_or("(none given)")
                ),
            ),
            Self::NoStreaming => (
                400,
                "ValidationError",
                "Model container does not support response streaming.".to_string(),
            ),
            Self::Throttled => (400, "ThrottlingException", "Rate exceeded".to_string()),
        }
    }
}

/// A fault in the event-stream framing itself (`--sagemaker-frame-fault`), for the client's
/// frame-level tests: applied to the second frame of every streamed answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameFault {
    /// The prelude's CRC does not match its 8 bytes.
    BadPreludeCrc,
    /// The message CRC does not match the frame.
    BadMessageCrc,
    /// The body ends in the middle of a frame.
    Truncated,
}

impl FrameFault {
    pub const NAMES: [&'static str; 3] = ["bad-prelude-crc", "bad-message-crc", "truncated"];

    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "bad-prelude-crc" => Self::BadPreludeCrc,
            "bad-message-crc" => Self::BadMessageCrc,
            "truncated" => Self::Truncated,
            _ => return None,
        })
    }
}

/// The SageMaker side of the simulator's configuration.
#[derive(Clone, PartialEq, Default)]
pub struct SageMakerSim {
    /// Test credentials every request must be signed with (`--sagemaker-access-key-id` and
    /// the secret from `RIGHTSIZE_SIM_AWS_SECRET_ACCESS_KEY`); `None`: unsigned requests pass.
    pub credentials: Option<(String, String)>,
    /// Refuse every invocation this way.
    pub refuse: Option<Refusal>,
    /// Break the framing of every streamed answer this way.
    pub frame_fault: Option<FrameFault>,
    /// Largest payload part, in bytes (parts are cut at random sizes from 1 to this).
    pub max_part_bytes: usize,
}

impl std::fmt::Debug for SageMakerSim {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // the secret is never shown
        f.debug_struct("SageMakerSim")
            .field("access_key_id", &self.credentials.as_ref().map(|c| &c.0))
            .field("refuse", &self.refuse)
            .field("frame_fault", &self.frame_fault)
            .field("max_part_bytes", &self.max_part_bytes)
            .finish()
    }
}

/// The default largest payload part: a few tokens' worth, so most events span parts.
pub const DEFAULT_MAX_PART_BYTES: usize = 96;

/// A restJson error answer: status, `X-Amzn-ErrorType`, `{"Message"}` (and a ModelError's
/// fields when given).
pub fn error_body(message: &str, model_error: Option<(u16, &str)>) -> String {
    match model_error {
        Some((status, original)) => serde_json::json!({
            "Message": message,
            "OriginalStatusCode": status,
            "OriginalMessage": original,
            "LogStreamArn": "arn:aws:logs:us-east-1:000000000000:log-group:/aws/sagemaker/Endpoints/sim",
        })
        .to_string(),
        None => serde_json::json!({ "Message": message }).to_string(),
    }
}

/// Cuts `payload` into parts of random sizes and writes each as a `PayloadPart` frame into
/// `out`; `frames_sent` counts frames across calls (the frame fault strikes the second).
/// Returns true when a truncation fault cut the body short (nothing may follow).
pub fn write_parts(
    payload: &[u8],
    cfg: &SageMakerSim,
    rng: &mut SplitMix64,
    frames_sent: &mut u64,
    out: &mut Vec<u8>,
) -> bool {
    let mut rest = payload;
    let max = cfg.max_part_bytes.max(1) as u64;
    while !rest.is_empty() {
        let n = (1 + rng.next_u64() % max).min(rest.len() as u64) as usize;
        let (part, tail) = rest.split_at(n);
        rest = tail;
        let message = Message::new(Bytes::copy_from_slice(part))
            .add_header(Header::new(
                ":message-type",
                HeaderValue::String("event".into()),
            ))
            .add_header(Header::new(
                ":event-type",
                HeaderValue::String("PayloadPart".into()),
            ))
            .add_header(Header::new(
                ":content-type",
                HeaderValue::String("application/octet-stream".into()),
            ));
        let start = out.len();
        // writing a message with three string headers into a Vec cannot fail
        let _ = aws_smithy_eventstream::frame::write_message_to(&message, out);
        *frames_sent += 1;
        if *frames_sent == 2 {
            match cfg.frame_fault {
                Some(FrameFault::BadPreludeCrc) => out[start + 8] ^= 0xff,
                Some(FrameFault::BadMessageCrc) => {
                    let last = out.len() - 1;
                    out[last] ^= 0xff;
                }
                Some(FrameFault::Truncated) => {
                    let half = start + (out.len() - start) / 2;
                    out.truncate(half);
                    return true;
                }
                None => {}
            }
        }
    }
    false
}

/// A `ModelStreamError` exception frame (what SageMaker sends when the container fails
/// mid-stream).
pub fn model_stream_error(message: &str, out: &mut Vec<u8>) {
    let payload = serde_json::json!({ "Message": message, "ErrorCode": "424" }).to_string();
    let message = Message::new(Bytes::from(payload))
        .add_header(Header::new(
            ":message-type",
            HeaderValue::String("exception".into()),
        ))
        .add_header(Header::new(
            ":exception-type",
            HeaderValue::String("ModelStreamError".into()),
        ))
        .add_header(Header::new(
            ":content-type",
            HeaderValue::String("application/json".into()),
        ));
    let _ = aws_smithy_eventstream::frame::write_message_to(&message, out as &mut dyn BufMut);
}

/// Checks a request's SigV4 signature against `access_key_id` / `secret`: the signature is
/// recomputed over the headers it names, the body and its own date with the SDK's signer.
pub fn verify_sigv4(
    parts: &hyper::http::request::Parts,
    body: &[u8],
    access_key_id: &str,
    secret: &str,
) -> Result<(), String> {
    let auth = parts
        .headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .ok_or("the request carries no Authorization header")?;
    let rest = auth
        .strip_prefix("AWS4-HMAC-SHA256 ")
        .ok_or("the Authorization header is not AWS4-HMAC-SHA256")?;
    let mut credential = None;
    let mut signed_headers = None;
    let mut signature = None;
    for field in rest.split(',') {
        let (k, v) = field
            .trim()
            .split_once('=')
            .ok_or("a malformed Authorization field")?;
        match k {
            "Credential" => credential = Some(v),
            "SignedHeaders" => signed_headers = Some(v),
            "Signature" => signature = Some(v),
            _ => {}
        }
    }
    let (credential, signed_headers, signature) = match (credential, signed_headers, signature) {
        (Some(c), Some(h), Some(s)) => (c, h, s),
        _ => {
            return Err(
                "the Authorization header lacks Credential, SignedHeaders or Signature".into(),
            )
        }
    };
    let scope: Vec<&str> = credential.split('/').collect();
    let [key_id, _date, region, service, "aws4_request"] = scope[..] else {
        return Err(format!("a malformed credential scope `{credential}`"));
    };
    if key_id != access_key_id {
        return Err(format!("unknown access key id `{key_id}`"));
    }
    let amz_date = parts
        .headers
        .get("x-amz-date")
        .and_then(|v| v.to_str().ok())
        .ok_or("the request carries no X-Amz-Date")?;
    let time = parse_amz_date(amz_date).ok_or("X-Amz-Date is not YYYYMMDDTHHMMSSZ")?;
    let names: Vec<&str> = signed_headers.split(';').collect();
    let headers: Vec<(&str, &str)> = parts
        .headers
        .iter()
        .filter(|(n, _)| names.contains(&n.as_str()) && n.as_str() != "x-amz-date")
        .filter_map(|(n, v)| v.to_str().ok().map(|v| (n.as_str(), v)))
        .collect();
    let uri = parts
        .uri
        .path_and_query()
        .map_or_else(|| parts.uri.path().to_string(), |p| p.as_str().to_string());
    let signable = SignableRequest::new(
        parts.method.as_str(),
        uri,
        headers.into_iter(),
        SignableBody::Bytes(body),
    )
    .map_err(|e| format!("cannot read the request for signing: {e}"))?;
    let identity = aws_sdk_sagemakerruntime::config::Credentials::new(
        access_key_id,
        secret,
        None,
        None,
        "sim",
    )
    .into();
    let params = v4::SigningParams::builder()
        .identity(&identity)
        .region(region)
        .name(service)
        .time(time)
        .settings(SigningSettings::default())
        .build()
        .map_err(|e| format!("cannot build the signing parameters: {e}"))?
        .into();
    let expected = sign(signable, &params)
        .map_err(|e| format!("cannot sign: {e}"))?
        .signature()
        .to_string();
    if expected == signature {
        Ok(())
    } else {
        Err("the request signature does not match the test credentials".to_string())
    }
}

/// `20261201T194501Z` as a time.
fn parse_amz_date(s: &str) -> Option<std::time::SystemTime> {
    let b = s.as_bytes();
    if b.len() != 16 || b[8] != b'T' || b[15] != b'Z' {
        return None;
    }
    let num = |r: std::ops::Range<usize>| s.get(r)?.parse::<i64>().ok();
    let (y, m, d) = (num(0..4)?, num(4..6)?, num(6..8)?);
    let (hh, mm, ss) = (num(9..11)?, num(11..13)?, num(13..15)?);
    // days from the civil date (Howard Hinnant's algorithm)
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (m + if m > 2 { -3 } else { 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = u64::try_from(days * 86_400 + hh * 3600 + mm * 60 + ss).ok()?;
    Some(std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amz_dates() {
        let t = parse_amz_date("20261201T194501Z").unwrap();
        let secs = t.duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
        assert_eq!(secs, 1_796_154_301);
        assert_eq!(
            parse_amz_date("19700101T000000Z"),
            Some(std::time::UNIX_EPOCH)
        );
        assert_eq!(parse_amz_date("2026-12-01T19:45:01Z"), None);
    }
}

#[cfg(test)]
#[path = "sagemaker_frame_tests.rs"]
mod frame_tests;
