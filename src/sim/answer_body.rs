//! Response bodies as hand-written `hyper::body::Body`s. Streaming chunks are formatted inside
//! `poll_frame`, when hyper pulls them, so the optional `sim_sent_ns` stamp is read as late as
//! possible; all tokens that are ready go out as several SSE events in one frame.

use std::fmt::Write as _;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use hyper::body::{Body, Frame, SizeHint};
use tokio::sync::mpsc::UnboundedReceiver;

use super::api::Route;
use super::faults::StreamFault;
use super::output_words::token_word;
use super::scheduler::TokenEvent;
use super::tool_answer::ToolCallPlan;
use crate::clock::now_ns;

/// Largest frame assembled from ready tokens before handing it to hyper, in bytes.
const MAX_FRAME_BYTES: usize = 32 * 1024;

/// What every response of one completion request shares.
#[derive(Debug)]
pub struct Completion {
    /// `chat.completion` or `text_completion` shapes.
    pub endpoint: Route,
    /// Response id, e.g. `chatcmpl-sim-7`.
    pub id: String,
    /// Unix time of the request, in seconds.
    pub created: u64,
    /// Model name as a JSON string literal (quoted, escaped).
    pub model_json: String,
    /// Add `sim_sent_ns` to every chunk / the body.
    pub timing: bool,
    /// Prompt length, in tokens.
    pub prompt_tokens: u32,
    /// The request's `max_tokens` (finish reason `length` when reached).
    pub max_tokens: u32,
    /// Seed of the output words.
    pub text_seed: u64,
    /// Streaming only: send a usage chunk before `[DONE]`.
    pub include_usage: bool,
    /// The fault to inject, if any.
    pub fault: Option<StreamFault>,
    /// Content chunks before the fault strikes.
    pub fault_after: u32,
    /// The answer is this tool call (chat requests with tools), not text.
    pub tool_call: Option<ToolCallPlan>,
    /// Streamed through the SageMaker API: the stream goes out in event-stream frames.
    #[cfg(feature = "sagemaker")]
    pub sagemaker: Option<SageMakerFraming>,
}

/// A SageMaker stream's framing state (see [`super::sagemaker`]).
#[cfg(feature = "sagemaker")]
#[derive(Debug)]
pub struct SageMakerFraming {
    pub cfg: std::sync::Arc<super::sagemaker::SageMakerSim>,
    pub rng: crate::rng::SplitMix64,
    pub frames_sent: u64,
    /// The in-stream error fault struck: send a `ModelStreamError` frame.
    pub stream_error: bool,
}

