//! The calls `--prefix-cache reset` makes, against scripted loopback servers: llama.cpp's
//! slot erase (`GET /slots`, then `POST /slots/{id}?action=erase` for each slot it lists),
//! vLLM's `POST /reset_prefix_cache`, each with the endpoint's headers, and what a refusal
//! says.

use crate::support::endpoint_support;

use std::time::Duration;

use endpoint_support::*;
use rightsize::endpoint::cache_reset::{reset_call, reset_prefix_cache};
use rightsize::endpoint::Endpoint;

/// A server answering `GET /slots` with `slots` and every POST with `post`.
async fn server(slots: Vec<Step>, post: Vec<Step>) -> Server {
    serve(move |_, _, req| {
        if req.method == "GET" {
            slots.clone()
        } else {
            post.clone()
        }
    })
    .await
}

fn ok() -> Vec<Step> {
    vec![response("200 OK", "application/json", "{\"success\":true}")]
}

/// The endpoint at `s`, with a header of its own: the calls carry it as `/metrics`' do.
fn endpoint(s: &Server) -> Endpoint {
    let mut spec = spec(&s.base());
    spec.headers = vec![("X-Team".into(), "ml".into())];
    Endpoint::new(&spec, 4, Duration::from_secs(5)).unwrap()
}

/// Each request the server received: its method and path, and its `X-Team` header.
fn calls(s: &Server) -> Vec<(String, String, Option<String>)> {
    s.requests()
        .into_iter()
        .map(|r| (r.method.clone(), r.path.clone(), r.header("x-team")))
        .collect()
}

fn call(method: &str, path: &str) -> (String, String, Option<String>) {
    (method.into(), path.into(), Some("ml".into()))
}

#[tokio::test]
async fn llamacpp_lists_its_slots_and_erases_each() {
    let slots = r#"[{"id":0,"n_ctx":4096,"is_processing":false},{"id":1,"n_ctx":4096,"is_processing":false}]"#;
    let s = server(vec![response("200 OK", "application/json", slots)], ok()).await;
    let ep = endpoint(&s);
    let how = reset_call(Some("llamacpp"), &s.base(), None).unwrap();
    assert_eq!(reset_prefix_cache(&ep.control_client(), &how).await, Ok(3));
    assert_eq!(
        calls(&s),
        [
            call("GET", "/slots"),
            call("POST", "/slots/0?action=erase"),
            call("POST", "/slots/1?action=erase"),
        ]
    );
}

#[tokio::test]
async fn llamacpp_without_its_slots_endpoint_names_the_setting() {
    let off = r#"{"error":{"code":501,"message":"This server does not support slots endpoint. Start it with `--slots`","type":"not_supported_error"}}"#;
    let s = server(
        vec![response("501 Not Implemented", "application/json", off)],
        ok(),
    )
    .await;
    let ep = endpoint(&s);
    let how = reset_call(Some("llamacpp"), &s.base(), None).unwrap();
    let why = reset_prefix_cache(&ep.control_client(), &how)
        .await
        .unwrap_err();
    assert_eq!(
        why,
        format!(
            "GET http://{}/slots answered 501 Not Implemented; llama.cpp lists and erases its \
             slots only with its slots endpoint on: start llama-server with --slots (not \
             --no-slots)",
            s.addr
        )
    );
    assert_eq!(calls(&s), [call("GET", "/slots")]);
}

#[tokio::test]
async fn vllm_is_one_post_and_its_404_names_the_dev_mode() {
    let s = server(vec![], ok()).await;
    let ep = endpoint(&s);
    let how = reset_call(Some("vllm"), &s.base(), None).unwrap();
    assert_eq!(reset_prefix_cache(&ep.control_client(), &how).await, Ok(1));
    assert_eq!(calls(&s), [call("POST", "/reset_prefix_cache")]);

    let refusing = server(
        vec![],
        vec![response(
            "404 Not Found",
            "application/json",
            "{\"detail\":\"Not Found\"}",
        )],
    )
    .await;
    let ep = endpoint(&refusing);
    let how = reset_call(Some("vllm"), &refusing.base(), None).unwrap();
    let why = reset_prefix_cache(&ep.control_client(), &how)
        .await
        .unwrap_err();
    assert_eq!(
        why,
        format!(
            "POST http://{}/reset_prefix_cache answered 404 Not Found; vLLM serves POST \
             /reset_prefix_cache only in its development mode: start the server with \
             VLLM_SERVER_DEV_MODE=1 in its environment",
            refusing.addr
        )
    );
}
