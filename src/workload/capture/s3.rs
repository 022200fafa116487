//! A Data Capture read straight from S3 (`s3://bucket/prefix`, where the endpoint's
//! `DestinationS3Uri` puts it): every `.jsonl` object under the prefix, in key order, which
//! is time order in the `ENDPOINT/VARIANT/yyyy/mm/dd/hh/` layout SageMaker writes. The AWS SDK
//! owns the protocol (listing with continuation, signing, retries); credentials and region
//! come from the SDK's chain (`AWS_PROFILE`, `AWS_REGION`, environment keys, SSO, instance
//! roles). `AWS_ENDPOINT_URL_S3` (or `AWS_ENDPOINT_URL`) points it at another S3-compatible
//! store, addressed by path (`host/bucket/key`), as such stores expect.
//!
//! A replay reads its capture three times (send times, prompts, traffic); the objects of one
//! URL are downloaded once per process and kept.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use aws_sdk_s3 as s3;
use s3::error::{DisplayErrorContext, ProvideErrorMetadata};

use super::CaptureError;

/// How long one S3 call may take (a listing page, or one object's download).
const CALL_TIMEOUT: Duration = Duration::from_secs(120);

/// One object: its `s3://bucket/key` name and bytes.
pub type Object = (String, Vec<u8>);

/// `s3://bucket/prefix` as (bucket, prefix); the prefix may be empty.
pub fn parse_url(url: &str) -> Result<(String, String), String> {
    let rest = url.strip_prefix("s3://").ok_or("not an s3:// URL")?;
    let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
    if bucket.is_empty() {
        return Err("no bucket (give s3://BUCKET/PREFIX, the capture's DestinationS3Uri)".into());
    }
    Ok((bucket.to_string(), prefix.to_string()))
}

/// Every `.jsonl` object under `url`, in key order (downloaded on the first call for `url`).
pub fn objects(url: &str) -> Result<Arc<Vec<Object>>, CaptureError> {
    static READ: OnceLock<Mutex<HashMap<String, Arc<Vec<Object>>>>> = OnceLock::new();
    let cache = READ.get_or_init(Default::default);
    if let Some(hit) = cache.lock().unwrap().get(url) {
        return Ok(hit.clone());
    }
    let fail = |message: String| CaptureError {
        file: url.to_string(),
        line: None,
        message,
    };
    let (bucket, prefix) = parse_url(url).map_err(fail)?;
    // a runtime of its own on a thread of its own: callers may be inside one or not
    let read = std::thread::scope(|s| {
        s.spawn(|| {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| format!("cannot start the S3 reader: {e}"))?;
            rt.block_on(download(&bucket, &prefix))
        })
        .join()
        .unwrap_or_else(|_| Err("the S3 reader panicked".into()))
    })
    .map_err(fail)?;
    if read.is_empty() {
        return Err(fail(
            "no .jsonl objects under this prefix (a Data Capture holds \
             PREFIX/ENDPOINT/VARIANT/yyyy/mm/dd/hh/*.jsonl)"
                .into(),
        ));
    }
    let read = Arc::new(read);
    cache.lock().unwrap().insert(url.to_string(), read.clone());
    Ok(read)
}

/// Whether a custom endpoint is set, so objects are addressed by path.
fn custom_endpoint() -> bool {
    ["AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"]
        .iter()
        .any(|v| std::env::var_os(v).is_some_and(|u| !u.is_empty()))
}

/// An SDK error said once: the service's code and message when it answered, else the chain.
fn said<E: ProvideErrorMetadata + std::error::Error + 'static>(
    what: &str,
    e: &s3::error::SdkError<E>,
) -> String {
    match e.as_service_error() {
        Some(se) => format!(
            "{what}: {} ({})",
            se.message().unwrap_or("no message"),
            se.code().unwrap_or("no code")
        ),
        None => format!("{what}: {}", DisplayErrorContext(e)),
    }
}

async fn download(bucket: &str, prefix: &str) -> Result<Vec<Object>, String> {
    let config =
        crate::aws::sdk_config(None, None, CALL_TIMEOUT, crate::aws::Attempts::Standard).await;
    let client = s3::Client::from_conf(
        s3::config::Builder::from(&config)
            .force_path_style(custom_endpoint())
            .build(),
    );
    let mut keys = Vec::new();
    let mut pages = client
        .list_objects_v2()
        .bucket(bucket)
        .prefix(prefix)
        .into_paginator()
        .send();
    while let Some(page) = pages.next().await {
        let page = page.map_err(|e| said("cannot list the objects", &e))?;
        keys.extend(
            page.contents()
                .iter()
                .filter_map(|o| o.key())
                .filter(|k| k.ends_with(".jsonl"))
                .map(String::from),
        );
    }
    keys.sort();
    let mut out = Vec::with_capacity(keys.len());
    for key in keys {
        let name = format!("s3://{bucket}/{key}");
        let object = client
            .get_object()
            .bucket(bucket)
            .key(&key)
            .send()
            .await
            .map_err(|e| said(&format!("cannot read {name}"), &e))?;
        let bytes = object
            .body
            .collect()
            .await
            .map_err(|e| format!("cannot read {name}: {e}"))?
            .into_bytes()
            .to_vec();
        out.push((name, bytes));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::parse_url;

    #[test]
    fn urls() {
        assert_eq!(
            parse_url("s3://captures/llama/ep/AllTraffic/2024/05/01/12"),
            Ok((
                "captures".into(),
                "llama/ep/AllTraffic/2024/05/01/12".into()
            ))
        );
        assert_eq!(
            parse_url("s3://captures"),
            Ok(("captures".into(), "".into()))
        );
        assert_eq!(
            parse_url("s3://captures/"),
            Ok(("captures".into(), "".into()))
        );
        assert_eq!(
            parse_url("s3:///x"),
            Err("no bucket (give s3://BUCKET/PREFIX, the capture's DestinationS3Uri)".into())
        );
    }
}
