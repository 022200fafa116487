//! The scraper: fetches `/metrics` beside the API base, and the GPUs' exporter when
//! `--gpu-metrics` names one, once a second (both at the same tick) while a run goes on, and
//! sends what it finds to whoever runs it (the engine turns it into its events). A llama.cpp
//! server's `/props` is read once, for the slots and context it serves with.
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
use crate::endpoint::control::{ControlClient, ControlError};
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

/// Whose figures a [`ScrapeNotes`] speaks of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Subject {
    /// The serving engine's `/metrics`.
    #[default]
    Server,
    /// The GPUs' exporter (`--gpu-metrics`).
    Gpu,
}

impl Subject {
    /// (what the note begins with, what a scrape lacks, whose figures are missing)
    fn words(self) -> (&'static str, &'static str, &'static str) {
        match self {
            Subject::Server => (
                "server telemetry",
                "has no vLLM, SGLang, llama.cpp or TGI metrics",
                "server-side figures",
            ),
            Subject::Gpu => (
                "GPU telemetry",
                "has no NVIDIA DCGM or AMD device metrics",
                "GPU figures",
            ),
        }
    }
}

/// What the scraper says after each scrape, and how many failed: kept apart from the
/// network so the rules are a table test.
#[derive(Debug, Default)]
pub struct ScrapeNotes {
    subject: Subject,
    answered: bool,
    said_absent: bool,
    said_unreachable: bool,
    in_a_row: u32,
    /// Scrapes that got no answer, in all.
    pub failures: u64,
}

impl ScrapeNotes {
    /// Notes about `subject`'s scrapes.
    pub fn of(subject: Subject) -> Self {
        ScrapeNotes {
            subject,
            ..Self::default()
        }
    }

    /// The note `result` calls for (at most one of each kind per run), for `url` (masked).
    pub fn note(&mut self, url: &str, result: &ScrapeResult) -> Option<String> {
        let url = crate::secrets::redact_url(url);
        let (head, lacks, figures) = self.subject.words();
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
                Some(format!("{head}: {url} {lacks}; {figures} are not shown"))
            }
            ScrapeResult::Status(code) => {
                self.in_a_row = 0;
                self.said_absent = true;
                Some(format!(
                    "{head}: {url} answered HTTP {code}; {figures} are not shown"
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
                        "{head}: {url} stopped answering ({why}) {} times in a row; {figures} \
                         are missing while it does",
                        self.in_a_row
                    )
                } else {
                    format!(
                        "{head}: could not reach {url} ({why}) {} times in a row; {figures} \
                         are missing while it fails",
                        self.in_a_row
                    )
                })
            }
        }
    }
}

/// Why a scrape got no answer, for people: the timeout with its length, a connection that
/// could not be made, else the error's text (which never names the URL: the note names it
/// masked).
fn unreachable_why(e: &ControlError) -> String {
    if e.is_timeout() {
        format!("timeout after {} ms", SCRAPE_TIMEOUT.as_millis())
    } else if e.is_connect() {
        "connection failed".to_string()
    } else {
        e.to_string()
    }
}

/// The `/metrics` URL for an API base such as `http://host:8000/v1`.
pub fn metrics_url(base_url: &str) -> String {
    let root = crate::endpoint::cache_reset::server_root(base_url);
    format!("{root}/metrics")
}

/// What to scrape: the server's `/metrics` beside its API base (with the endpoint's client,
/// carrying its headers and credentials), the GPUs' exporter URL (with a client of its own:
/// the endpoint's credentials are not sent to another host), or both.
#[derive(Debug, Clone, Default)]
pub struct Targets {
    pub server: Option<(ControlClient, String)>,
    pub gpu: Option<String>,
}

/// Scrapes `targets` until `stop` is cancelled; sends a [`Scraped::Sample`] each tick where
/// either answered with figures rightsize knows (the server's and the GPUs' in one sample),
/// and each [`Scraped::Missing`] note once.
pub async fn scrape(
    targets: Targets,
    every: Duration,
    out: mpsc::Sender<Scraped>,
    stop: CancellationToken,
) {
    scrape_on_demand(targets, every, out, stop, Default::default()).await
}

/// [`scrape`], scraping also at once whenever `now` is notified (a level's start and end, so
/// its counters cover the level and not a tick's worth less).
pub async fn scrape_on_demand(
    targets: Targets,
    every: Duration,
    out: mpsc::Sender<Scraped>,
    stop: CancellationToken,
    now: std::sync::Arc<tokio::sync::Notify>,
) {
    let server = targets
        .server
        .map(|(client, base)| (client, metrics_url(&base), props_url(&base)));
    let gpu = targets.gpu.map(|url| {
        let client = ControlClient::plain(Some(SCRAPE_TIMEOUT)).unwrap_or_default();
        (client, url)
    });
    let mut tick = tokio::time::interval(every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut server_notes = ScrapeNotes::of(Subject::Server);
    let mut gpu_notes = ScrapeNotes::of(Subject::Gpu);
    // llama.cpp states its settings at /props, not in its metrics: asked once
    let mut props_asked = false;
    loop {
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = tick.tick() => {}
            _ = now.notified() => {}
        }
        let both = async {
            let s = async {
                match &server {
                    Some((client, url, _)) => Some(scrape_once(client, url, reduce_server).await),
                    None => None,
                }
            };
            let g = async {
                match &gpu {
                    Some((client, url)) => Some(scrape_once(client, url, reduce_gpus).await),
                    None => None,
                }
            };
            tokio::join!(s, g)
        };
        let (s, g) = tokio::select! {
            _ = stop.cancelled() => return,
            r = both => r,
        };
        let at_ns = crate::clock::now_ns();
        let mut sample: Option<ServerSample> = None;
        if let (Some(result), Some((client, url, props))) = (s, &server) {
            if let Some(note) = server_notes.note(url, &result) {
                let _ = out.send(Scraped::Missing(note)).await;
            }
            if let ScrapeResult::Known(mut found) = result {
                if found.server == Some("llamacpp") && !props_asked {
                    props_asked = true;
                    found.config = llamacpp_props(client, props).await;
                }
                sample = Some(*found);
            }
        }
        if let (Some(result), Some((_, url))) = (g, &gpu) {
            if let Some(note) = gpu_notes.note(url, &result) {
                let _ = out.send(Scraped::Missing(note)).await;
            }
            if let ScrapeResult::Known(found) = result {
                sample.get_or_insert_with(ServerSample::default).gpu = found.gpu;
            }
        }
        if let Some(sample) = sample {
            // a snapshot: dropped when the consumer is behind, the next one replaces it
            let _ = out.try_send(Scraped::Sample { sample, at_ns });
        }
    }
}