impl Completion {
    fn object(&self, stream: bool) -> &'static str {
        match (self.endpoint, stream) {
            (Route::Chat, true) => "chat.completion.chunk",
            (Route::Chat, false) => "chat.completion",
            (Route::Completion | Route::Tgi, _) => "text_completion",
        }
    }

    fn head(&self, out: &mut String, stream: bool) {
        let _ = write!(
            out,
            "{{\"id\":\"{}\",\"object\":\"{}\",\"created\":{},\"model\":{},\"choices\":",
            self.id,
            self.object(stream),
            self.created,
            self.model_json
        );
    }

    fn tail(&self, out: &mut String) {
        if self.timing {
            let _ = write!(out, ",\"sim_sent_ns\":{}", now_ns());
        }
        out.push('}');
    }

    fn finish_reason(&self, generated: u32) -> &'static str {
        if self.tool_call.is_some() {
            "\"tool_calls\""
        } else if generated >= self.max_tokens {
            "\"length\""
        } else {
            "\"stop\""
        }
    }

    /// The delta of output token `i` of a tool-call answer: the call's id
    /// (`chatcmpl-tool-sim-N`), type and name
    /// with the first token, a fragment of its arguments with each one after.
    fn tool_delta(&self, plan: &ToolCallPlan, i: u32, last: bool, out: &mut String) {
        let mut args = String::new();
        plan.fragment(self.text_seed, i, last, &mut args);
        let args = serde_json::Value::String(args);
        if i == 0 {
            let _ = write!(
                out,
                "{{\"tool_calls\":[{{\"index\":0,\"id\":\"chatcmpl-tool-{}\",\"type\":\"function\",\"function\":{{\"name\":{},\"arguments\":{args}}}}}]}}",
                self.id.trim_start_matches("chatcmpl-"), plan.name_json
            );
        } else {
            let _ = write!(
                out,
                "{{\"tool_calls\":[{{\"index\":0,\"function\":{{\"arguments\":{args}}}}}]}}"
            );
        }
    }

    /// A whole answer's message with its tool call.
    fn tool_message(&self, plan: &ToolCallPlan, tokens: u32, out: &mut String) {
        let args = serde_json::Value::String(plan.arguments(self.text_seed, tokens));
        let _ = write!(
            out,
            "{{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{{\"id\":\"chatcmpl-tool-{}\",\"type\":\"function\",\"function\":{{\"name\":{},\"arguments\":{args}}}}}]}}",
            self.id.trim_start_matches("chatcmpl-"), plan.name_json
        );
    }

    /// `usage`, with `prompt_tokens_details.cached_tokens` when the prefix cache is on (as
    /// vLLM sends it with `--enable-prompt-tokens-details`, and OpenAI always).
    fn usage(&self, out: &mut String, completion_tokens: u32, cached: Option<u32>) {
        let _ = write!(
            out,
            "\"usage\":{{\"prompt_tokens\":{},\"total_tokens\":{},\"completion_tokens\":{}",
            self.prompt_tokens,
            self.prompt_tokens + completion_tokens,
            completion_tokens
        );
        if let Some(n) = cached {
            let _ = write!(out, ",\"prompt_tokens_details\":{{\"cached_tokens\":{n}}}");
        }
        out.push('}');
    }
}

/// The in-stream error object the `in-stream-error` fault sends.
const IN_STREAM_ERROR: &str = "{\"error\":{\"message\":\"simulated in-stream error\",\
\"type\":\"InternalServerError\",\"param\":null,\"code\":500}}";

/// Every response body the simulator sends.
pub enum SimBody {
    /// A complete body known up front.
    Full(Option<Bytes>),
    /// Server-sent events, one content chunk per token.
    Stream(Box<StreamState>),
    /// One JSON object once the last token is generated.
    Whole(Box<WholeState>),
}

impl SimBody {
    /// A body of these bytes.
    pub fn full(bytes: impl Into<Bytes>) -> Self {
        SimBody::Full(Some(bytes.into()))
    }

    /// A streaming body fed by `rx`.
    pub fn stream(c: Completion, rx: UnboundedReceiver<TokenEvent>) -> Self {
        SimBody::Stream(Box::new(StreamState {
            c,
            rx: Some(rx),
            sent: 0,
            cached: None,
            role_sent: false,
            fault_done: false,
            then: Then::More,
        }))
    }

    /// A body known up front: its bytes.
    #[cfg(feature = "sagemaker")]
    pub fn full_bytes(&self) -> Option<&Bytes> {
        match self {
            SimBody::Full(b) => b.as_ref(),
            _ => None,
        }
    }

    /// A streaming body goes out in SageMaker's event-stream frames; false when the body is
    /// not a stream (the request asked for a whole answer).
    #[cfg(feature = "sagemaker")]
    pub fn frame_for_sagemaker(&mut self, framing: SageMakerFraming) -> bool {
        match self {
            SimBody::Stream(s) => {
                s.c.sagemaker = Some(framing);
                true
            }
            _ => false,
        }
    }

    /// A non-streaming body fed by `rx`.
    pub fn whole(c: Completion, rx: UnboundedReceiver<TokenEvent>) -> Self {
        let stall = c.fault == Some(StreamFault::Stall);
        SimBody::Whole(Box::new(WholeState {
            c,
            rx: if stall { None } else { Some(rx) },
            generated: 0,
            cached: None,
            done: false,
        }))
    }
}

/// What a streaming body does after the frame it is returning.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Then {
    More,
    End,
    Stall,
    /// Yield once so hyper flushes what was sent, then fail the body.
    FlushThenError,
    Error,
}

