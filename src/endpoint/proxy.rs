//! Which proxy an `http://` endpoint is reached through, from the environment, the way curl
//! and reqwest (our `https://` path) read it: `http_proxy` (or `HTTP_PROXY`), else
//! `all_proxy` (or `ALL_PROXY`); none for a host that `no_proxy` (or `NO_PROXY`) names.
//! `no_proxy` is a comma-separated list: `*` (every host), a host name that matches itself and
//! its subdomains (`example.com` and `.example.com` both match `api.example.com`), an IP
//! address, or an IP network in CIDR form (`10.0.0.0/8`). Written here because the `http://`
//! client is our own (see `h1_client.rs`); reqwest keeps its reading of the same variables
//! private.

use std::net::IpAddr;

use reqwest::Url;

/// The proxy for `target`, reading variables with `var` (the environment in use; a map in
/// tests). `None` for no proxy. A variable that does not parse as a URL is an error naming it.
pub fn proxy_for(
    target: &Url,
    var: impl Fn(&str) -> Option<String>,
) -> Result<Option<Url>, String> {
    let get = |names: [&'static str; 2]| {
        names
            .into_iter()
            .find_map(|n| var(n).filter(|v| !v.trim().is_empty()).map(|v| (n, v)))
    };
    let Some((name, value)) = get(["http_proxy", "HTTP_PROXY"]).or(get(["all_proxy", "ALL_PROXY"]))
    else {
        return Ok(None);
    };
    let host = target.host_str().unwrap_or_default();
    if let Some((_, list)) = get(["no_proxy", "NO_PROXY"]) {
        if bypassed(host, &list) {
            return Ok(None);
        }
    }
    let value = value.trim();
    // `host:port` without a scheme means http, as curl reads it
    let with_scheme = if value.contains("://") {
        value.to_string()
    } else {
        format!("http://{value}")
    };
    let url = Url::parse(&with_scheme).map_err(|e| {
        format!("environment variable {name} is not a proxy URL ({e}); set it like http://proxy.example:3128")
    })?;
    if url.scheme() != "http" {
        return Err(format!(
            "environment variable {name} names a {} proxy; the http:// client goes through http:// proxies only",
            url.scheme()
        ));
    }
    Ok(Some(url))
}

/// Whether `no_proxy`'s `list` names `host` (a name, or an IP address with or without its
/// IPv6 brackets).
pub fn bypassed(host: &str, list: &str) -> bool {
    let host = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_ascii_lowercase();
    let ip: Option<IpAddr> = host.parse().ok();
    list.split(',')
        .map(str::trim)
        .filter(|e| !e.is_empty())
        .any(|entry| {
            if entry == "*" {
                return true;
            }
            let entry = entry.to_ascii_lowercase();
            if let Some(ip) = ip {
                return match entry.split_once('/') {
                    Some((net, bits)) => in_network(ip, net, bits),
                    None => entry.trim_start_matches('[').trim_end_matches(']').parse() == Ok(ip),
                };
            }
            let name = entry.trim_start_matches('.');
            host == name || host.ends_with(&format!(".{name}"))
        })
}

/// Whether `ip` is in the network `net/bits`.
fn in_network(ip: IpAddr, net: &str, bits: &str) -> bool {
    let (Ok(net), Ok(bits)) = (net.parse::<IpAddr>(), bits.parse::<u32>()) else {
        return false;
    };
    match (ip, net) {
        (IpAddr::V4(a), IpAddr::V4(n)) if bits <= 32 => {
            let mask = u32::MAX.checked_shl(32 - bits).unwrap_or(0);
            u32::from(a) & mask == u32::from(n) & mask
        }
        (IpAddr::V6(a), IpAddr::V6(n)) if bits <= 128 => {
            let mask = u128::MAX.checked_shl(128 - bits).unwrap_or(0);
            u128::from(a) & mask == u128::from(n) & mask
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| pairs.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone())
    }

    fn proxy(target: &str, pairs: &[(&str, &str)]) -> Result<Option<String>, String> {
        let t = Url::parse(target).unwrap();
        proxy_for(&t, env(pairs)).map(|u| u.map(|u| u.to_string()))
    }

    #[test]
    fn which_variable_gives_the_proxy() {
        let t = "http://10.1.2.3:8000/v1";
        assert_eq!(proxy(t, &[]), Ok(None));
        assert_eq!(
            proxy(t, &[("HTTP_PROXY", "http://p:3128")]),
            Ok(Some("http://p:3128/".into()))
        );
        // the lower-case name first, as curl reads it
        assert_eq!(
            proxy(
                t,
                &[
                    ("HTTP_PROXY", "http://upper:1"),
                    ("http_proxy", "http://lower:2")
                ]
            ),
            Ok(Some("http://lower:2/".into()))
        );
        assert_eq!(
            proxy(t, &[("ALL_PROXY", "p2:8080")]),
            Ok(Some("http://p2:8080/".into()))
        );
        assert_eq!(
            proxy(t, &[("http_proxy", " "), ("all_proxy", "http://a:1")]),
            Ok(Some("http://a:1/".into()))
        );
        assert!(proxy(t, &[("http_proxy", "socks5://s:1080")])
            .unwrap_err()
            .contains("http_proxy names a socks5 proxy"));
        assert!(proxy(t, &[("HTTP_PROXY", "http://[bad")])
            .unwrap_err()
            .starts_with("environment variable HTTP_PROXY is not a proxy URL"));
    }

    #[test]
    fn no_proxy_table() {
        let cases: &[(&str, &str, bool)] = &[
            ("api.example.com", "example.com", true),
            ("api.example.com", ".example.com", true),
            ("example.com", "example.com", true),
            ("badexample.com", "example.com", false),
            ("API.Example.COM", "example.com", true),
            ("anything", "*", true),
            ("host", "a, b ,host", true),
            ("host", "", false),
            ("127.0.0.1", "127.0.0.1", true),
            ("127.0.0.2", "127.0.0.1", false),
            ("10.20.30.40", "10.0.0.0/8", true),
            ("11.0.0.1", "10.0.0.0/8", false),
            ("192.168.1.7", "192.168.1.0/24", true),
            ("[::1]", "::1", true),
            ("[fd00::5]", "fd00::/8", true),
            ("[fe80::1]", "fd00::/8", false),
            ("10.0.0.1", "10.0.0.0/x", false),
        ];
        for (host, list, want) in cases {
            assert_eq!(bypassed(host, list), *want, "{host} in {list:?}");
        }
        assert_eq!(
            proxy(
                "http://127.0.0.1:9/v1",
                &[
                    ("http_proxy", "http://p:1"),
                    ("NO_PROXY", "localhost,127.0.0.1")
                ]
            ),
            Ok(None)
        );
    }
}