/// A server's figures, if its names are known.
fn reduce_server(samples: &[super::prometheus::Sample]) -> Option<ServerSample> {
    let s = reduce(samples);
    s.server.is_some().then_some(s)
}

/// The GPUs' figures, if the exporter's names are known.
fn reduce_gpus(samples: &[super::prometheus::Sample]) -> Option<ServerSample> {
    Some(ServerSample {
        gpu: Some(super::gpu::reduce_gpu(samples)?),
        ..ServerSample::default()
    })
}

/// The naming scheme of the server's `/metrics` beside API base `base_url` (`vllm`,
/// `sglang`, `llamacpp`, `tgi`), read once; `None` when it does not answer with names
/// rightsize knows.
pub async fn server_scheme(client: &ControlClient, base_url: &str) -> Option<&'static str> {
    match scrape_once(client, &metrics_url(base_url), reduce_server).await {
        ScrapeResult::Known(sample) => sample.server,
        _ => None,
    }
}

async fn scrape_once(
    client: &ControlClient,
    url: &str,
    known: fn(&[super::prometheus::Sample]) -> Option<ServerSample>,
) -> ScrapeResult {
    let answer = match client.get(url, None, Some(SCRAPE_TIMEOUT)).await {
        Ok(r) => r,
        Err(e) => return ScrapeResult::Unreachable(unreachable_why(&e)),
    };
    if !answer.status().is_success() {
        return ScrapeResult::Status(answer.status().as_u16());
    }
    match answer.text().await {
        Ok(text) => match known(&parse(&text)) {
            Some(sample) => ScrapeResult::Known(Box::new(sample)),
            None => ScrapeResult::Unknown,
        },
        Err(e) => ScrapeResult::Unreachable(unreachable_why(&e)),
    }
}

/// `path` at the server's root, beside `/metrics`: `http://h:1/props` for `http://h:1/v1`.
pub fn sibling_url(base_url: &str, path: &str) -> String {
    let metrics = metrics_url(base_url);
    format!("{}/{path}", metrics.trim_end_matches("/metrics"))
}

/// llama.cpp's `/props` URL for an API base.
fn props_url(base_url: &str) -> String {
    sibling_url(base_url, "props")
}

/// What llama.cpp's `/props` says it serves with: `total_slots` (its parallel slots) and
/// `n_ctx` (each slot's context), as strings like vLLM's configuration labels; `None` when
/// it does not answer or says neither.
async fn llamacpp_props(
    client: &ControlClient,
    url: &str,
) -> Option<std::collections::BTreeMap<String, String>> {
    let answer = client.get(url, None, Some(SCRAPE_TIMEOUT)).await.ok()?;
    if !answer.status().is_success() {
        return None;
    }
    props_config(&serde_json::from_str(&answer.text().await.ok()?).ok()?)
}

/// The settings rightsize keeps from a `/props` body.
fn props_config(v: &serde_json::Value) -> Option<std::collections::BTreeMap<String, String>> {
    let mut config = std::collections::BTreeMap::new();
    if let Some(n) = v.get("total_slots").and_then(|n| n.as_u64()) {
        config.insert("total_slots".to_string(), n.to_string());
    }
    if let Some(n) = v
        .pointer("/default_generation_settings/n_ctx")
        .and_then(|n| n.as_u64())
    {
        config.insert("n_ctx".to_string(), n.to_string());
    }
    (!config.is_empty()).then_some(config)
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
    fn gpu_notes_name_the_exporter() {
        let mut n = ScrapeNotes::of(Subject::Gpu);
        assert_eq!(
            n.note("http://h:9400/metrics", &ScrapeResult::Unknown)
                .as_deref(),
            Some(
                "GPU telemetry: http://h:9400/metrics has no NVIDIA DCGM or AMD device metrics; \
                 GPU figures are not shown"
            )
        );
    }

    #[test]
    fn llamacpp_props_give_slots_and_context() {
        let v = serde_json::json!({
            "default_generation_settings": {"n_ctx": 4096, "temperature": 0.8},
            "total_slots": 4,
            "model_path": "m.gguf"
        });
        let c = props_config(&v).unwrap();
        assert_eq!(
            c.into_iter().collect::<Vec<_>>(),
            [
                ("n_ctx".to_string(), "4096".to_string()),
                ("total_slots".into(), "4".into())
            ]
        );
        assert_eq!(props_config(&serde_json::json!({"other": 1})), None);
        assert_eq!(props_url("http://h:8080/v1"), "http://h:8080/props");
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
