//! The HTTP side: accept loop, routing, and the completion handler that turns a request into
//! a sequence for the scheduler thread and a response body fed by it.

use super::sim_config::MetricNames;
use std::convert::Infallible;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::mpsc::Sender;
use std::sync::Arc;

use http_body_util::{BodyExt, Limited};
use hyper::body::Incoming;
use hyper::header::{HeaderValue, ALLOW, CACHE_CONTROL, CONTENT_TYPE, RETRY_AFTER};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio_rustls::TlsAcceptor;

use super::answer_body::{Completion, SimBody};
use super::api::{parse_request, ApiError, Limits, Route};
use super::faults::{pick, StatusFault, FAULT_AFTER_CHUNKS};
use super::output_words::{natural_length, prompt_hash, text_seed};
use super::prefix_cache::{block_hashes, block_hashes_of_ids};
use super::scheduler::NewSeq;
use super::scheduler_thread::SchedulerMessage;
use super::sim_config::SimConfig;
use super::stats::SharedMetrics;
use super::tokens::PromptCounter;
use crate::clock::now_ns;

/// Largest accepted request body, in bytes.
const MAX_BODY_BYTES: usize = 64 * 1024 * 1024;

/// The request header that asks for `sim_sent_ns` stamps.
pub const TIMING_HEADER: &str = "x-rightsize-sim-timing";

/// What every request handler shares.
pub struct AppState {
    /// The configuration served.
    pub cfg: SimConfig,
    /// Counts prompt tokens (the approximation or `cfg.tokenizer`).
    pub counter: PromptCounter,
    /// The model name as a JSON string literal.
    pub model_json: String,
    /// Counters shared with the scheduler thread.
    pub metrics: Arc<SharedMetrics>,
    /// The scheduler thread's inbox.
    pub sched_tx: Sender<SchedulerMessage>,
    /// Unix time the server started, in seconds (the `created` of `/v1/models`).
    pub started_unix: u64,
    /// `--request-log`: every request taken on, and its answer.
    pub request_log: Option<super::request_log::RequestLog>,
}

