//! `rightsize sim`: a simulated OpenAI-compatible inference endpoint with a continuous-batching
//! model in the shape of vLLM's scheduler, for first use, demos and tests.
//!
//! Layout: `config`/`args` (parameters and flags), `api` (request parsing), `http` (routing and
//! the completion handler), `body` (streamed response bodies), `engine` (the scheduler thread
//! and step timing), `scheduler` (the batching model), `prefix_cache`, `text` (seeded output),
//! `faults`, `metrics` (counters and Prometheus text), `tokens` (prompt counting), `tls`
//! (HTTPS with `--tls-cert`/`--tls-key`). See `docs/simulator.md`.

mod answer_body;
mod api;
#[cfg(feature = "sagemaker")]
mod cloudwatch;
mod exposition;
mod faults;
mod flags;
mod gpu;
mod http;
mod minutes;
mod output_words;
mod prefix_cache;
mod request_log;
#[cfg(feature = "sagemaker")]
pub mod sagemaker;
mod scheduler;
#[cfg(test)]
mod scheduler_tests;
mod scheduler_thread;
mod sim_config;
mod stats;
mod tls;
mod tokens;
mod tool_answer;

use std::io::Write as _;
use std::net::SocketAddr;
use std::sync::mpsc::Sender;
use std::sync::Arc;
use std::thread::JoinHandle;

use tokio::sync::oneshot;

pub use flags::SimArgs;
pub use http::TIMING_HEADER;
pub use sim_config::{
    FaultConfig, FaultSpec, MetricNames, SimConfig, SimConfigError, SimModel, MAX_TIME_SCALE,
};
pub use stats::SimStats;
pub use tls::TlsFiles;

use scheduler_thread::SchedulerMessage;
use stats::SharedMetrics;

/// Connections the kernel queues before the simulator accepts them (capped by
/// `net.core.somaxconn`).
const LISTEN_BACKLOG: u32 = 4096;

/// A running simulator. Dropping it (or [`SimServer::shutdown`]) stops it.
pub struct SimServer {
    /// Base URL of the OpenAI API, e.g. `http://127.0.0.1:PORT/v1` (`https://` with TLS).
    pub base_url: String,
    /// The served model name.
    pub model: String,
    /// The bound address.
    pub addr: SocketAddr,
    kv_cache_tokens: u64,
    metrics: Arc<SharedMetrics>,
    stop_accept: Option<oneshot::Sender<()>>,
    sched_tx: Sender<SchedulerMessage>,
    sched_thread: Option<JoinHandle<()>>,
}

/// Binds 127.0.0.1:`cfg.port` (0 = the OS picks), starts the scheduler thread and spawns the
/// accept loop on the current tokio runtime; returns as soon as the server accepts connections.
pub async fn start(cfg: SimConfig) -> std::io::Result<SimServer> {
    cfg.validate()
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e.to_string()))?;
    let counter = tokens::PromptCounter::load(&cfg.tokenizer)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
    let request_log = match &cfg.request_log {
        Some(path) => Some(request_log::RequestLog::create(path).map_err(|e| {
            std::io::Error::new(
                e.kind(),
                format!("--request-log {}: cannot create it: {e}", path.display()),
            )
        })?),
        None => None,
    };
    let tls = match &cfg.tls {
        Some(files) => Some(
            tls::acceptor(files)
                .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?,
        ),
        None => None,
    };
    let scheme = if tls.is_some() { "https" } else { "http" };
    // every connection holds a descriptor; and a backlog deep enough that thousands of
    // clients connecting at once are not dropped and retried a second later
    let _ = crate::fdlimit::raise_nofile_limit();
    let socket = tokio::net::TcpSocket::new_v4()?;
    socket.set_reuseaddr(true)?;
    socket.bind(SocketAddr::from(([127, 0, 0, 1], cfg.port)))?;
    let listener = socket.listen(LISTEN_BACKLOG)?;
    let addr = listener.local_addr()?;
    let metrics = Arc::new(SharedMetrics::default());
    metrics.gpu.set_idle_w(cfg.gpu_idle_w);
    let (sched_tx, sched_thread) = scheduler_thread::spawn(&cfg, Arc::clone(&metrics))?;
    let (stop_tx, stop_rx) = oneshot::channel();
    let model = cfg.model.clone();
    let kv_cache_tokens = cfg.kv_cache_tokens;
    let state = Arc::new(http::AppState {
        request_log,
        model_json: serde_json::Value::String(cfg.model.clone()).to_string(),
        cfg,
        counter,
        metrics: Arc::clone(&metrics),
        sched_tx: sched_tx.clone(),
        started_unix: crate::wallclock::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0),
    });
    tokio::spawn(http::accept_loop(listener, state, tls, stop_rx));
    Ok(SimServer {
        base_url: format!("{scheme}://{addr}/v1"),
        model,
        addr,
        kv_cache_tokens,
        metrics,
        stop_accept: Some(stop_tx),
        sched_tx,
        sched_thread: Some(sched_thread),
    })
}

impl SimServer {
    /// Stops accepting connections and stops the scheduler thread (waiting for it to end its
    /// current step). Open streams end with an error.
    pub fn shutdown(mut self) {
        self.stop();
        if let Some(t) = self.sched_thread.take() {
            let _ = t.join();
        }
    }

    /// A snapshot of the model's state and totals.
    pub fn stats(&self) -> SimStats {
        self.metrics.snapshot(self.kv_cache_tokens)
    }

    fn stop(&mut self) {
        if let Some(s) = self.stop_accept.take() {
            let _ = s.send(());
        }
        let _ = self.sched_tx.send(SchedulerMessage::Shutdown);
    }
}

impl Drop for SimServer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// `rightsize sim`: starts the server, prints the base URL as the first line on stdout, and
/// serves until Ctrl-C.
pub async fn serve_forever(cfg: SimConfig) -> anyhow::Result<()> {
    let port = cfg.port;
    let server = start(cfg)
        .await
        .map_err(|e| anyhow::anyhow!("cannot start the simulator on 127.0.0.1:{port}: {e}"))?;
    {
        let mut out = std::io::stdout().lock();
        writeln!(out, "{}", server.base_url)?;
        out.flush()?;
    }
    eprintln!(
        "rightsize sim: serving model `{}` at {} (Ctrl-C to stop)",
        server.model, server.base_url
    );
    tokio::signal::ctrl_c().await?;
    server.shutdown();
    Ok(())
}
