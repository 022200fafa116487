//! A self-signed certificate for the https tests and the client benchmark (benches include
//! this file with `#[path]`): valid for `127.0.0.1` (an IP address name) and `localhost`, made
//! fresh with rcgen, never committed. Serve it with `rightsize sim --tls-cert CERT --tls-key
//! KEY`; clients trust it through `SSL_CERT_FILE=CERT` (or `add_root_certificate`).

use std::path::{Path, PathBuf};

/// Writes `cert.pem` and `key.pem` into `dir` (which must exist) and returns their paths.
pub fn self_signed(dir: &Path) -> (PathBuf, PathBuf) {
    let names = vec!["127.0.0.1".to_string(), "localhost".to_string()];
    let made = rcgen::generate_simple_self_signed(names).expect("make a self-signed certificate");
    let cert = dir.join("cert.pem");
    let key = dir.join("key.pem");
    std::fs::write(&cert, made.cert.pem()).expect("write cert.pem");
    std::fs::write(&key, made.key_pair.serialize_pem()).expect("write key.pem");
    (cert, key)
}