fn unix_now() -> u64 {
    crate::wallclock::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

fn response(status: u16, content_type: &'static str, body: SimBody) -> Response<SimBody> {
    let mut r = Response::new(body);
    *r.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    r.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    r
}

fn json(status: u16, body: String) -> Response<SimBody> {
    response(status, "application/json", SimBody::full(body))
}

fn error(e: ApiError) -> Response<SimBody> {
    json(e.status, e.body())
}

fn simple_error(status: u16, kind: &'static str, message: impl Into<String>) -> Response<SimBody> {
    error(ApiError {
        status,
        kind,
        message: message.into(),
    })
}

/// Serves connections from `listener` until `stop` fires; over TLS when `tls` is set (the
/// handshake runs in each connection's task, see `super::tls`).
pub async fn accept_loop(
    listener: TcpListener,
    state: Arc<AppState>,
    tls: Option<TlsAcceptor>,
    mut stop: oneshot::Receiver<()>,
) {
    loop {
        let accepted = tokio::select! {
            _ = &mut stop => break,
            r = listener.accept() => r,
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            Err(e) => {
                // e.g. out of file descriptors: back off instead of spinning
                tracing::warn!("sim: accept failed: {e}");
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let state = Arc::clone(&state);
        match &tls {
            None => tokio::spawn(serve_connection(stream, state)),
            Some(acceptor) => {
                let acceptor = acceptor.clone();
                tokio::spawn(async move {
                    if let Some(tls) = super::tls::handshake(&acceptor, stream).await {
                        serve_connection(tls, state).await;
                    }
                })
            }
        };
    }
}

/// Serves HTTP/1.1 on one connection (a TCP stream, or TLS over one) until it ends.
pub async fn serve_connection<S>(stream: S, state: Arc<AppState>)
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let svc = service_fn(move |req| {
        let state = Arc::clone(&state);
        async move { Ok::<_, Infallible>(handle(&state, req).await) }
    });
    if let Err(e) = http1::Builder::new()
        .serve_connection(TokioIo::new(stream), svc)
        .await
    {
        tracing::debug!("sim: connection ended: {e}");
    }
}

/// Routes one request.
pub async fn handle(state: &AppState, req: Request<Incoming>) -> Response<SimBody> {
    let path = req.uri().path().to_string();
    let method = req.method().clone();
    #[cfg(feature = "sagemaker")]
    if path.starts_with("/endpoints/") {
        return sagemaker(state, req).await;
    }
    // CloudWatch's Query protocol: a form POSTed to the root
    #[cfg(feature = "sagemaker")]
    if path == "/" && method == Method::POST {
        let body = match Limited::new(req.into_body(), MAX_BODY_BYTES)
            .collect()
            .await
        {
            Ok(b) => b.to_bytes(),
            Err(e) => {
                return simple_error(400, "BadRequest", format!("Could not read the body: {e}"))
            }
        };
        let (status, xml) = super::cloudwatch::answer(&body, &state.metrics.minutes);
        return response(status, "text/xml", SimBody::full(xml));
    }
    let allowed = match path.as_str() {
        "/health" | "/v1/models" | "/metrics" | "/dcgm/metrics" => Method::GET,
        "/props" if state.cfg.metric_names == MetricNames::Llamacpp => Method::GET,
        "/v1/chat/completions" | "/v1/completions" | "/reset_prefix_cache" => Method::POST,
        _ => {
            return simple_error(
                404,
                "NotFoundError",
                format!("No route for {method} {path}"),
            )
        }
    };
    if method != allowed {
        let mut r = simple_error(
            405,
            "MethodNotAllowed",
            format!("{method} is not allowed on {path}; use {allowed}"),
        );
        if let Ok(v) = HeaderValue::from_str(allowed.as_str()) {
            r.headers_mut().insert(ALLOW, v);
        }
        return r;
    }
    match path.as_str() {
        "/health" => response(200, "text/plain", SimBody::full("")),
        "/metrics" => response(
            200,
            PROMETHEUS_TEXT,
            SimBody::full(match state.cfg.metric_names {
                MetricNames::Vllm => {
                    state
                        .metrics
                        .render_prometheus(&state.cfg.model, state.cfg.kv_cache_tokens)
                        + &cache_config_info(&state.cfg)
                }
                MetricNames::Llamacpp => state.metrics.render_llamacpp(state.cfg.kv_cache_tokens),
            }),
        ),
        "/dcgm/metrics" => response(
            200,
            PROMETHEUS_TEXT,
            SimBody::full(super::gpu::render_dcgm(
                &state
                    .metrics
                    .gpu
                    .reading(crate::clock::now_ns(), state.cfg.time_scale),
            )),
        ),
        "/props" => json(200, props_body(&state.cfg)),
        "/v1/models" => json(200, models_body(state)),
        "/reset_prefix_cache" => reset_prefix_cache(state).await,
        "/v1/chat/completions" => complete(state, Route::Chat, req).await,
        _ => complete(state, Route::Completion, req).await,
    }
}

/// `POST /reset_prefix_cache`, as vLLM serves it: the scheduler thread empties its prefix
/// cache, then a 200 with an empty body. With `--refuse-prefix-cache-reset` a 404, as vLLM
/// answers outside its development mode.
async fn reset_prefix_cache(state: &AppState) -> Response<SimBody> {
    if state.cfg.refuse_prefix_cache_reset {
        return json(404, r#"{"detail":"Not Found"}"#.to_string());
    }
    let (done, emptied) = oneshot::channel();
    if state
        .sched_tx
        .send(SchedulerMessage::ResetPrefixCache(done))
        .is_err()
        || emptied.await.is_err()
    {
        return simple_error(503, "ServiceUnavailable", "the scheduler has stopped");
    }
    response(200, "application/json", SimBody::full(""))
}

/// The content type of Prometheus' text exposition format.
const PROMETHEUS_TEXT: &str = "text/plain; version=0.0.4; charset=utf-8";

/// llama.cpp's `/props`: the settings it serves with, of which rightsize reads the slot count
/// and each slot's context.
fn props_body(cfg: &super::SimConfig) -> String {
    serde_json::json!({
        "default_generation_settings": {
            "n_ctx": cfg.max_model_len,
            "model": cfg.model,
        },
        "total_slots": cfg.max_num_seqs,
        "model_path": cfg.model,
        "build_info": "rightsize-sim",
    })
    .to_string()
}

/// The serving configuration as vLLM states it: `vllm:cache_config_info`, a gauge of 1 whose
/// labels are the cache settings (block size, KV blocks, prefix caching), plus the batch
/// slots and step token budget, so a run records what it was measured on.
fn cache_config_info(cfg: &super::SimConfig) -> String {
    let blocks = cfg.kv_cache_tokens / u64::from(cfg.block_size.max(1));
    let caching = if cfg.prefix_cache_blocks > 0 {
        "True"
    } else {
        "False"
    };
    format!(
        "# HELP vllm:cache_config_info Information of the LLMEngine CacheConfig\n\
         # TYPE vllm:cache_config_info gauge\n\
         vllm:cache_config_info{{block_size=\"{}\",cache_dtype=\"auto\",\
         enable_prefix_caching=\"{caching}\",engine=\"0\",max_num_batched_tokens=\"{}\",\
         max_num_seqs=\"{}\",num_gpu_blocks=\"{blocks}\"}} 1.0\n",
        cfg.block_size, cfg.max_num_batched_tokens, cfg.max_num_seqs
    )
}

fn models_body(state: &AppState) -> String {
    serde_json::json!({
        "object": "list",
        "data": [{
            "id": state.cfg.model,
            "object": "model",
            "created": state.started_unix,
            "owned_by": "rightsize-sim",
            "root": state.cfg.model,
            "parent": null,
            "max_model_len": state.cfg.max_model_len,
        }]
    })
    .to_string()
}

async fn complete(state: &AppState, endpoint: Route, req: Request<Incoming>) -> Response<SimBody> {
    let arrival_ns = now_ns();
    let timing = req
        .headers()
        .get(TIMING_HEADER)
        .is_some_and(|v| v.as_bytes() == b"1");
    let body = match Limited::new(req.into_body(), MAX_BODY_BYTES)
        .collect()
        .await
    {
        Ok(b) => b.to_bytes(),
        Err(e) => {
            return error(ApiError::bad_request(format!(
                "Could not read the body: {e}"
            )))
        }
    };
    complete_body(state, endpoint, timing, arrival_ns, &body)
}

/// The answer of a request the fault plan fails with a status.
fn fault_answer(fault: StatusFault) -> Response<SimBody> {
    match fault {
        StatusFault::Http500 => simple_error(
            500,
            "InternalServerError",
            "simulated internal server error",
        ),
        StatusFault::Http429 => {
            let mut r = simple_error(
                429,
                "RateLimitError",
                "simulated rate limit; retry after 1 s",
            );
            r.headers_mut()
                .insert(RETRY_AFTER, HeaderValue::from_static("1"));
            r
        }
    }
}

/// Takes a place in the waiting queue, or answers 503 when `--max-waiting` requests already
/// wait.
fn queue_full(state: &AppState) -> Option<Response<SimBody>> {
    let max_waiting = state.cfg.max_waiting.unwrap_or(u64::MAX);
    let taken = state
        .metrics
        .pending
        .fetch_update(Relaxed, Relaxed, |p| (p < max_waiting).then_some(p + 1));
    taken.is_err().then(|| {
        simple_error(
            503,
            "ServiceUnavailableError",
            format!("The waiting queue is full ({max_waiting} requests); try again later."),
        )
    })
}

/// Answers a completion request's `body`, which arrived at `arrival_ns`.
fn complete_body(
    state: &AppState,
    endpoint: Route,
    timing: bool,
    arrival_ns: u64,
    body: &[u8],
) -> Response<SimBody> {
    let cfg = &state.cfg;
    let limits = Limits {
        model: &cfg.model,
        max_model_len: cfg.max_model_len,
        kv_cache_tokens: cfg.kv_cache_tokens,
        counter: &state.counter,
        template_overhead: cfg.template_overhead,
    };
    let params = match parse_request(endpoint, body, &limits) {
        Ok(p) => p,
        Err(e) => return error(e),
    };
    let metrics = &state.metrics;
    let n = metrics.requests.fetch_add(1, Relaxed) + 1;
    let (status_fault, stream_fault) = pick(&cfg.faults, cfg.seed, n);
    if let Some(r) = status_fault.map(fault_answer) {
        return r;
    }
    if let Some(r) = queue_full(state) {
        return r;
    }
    let hash = prompt_hash(&params.prompt);
    let seed = text_seed(cfg.seed, hash);
    let output_len = if params.ignore_eos {
        params.max_tokens
    } else {
        natural_length(
            seed,
            cfg.natural_output_mean,
            params.min_tokens.max(1),
            params.max_tokens,
        )
    };
    if let Some(log) = &state.request_log {
        let answer: String = (0..output_len)
            .map(|i| format!(" {}", super::output_words::token_word(seed, i)))
            .collect();
        log.record(n, endpoint, body, params.prompt_tokens, &answer);
    }
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let seq = NewSeq {
        id: n,
        prompt_tokens: params.prompt_tokens,
        block_hashes: match (&params.token_ids, cfg.prefix_cache_blocks > 0) {
            (_, false) => Vec::new(),
            (Some(ids), true) => block_hashes_of_ids(ids, params.template_tokens, cfg.block_size),
            (None, true) => block_hashes(&params.prompt, params.template_tokens, cfg.block_size),
        },
        output_len,
        arrival_ns,
        tx,
    };
    if state.sched_tx.send(SchedulerMessage::Submit(seq)).is_err() {
        metrics.pending.fetch_sub(1, Relaxed);
        return simple_error(
            503,
            "ServiceUnavailableError",
            "The simulator is shutting down.",
        );
    }
    let completion = Completion {
        endpoint,
        id: match endpoint {
            Route::Chat => format!("chatcmpl-sim-{n}"),
            Route::Completion | Route::Tgi => format!("cmpl-sim-{n}"),
        },
        created: unix_now(),
        model_json: state.model_json.clone(),
        timing,
        prompt_tokens: params.prompt_tokens,
        max_tokens: params.max_tokens,
        text_seed: seed,
        include_usage: params.include_usage,
        fault: stream_fault,
        fault_after: FAULT_AFTER_CHUNKS.min(output_len.saturating_sub(1)),
        tool_call: params.tool.as_ref().and_then(|ask| {
            let (share, broken) = (cfg.tool_call_share, cfg.tool_call_broken_share);
            super::tool_answer::decide(ask, cfg.seed, n, share, broken)
        }),
        #[cfg(feature = "sagemaker")]
        sagemaker: None,
    };
    if params.stream {
        let mut r = response(200, "text/event-stream", SimBody::stream(completion, rx));
        r.headers_mut()
            .insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
        r
    } else {
        response(200, "application/json", SimBody::whole(completion, rx))
    }
}

/// A SageMaker runtime error: `X-Amzn-ErrorType` and `{"Message"}` (a ModelError also
/// carries the container's status and message).
#[cfg(feature = "sagemaker")]
fn sagemaker_error(
    status: u16,
    kind: &'static str,
    message: &str,
    model_error: Option<(u16, &str)>,
) -> Response<SimBody> {
    let mut r = json(status, super::sagemaker::error_body(message, model_error));
    r.headers_mut()
        .insert("x-amzn-errortype", HeaderValue::from_static(kind));
    r
}

/// `POST /endpoints/{name}/invocations` and `/invocations-response-stream`: the request's
/// signature checked (with test credentials configured), a refusal when one is configured,
/// then the container's answer: whole, or its stream in event-stream frames.
#[cfg(feature = "sagemaker")]
async fn sagemaker(state: &AppState, req: Request<Incoming>) -> Response<SimBody> {
    let arrival_ns = now_ns();
    let path = req.uri().path().to_string();
    let rest = path.strip_prefix("/endpoints/").unwrap_or_default();
    let (name, streamed) = if let Some(n) = rest.strip_suffix("/invocations-response-stream") {
        (n.to_string(), true)
    } else if let Some(n) = rest.strip_suffix("/invocations") {
        (n.to_string(), false)
    } else {
        return sagemaker_error(404, "UnknownOperationException", "No such operation", None);
    };
    if req.method() != Method::POST {
        return sagemaker_error(
            405,
            "UnknownOperationException",
            &format!("{} is not allowed on {path}; use POST", req.method()),
            None,
        );
    }
    let (parts, body) = req.into_parts();
    let body = match Limited::new(body, MAX_BODY_BYTES).collect().await {
        Ok(b) => b.to_bytes(),
        Err(e) => {
            return sagemaker_error(
                400,
                "ValidationError",
                &format!("Could not read the body: {e}"),
                None,
            )
        }
    };
    let sm = &state.cfg.sagemaker;
    if let Some((id, secret)) = &sm.credentials {
        if let Err(why) = super::sagemaker::verify_sigv4(&parts, &body, id, secret) {
            state.metrics.sagemaker_bad_signatures.fetch_add(1, Relaxed);
            return sagemaker_error(403, "InvalidSignatureException", &why, None);
        }
        state.metrics.sagemaker_signed.fetch_add(1, Relaxed);
    }
    let header = |n: &str| parts.headers.get(n).and_then(|v| v.to_str().ok());
    if let Some(refusal) = sm.refuse {
        let component = header("x-amzn-sagemaker-inference-component");
        let (status, kind, message) = refusal.answer(&name, component);
        return sagemaker_error(status, kind, &message, None);
    }
    let timing = header(TIMING_HEADER) == Some("1");
    // the container's format, from the body's shape
    let endpoint = match serde_json::from_slice::<serde_json::Value>(&body) {
        Ok(v) if v.get("inputs").is_some() => Route::Tgi,
        Ok(v) if v.get("messages").is_some() => Route::Chat,
        Ok(v) if v.get("prompt").is_some() => Route::Completion,
        _ => {
            let said = "the body is neither OpenAI chat, OpenAI completions nor TGI JSON";
            return sagemaker_error(
                424,
                "ModelError",
                &format!("Received client error (400) from primary with message \"{said}\""),
                Some((400, said)),
            );
        }
    };
    let mut resp = complete_body(state, endpoint, timing, arrival_ns, &body);
    let status = resp.status().as_u16();
    if status != 200 {
        let said = resp
            .body()
            .full_bytes()
            .map(|b| String::from_utf8_lossy(b).into_owned())
            .unwrap_or_default();
        let kind = if status >= 500 { "server" } else { "client" };
        return sagemaker_error(
            424,
            "ModelError",
            &format!("Received {kind} error ({status}) from primary with message \"{said}\""),
            Some((status, &said)),
        );
    }
    resp.headers_mut().insert(
        "x-amzn-invoked-production-variant",
        HeaderValue::from_static("AllTraffic"),
    );
    if streamed {
        let framing = super::answer_body::SageMakerFraming {
            cfg: Arc::new(sm.clone()),
            rng: crate::rng::SplitMix64::new(state.cfg.seed ^ arrival_ns),
            frames_sent: 0,
            stream_error: false,
        };
        let inner_type = resp.headers().get(CONTENT_TYPE).cloned();
        if resp.body_mut().frame_for_sagemaker(framing) {
            resp.headers_mut().insert(
                CONTENT_TYPE,
                HeaderValue::from_static("application/vnd.amazon.eventstream"),
            );
            if let Some(t) = inner_type {
                resp.headers_mut()
                    .insert("x-amzn-sagemaker-content-type", t);
            }
        }
    }
    resp
}
