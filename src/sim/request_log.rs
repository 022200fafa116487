//! The simulator's request log (`--request-log FILE`): one JSON line per completion request
//! the model takes on, with what the server received (the request body as sent) and the
//! answer it generates for it, so a test or a user can see exactly what a client sent (a
//! multi-turn session's history, say). Off by default. See `docs/simulator.md`.

use std::io::Write;
use std::path::Path;
use std::sync::Mutex;

use super::api::Route;

/// An open request log; lines are written whole, in the order requests are taken on.
#[derive(Debug)]
pub struct RequestLog {
    file: Mutex<std::fs::File>,
}

impl RequestLog {
    /// Creates (or truncates) `path`.
    pub fn create(path: &Path) -> std::io::Result<RequestLog> {
        Ok(RequestLog {
            file: Mutex::new(std::fs::File::create(path)?),
        })
    }

    /// Appends request `n`: its API, the body as received (re-serialized on one line), its
    /// prompt tokens and the answer text the model generates for it. A write error is
    /// ignored: the log must not change what the server serves.
    pub fn record(&self, n: u64, endpoint: Route, body: &[u8], prompt_tokens: u32, answer: &str) {
        let body: serde_json::Value = serde_json::from_slice(body).unwrap_or_default();
        let line = serde_json::json!({
            "n": n,
            "api": match endpoint {
                Route::Chat => "chat",
                Route::Completion => "completions",
                Route::Tgi => "tgi",
            },
            "prompt_tokens": prompt_tokens,
            "answer": answer,
            "body": body,
        });
        if let Ok(mut f) = self.file.lock() {
            let _ = writeln!(f, "{line}");
        }
    }
}
