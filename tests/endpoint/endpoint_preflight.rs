//! The pre-flight check against scripted loopback servers: one diagnosis per thing that can be
//! wrong, with its exact text.

use crate::support::endpoint_support;

use std::time::Duration;

use endpoint_support::*;
use rightsize::endpoint::{preflight, Endpoint, EndpointSpec, PreflightError, ServerIdentity};

const MODELS: &str = r#"{"object":"list","data":[{"id":"test-model","object":"model","owned_by":"vllm"},{"id":"other-model","object":"model","owned_by":"vllm"}]}"#;

fn endpoint(spec: &EndpointSpec) -> Endpoint {
    Endpoint::new(spec, 4, Duration::from_secs(5)).unwrap()
}

/// A server with `/v1/models` answered by `models` and generation requests by `generate`.
async fn server(models: Vec<Step>, generate: Vec<Step>) -> Server {
    serve(move |_, _, req| {
        if req.path.ends_with("/models") {
            models.clone()
        } else {
            generate.clone()
        }
    })
    .await
}

fn not_found() -> Vec<Step> {
    vec![response(
        "404 Not Found",
        "text/plain",
        "404 page not found",
    )]
}

#[tokio::test]
async fn healthy_server_gives_its_identity() {
    let s = server(
        vec![response("200 OK", "application/json", MODELS)],
        good_stream(),
    )
    .await;
    let id = preflight(&endpoint(&spec(&s.base()))).await.unwrap();
    assert_eq!(
        id,
        ServerIdentity {
            models: vec!["test-model".into(), "other-model".into()],
            server_header: Some("test-server/1.0".into()),
            owned_by: Some("vllm".into()),
            production_variant: None,
        }
    );
    let reqs = s.requests();
    assert_eq!(
        reqs.iter()
            .map(|r| format!("{} {}", r.method, r.path))
            .collect::<Vec<_>>(),
        ["GET /v1/models", "POST /v1/chat/completions"]
    );
    assert_eq!(reqs[1].json()["max_tokens"], 4);
    assert_eq!(reqs[1].json()["stream"], true);
}

#[tokio::test]
async fn missing_models_route_is_fine() {
    let s = server(not_found(), good_stream()).await;
    let id = preflight(&endpoint(&spec(&s.base()))).await.unwrap();
    assert!(id.models.is_empty());
    assert_eq!(id.owned_by, None);
}

#[tokio::test]
async fn non_streaming_endpoint_passes_with_a_json_answer() {
    let body = r#"{"choices":[{"message":{"role":"assistant","content":"Hi"},"finish_reason":"length"}],"usage":{"prompt_tokens":3,"completion_tokens":1}}"#;
    let s = server(
        not_found(),
        vec![response("200 OK", "application/json", body)],
    )
    .await;
    let mut sp = spec(&s.base());
    sp.stream = false;
    assert!(preflight(&endpoint(&sp)).await.is_ok());
}

#[tokio::test]
async fn connection_refused_names_url_and_port() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let e = preflight(&endpoint(&spec(&format!("http://127.0.0.1:{port}"))))
        .await
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "connection refused at http://127.0.0.1:{port}/v1/models: is the server running and listening on port {port}?"
        )
    );
}

#[tokio::test]
async fn unknown_model_lists_what_the_server_offers() {
    let s = server(
        vec![response("200 OK", "application/json", MODELS)],
        good_stream(),
    )
    .await;
    let mut sp = spec(&s.base());
    sp.model = "llama-3".into();
    let e = preflight(&endpoint(&sp)).await.unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "model 'llama-3' is not served at {}/models: it offers: test-model, other-model",
            s.base()
        )
    );
    // no generation request was sent
    assert_eq!(s.requests().len(), 1);
}

#[tokio::test]
async fn unknown_model_from_a_404_json_error() {
    let s = server(
        not_found(),
        vec![response(
            "404 Not Found",
            "application/json",
            r#"{"object":"error","message":"The model `llama-3` does not exist.","type":"NotFoundError","param":null,"code":404}"#,
        )],
    )
    .await;
    let mut sp = spec(&s.base());
    sp.model = "llama-3".into();
    let e = preflight(&endpoint(&sp)).await.unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "model 'llama-3' is not served at {}/chat/completions: the server says \"The model `llama-3` does not exist.\"; check the model name",
            s.base()
        )
    );
}

