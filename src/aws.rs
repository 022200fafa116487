//! The AWS SDK configuration every AWS client of rightsize shares (SageMaker runtime,
//! CloudWatch, S3): the SDK's own credential chain and region, and for a given region or
//! profile those; rustls with ring (the crypto provider the rest of the tree already builds,
//! where the SDK's default TLS would pull aws-lc-rs); `timeout` to connect and for each
//! operation. Retries and stalled-stream protection are each client's choice: a load tester
//! counts every attempt and leaves stalls to `--timeout`, a file download retries.

use std::time::Duration;

use aws_config::retry::RetryConfig;
use aws_config::stalled_stream_protection::StalledStreamProtectionConfig;
use aws_config::timeout::TimeoutConfig;

/// Whether the SDK retries and guards against stalled streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Attempts {
    /// One attempt, no stalled-stream protection: the load path, where every attempt counts.
    One,
    /// The SDK's standard retries (three attempts with backoff) and its stall protection:
    /// reading files.
    Standard,
}

/// The loaded configuration for `region` and `profile` (each from the environment and the
/// shared config files when `None`).
pub async fn sdk_config(
    region: Option<&str>,
    profile: Option<&str>,
    timeout: Duration,
    attempts: Attempts,
) -> aws_config::SdkConfig {
    let http = aws_smithy_http_client::Builder::new()
        .tls_provider(aws_smithy_http_client::tls::Provider::Rustls(
            aws_smithy_http_client::tls::rustls_provider::CryptoMode::Ring,
        ))
        .build_https();
    let mut loader = aws_config::defaults(aws_config::BehaviorVersion::latest())
        .http_client(http)
        .timeout_config(
            TimeoutConfig::builder()
                .connect_timeout(timeout)
                .operation_timeout(timeout)
                .build(),
        );
    loader = match attempts {
        Attempts::One => loader
            .retry_config(RetryConfig::disabled())
            .stalled_stream_protection(StalledStreamProtectionConfig::disabled()),
        Attempts::Standard => loader
            .retry_config(RetryConfig::standard())
            .stalled_stream_protection(StalledStreamProtectionConfig::enabled().build()),
    };
    if let Some(region) = region {
        loader = loader.region(aws_config::Region::new(region.to_string()));
    }
    if let Some(profile) = profile {
        loader = loader.profile_name(profile);
    }
    loader.load().await
}
