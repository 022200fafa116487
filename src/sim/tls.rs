//! HTTPS for the simulator: `rightsize sim --tls-cert FILE --tls-key FILE`.
//!
//! [`acceptor`] reads the PEM certificate chain and private key once, at start, into a rustls
//! server configuration (the ring provider, TLS 1.2 and 1.3, ALPN `http/1.1` only: the
//! simulator serves HTTP/1.1). The accept loop hands each accepted socket to its own task,
//! and [`handshake`] runs there, so a slow or broken client never holds up the next accept;
//! then the connection is served by the same hyper service as plain http. A failed handshake
//! drops that connection: nothing is counted and it is logged at debug level only.
//!
//! Clients trust a self-signed certificate through `SSL_CERT_FILE` (rightsize, curl's
//! `--cacert`, anything built on rustls-native-certs or OpenSSL).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use rustls::pki_types::pem::{self, PemObject};
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio::net::TcpStream;
use tokio_rustls::server::TlsStream;
use tokio_rustls::TlsAcceptor;

/// Longest a client may take to complete the handshake before its connection is dropped.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// The PEM files of `--tls-cert` and `--tls-key`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsFiles {
    /// The certificate chain, leaf first (PEM `CERTIFICATE` sections).
    pub cert: PathBuf,
    /// The private key (PEM PKCS#8, PKCS#1 or SEC1).
    pub key: PathBuf,
}

/// `flag file: what is wrong`, for a PEM file that cannot be used.
fn pem_error(flag: &str, file: &Path, what: &str, e: pem::Error) -> String {
    let why = match e {
        pem::Error::Io(e) => format!("cannot read it: {e}"),
        pem::Error::NoItemsFound => format!("no {what} in it (expected a PEM file)"),
        e => format!("not a PEM {what}: {e}"),
    };
    format!("{flag} {}: {why}", file.display())
}

/// The acceptor for `files`; the error names the flag and the file at fault.
pub fn acceptor(files: &TlsFiles) -> Result<TlsAcceptor, String> {
    let certs = CertificateDer::pem_file_iter(&files.cert)
        .and_then(|it| it.collect::<Result<Vec<_>, _>>())
        .map_err(|e| pem_error("--tls-cert", &files.cert, "certificate", e))?;
    if certs.is_empty() {
        return Err(pem_error(
            "--tls-cert",
            &files.cert,
            "certificate",
            pem::Error::NoItemsFound,
        ));
    }
    let key = PrivateKeyDer::from_pem_file(&files.key)
        .map_err(|e| pem_error("--tls-key", &files.key, "private key", e))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS set-up: {e}"))?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|e| {
            format!(
                "--tls-cert {} with --tls-key {}: {e}",
                files.cert.display(),
                files.key.display()
            )
        })?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(TlsAcceptor::from(Arc::new(config)))
}

/// The handshake on one accepted connection: the TLS stream to serve HTTP/1.1 over, or
/// `None` when it failed or timed out (logged at debug level only).
pub async fn handshake(acceptor: &TlsAcceptor, stream: TcpStream) -> Option<TlsStream<TcpStream>> {
    match tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(stream)).await {
        Ok(Ok(tls)) => Some(tls),
        Ok(Err(e)) => {
            tracing::debug!("sim: TLS handshake failed: {e}");
            None
        }
        Err(_) => {
            tracing::debug!("sim: TLS handshake timed out");
            None
        }
    }
}