#[tokio::test]
async fn wrong_path_is_not_found() {
    let s = server(not_found(), not_found()).await;
    let e = preflight(&endpoint(&spec(&s.base()))).await.unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "{}/chat/completions answered HTTP 404: no OpenAI-compatible API there; check the base URL (it usually ends in /v1)",
            s.base()
        )
    );
}

#[tokio::test]
async fn unauthorized_names_the_variable_never_the_key() {
    const SECRET: &str = "sk-preflight-secret-99";
    std::env::set_var("RIGHTSIZE_TEST_KEY_PREFLIGHT", SECRET);
    let denied = vec![response(
        "401 Unauthorized",
        "application/json",
        r#"{"error":{"message":"Incorrect API key provided: sk-preflight-secret-99","type":"invalid_request_error"}}"#,
    )];
    let s = server(denied.clone(), denied).await;
    let mut sp = spec(&s.base());
    sp.api_key_env = Some("RIGHTSIZE_TEST_KEY_PREFLIGHT".into());
    let e = preflight(&endpoint(&sp)).await.unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "{}/models answered HTTP 401: the API key was rejected; check the environment variable RIGHTSIZE_TEST_KEY_PREFLIGHT",
            s.base()
        )
    );
    assert!(!format!("{e} {e:?}").contains(SECRET));

    // without a key configured, on the generation request
    let s = server(
        not_found(),
        vec![response("403 Forbidden", "text/plain", "forbidden")],
    )
    .await;
    let e = preflight(&endpoint(&spec(&s.base()))).await.unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "{}/chat/completions answered HTTP 403: the server wants an API key; put it in an environment variable and name that variable in the endpoint's api_key_env",
            s.base()
        )
    );
}

#[tokio::test]
async fn html_page_is_not_openai() {
    let page =
        "<!DOCTYPE html>\n<html><head><title>Welcome</title></head><body>My web app</body></html>";
    let s = server(
        vec![response("200 OK", "text/html; charset=utf-8", page)],
        vec![response("200 OK", "text/html; charset=utf-8", page)],
    )
    .await;
    let e = preflight(&endpoint(&spec(&s.base()))).await.unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "{}/chat/completions did not answer like an OpenAI-compatible API (HTTP 200, content type 'text/html; charset=utf-8'); it sent: <!DOCTYPE html> <html><head><title>Welcome</title></head><body>My web app</body></html>",
            s.base()
        )
    );
}

#[tokio::test]
async fn json_answer_to_a_stream_request_means_streaming_unsupported() {
    let body =
        r#"{"choices":[{"message":{"role":"assistant","content":"Hi"},"finish_reason":"length"}]}"#;
    let s = server(
        not_found(),
        vec![response("200 OK", "application/json", body)],
    )
    .await;
    let e = preflight(&endpoint(&spec(&s.base()))).await.unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "{}/chat/completions did not stream (content type 'application/json', 1 data events): the server may not support streaming; try --no-stream",
            s.base()
        )
    );
}

#[tokio::test]
async fn event_stream_without_data_means_streaming_unsupported() {
    let s = server(
        not_found(),
        vec![sse_head(), chunk(": ping\r\n\r\n"), done(), end()],
    )
    .await;
    let e = preflight(&endpoint(&spec(&s.base()))).await.unwrap_err();
    assert!(
        matches!(
            e,
            PreflightError::StreamingUnsupported { data_events: 0, .. }
        ),
        "{e}"
    );
}

