//! A run served over HTTP (`--serve ADDR`, `docs/watch.md`): its engine events as a stream a
//! watcher folds with the same reducer as the dashboard, and its progress and live figures
//! for Prometheus. The run's own consumer (the headless printer) reads the same events: a tee
//! puts each one in the [`log::EventLog`] and passes it on, so serving changes nothing of
//! what the run measures or prints.

pub mod follow;
mod http;
pub mod log;
pub mod metrics_text;

use crate::engine::EngineEvent;
pub use http::MetricsOf;
use log::{EventLog, Logged};
use metrics_text::{render, RunLabels};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, Notify};
use tokio_util::sync::CancellationToken;

/// The environment variable holding a served run's token.
pub const SERVE_TOKEN_ENV: &str = "RIGHTSIZE_SERVE_TOKEN";

/// How long a finished run waits for its watchers to read its last events.
const DRAIN: Duration = Duration::from_secs(2);

/// Where to serve, and the token (from [`SERVE_TOKEN_ENV`]).
#[derive(Debug, Clone)]
pub struct ServeOptions {
    pub addr: SocketAddr,
    pub token: Option<String>,
}

impl ServeOptions {
    /// `--serve ADDR` with the token from the environment; an address other than loopback
    /// without a token is refused, naming the variable.
    pub fn from_flag(addr: SocketAddr) -> anyhow::Result<ServeOptions> {
        let token = std::env::var(SERVE_TOKEN_ENV)
            .ok()
            .filter(|t| !t.is_empty());
        if token.is_none() && !addr.ip().is_loopback() {
            return Err(crate::config::overrides::InputError(format!(
                "--serve {addr} listens beyond this machine: set {SERVE_TOKEN_ENV} to a secret \
                 (watchers give it as a bearer token), or serve on 127.0.0.1"
            ))
            .into());
        }
        Ok(ServeOptions { addr, token })
    }
}

/// `--serve`'s value: `HOST:PORT` with an IP address (`127.0.0.1:0` takes a free port).
pub fn parse_addr(s: &str) -> Result<SocketAddr, String> {
    s.parse().map_err(|_| {
        format!("`{s}` is not an address to listen on: give IP:PORT, e.g. 127.0.0.1:9464 or 0.0.0.0:9464")
    })
}

/// A run (or a campaign) being served: `E` is what it says, an [`EngineEvent`] for a run.
pub struct Served<E: Logged = EngineEvent> {
    shared: Arc<http::Shared<E>>,
    stop: CancellationToken,
    accept: tokio::task::JoinHandle<()>,
    /// Where it listens (the port the system chose for `:0`).
    pub addr: SocketAddr,
}

impl Served<EngineEvent> {
    /// Listens on the options' address; `run_cancel` is what `POST /stop` cancels, `plan` the
    /// run's kind, `described` its plan as `run.json` records it and `analysis` how its
    /// levels are judged.
    pub async fn start(
        opts: &ServeOptions,
        run_cancel: CancellationToken,
        (plan, described): (&str, serde_json::Value),
        analysis: crate::plan::Analysis,
    ) -> anyhow::Result<Served> {
        let described = serde_json::json!({"plan": described, "capacity": analysis.capacity});
        let plan = plan.to_string();
        let metrics: http::MetricsOf<EngineEvent> = Box::new(move |state| {
            let analysed = crate::plan::analyse(&analysis, &state.levels);
            let labels = RunLabels {
                plan: &plan,
                candidate: None,
            };
            render(&labels, state, &analysed)
        });
        Served::listen(opts, run_cancel, described, metrics).await
    }
}

impl<E: Logged> Served<E> {
    /// Listens on the options' address: `run_cancel` is what `POST /stop` cancels,
    /// `described` what `GET /run` answers, `metrics` what `/metrics` makes of the events.
    pub async fn listen(
        opts: &ServeOptions,
        run_cancel: CancellationToken,
        described: serde_json::Value,
        metrics: http::MetricsOf<E>,
    ) -> anyhow::Result<Served<E>> {
        let listener = tokio::net::TcpListener::bind(opts.addr)
            .await
            .map_err(|e| anyhow::anyhow!("--serve {}: cannot listen there: {e}", opts.addr))?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(http::Shared {
            log: Arc::new(EventLog::default()),
            token: opts.token.clone(),
            open_reads: addr.ip().is_loopback(),
            run_cancel,
            metrics,
            described: described.to_string(),
            streams: AtomicUsize::new(0),
            drained: Notify::new(),
        });
        let stop = CancellationToken::new();
        let accept = tokio::spawn(http::accept_loop(listener, shared.clone(), stop.clone()));
        Ok(Served {
            shared,
            stop,
            accept,
            addr,
        })
    }

    /// The line that tells the user where to look (no token in it).
    pub fn banner(&self) -> String {
        format!(
            "serving this run at http://{0}: `rightsize watch http://{0}` shows it, Prometheus \
             reads /metrics (docs/watch.md)",
            self.addr
        )
    }

    /// Says where the run is served (on stderr) and puts its events through the log:
    /// [`Served::tee`] of `rx`, or `rx` itself when it is not served.
    pub fn announce_and_tee(
        served: Option<&Served<E>>,
        rx: mpsc::Receiver<E>,
    ) -> mpsc::Receiver<E> {
        match served {
            Some(s) => {
                eprintln!("{}", s.banner());
                s.tee(rx)
            }
            None => rx,
        }
    }

    /// Puts each event of `rx` in the log and passes it on to the returned receiver. When the
    /// engine's side ends, the log is closed.
    pub fn tee(&self, mut rx: mpsc::Receiver<E>) -> mpsc::Receiver<E> {
        let (tx, out) = mpsc::channel(256);
        let log = self.shared.log.clone();
        tokio::spawn(async move {
            let mut consumer = Some(tx);
            while let Some(ev) = rx.recv().await {
                log.add(&ev);
                if let Some(tx) = &consumer {
                    if tx.send(ev).await.is_err() {
                        // the consumer has gone: the log still takes the rest
                        consumer = None;
                    }
                }
            }
            log.close();
        });
        out
    }

    /// Ends serving: open event streams are given [`DRAIN`] to send the run's last events,
    /// then the server stops.
    pub async fn finish(self) {
        self.shared.log.close();
        let deadline = tokio::time::Instant::now() + DRAIN;
        while self.shared.streams.load(Ordering::SeqCst) > 0 {
            let drained = self.shared.drained.notified();
            if self.shared.streams.load(Ordering::SeqCst) == 0 {
                break;
            }
            if tokio::time::timeout_at(deadline, drained).await.is_err() {
                break;
            }
        }
        self.stop.cancel();
        let _ = self.accept.await;
    }
}
