//! Secrets are never written: a password in a URL (`http://alice:PW@host/v1`), a secret-looking
//! query parameter (`?api_key=...`) and the values of headers that carry credentials are shown
//! and stored as `***`, in `run.json`, exports, messages and the dashboard. The values stay in
//! memory for the requests themselves.

use serde::Serializer;

/// What a secret is replaced with.
pub const MASK: &str = "***";

/// Whether a header (or query parameter) by this name carries a credential: the well-known
/// ones, and any whose name mentions a token, a secret, a key, a password or a session.
pub fn is_sensitive(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    matches!(
        n.as_str(),
        "authorization" | "proxy-authorization" | "cookie" | "set-cookie" | "x-api-key"
    ) || ["token", "secret", "key", "passw", "session", "auth"]
        .iter()
        .any(|w| n.contains(w))
}

/// A header's value as it may be shown or stored.
pub fn redact_header(name: &str, value: &str) -> String {
    if is_sensitive(name) {
        MASK.to_string()
    } else {
        value.to_string()
    }
}

/// A URL as it may be shown or stored: the password (or a lone user name, which is often a
/// token) and secret-looking query values masked. Text that is not a URL comes back as it is.
pub fn redact_url(text: &str) -> String {
    let Ok(mut url) = url::Url::parse(text.trim()) else {
        return text.to_string();
    };
    if !url.has_host() {
        return text.to_string();
    }
    let mut changed = false;
    if url.password().is_some() {
        let _ = url.set_password(Some(MASK));
        changed = true;
    } else if !url.username().is_empty() {
        let _ = url.set_username(MASK);
        changed = true;
    }
    if url.query().is_some() {
        let pairs: Vec<(String, String)> = url
            .query_pairs()
            .map(|(k, v)| {
                let v = if is_sensitive(&k) {
                    changed = true;
                    MASK.to_string()
                } else {
                    v.into_owned()
                };
                (k.into_owned(), v)
            })
            .collect();
        if changed {
            url.query_pairs_mut().clear().extend_pairs(pairs);
        }
    }
    if changed {
        // the URL crate percent-encodes the mask; people read it plain
        url.to_string().replace("%2A%2A%2A", MASK)
    } else {
        text.to_string()
    }
}

/// TOML text (a line of a config file, or a parser's message quoting one) as it may be shown:
/// the quoted value of every `key = "value"` whose key names a credential is masked, and
/// every other quoted value goes through [`redact_url`].
pub fn redact_toml(text: &str) -> String {
    text.lines()
        .map(redact_toml_line)
        .collect::<Vec<_>>()
        .join("\n")
}

fn redact_toml_line(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(eq) = rest.find('=') {
        let (before, after) = rest.split_at(eq);
        out.push_str(before);
        out.push('=');
        let key = before
            .trim_end()
            .rsplit(['{', ',', ' ', '\t', '|'])
            .next()
            .unwrap_or("")
            .trim_matches(['"', '\'']);
        let after = &after[1..];
        let value_at = after.len() - after.trim_start().len();
        let quoted = after[value_at..]
            .chars()
            .next()
            .filter(|c| *c == '"' || *c == '\'');
        let Some(q) = quoted else {
            rest = after;
            continue;
        };
        let body = &after[value_at + 1..];
        let Some(end) = body.find(q) else {
            // a value cut short (the line ends inside it): nothing of it is shown
            out.push_str(&after[..=value_at]);
            out.push_str(MASK);
            return out;
        };
        let value = &body[..end];
        out.push_str(&after[..=value_at]);
        if is_sensitive(key) {
            out.push_str(MASK);
        } else {
            out.push_str(&redact_url(value));
        }
        out.push(q);
        rest = &body[end + 1..];
    }
    out.push_str(rest);
    out
}

/// The environment variable that carries a distributed run's token: the controller requires
/// it on every worker call, and workers send it (`docs/distributed.md`).
pub const WORKER_TOKEN_ENV: &str = "RIGHTSIZE_WORKER_TOKEN";

/// A fresh random token (32 bytes from the operating system, hex): for a distributed run
/// whose controller starts its own workers, and for a rendered Kubernetes Secret.
pub fn random_token() -> String {
    use ring::rand::SecureRandom;
    let mut bytes = [0u8; 32];
    ring::rand::SystemRandom::new()
        .fill(&mut bytes)
        .expect("the operating system's random source is available");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Serializes a URL (or a name that may be one) with its secrets masked.
pub fn ser_url<S: Serializer>(text: &str, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&redact_url(text))
}

/// Serializes `(name, value)` headers with credential values masked.
pub fn ser_headers<S: Serializer>(headers: &[(String, String)], s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeSeq;
    let mut seq = s.serialize_seq(Some(headers.len()))?;
    for (name, value) in headers {
        seq.serialize_element(&(name, redact_header(name, value)))?;
    }
    seq.end()
}

/// Equal, in a time that does not depend on where two secrets differ (a token compared
/// byte by byte would tell a guesser how much of it was right).
pub fn same_secret(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |d, (x, y)| d | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_64_hex_digits_and_never_repeat() {
        let (a, b) = (random_token(), random_token());
        assert_eq!(a.len(), 64);
        assert!(a.chars().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }

    #[test]
    fn toml_table() {
        let cases = [
            ("api_key = \"sk-123\"", "api_key = \"***\""),
            (
                "3 | headers = { Authorization = 'Bearer x', X-Team = \"ml\" }",
                "3 | headers = { Authorization = '***', X-Team = \"ml\" }",
            ),
            (
                "base_url = \"http://alice:PW@h/v1\"",
                "base_url = \"http://alice:***@h/v1\"",
            ),
            ("token=\"abc", "token=\"***"),
            ("expected `=`, found newline", "expected `=`, found newline"),
            ("model = \"llama\"", "model = \"llama\""),
        ];
        for (input, want) in cases {
            assert_eq!(redact_toml(input), want, "{input}");
        }
    }

    #[test]
    fn urls_table() {
        let cases = [
            ("http://alice:PW@host/v1", "http://alice:***@host/v1"),
            ("https://TOKEN@h.example/v1", "https://***@h.example/v1"),
            (
                "https://h.example/v1?api_key=s3cret&x=1",
                "https://h.example/v1?api_key=***&x=1",
            ),
            ("http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1"),
            ("local-vllm", "local-vllm"),
            ("sim", "sim"),
        ];
        for (input, want) in cases {
            assert_eq!(redact_url(input), want, "{input}");
        }
    }

    #[test]
    fn headers_table() {
        let cases = [
            ("Authorization", "Bearer x", "***"),
            ("proxy-authorization", "Basic x", "***"),
            ("Cookie", "a=b", "***"),
            ("X-Api-Key", "k", "***"),
            ("X-Auth-Token", "t", "***"),
            ("X-Client-Secret", "s", "***"),
            ("X-Team", "ml-platform", "ml-platform"),
            ("Content-Type", "application/json", "application/json"),
        ];
        for (name, value, want) in cases {
            assert_eq!(redact_header(name, value), want, "{name}");
        }
    }
}
