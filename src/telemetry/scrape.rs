//! The scraper: fetches `/metrics` beside the API base once a second while a run goes on and
//! sends what it finds to whoever runs it (the engine turns it into its events).
//!
//! What it says, once each, with the URL masked as the results mask it: a server that
//! answers without any metrics rightsize knows ("has no vLLM ... metrics"), one that answers
//! `/metrics` with an error status, and one that could not be reached for
//! [`FAILURES_TO_SAY`] scrapes in a row from the start (with why: the timeout, the connection
//! error), or [`FAILURES_TO_SAY_AFTER_ANSWER`] in a row once it had answered. A scrape that
//! fails now and then (a busy server's slow answer: the simulator at 10,000 streams missed
//! three 2 s scrapes in a row) is counted, not reported as absent.

use super::prometheus::parse;
use super::server::{reduce, ServerSample};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// Time between scrapes unless the run says otherwise (`--telemetry-interval`).
pub const SCRAPE_EVERY: Duration = Duration::from_secs(1);
/// The longest one scrape may take.
const SCRAPE_TIMEOUT: Duration = Duration::from_secs(2);
/// Unreachable this many scrapes in a row from the start is said.
pub const FAILURES_TO_SAY: u32 = 3;
/// Once the server has answered, this many failures in a row (about 30 s of 2 s timeouts)
/// are said: fewer are a busy server's slow answers.
pub const FAILURES_TO_SAY_AFTER_ANSWER: u32 = 10;

/// What the scraper tells whoever runs it.
#[derive(Debug, Clone)]
pub enum Scraped {
    /// The server's figures (a snapshot: dropped when the receiver is behind), read at `at_ns`
    /// on the monotonic clock, in this task, as its body arrived.
    Sample { sample: ServerSample, at_ns: u64 },
    /// Said once: the server exposes nothing rightsize knows, or cannot be reached; the text
    /// says which for people.
    Missing(String),
}

/// What one scrape found.
#[derive(Debug, Clone, PartialEq)]
pub enum ScrapeResult {
    /// Figures of a server rightsize knows.
    Known(Box<ServerSample>),
    /// The server answered, but with nothing rightsize knows.
    Unknown,
    /// `/metrics` answered with this error status.
    Status(u16),
    /// No answer: why (a timeout, a connection error).
    Unreachable(String),
}

/// What the scraper says after each scrape, and how many failed: kept apart from the
/// network so the rules are a table test.
#[derive(Debug, Default)]
pub struct ScrapeNotes {
    answered: bool,
    said_absent: bool,
    said_unreachable: bool,
    in_a_row: u32,
    /// Scrapes that got no answer, in all.
    pub failures: u64,
}

impl ScrapeNotes {
    /// The note `result` calls for (at most one of each kind per run), for `url` (masked).
    pub fn note(&mut self, url: &str, result: &ScrapeResult) -> Option<String> {
        let url = crate::secrets::redact_url(url);
        let answered = self.answered;
        if !matches!(result, ScrapeResult::Unreachable(_)) {
            self.answered = true;
        }
        match result {
            ScrapeResult::Known(_) => {
                self.in_a_row = 0;
                None
            }
            ScrapeResult::Unknown | ScrapeResult::Status(_) if self.said_absent => {
                self.in_a_row = 0;
                None
            }
            ScrapeResult::Unknown => {
                self.in_a_row = 0;
                self.said_absent = true;
                Some(format!(
                    "server telemetry: {url} has no vLLM, SGLang, llama.cpp or TGI metrics; \
                     server-side figures are not shown"
                ))
            }
            ScrapeResult::Status(code) => {
                self.in_a_row = 0;
                self.said_absent = true;
                Some(format!(
                    "server telemetry: {url} answered HTTP {code}; server-side figures are not \
                     shown"
                ))
            }
            ScrapeResult::Unreachable(why) => {
                self.failures += 1;
                self.in_a_row += 1;
                let enough = if answered {
                    FAILURES_TO_SAY_AFTER_ANSWER
                } else {
                    FAILURES_TO_SAY
                };
                if self.in_a_row < enough || self.said_unreachable {
                    return None;
                }
                self.said_unreachable = true;
                Some(if answered {
                    format!(
                        "server telemetry: {url} stopped answering ({why}) {} times in a row; \
                         server-side figures are missing while it does",
                        self.in_a_row
                    )
                } else {
                    format!(
                        "server telemetry: could not reach {url} ({why}) {} times in a row; \
                         server-side figures are missing while it fails",
                        self.in_a_row
                    )
                })
            }
        }
    }
}