/// State of a streaming response.
pub struct StreamState {
    c: Completion,
    rx: Option<UnboundedReceiver<TokenEvent>>,
    sent: u32,
    /// The prefix cache's hit on the prompt, from the scheduler's tokens.
    cached: Option<u32>,
    role_sent: bool,
    fault_done: bool,
    then: Then,
}

impl StreamState {
    fn event_start(out: &mut String) {
        out.push_str("data: ");
    }

    fn token_chunk(&mut self, out: &mut String, last: bool) {
        if self.c.endpoint == Route::Tgi {
            return self.tgi_token(out, last);
        }
        let c = &self.c;
        if c.endpoint == Route::Chat && !self.role_sent {
            self.role_sent = true;
            Self::event_start(out);
            c.head(out, true);
            out.push_str("[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"logprobs\":null,\"finish_reason\":null}]");
            c.tail(out);
            out.push_str("\n\n");
        }
        let word = token_word(c.text_seed, self.sent);
        self.sent += 1;
        let finish = if last {
            c.finish_reason(self.sent)
        } else {
            "null"
        };
        Self::event_start(out);
        c.head(out, true);
        match c.endpoint {
            Route::Chat if c.tool_call.is_some() => {
                out.push_str("[{\"index\":0,\"delta\":");
                if let Some(plan) = &c.tool_call {
                    c.tool_delta(plan, self.sent - 1, last, out);
                }
                let _ = write!(out, ",\"logprobs\":null,\"finish_reason\":{finish}}}]");
            }
            Route::Chat => {
                let _ = write!(out, "[{{\"index\":0,\"delta\":{{\"content\":\" {word}\"}},\"logprobs\":null,\"finish_reason\":{finish}}}]");
            }
            Route::Completion | Route::Tgi => {
                let _ = write!(out, "[{{\"index\":0,\"text\":\" {word}\",\"logprobs\":null,\"finish_reason\":{finish}}}]");
            }
        }
        c.tail(out);
        out.push_str("\n\n");
    }

    /// A TGI stream line: the token, and with the last one the whole `generated_text` and
    /// `details.generated_tokens`.
    fn tgi_token(&mut self, out: &mut String, last: bool) {
        let c = &self.c;
        let word = token_word(c.text_seed, self.sent);
        self.sent += 1;
        let _ = write!(
            out,
            "data:{{\"index\":{},\"token\":{{\"id\":{},\"text\":\" {word}\",\"logprob\":-0.5,\"special\":false}},",
            self.sent, self.sent
        );
        if last {
            out.push_str("\"generated_text\":\"");
            for i in 0..self.sent {
                out.push(' ');
                out.push_str(token_word(c.text_seed, i));
            }
            let finish = if self.sent >= c.max_tokens {
                "length"
            } else {
                "eos_token"
            };
            let _ = write!(
                out,
                "\",\"details\":{{\"finish_reason\":\"{finish}\",\"generated_tokens\":{},\"seed\":null}}",
                self.sent
            );
        } else {
            out.push_str("\"generated_text\":null,\"details\":null");
        }
        c.tail(out);
        out.push_str("\n\n");
    }

    fn end(&mut self, out: &mut String) {
        if self.c.endpoint == Route::Tgi {
            // TGI ends with the token that carries generated_text: no usage, no [DONE]
            self.then = Then::End;
            return;
        }
        if self.c.include_usage {
            Self::event_start(out);
            self.c.head(out, true);
            out.push_str("[],");
            self.c.usage(out, self.sent, self.cached);
            self.c.tail(out);
            out.push_str("\n\n");
        }
        out.push_str("data: [DONE]\n\n");
        self.then = Then::End;
    }

