//! The watcher's side of a served run (`rightsize watch URL`): what the run is (its plan, read
//! back as a past run's is), its events from `/events` as they come, and a stop. A dropped
//! connection is taken up again from the event after the last one read, so no event is lost
//! or read twice; the stream's own end is the run's.

use super::log::Logged;
use crate::endpoint::control::ControlClient;
use crate::plan::Analysis;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// How long a connect may take.
const CONNECT: Duration = Duration::from_secs(5);
/// The pause between attempts to take a dropped stream up again.
const RETRY_PAUSE: Duration = Duration::from_millis(500);
/// How long the run may stay out of reach before the watcher gives up.
const GIVE_UP: Duration = Duration::from_secs(30);

/// A served run, as a watcher reaches it.
#[derive(Clone)]
pub struct Watched {
    base: String,
    client: ControlClient,
    /// The run was served with a token and the watcher has it (a stop may be asked).
    pub can_stop: bool,
}

/// How following a run ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Followed {
    /// The run's last event came (`run_finished`).
    Finished,
    /// The stream ended without it: the run failed (its own output says why).
    EndedEarly,
    /// The watcher stopped following.
    Left,
}

impl Watched {
    /// The run served at `url` (`http://HOST:PORT`, a trailing `/` or `/events` allowed),
    /// with the token when given.
    pub fn new(url: &str, token: Option<&str>) -> Result<Watched, String> {
        let base = url
            .trim_end_matches('/')
            .trim_end_matches("/events")
            .to_string();
        let parsed = url::Url::parse(&base).map_err(|e| format!("`{url}` is not a URL: {e}"))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(format!(
                "`{url}` is not an http URL: give what the run printed, e.g. http://127.0.0.1:9464"
            ));
        }
        let client = ControlClient::following(token, CONNECT).map_err(|e| e.to_string())?;
        Ok(Watched {
            base,
            client,
            can_stop: token.is_some(),
        })
    }

    /// What `GET /run` says of the served run: a run's plan (`plan`, `capacity`), or a
    /// campaign's record (`campaign`).
    pub async fn described(&self) -> Result<serde_json::Value, String> {
        let url = format!("{}/run", self.base);
        let (status, body) = self
            .client
            .call(http::Method::GET, &url, None)
            .await
            .map_err(|e| format!("cannot reach {}: {e}", self.base))?;
        if !status.is_success() {
            return Err(refused(&self.base, status, &body));
        }
        serde_json::from_slice(&body).map_err(|e| format!("{url} is not a served run's: {e}"))
    }

    /// A served run's plan (what [`Watched::described`] read) as the analysis its levels
    /// are read with.
    pub fn analysis_of(described: &serde_json::Value) -> Analysis {
        let mut analysis = crate::plan::recorded::analysis(&described["plan"]);
        if let Ok(c) = serde_json::from_value(described["capacity"].clone()) {
            analysis.capacity = c;
        }
        analysis
    }

    /// The URL the run is served at.
    pub fn base(&self) -> &str {
        &self.base
    }

    /// Asks the run to stop (`POST /stop`); the text says what came of it.
    pub async fn stop(&self) -> String {
        let url = format!("{}/stop", self.base);
        match self.client.call(http::Method::POST, &url, None).await {
            Ok((s, _)) if s.is_success() => "asked the run to stop".into(),
            Ok((s, body)) => refused(&self.base, s, &body),
            Err(e) => format!("cannot reach {}: {e}", self.base),
        }
    }

    /// Sends the run's events to `tx` from the start until the stream ends, taking a dropped
    /// connection up again from where it broke; `Err` when the run stays out of reach for
    /// [`GIVE_UP`].
    pub async fn follow<E: Logged>(
        &self,
        tx: mpsc::Sender<E>,
        leave: CancellationToken,
    ) -> Result<Followed, String> {
        let mut next = 0u64;
        let mut finished = false;
        let mut unreachable_since: Option<tokio::time::Instant> = None;
        loop {
            let url = format!("{}/events?from={next}", self.base);
            let read = tokio::select! {
                _ = leave.cancelled() => return Ok(Followed::Left),
                r = self.read_stream(&url, &mut next, &mut finished, &tx) => r,
            };
            match read {
                Ok(()) if finished => return Ok(Followed::Finished),
                Ok(()) => return Ok(Followed::EndedEarly),
                Err(Broke::Refused(why)) => return Err(why),
                Err(Broke::Dropped(why)) => {
                    let since = *unreachable_since.get_or_insert_with(tokio::time::Instant::now);
                    if since.elapsed() >= GIVE_UP {
                        return Err(format!(
                            "lost the run at {} for {} s: {why}",
                            self.base,
                            GIVE_UP.as_secs()
                        ));
                    }
                }
                Err(Broke::Read) => unreachable_since = None,
            }
            tokio::select! {
                _ = leave.cancelled() => return Ok(Followed::Left),
                _ = tokio::time::sleep(RETRY_PAUSE) => {}
            }
        }
    }

    /// One connection's worth of the stream: each whole line to `tx`, `next` moved past it.
    async fn read_stream<E: Logged>(
        &self,
        url: &str,
        next: &mut u64,
        finished: &mut bool,
        tx: &mpsc::Sender<E>,
    ) -> Result<(), Broke> {
        let mut answer = self
            .client
            .get(url, Some("application/x-ndjson"), None)
            .await
            .map_err(|e| Broke::Dropped(e.to_string()))?;
        let status = answer.status();
        if !status.is_success() {
            let body = answer.bytes().await.unwrap_or_default();
            return Err(Broke::Refused(refused(&self.base, status, &body)));
        }
        let mut pending: Vec<u8> = Vec::new();
        let mut read_any = false;
        loop {
            let piece = match answer.chunk().await {
                Ok(Some(p)) => p,
                Ok(None) => return Ok(()),
                // what was read is kept: the next connection goes on from there
                Err(_) if read_any => return Err(Broke::Read),
                Err(e) => return Err(Broke::Dropped(e.to_string())),
            };
            pending.extend_from_slice(&piece);
            while let Some(nl) = pending.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = pending.drain(..=nl).collect();
                let Ok(numbered) = serde_json::from_slice::<Numbered<E>>(&line) else {
                    return Err(Broke::Refused(format!(
                        "{url} sent a line that is no event: {}",
                        String::from_utf8_lossy(&line).trim_end()
                    )));
                };
                read_any = true;
                *next = numbered.seq + 1;
                *finished |= numbered.event.is_last();
                if tx.send(numbered.event).await.is_err() {
                    return Ok(());
                }
            }
        }
    }
}

/// Why a connection to the stream ended before the run did.
enum Broke {
    /// The run answered no: a wrong token, not a served run.
    Refused(String),
    /// No answer, or it broke off before an event.
    Dropped(String),
    /// It broke off after events were read: the run is there.
    Read,
}

/// One line of `/events`.
#[derive(serde::Deserialize)]
#[serde(bound = "E: serde::de::DeserializeOwned")]
struct Numbered<E> {
    seq: u64,
    event: E,
}

/// What a refused call says: the status and the run's own words.
fn refused(base: &str, status: http::StatusCode, body: &[u8]) -> String {
    let said = String::from_utf8_lossy(body);
    let hint = if status == http::StatusCode::UNAUTHORIZED {
        " (set RIGHTSIZE_SERVE_TOKEN to the run's token)"
    } else {
        ""
    };
    format!("{base} answered {status}: {}{hint}", said.trim())
}
