//! The first-token lane: one thread of its own, with its own small runtime, that reads each
//! `http://` answer up to its first token before handing the connection back to the worker
//! for the rest of the stream. The worker writes the request itself, or the open-loop
//! dispatcher on its own thread (`super::direct`): sends never queue behind the lane; the
//! lane attaches the socket to its own reactor for the head and the first events.
//!
//! Why: at high concurrency the workers' runtime is busy reading hundreds of streams, and a
//! stream's next read waits its turn behind all of them. A new request's first token would
//! wait the same way, and TTFT, the number a capacity plan leans on most, would grow with the
//! client's backlog rather than the server's. The lane holds only requests still waiting for
//! their first token, so it sleeps in `epoll_wait` and is woken by those bytes themselves; it
//! asks the kernel for a short time slice and, where the process may (root or
//! `CAP_SYS_NICE`), a priority above the workers' (`crate::sched::latency_critical`), so its
//! wake-ups run ahead of the busy workers.
//! The timing rule is unchanged: the task that reads the bytes reads the monotonic clock the
//! moment its `read()` returns.

use std::future::Future;
use std::sync::OnceLock;

use tokio::runtime::Handle;
use tokio::task::JoinHandle;

static LANE: OnceLock<Option<Handle>> = OnceLock::new();

/// The lane's runtime, started on first use; `None` if its thread could not be started.
fn lane() -> Option<&'static Handle> {
    LANE.get_or_init(|| {
        let (tx, rx) = std::sync::mpsc::channel();
        let started = std::thread::Builder::new()
            .name("rightsize-lane".into())
            .spawn(move || {
                let rt = match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(rt) => rt,
                    Err(_) => {
                        let _ = tx.send(None);
                        return;
                    }
                };
                if crate::sched::latency_critical() {
                    tracing::debug!(
                        "first-token lane: priority raised 10 nice steps above the workers"
                    );
                } else {
                    tracing::debug!(
                        "first-token lane: default priority (raising it needs root or CAP_SYS_NICE)"
                    );
                }
                let _ = tx.send(Some(rt.handle().clone()));
                rt.block_on(std::future::pending::<()>());
            });
        match started {
            Ok(_) => rx.recv().ok().flatten(),
            Err(_) => None,
        }
    })
    .as_ref()
}

/// Starts the lane's thread if it is not running yet.
pub(crate) fn start() {
    lane();
}

/// Aborts the lane task when the worker stops waiting for it (timeout, cancel).
struct AbortOnDrop<T>(JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Runs `fut` on the lane and waits for its output; runs it in place when there is no lane.
/// Dropping the returned future stops the lane task too.
pub(crate) async fn run<F>(fut: F) -> F::Output
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    let Some(handle) = lane() else {
        return fut.await;
    };
    let mut task = AbortOnDrop(handle.spawn(fut));
    match (&mut task.0).await {
        Ok(v) => v,
        Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
        Err(e) => panic!("the first-token lane stopped a request: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn runs_on_its_own_thread_and_returns_the_output() {
        let here = std::thread::current().id();
        let (there, name) = run(async {
            let t = std::thread::current();
            (t.id(), t.name().map(str::to_string))
        })
        .await;
        assert_ne!(here, there);
        assert_eq!(name.as_deref(), Some("rightsize-lane"));
    }

    #[tokio::test]
    async fn dropping_the_wait_stops_the_lane_task() {
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let waiting = run(async move {
            // held until the task is dropped: the receiver sees the sender go away
            let _tx = tx;
            std::future::pending::<()>().await;
        });
        let timed_out = tokio::time::timeout(std::time::Duration::from_millis(20), waiting).await;
        assert!(timed_out.is_err());
        assert!(rx.await.is_err(), "the lane task was not stopped");
    }
}
