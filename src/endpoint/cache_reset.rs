//! Emptying the server's prefix cache (`--prefix-cache reset`) through the server's own
//! endpoint: which call for which server ([`reset_call`], a table test), and making it
//! ([`reset_prefix_cache`]) through the control-plane client with the endpoint's headers
//! and credentials, as its `/metrics` is scraped.
//!
//! - vLLM: `POST {root}/reset_prefix_cache` (served only in its development mode,
//!   `VLLM_SERVER_DEV_MODE=1`; a 404 otherwise);
//! - SGLang: `POST {root}/flush_cache` (refused while requests are running);
//! - llama.cpp: `GET {root}/slots`, then `POST {root}/slots/{id}?action=erase` for each slot
//!   it lists (the slots endpoint must be on: `--slots`, not `--no-slots`);
//! - TGI: none;
//! - `--prefix-cache-reset-url URL`: `POST URL`, whatever the server.
//!
//! `{root}` is the server's root beside the API base (`http://h:8000` for
//! `http://h:8000/v1`), where `/metrics` is.

use std::time::Duration;

use http::StatusCode;

use super::control::ControlClient;

/// The longest one reset call may take (a server that never answers costs a level no more).
pub const RESET_TIMEOUT: Duration = Duration::from_secs(30);

/// How a server's prefix cache is emptied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResetCall {
    /// One `POST` to `url`; `setting` says what the server needs to serve it.
    Post { url: String, setting: &'static str },
    /// llama.cpp: its slots listed at `{root}/slots`, each erased.
    EraseSlots { root: String },
}

/// What vLLM needs to serve its reset.
const VLLM_SETTING: &str = "vLLM serves POST /reset_prefix_cache only in its development \
     mode: start the server with VLLM_SERVER_DEV_MODE=1 in its environment";
/// What SGLang needs.
const SGLANG_SETTING: &str =
    "SGLang flushes its cache only when no request is running (see the server's log)";
/// What llama.cpp needs.
const LLAMACPP_SETTING: &str = "llama.cpp lists and erases its slots only with its slots \
     endpoint on: start llama-server with --slots (not --no-slots)";
/// What a URL the user gave needs.
const GIVEN_SETTING: &str = "check the URL given with --prefix-cache-reset-url";

/// The server's root beside its API base: `http://h:8000` for `http://h:8000/v1` (a last
/// segment `v` and a digit is the API's version; anything else is kept).
pub fn server_root(base_url: &str) -> String {
    let base = base_url.trim_end_matches('/');
    base.rsplit_once('/')
        .filter(|(_, last)| {
            last.starts_with('v') && last[1..].starts_with(|c: char| c.is_ascii_digit())
        })
        .map_or(base, |(root, _)| root)
        .to_string()
}

/// The scheme of a server by the `owned_by` its `GET /v1/models` gives (`vllm`, `sglang`,
/// `llamacpp`), for a server whose `/metrics` is off (llama.cpp without `--metrics`).
pub fn scheme_of_owner(owned_by: &str) -> Option<&'static str> {
    ["vllm", "sglang", "llamacpp"]
        .into_iter()
        .find(|s| owned_by.eq_ignore_ascii_case(s))
}

/// The reset for a server whose metrics matched `scheme` (`vllm`, `sglang`, `llamacpp`,
/// `tgi`; `None`: no metrics rightsize knows), at API base `base_url`; `given` (the
/// user's URL) wins over the scheme. `Err`: why there is none.
pub fn reset_call(
    scheme: Option<&str>,
    base_url: &str,
    given: Option<&str>,
) -> Result<ResetCall, String> {
    if let Some(url) = given {
        return Ok(ResetCall::Post {
            url: url.to_string(),
            setting: GIVEN_SETTING,
        });
    }
    let root = server_root(base_url);
    match scheme {
        Some("vllm") => Ok(ResetCall::Post {
            url: format!("{root}/reset_prefix_cache"),
            setting: VLLM_SETTING,
        }),
        Some("sglang") => Ok(ResetCall::Post {
            url: format!("{root}/flush_cache"),
            setting: SGLANG_SETTING,
        }),
        Some("llamacpp") => Ok(ResetCall::EraseSlots { root }),
        Some("tgi") => Err("TGI has no endpoint that empties its prefix cache".to_string()),
        Some(other) => Err(format!(
            "rightsize knows no prefix-cache reset for a {other} server"
        )),
        None => Err(
            "the server's /metrics names no vLLM, SGLang or llama.cpp server, so rightsize \
             cannot tell which reset it serves"
                .to_string(),
        ),
    }
}

/// Empties the prefix cache by `call`: `Ok` with the calls made, or why it was not emptied
/// (the call, its answer or failure, and the server setting it needs). URLs are said with
/// their credentials masked.
pub async fn reset_prefix_cache(client: &ControlClient, call: &ResetCall) -> Result<u32, String> {
    match call {
        ResetCall::Post { url, setting } => {
            post(client, url)
                .await
                .map_err(|e| format!("{e}; {setting}"))?;
            Ok(1)
        }
        ResetCall::EraseSlots { root } => erase_slots(client, root)
            .await
            .map_err(|e| format!("{e}; {LLAMACPP_SETTING}")),
    }
}