    /// Applies the fault if it is due; returns true when the stream stops taking tokens.
    fn maybe_fault(&mut self, out: &mut String) -> bool {
        let Some(fault) = self.c.fault else {
            return false;
        };
        if self.fault_done || self.sent < self.c.fault_after {
            return false;
        }
        self.fault_done = true;
        match fault {
            StreamFault::Malformed => {
                out.push_str("data: {\"id\": \"x\", \"choices\": [\n\n");
                false
            }
            StreamFault::InStreamError => {
                #[cfg(feature = "sagemaker")]
                if let Some(f) = self.c.sagemaker.as_mut() {
                    // SageMaker reports a container failing mid-stream in its own frame
                    f.stream_error = true;
                    self.rx = None;
                    self.then = Then::End;
                    return true;
                }
                match self.c.endpoint {
                    Route::Tgi => out.push_str(
                        "data:{\"error\":\"simulated in-stream error\",\"error_type\":\"generation\"}\n\n",
                    ),
                    _ => {
                        out.push_str("data: ");
                        out.push_str(IN_STREAM_ERROR);
                        out.push_str("\n\ndata: [DONE]\n\n");
                    }
                }
                self.rx = None;
                self.then = Then::End;
                true
            }
            StreamFault::Reset => {
                self.rx = None;
                self.then = Then::FlushThenError;
                true
            }
            StreamFault::Stall => {
                self.rx = None;
                self.then = Then::Stall;
                true
            }
        }
    }

