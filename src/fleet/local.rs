//! `--worker-backend local`: the run's workers as processes of this binary on this machine
//! (for tests, and for a client box with more cores than one process uses well). Each is
//! `rightsize worker --controller http://ADDR --index I` with the run's token in its
//! environment; its standard error is kept (the last line says why it failed), and its exit
//! is noticed at once: a worker that dies mid-level is named in that level at once, not after
//! a heartbeat. When the run ends, each worker takes the controller's Stop order and exits;
//! one that has not within [`EXIT_WAIT`] is killed, and so is every one whose controller
//! process goes away (`kill_on_drop`). A controller killed outright (SIGKILL) runs no drop:
//! each worker's standard input is a pipe whose other end only the controller holds, and a
//! worker exits the moment it closes (`--exit-with-stdin`).

use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::AsyncBufReadExt;
use tokio_util::sync::CancellationToken;

/// How long a worker has to exit after the run's end before it is killed.
pub const EXIT_WAIT: Duration = Duration::from_secs(3);

/// The worker processes of a run.
pub struct LocalWorkers {
    stop: CancellationToken,
    tasks: Vec<tokio::task::JoinHandle<Option<String>>>,
}

/// Starts `n` workers of this binary for the controller at `url`; `lose(index, why)` tells the
/// controller when one's process is gone (the controller's `Losses::lose`).
pub fn start(
    url: &str,
    n: usize,
    token: &str,
    lose: impl Fn(u32, String) + Clone + Send + 'static,
) -> std::io::Result<LocalWorkers> {
    let exe = std::env::current_exe()?;
    let stop = CancellationToken::new();
    let mut tasks = Vec::new();
    for i in 0..n {
        let mut child = tokio::process::Command::new(&exe)
            .args(["worker", "--controller", url, "--index", &i.to_string()])
            .arg("--exit-with-stdin")
            .env(crate::secrets::WORKER_TOKEN_ENV, token)
            .env_remove("JOB_COMPLETION_INDEX")
            // the worker's lifeline: this process holds the pipe's other end, and the system
            // closes it when this process ends, however it ends
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()?;
        let lifeline = child.stdin.take();
        let last_line: Arc<Mutex<String>> = Arc::default();
        if let Some(err) = child.stderr.take() {
            let keep = last_line.clone();
            tokio::spawn(async move {
                let mut lines = tokio::io::BufReader::new(err).lines();
                while let Ok(Some(line)) = lines.next_line().await {
                    if !line.trim().is_empty() {
                        *keep.lock().unwrap_or_else(|e| e.into_inner()) = line;
                    }
                }
            });
        }
        let (stop, lose) = (stop.clone(), lose.clone());
        tasks.push(tokio::spawn(async move {
            // held for as long as the worker is watched
            let _lifeline = lifeline;
            let index = i as u32;
            tokio::select! {
                status = child.wait() => {
                    // give the reader a moment to take the last line
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    let line = last_line.lock().unwrap_or_else(|e| e.into_inner()).clone();
                    let why = match status {
                        Ok(s) => format!("its process exited ({s})"),
                        Err(e) => format!("its process cannot be waited for: {e}"),
                    };
                    let why = if line.is_empty() { why } else { format!("{why}: {line}") };
                    lose(index, why);
                    None
                }
                _ = stop.cancelled() => {
                    match tokio::time::timeout(EXIT_WAIT, child.wait()).await {
                        Ok(_) => None,
                        Err(_) => {
                            let _ = child.kill().await;
                            Some(format!(
                                "worker {index} had not exited {:.0} s after the run ended: killed",
                                EXIT_WAIT.as_secs_f64()
                            ))
                        }
                    }
                }
            }
        }));
    }
    Ok(LocalWorkers { stop, tasks })
}

impl Drop for LocalWorkers {
    /// Dropped without [`LocalWorkers::shutdown`] (a run that failed before its end): the
    /// workers are stopped all the same.
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

impl LocalWorkers {
    /// The run is over: waits for every worker to exit (killing those that do not); returns
    /// what to say about them.
    pub async fn shutdown(mut self) -> Vec<String> {
        self.stop.cancel();
        let mut notes = Vec::new();
        for t in std::mem::take(&mut self.tasks) {
            if let Ok(Some(note)) = t.await {
                notes.push(note);
            }
        }
        notes
    }
}