#[tokio::test]
async fn unrelated_json_stream_is_not_openai() {
    let s = server(
        not_found(),
        vec![
            sse_head(),
            event(r#"{"token":{"id":1,"text":"Hi"}}"#),
            done(),
            end(),
        ],
    )
    .await;
    let e = preflight(&endpoint(&spec(&s.base()))).await.unwrap_err();
    assert!(
        matches!(e, PreflightError::NotOpenAi { status: 200, .. }),
        "{e}"
    );
    assert!(e.to_string().contains(r#"it sent: data: {"token""#), "{e}");
}

#[tokio::test]
async fn broken_stream_and_in_stream_error_are_reported() {
    let s = server(not_found(), vec![sse_head(), content("Hi"), end()]).await;
    let e = preflight(&endpoint(&spec(&s.base()))).await.unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "{}/chat/completions: the stream broke before it was complete (the stream ended without [DONE]); check the server's logs",
            s.base()
        )
    );

    let s = server(
        not_found(),
        vec![sse_head(), event(r#"{"error":{"message":"boom"}}"#), end()],
    )
    .await;
    let e = preflight(&endpoint(&spec(&s.base()))).await.unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "{}/chat/completions reported an error inside the stream: boom",
            s.base()
        )
    );
}

#[tokio::test]
async fn stalled_server_times_out() {
    let s = serve_one(vec![Step::Sleep(10_000)]).await;
    let ep = Endpoint::new(&spec(&s.base()), 4, Duration::from_millis(200)).unwrap();
    let e = preflight(&ep).await.unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "{}/models did not answer within 200 ms: the server may be overloaded or still loading the model; retry, or give it longer (--preflight-timeout, --timeout)",
            s.base()
        )
    );
}

#[tokio::test]
async fn https_to_a_plain_http_server_is_a_tls_failure() {
    let s = serve_one(not_found()).await;
    let e = preflight(&endpoint(&spec(&format!("https://{}/v1", s.addr))))
        .await
        .unwrap_err();
    assert!(matches!(e, PreflightError::Tls { .. }), "{e:?}");
    assert!(
        e.to_string()
            .ends_with("check http:// versus https:// and the server's certificate"),
        "{e}"
    );
}

#[tokio::test]
async fn unresolvable_host_is_a_dns_failure() {
    let e = preflight(&endpoint(&spec("http://no-such-host.invalid:8000/v1")))
        .await
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "cannot resolve the host name 'no-such-host.invalid' (http://no-such-host.invalid:8000/v1/models): check the host in the base URL"
    );
}

#[tokio::test]
async fn redirect_is_shown_not_followed() {
    let s = server(
        not_found(),
        vec![Step::Write(
            b"HTTP/1.1 301 Moved Permanently\r\nlocation: https://api.example.com/v1/chat/completions\r\ncontent-length: 0\r\n\r\n".to_vec(),
        )],
    )
    .await;
    let e = preflight(&endpoint(&spec(&s.base()))).await.unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "{}/chat/completions redirects (HTTP 301) to https://api.example.com/v1/chat/completions: use that address as the base URL",
            s.base()
        )
    );
}

/// A server whose first `fails` generation requests answer `status`, the rest a good stream.
async fn failing_first(fails: usize, status: &'static str) -> Server {
    let n = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    serve(move |_, _, req| {
        if req.path.ends_with("/models") {
            return vec![response("200 OK", "application/json", MODELS)];
        }
        if n.fetch_add(1, std::sync::atomic::Ordering::Relaxed) < fails {
            vec![response(
                status,
                "application/json",
                r#"{"error":{"message":"try later"}}"#,
            )]
        } else {
            good_stream()
        }
    })
    .await
}

#[tokio::test]
async fn a_passing_5xx_or_429_is_asked_again_and_a_lasting_one_fails() {
    // two 500s, then a good answer: pre-flight passes on its third request
    let s = failing_first(2, "500 Internal Server Error").await;
    let ep = endpoint(&spec(&s.base()));
    preflight(&ep).await.expect("the third request answers");
    let generated = |s: &Server| {
        s.requests()
            .iter()
            .filter(|r| !r.path.ends_with("/models"))
            .count()
    };
    assert_eq!(generated(&s), 3);
    // one 429: the second request answers
    let s = failing_first(1, "429 Too Many Requests").await;
    preflight(&endpoint(&spec(&s.base()))).await.unwrap();
    assert_eq!(generated(&s), 2);
    // three 503s: it fails, saying what the server said
    let s = failing_first(3, "503 Service Unavailable").await;
    let e = preflight(&endpoint(&spec(&s.base()))).await.unwrap_err();
    assert!(e.to_string().contains("answered HTTP 503"), "{e}");
    assert_eq!(generated(&s), 3);
    // a 400 is not asked again
    let s = failing_first(1, "400 Bad Request").await;
    preflight(&endpoint(&spec(&s.base()))).await.unwrap_err();
    assert_eq!(generated(&s), 1);
}
