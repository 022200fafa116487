//! The client side of one request: the HTTP/1.1 and HTTPS transport against scripted
//! servers, the stream parser's properties, pre-flight, the first-token lane, SageMaker
//! endpoints and Data Capture (local and S3), the prefix-cache reset's calls.

#[path = "../support/mod.rs"]
mod support;

mod capture_e2e;
mod capture_s3;
mod endpoint_exchange;
mod endpoint_h1;
mod endpoint_misbehaving;
mod endpoint_preflight;
mod first_token_lane;
mod https_e2e;
mod parser_props;
mod prefix_cache_calls;
mod sagemaker_e2e;
