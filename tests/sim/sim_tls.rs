//! The simulator over HTTPS (`--tls-cert`/`--tls-key`): in process with a fresh self-signed
//! certificate, a client trusting it gets the same answers as over http; plain http to the
//! TLS port is dropped without counting a request; and the real binary refuses half a pair
//! of flags or an unreadable file with exit code 2, naming the flag and the file.

use crate::support::common;

use std::process::Stdio;
use std::time::Duration;

use rightsize::sim::{SimConfig, TlsFiles};

/// An in-process simulator at 50x serving HTTPS, and a reqwest client trusting its
/// certificate.
async fn tls_sim(name: &str) -> (rightsize::sim::SimServer, reqwest::Client) {
    let dir = common::tmpdir(name);
    let (cert, key) = common::tls::self_signed(&dir);
    let sim = rightsize::sim::start(SimConfig {
        tls: Some(TlsFiles {
            cert: cert.clone(),
            key,
        }),
        ..SimConfig::fast(50.0)
    })
    .await
    .expect("start the https simulator");
    let pem = std::fs::read(&cert).expect("read cert.pem");
    let client = reqwest::Client::builder()
        .add_root_certificate(reqwest::Certificate::from_pem(&pem).expect("a PEM certificate"))
        .timeout(Duration::from_secs(30))
        .build()
        .expect("a client");
    (sim, client)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn models_and_a_streamed_chat_over_https() {
    let (sim, client) = tls_sim("sim-tls-serve").await;
    assert!(
        sim.base_url.starts_with("https://127.0.0.1:"),
        "{}",
        sim.base_url
    );

    let r = client
        .get(format!("{}/models", sim.base_url))
        .send()
        .await
        .expect("GET /v1/models over https");
    assert_eq!(r.status(), 200);
    let models: serde_json::Value =
        serde_json::from_str(&r.text().await.expect("the body")).expect("JSON");
    assert_eq!(models["data"][0]["id"], sim.model.as_str());

    let r = client
        .post(format!("{}/chat/completions", sim.base_url))
        .header("content-type", "application/json")
        .body(
            serde_json::json!({
                "model": sim.model,
                "messages": [{"role": "user", "content": "Say hello over TLS."}],
                "stream": true,
                "max_tokens": 12,
                "ignore_eos": true,
            })
            .to_string(),
        )
        .send()
        .await
        .expect("POST /v1/chat/completions over https");
    assert_eq!(r.status(), 200);
    let text = r.text().await.expect("the streamed body");
    let events: Vec<&str> = text
        .split("\n\n")
        .map(str::trim)
        .filter(|e| !e.is_empty())
        .collect();
    assert_eq!(events.last(), Some(&"data: [DONE]"), "{text}");
    assert!(events.len() >= 12, "12 tokens and [DONE]: {text}");
    assert_eq!(sim.stats().requests_received, 1);
    sim.shutdown();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plain_http_to_the_tls_port_is_dropped_and_serving_goes_on() {
    let (sim, client) = tls_sim("sim-tls-plain").await;
    let plain = reqwest::Client::new()
        .get(format!("http://{}/v1/models", sim.addr))
        .timeout(Duration::from_secs(10))
        .send()
        .await;
    assert!(plain.is_err(), "plain http got an answer: {plain:?}");
    let r = client
        .get(format!("{}/models", sim.base_url))
        .send()
        .await
        .expect("https after a failed handshake");
    assert_eq!(r.status(), 200);
    assert_eq!(sim.stats().requests_received, 0);
    sim.shutdown();
}

/// `rightsize sim --port 0 ARGS`: its exit code and stderr; a panic if it runs 30 s.
fn sim_exit(args: &[&str]) -> (Option<i32>, String) {
    let mut child = common::bin()
        .args(["sim", "--port", "0"])
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start rightsize sim");
    common::wait_exit(
        &mut child,
        Duration::from_secs(30),
        &format!("rightsize sim {args:?}"),
    );
    let out = child.wait_with_output().expect("its output");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_certificate_without_its_key_is_refused() {
    let dir = common::tmpdir("sim-tls-half");
    let (cert, _) = common::tls::self_signed(&dir);
    let (code, err) = sim_exit(&["--tls-cert", cert.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("--tls-key"), "{err}");
}

#[test]
fn an_unreadable_certificate_file_is_refused_by_name() {
    let dir = common::tmpdir("sim-tls-bad");
    let (_, key) = common::tls::self_signed(&dir);
    let missing = dir.join("no-such-cert.pem");
    let (code, err) = sim_exit(&[
        "--tls-cert",
        missing.to_str().unwrap(),
        "--tls-key",
        key.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("--tls-cert") && err.contains(missing.to_str().unwrap()),
        "{err}"
    );

    // a file that is there but holds no certificate: the key file given as the certificate
    let (code, err) = sim_exit(&[
        "--tls-cert",
        key.to_str().unwrap(),
        "--tls-key",
        key.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("--tls-cert") && err.contains(key.to_str().unwrap()),
        "{err}"
    );
}
