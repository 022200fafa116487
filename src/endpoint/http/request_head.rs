//! What every generation request carries, built once per endpoint: the request target
//! (origin form, or absolute form through an `http://` proxy) and the headers (`Host`,
//! credentials from the URL, a proxy's credentials, what the client accepts, then the
//! endpoint's own headers as given).

use base64::Engine as _;
use http::header::{self, HeaderMap, HeaderValue};
use url::Url;

/// Headers hyper writes from the body itself; a custom header of that name would break the
/// framing and is left out.
const FRAMING_HEADERS: [header::HeaderName; 2] =
    [header::CONTENT_LENGTH, header::TRANSFER_ENCODING];

/// `Basic` credentials from a URL's user name and password, if it has any.
pub(crate) fn basic_credentials(url: &Url) -> Option<HeaderValue> {
    if url.username().is_empty() && url.password().is_none() {
        return None;
    }
    let decode = |s: &str| percent_encoding::percent_decode_str(s).collect::<Vec<u8>>();
    let mut creds = decode(url.username());
    creds.push(b':');
    creds.extend(decode(url.password().unwrap_or_default()));
    let encoded = base64::engine::general_purpose::STANDARD.encode(creds);
    let mut v = HeaderValue::from_str(&format!("Basic {encoded}")).ok()?;
    v.set_sensitive(true);
    Some(v)
}

/// The request target: `path?query` of `url`, or its whole form without credentials.
fn target(url: &Url, absolute: bool) -> Result<http::Uri, String> {
    let text = if absolute {
        let mut bare = url.clone();
        let _ = bare.set_username("");
        let _ = bare.set_password(None);
        bare.set_fragment(None);
        bare.to_string()
    } else {
        match url.query() {
            Some(q) => format!("{}?{q}", url.path()),
            None => url.path().to_string(),
        }
    };
    text.parse().map_err(|e| format!("{e}"))
}

/// `scheme://host:port` of `url`.
pub(crate) fn origin(url: &Url) -> Result<http::Uri, String> {
    let host = url.host_str().unwrap_or_default();
    let port = url.port_or_known_default().unwrap_or(80);
    format!("{}://{host}:{port}", url.scheme())
        .parse()
        .map_err(|e| format!("{e}"))
}

/// The headers every request carries: `Host`, credentials from the URL as `Basic`
/// authorization (unless one is set), a proxy's credentials, what this client expects (JSON
/// or an event stream, uncompressed), then the endpoint's own headers, sent as given.
pub(super) fn request_headers(
    url: &Url,
    custom: &HeaderMap,
    stream: bool,
    proxy_auth: Option<HeaderValue>,
) -> Result<HeaderMap, String> {
    let mut h = HeaderMap::new();
    let host = match (url.host_str(), url.port()) {
        (Some(host), Some(p)) => format!("{host}:{p}"),
        (Some(host), None) => host.to_string(),
        (None, _) => String::new(),
    };
    h.insert(
        header::HOST,
        HeaderValue::from_str(&host).map_err(|e| e.to_string())?,
    );
    if let Some(creds) = basic_credentials(url) {
        h.insert(header::AUTHORIZATION, creds);
    }
    if let Some(auth) = proxy_auth {
        h.insert(header::PROXY_AUTHORIZATION, auth);
    }
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    h.insert(
        header::ACCEPT,
        HeaderValue::from_static(if stream {
            "text/event-stream"
        } else {
            "application/json"
        }),
    );
    // timing the bytes as they arrive: nothing asks for compression (gzip is decoded if a
    // server or proxy compresses anyway)
    h.insert(
        header::ACCEPT_ENCODING,
        HeaderValue::from_static("identity"),
    );
    // the endpoint's own headers replace these (an `Accept` of its own, a `Host`)
    let mut replaced: Vec<&header::HeaderName> = Vec::new();
    for (name, value) in custom {
        if FRAMING_HEADERS.contains(name) {
            continue;
        }
        if !replaced.contains(&name) {
            h.remove(name);
            replaced.push(name);
        }
        h.append(name.clone(), value.clone());
    }
    Ok(h)
}

/// `url` as this client's request target.
pub(super) fn target_uri(url: &Url, absolute: bool) -> Result<http::Uri, String> {
    target(url, absolute).map_err(|e| format!("the URL cannot be a request target: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_have_host_credentials_and_custom_headers_as_given() {
        let url =
            Url::parse("http://us%40er:p%3Ass@h.example:8000/v1/chat/completions?x=1").unwrap();
        let mut custom = HeaderMap::new();
        custom.insert("x-team", "perf".parse().unwrap());
        custom.insert("accept", "text/html".parse().unwrap());
        custom.insert("content-length", "5".parse().unwrap());
        let h = request_headers(&url, &custom, true, None).unwrap();
        let get = |n: &str| h.get(n).map(|v| v.to_str().unwrap().to_string());
        assert_eq!(get("host").as_deref(), Some("h.example:8000"));
        // base64 of "us@er:p:ss"
        assert_eq!(
            get("authorization").as_deref(),
            Some("Basic dXNAZXI6cDpzcw==")
        );
        assert_eq!(get("x-team").as_deref(), Some("perf"));
        assert_eq!(get("accept").as_deref(), Some("text/html"));
        assert_eq!(get("accept-encoding").as_deref(), Some("identity"));
        assert_eq!(get("content-type").as_deref(), Some("application/json"));
        assert_eq!(get("content-length"), None);
        assert_eq!(
            target(&url, false).unwrap().to_string(),
            "/v1/chat/completions?x=1"
        );
        // through a proxy: the absolute URL without its credentials, the proxy's own ones
        assert_eq!(
            target(&url, true).unwrap().to_string(),
            "http://h.example:8000/v1/chat/completions?x=1"
        );
        let proxy = Url::parse("http://pu:pp@proxy:3128").unwrap();
        let h = request_headers(&url, &custom, true, basic_credentials(&proxy)).unwrap();
        assert_eq!(
            h.get("proxy-authorization").unwrap().to_str().unwrap(),
            "Basic cHU6cHA="
        );
    }
}
