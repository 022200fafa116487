//! The table test of `super`: the same faults, each met on a real loopback listener, a closed
//! port or a name that does not resolve, read by both HTTP paths: the load path (a generation
//! request through the hyper transport: `Endpoint::send`, and the pre-flight's
//! `Endpoint::exchange` for the class) and the control path (`GET /models` through the
//! endpoint's control client). Each path must give the fault's error kind and transport class.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

use crate::endpoint::probe::{Probe, Transport};
use crate::endpoint::{Api, Endpoint, EndpointSpec};
use crate::record::ErrorKind;
use crate::workload::messages::RequestInput;

/// How long either path waits for an answer (the silent server's case runs into it).
const WAIT: Duration = Duration::from_millis(300);

#[derive(Debug, Clone, Copy)]
enum Fault {
    /// Nothing listens on the port.
    Refused,
    /// A server that accepts and never answers.
    Silent,
    /// A server that closes each connection as soon as it accepts it.
    ClosesAtOnce,
    /// `https://` to a server that answers in plain HTTP.
    PlainTextToTls,
    /// A host name that does not resolve (`.invalid` never does).
    NoSuchName,
}

/// The base URL where `fault` is met, and the task serving it (when a server is needed).
async fn meet(fault: Fault) -> (String, Option<JoinHandle<()>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let (scheme, server) = match fault {
        Fault::Refused => {
            drop(listener);
            ("http", None)
        }
        Fault::NoSuchName => return ("http://model.invalid:8000/v1".to_string(), None),
        Fault::Silent => (
            "http",
            Some(tokio::spawn(async move {
                let mut held = Vec::new();
                while let Ok((s, _)) = listener.accept().await {
                    held.push(s);
                }
            })),
        ),
        Fault::ClosesAtOnce => (
            "http",
            Some(tokio::spawn(async move {
                while let Ok((s, _)) = listener.accept().await {
                    drop(s);
                }
            })),
        ),
        Fault::PlainTextToTls => (
            "https",
            Some(tokio::spawn(async move {
                while let Ok((mut s, _)) = listener.accept().await {
                    let mut hello = [0u8; 1024];
                    let _ = s.read(&mut hello).await;
                    let answer = "HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\
                                  connection: close\r\n\r\n";
                    let _ = s.write_all(answer.as_bytes()).await;
                }
            })),
        ),
    };
    (format!("{scheme}://127.0.0.1:{port}/v1"), server)
}

fn endpoint(base_url: &str) -> Endpoint {
    let spec = EndpointSpec {
        name: "table".into(),
        base_url: base_url.into(),
        model: "m".into(),
        api: Api::Chat,
        stream: true,
        exact_output_length: false,
        headers: vec![],
        api_key_env: None,
        sim_timing: false,
        sagemaker: None,
    };
    Endpoint::new(&spec, 1, WAIT).unwrap()
}

/// What one path read of a fault: the error kind, the transport class and the text.
type Read = (ErrorKind, Transport, String);

/// The load path: a generation request (the kind and text of `Endpoint::send`, the class from
/// the pre-flight's probe of the same request).
async fn load_path(ep: &Endpoint) -> Read {
    let sent = ep.send("hi", 4).await.error.expect("the request fails");
    let mut probe = Probe::default();
    let probed = ep
        .exchange(RequestInput::Text("hi"), 4, Some(&mut probe), None)
        .await
        .error
        .expect("the probed request fails");
    assert_eq!(probed.kind, sent.kind, "send and the probed exchange agree");
    let class = probe.transport.expect("a transport failure");
    (sent.kind, class, sent.message)
}

/// The control path: `GET /models` through the endpoint's control client.
async fn control_path(ep: &Endpoint) -> Read {
    let client = ep.control_client();
    let url = ep.models_url().as_str();
    let e = match client.get(url, Some("application/json"), Some(WAIT)).await {
        Ok(a) => panic!("GET /models answered HTTP {}", a.status()),
        Err(e) => e,
    };
    (e.kind(), e.transport(), e.to_string())
}

/// How the two paths' texts compare.
#[derive(Debug, Clone, Copy)]
enum Text {
    /// Word for word.
    Same,
    /// The load path, which knows its TLS handshake failed, says so first.
    Handshake,
    /// Not compared: when the server's close lands (before or after the request is written)
    /// decides hyper's words on either path.
    Timing,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_paths_read_a_fault_the_same() {
    use ErrorKind::{Connect, Timeout};
    let table = [
        (Fault::Refused, Connect, Transport::Refused, Text::Same),
        (Fault::Silent, Timeout, Transport::Timeout, Text::Same),
        (Fault::ClosesAtOnce, Connect, Transport::Other, Text::Timing),
        (
            Fault::PlainTextToTls,
            Connect,
            Transport::Tls,
            Text::Handshake,
        ),
        (Fault::NoSuchName, Connect, Transport::Dns, Text::Same),
    ];
    for (fault, kind, class, text) in table {
        let (base, server) = meet(fault).await;
        let ep = endpoint(&base);
        let load = load_path(&ep).await;
        let control = control_path(&ep).await;
        assert_eq!(
            (load.0, load.1),
            (kind, class),
            "{fault:?}, load path: {load:?}"
        );
        assert_eq!(
            (control.0, control.1),
            (kind, class),
            "{fault:?}, control path: {control:?}"
        );
        match text {
            Text::Same => assert_eq!(load.2, control.2, "{fault:?}"),
            Text::Handshake => {
                assert_eq!(
                    load.2,
                    format!("TLS handshake failed: {}", control.2),
                    "{fault:?}"
                )
            }
            Text::Timing => {}
        }
        for (path, said) in [("load", &load.2), ("control", &control.2)] {
            assert!(
                !said.is_empty() && !said.contains("127.0.0.1") && !said.contains("model.invalid"),
                "{fault:?}, the {path} path's text is empty or names the URL: {said}"
            );
        }
        if let Some(s) = server {
            s.abort();
        }
    }
}
