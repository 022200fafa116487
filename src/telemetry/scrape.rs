//! The scraper: fetches `/metrics` beside the API base once a second while a run goes on and
//! sends what it finds to whoever runs it (the engine turns it into its events). A server
//! without `/metrics` is reported once.

use super::prometheus::parse;
use super::server::{reduce, ServerSample};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// Time between scrapes.
pub const SCRAPE_EVERY: Duration = Duration::from_secs(1);
/// The longest one scrape may take.
const SCRAPE_TIMEOUT: Duration = Duration::from_secs(2);

/// What the scraper tells whoever runs it.
#[derive(Debug, Clone)]
pub enum Scraped {
    /// The server's figures now (a snapshot: dropped when the receiver is behind).
    Sample(ServerSample),
    /// Said once: the server exposes nothing rightsize knows; the text says so for people.
    Missing(String),
}

/// The `/metrics` URL for an API base such as `http://host:8000/v1`.
pub fn metrics_url(base_url: &str) -> String {
    let base = base_url.trim_end_matches('/');
    let root = base
        .rsplit_once('/')
        .filter(|(_, last)| {
            last.starts_with('v') && last[1..].starts_with(|c: char| c.is_ascii_digit())
        })
        .map_or(base, |(root, _)| root);
    format!("{root}/metrics")
}

/// Scrapes until `stop` is cancelled with `client` (the endpoint's, carrying its headers and
/// credentials); sends [`Scraped::Sample`]s (and one [`Scraped::Missing`] when the server
/// exposes nothing rightsize knows) on `out`.
pub async fn scrape(
    client: reqwest::Client,
    base_url: String,
    out: mpsc::Sender<Scraped>,
    stop: CancellationToken,
) {
    let url = metrics_url(&base_url);
    let mut tick = tokio::time::interval(SCRAPE_EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut said_missing = false;
    loop {
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = tick.tick() => {}
        }
        let scrape = client.get(&url).timeout(SCRAPE_TIMEOUT).send();
        let sample = match scrape.await {
            Ok(r) if r.status().is_success() => match r.text().await {
                Ok(text) => reduce(&parse(&text)),
                Err(_) => ServerSample::default(),
            },
            _ => ServerSample::default(),
        };
        if sample.server.is_none() {
            if !said_missing {
                said_missing = true;
                let _ = out
                    .send(Scraped::Missing(format!(
                        "server telemetry: {url} has no vLLM, SGLang, llama.cpp or TGI metrics; \
                         server-side figures are not shown"
                    )))
                    .await;
            }
            continue;
        }
        // a snapshot: dropped when the consumer is behind, the next one replaces it
        let _ = out.try_send(Scraped::Sample(sample));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metrics_urls() {
        let cases = [
            ("http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/metrics"),
            ("http://h:1/v1/", "http://h:1/metrics"),
            ("http://h:1", "http://h:1/metrics"),
            ("https://h/api/v1", "https://h/api/metrics"),
            ("https://h/openai/vendor", "https://h/openai/vendor/metrics"),
        ];
        for (base, want) in cases {
            assert_eq!(metrics_url(base), want, "{base}");
        }
    }
}