/// llama.cpp: `GET {root}/slots`, then each slot erased.
async fn erase_slots(client: &ControlClient, root: &str) -> Result<u32, String> {
    let url = format!("{root}/slots");
    let shown = crate::secrets::redact_url(&url);
    let answer = client
        .get(&url, Some("application/json"), Some(RESET_TIMEOUT))
        .await
        .map_err(|e| format!("GET {shown} failed: {e}"))?;
    let status = answer.status();
    if !status.is_success() {
        return Err(format!("GET {shown} answered {}", status_text(status)));
    }
    let body = answer
        .bytes()
        .await
        .map_err(|e| format!("GET {shown} failed: {e}"))?;
    let ids = slot_ids(&body).ok_or_else(|| format!("GET {shown} listed no slots"))?;
    for id in &ids {
        post(client, &format!("{root}/slots/{id}?action=erase")).await?;
    }
    Ok(1 + ids.len() as u32)
}

/// The `id` of each slot llama.cpp's `GET /slots` lists (a JSON array of objects).
pub fn slot_ids(body: &[u8]) -> Option<Vec<u64>> {
    let v: serde_json::Value = serde_json::from_slice(body).ok()?;
    v.as_array()?
        .iter()
        .map(|slot| slot.get("id")?.as_u64())
        .collect()
}

/// `POST url` without a body: `Err` unless it answers 2xx.
async fn post(client: &ControlClient, url: &str) -> Result<(), String> {
    let shown = crate::secrets::redact_url(url);
    match client.post_empty(url, RESET_TIMEOUT).await {
        Ok(status) if status.is_success() => Ok(()),
        Ok(status) => Err(format!("POST {shown} answered {}", status_text(status))),
        Err(e) => Err(format!("POST {shown} failed: {e}")),
    }
}

/// `404 Not Found`.
fn status_text(status: StatusCode) -> String {
    match status.canonical_reason() {
        Some(reason) => format!("{} {reason}", status.as_u16()),
        None => status.as_u16().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn which_reset_for_which_server() {
        let post = |url: &str, setting| {
            Ok(ResetCall::Post {
                url: url.to_string(),
                setting,
            })
        };
        let base = "http://h:8000/v1";
        // (scheme, --prefix-cache-reset-url, the call)
        type Case<'a> = (Option<&'a str>, Option<&'a str>, Result<ResetCall, String>);
        let cases: [Case<'_>; 8] = [
            (
                Some("vllm"),
                None,
                post("http://h:8000/reset_prefix_cache", VLLM_SETTING),
            ),
            (
                Some("sglang"),
                None,
                post("http://h:8000/flush_cache", SGLANG_SETTING),
            ),
            (
                Some("llamacpp"),
                None,
                Ok(ResetCall::EraseSlots {
                    root: "http://h:8000".into(),
                }),
            ),
            (
                Some("tgi"),
                None,
                Err("TGI has no endpoint that empties its prefix cache".into()),
            ),
            (
                None,
                None,
                Err(
                    "the server's /metrics names no vLLM, SGLang or llama.cpp server, so \
                     rightsize cannot tell which reset it serves"
                        .into(),
                ),
            ),
            // the URL given wins, whatever the server
            (
                Some("vllm"),
                Some("http://admin:9/flush"),
                post("http://admin:9/flush", GIVEN_SETTING),
            ),
            (
                Some("tgi"),
                Some("http://admin:9/flush"),
                post("http://admin:9/flush", GIVEN_SETTING),
            ),
            (
                None,
                Some("http://admin:9/flush"),
                post("http://admin:9/flush", GIVEN_SETTING),
            ),
        ];
        for (scheme, given, want) in cases {
            assert_eq!(
                reset_call(scheme, base, given),
                want,
                "{scheme:?} {given:?}"
            );
        }
    }

    #[test]
    fn a_server_by_the_owner_of_its_models() {
        let cases = [
            ("vllm", Some("vllm")),
            ("sglang", Some("sglang")),
            ("llamacpp", Some("llamacpp")),
            ("LlamaCpp", Some("llamacpp")),
            ("openai", None),
            ("", None),
        ];
        for (owner, want) in cases {
            assert_eq!(scheme_of_owner(owner), want, "{owner}");
        }
    }

    #[test]
    fn the_root_is_beside_the_api_base() {
        assert_eq!(server_root("http://h:8000/v1"), "http://h:8000");
        assert_eq!(server_root("http://h:8000/v1/"), "http://h:8000");
        assert_eq!(server_root("http://h/llm/v2"), "http://h/llm");
        assert_eq!(server_root("http://h:8000"), "http://h:8000");
        assert_eq!(server_root("http://h/api"), "http://h/api");
    }

    #[test]
    fn llamacpp_slots_by_id() {
        let body = br#"[{"id":0,"n_ctx":4096,"is_processing":false},{"id":1,"n_ctx":4096}]"#;
        assert_eq!(slot_ids(body), Some(vec![0, 1]));
        assert_eq!(slot_ids(b"[]"), Some(vec![]));
        assert_eq!(slot_ids(br#"[{"n_ctx":1}]"#), None);
        assert_eq!(slot_ids(br#"{"error":"x"}"#), None);
    }
}
