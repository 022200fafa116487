//! What the pre-flight check learns of one exchange beyond its outcome: the status and
//! headers, the first bytes of the body, the stream's shape, and how a transport failure
//! looked. Every adapter fills it when asked (`crate::endpoint::preflight` reads it).

/// How a transport failure looked, for the pre-flight diagnosis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Transport {
    Refused,
    Dns,
    Tls,
    Timeout,
    Other,
}

/// Body bytes kept for the pre-flight diagnosis.
pub(crate) const PROBE_HEAD_BYTES: usize = 2048;

/// What the pre-flight check needs beyond an [`ExchangeOutcome`].
#[derive(Debug, Default)]
pub(crate) struct Probe {
    pub status: Option<u16>,
    pub content_type: Option<String>,
    pub server_header: Option<String>,
    /// SageMaker: the production variant that answered (`x-amzn-invoked-production-variant`).
    #[cfg_attr(not(feature = "sagemaker"), allow(dead_code))]
    pub production_variant: Option<String>,
    /// The first bytes of the body.
    pub head: Vec<u8>,
    /// Data events (SSE events or JSON lines) received.
    pub data_events: u64,
    /// Chunks with `choices` or `usage`.
    pub openai_chunks: u64,
    pub transport: Option<Transport>,
    /// Error text of the transport failure (no URL, no headers).
    pub transport_detail: Option<String>,
    pub location: Option<String>,
    /// How the streamed body was framed.
    pub framing: Option<super::sse::Framing>,
}

impl Probe {
    /// Keeps the body's first bytes, up to [`PROBE_HEAD_BYTES`].
    pub fn keep_head(&mut self, bytes: &[u8]) {
        let room = PROBE_HEAD_BYTES.saturating_sub(self.head.len());
        self.head.extend_from_slice(&bytes[..bytes.len().min(room)]);
    }
}
