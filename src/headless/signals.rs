//! Stopping signals: SIGINT (Ctrl-C), SIGTERM (what Kubernetes and CI runners send) and
//! SIGHUP (a closed terminal) all stop a run the same way: the cancellation token fires,
//! finished levels are kept, the cut level is written marked partial, `summary.json` is
//! written and `run.json` marked interrupted. The exit code is 128 + the signal's number:
//! 130, 143, 129. (Windows has only Ctrl-C.)

use std::sync::{Arc, OnceLock};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// Which signal stopped the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Caught {
    Interrupt,
    Terminate,
    Hangup,
}

impl Caught {
    /// 128 + the signal's number, as shells report it.
    pub fn exit_code(self) -> u8 {
        match self {
            Caught::Interrupt => 130,
            Caught::Terminate => 143,
            Caught::Hangup => 129,
        }
    }
}

/// Watches for the stopping signals until dropped; the first one cancels `cancel`.
pub struct SignalWatch {
    caught: Arc<OnceLock<Caught>>,
    task: JoinHandle<()>,
}

impl SignalWatch {
    /// The signal that stopped the run, if one did.
    pub fn caught(&self) -> Option<Caught> {
        self.caught.get().copied()
    }
}

impl Drop for SignalWatch {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Starts watching: the first stopping signal is recorded and cancels `cancel`.
pub fn watch(cancel: CancellationToken) -> SignalWatch {
    let caught = Arc::new(OnceLock::new());
    let seen = caught.clone();
    let task = tokio::spawn(async move {
        if let Some(which) = next_signal().await {
            let _ = seen.set(which);
            cancel.cancel();
        }
    });
    SignalWatch { caught, task }
}

#[cfg(unix)]
async fn next_signal() -> Option<Caught> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut term = signal(SignalKind::terminate()).ok()?;
    let mut hup = signal(SignalKind::hangup()).ok()?;
    tokio::select! {
        r = tokio::signal::ctrl_c() => r.ok().map(|_| Caught::Interrupt),
        _ = term.recv() => Some(Caught::Terminate),
        _ = hup.recv() => Some(Caught::Hangup),
    }
}

#[cfg(not(unix))]
async fn next_signal() -> Option<Caught> {
    tokio::signal::ctrl_c()
        .await
        .ok()
        .map(|_| Caught::Interrupt)
}