    fn poll(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, io::Error>>> {
        match self.then {
            Then::End => return Poll::Ready(None),
            Then::Stall => return Poll::Pending, // until the client goes away and we are dropped
            Then::FlushThenError => {
                self.then = Then::Error;
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            Then::Error => return Poll::Ready(Some(Err(io::Error::other("simulated reset")))),
            Then::More => {}
        }
        let mut out = String::new();
        loop {
            if self.maybe_fault(&mut out) {
                break;
            }
            let Some(rx) = self.rx.as_mut() else {
                self.then = Then::Error;
                break;
            };
            match rx.poll_recv(cx) {
                Poll::Ready(Some(ev)) => {
                    self.cached = ev.cached;
                    self.token_chunk(&mut out, ev.last);
                    if ev.last {
                        if !self.maybe_fault(&mut out) {
                            self.end(&mut out);
                        }
                        self.rx = None;
                        break;
                    }
                    if out.len() >= MAX_FRAME_BYTES {
                        break;
                    }
                }
                // the scheduler dropped the sequence (shutdown): break the stream
                Poll::Ready(None) => {
                    self.rx = None;
                    self.then = Then::Error;
                    break;
                }
                Poll::Pending => break,
            }
        }
        #[cfg(feature = "sagemaker")]
        if let Some(f) = self.c.sagemaker.as_mut() {
            let mut framed = Vec::with_capacity(out.len() * 2 + 64);
            let cut = super::sagemaker::write_parts(
                out.as_bytes(),
                &f.cfg,
                &mut f.rng,
                &mut f.frames_sent,
                &mut framed,
            );
            if cut {
                self.rx = None;
                self.then = Then::End;
            } else if f.stream_error && self.then == Then::End {
                f.stream_error = false;
                super::sagemaker::model_stream_error("simulated in-stream error", &mut framed);
            }
            if !framed.is_empty() {
                return Poll::Ready(Some(Ok(Frame::data(Bytes::from(framed)))));
            }
        }
        if !out.is_empty() {
            return Poll::Ready(Some(Ok(Frame::data(Bytes::from(out)))));
        }
        match self.then {
            Then::More => Poll::Pending,
            Then::End => Poll::Ready(None),
            Then::Stall => Poll::Pending,
            Then::FlushThenError | Then::Error => {
                self.then = Then::Error;
                Poll::Ready(Some(Err(io::Error::other("simulated reset"))))
            }
        }
    }
}

/// State of a non-streaming response.
pub struct WholeState {
    c: Completion,
    rx: Option<UnboundedReceiver<TokenEvent>>,
    generated: u32,
    /// The prefix cache's hit on the prompt, from the scheduler's tokens.
    cached: Option<u32>,
    done: bool,
}

impl WholeState {
    fn render(&self) -> String {
        let c = &self.c;
        if c.endpoint == Route::Tgi {
            return self.render_tgi();
        }
        let mut out = String::with_capacity(256 + 5 * self.generated as usize);
        c.head(&mut out, false);
        let mut text = String::with_capacity(5 * self.generated as usize);
        for i in 0..self.generated {
            text.push(' ');
            text.push_str(token_word(c.text_seed, i));
        }
        let finish = c.finish_reason(self.generated);
        match c.endpoint {
            Route::Chat if c.tool_call.is_some() => {
                out.push_str("[{\"index\":0,\"message\":");
                if let Some(plan) = &c.tool_call {
                    c.tool_message(plan, self.generated, &mut out);
                }
                let _ = write!(out, ",\"logprobs\":null,\"finish_reason\":{finish}}}],");
            }
            Route::Chat => {
                let _ = write!(out, "[{{\"index\":0,\"message\":{{\"role\":\"assistant\",\"content\":\"{text}\"}},\"logprobs\":null,\"finish_reason\":{finish}}}],");
            }
            Route::Completion | Route::Tgi => {
                let _ = write!(out, "[{{\"index\":0,\"text\":\"{text}\",\"logprobs\":null,\"finish_reason\":{finish}}}],");
            }
        }
        c.usage(&mut out, self.generated, self.cached);
        c.tail(&mut out);
        out
    }

    /// The SageMaker TGI containers' whole answer: `[{"generated_text", "details"}]`.
    fn render_tgi(&self) -> String {
        let c = &self.c;
        let mut out = String::with_capacity(128 + 5 * self.generated as usize);
        out.push_str("[{\"generated_text\":\"");
        for i in 0..self.generated {
            out.push(' ');
            out.push_str(token_word(c.text_seed, i));
        }
        let finish = if self.generated >= c.max_tokens {
            "length"
        } else {
            "eos_token"
        };
        let _ = write!(
            out,
            "\",\"details\":{{\"finish_reason\":\"{finish}\",\"generated_tokens\":{},\"seed\":null}}",
            self.generated
        );
        c.tail(&mut out);
        out.push(']');
        out
    }

    fn poll(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, io::Error>>> {
        if self.done {
            return Poll::Ready(None);
        }
        let Some(rx) = self.rx.as_mut() else {
            return Poll::Pending; // stalled: never answer
        };
        loop {
            match rx.poll_recv(cx) {
                Poll::Ready(Some(ev)) => {
                    self.cached = ev.cached;
                    self.generated += 1;
                    if ev.last {
                        break;
                    }
                }
                Poll::Ready(None) => {
                    return Poll::Ready(Some(Err(io::Error::other("sequence aborted"))))
                }
                Poll::Pending => return Poll::Pending,
            }
        }
        self.rx = None;
        self.done = true;
        let body = match self.c.fault {
            Some(StreamFault::Reset) => {
                return Poll::Ready(Some(Err(io::Error::other("simulated reset"))))
            }
            Some(StreamFault::Malformed) => {
                let full = self.render();
                full[..full.len() / 2].to_string()
            }
            Some(StreamFault::InStreamError) if c_is_tgi(&self.c) => {
                "{\"error\":\"simulated in-stream error\",\"error_type\":\"generation\"}"
                    .to_string()
            }
            Some(StreamFault::InStreamError) => IN_STREAM_ERROR.to_string(),
            _ => self.render(),
        };
        Poll::Ready(Some(Ok(Frame::data(Bytes::from(body)))))
    }
}

fn c_is_tgi(c: &Completion) -> bool {
    c.endpoint == Route::Tgi
}

impl Body for SimBody {
    type Data = Bytes;
    type Error = io::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        match self.get_mut() {
            SimBody::Full(b) => Poll::Ready(b.take().map(|b| Ok(Frame::data(b)))),
            SimBody::Stream(s) => s.poll(cx),
            SimBody::Whole(w) => w.poll(cx),
        }
    }

    fn is_end_stream(&self) -> bool {
        matches!(self, SimBody::Full(None))
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            SimBody::Full(Some(b)) => SizeHint::with_exact(b.len() as u64),
            SimBody::Full(None) => SizeHint::with_exact(0),
            _ => SizeHint::default(),
        }
    }
}