/// Why a scrape got no answer, for people: the timeout with its length, else the error.
fn unreachable_why(e: &reqwest::Error) -> String {
    if e.is_timeout() {
        format!("timeout after {} ms", SCRAPE_TIMEOUT.as_millis())
    } else if e.is_connect() {
        "connection failed".to_string()
    } else {
        // reqwest's text names the URL; the caller names it masked
        let mut text = e.to_string();
        if let Some(u) = e.url() {
            text = text.replace(u.as_str(), "/metrics");
        }
        text
    }
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
    every: Duration,
    out: mpsc::Sender<Scraped>,
    stop: CancellationToken,
) {
    let url = metrics_url(&base_url);
    let mut tick = tokio::time::interval(every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut notes = ScrapeNotes::default();
    loop {
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = tick.tick() => {}
        }
        let result = tokio::select! {
            _ = stop.cancelled() => return,
            r = scrape_once(&client, &url) => r,
        };
        let at_ns = crate::clock::now_ns();
        if let Some(note) = notes.note(&url, &result) {
            let _ = out.send(Scraped::Missing(note)).await;
        }
        if let ScrapeResult::Known(sample) = result {
            // a snapshot: dropped when the consumer is behind, the next one replaces it
            let _ = out.try_send(Scraped::Sample {
                sample: *sample,
                at_ns,
            });
        }
    }
}

async fn scrape_once(client: &reqwest::Client, url: &str) -> ScrapeResult {
    let answer = match client.get(url).timeout(SCRAPE_TIMEOUT).send().await {
        Ok(r) => r,
        Err(e) => return ScrapeResult::Unreachable(unreachable_why(&e)),
    };
    if !answer.status().is_success() {
        return ScrapeResult::Status(answer.status().as_u16());
    }
    match answer.text().await {
        Ok(text) => {
            let sample = reduce(&parse(&text));
            if sample.server.is_some() {
                ScrapeResult::Known(Box::new(sample))
            } else {
                ScrapeResult::Unknown
            }
        }
        Err(e) => ScrapeResult::Unreachable(unreachable_why(&e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_say_absent_once_and_unreachable_only_after_failures_in_a_row() {
        let url = "http://alice:pw@h:1/metrics";
        let timeout = || ScrapeResult::Unreachable("timeout after 2000 ms".into());
        let known = || ScrapeResult::Known(Box::default());
        // never reached: said after three in a row
        let mut n = ScrapeNotes::default();
        assert_eq!(n.note(url, &timeout()), None);
        assert_eq!(n.note(url, &timeout()), None);
        assert_eq!(
            n.note(url, &timeout()).as_deref(),
            Some(
                "server telemetry: could not reach http://alice:***@h:1/metrics (timeout after \
                 2000 ms) 3 times in a row; server-side figures are missing while it fails"
            )
        );
        assert_eq!(n.note(url, &timeout()), None, "said once");
        // a server that answered: failures now and then, even nine in a row, are counted
        let mut n = ScrapeNotes::default();
        assert_eq!(n.note(url, &known()), None);
        let quiet = [timeout(), known(), timeout(), timeout(), known()];
        for r in &quiet {
            assert_eq!(n.note(url, r), None, "{r:?}");
        }
        for _ in 0..9 {
            assert_eq!(n.note(url, &timeout()), None);
        }
        assert_eq!(n.failures, 12);
        assert_eq!(
            n.note(url, &timeout()).as_deref(),
            Some(
                "server telemetry: http://alice:***@h:1/metrics stopped answering (timeout \
                 after 2000 ms) 10 times in a row; server-side figures are missing while it \
                 does"
            )
        );
        assert_eq!(n.failures, 13);
        let mut n = ScrapeNotes::default();
        assert_eq!(
            n.note(url, &ScrapeResult::Status(404)).as_deref(),
            Some(
                "server telemetry: http://alice:***@h:1/metrics answered HTTP 404; server-side \
                 figures are not shown"
            )
        );
        assert_eq!(n.note(url, &ScrapeResult::Unknown), None, "said once");
        let mut n = ScrapeNotes::default();
        assert_eq!(
            n.note(url, &ScrapeResult::Unknown).as_deref(),
            Some(
                "server telemetry: http://alice:***@h:1/metrics has no vLLM, SGLang, llama.cpp \
                 or TGI metrics; server-side figures are not shown"
            )
        );
    }

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
