//! The client over `https://`: the real binary against the simulator serving TLS with a fresh
//! self-signed certificate, trusted through `SSL_CERT_FILE` (set on the client's process
//! only). A closed-loop streamed sweep and an open-loop rate sweep (whose dispatcher writes
//! each request itself, encrypting on its own thread) both answer every request, each first
//! token read no earlier than the simulator sent it; without the certificate trusted, the
//! pre-flight says it is a TLS failure before any load.

use crate::support::common;

use common::{bin, only_run_dir, read_json, stderr, tmpdir, SimProcess};

/// A simulator at 20x serving HTTPS, and the certificate's path.
fn tls_sim(name: &str) -> (SimProcess, std::path::PathBuf) {
    let dir = tmpdir(name);
    let (cert, key) = common::tls::self_signed(&dir);
    let sim = SimProcess::start(&[
        "--time-scale",
        "20",
        "--tls-cert",
        cert.to_str().unwrap(),
        "--tls-key",
        key.to_str().unwrap(),
    ]);
    assert!(sim.url.starts_with("https://127.0.0.1:"), "{}", sim.url);
    (sim, cert)
}

/// Every measured request of the run in `out` (at least `want`; calibration adds one): none
/// failed, and each streamed one's first token was read no earlier than the simulator stamped
/// it sent. Warm-up and cooldown requests are left out: a warm-up request still running when
/// the level's first measured request ends is cut by design (`cancelled`, see docs/search.md).
fn check_requests(out: &std::path::Path, want: usize) {
    let dir = only_run_dir(out);
    let lines: Vec<serde_json::Value> = common::request_log(&dir)
        .into_iter()
        .filter(|r| r.get("warmup").is_none() && r.get("cooldown").is_none())
        .collect();
    assert!(lines.len() >= want, "{lines:?}");
    for r in &lines {
        assert!(r.get("error").is_none(), "{r}");
        let sent = r["server_first_sent_ns"]
            .as_u64()
            .expect("the simulator's stamp");
        let read = r["first_token_ns"].as_u64().expect("a first token");
        assert!(read >= sent, "read at {read} ns, sent at {sent} ns: {r}");
    }
    let run = read_json(&dir.join("run.json"));
    assert!(
        run["endpoint"]["base_url"]
            .as_str()
            .unwrap()
            .starts_with("https://"),
        "{run}"
    );
}

/// A streamed sweep of the simulator in `name`'s folders, with `load` (levels or rates) and
/// its certificate trusted: checked to exit 0 with at least `want` requests, none failed.
fn https_sweep(name: &str, load: &[&str], want: usize) {
    let (sim, cert) = tls_sim(name);
    let out = tmpdir(&format!("{name}-out"));
    let o = bin()
        .env("SSL_CERT_FILE", &cert)
        .args(["sweep", "-e", &sim.url, "--stream", "--sim-timing"])
        .args(["--input-tokens", "32", "--output-tokens", "8"])
        .args(load)
        .args(["--no-tui", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    check_requests(&out, want);
}

#[test]
fn a_streamed_sweep_over_https_answers_every_request() {
    https_sweep("https-sweep", &["-c", "1,4", "-n", "8"], 16);
}

#[test]
fn an_open_loop_over_https_is_written_by_the_dispatcher_and_answered() {
    https_sweep(
        "https-open",
        &["--rates", "20", "--level-duration", "1s"],
        20,
    );
}

#[test]
fn an_untrusted_certificate_is_a_tls_failure_before_any_load() {
    let (sim, _cert) = tls_sim("https-untrusted");
    let out = tmpdir("https-untrusted-out");
    let o = bin()
        .env_remove("SSL_CERT_FILE")
        .args([
            "sweep", "-e", &sim.url, "-c", "1", "-n", "2", "--no-tui", "--out",
        ])
        .arg(&out)
        .output()
        .unwrap();
    // a pre-flight failure: exit 1, as for any endpoint that does not answer
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("TLS handshake with"), "{err}");
    assert!(err.contains("certificate"), "{err}");
}
