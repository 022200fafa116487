//! `rightsize worker --controller URL`: one worker of a distributed run
//! (`docs/distributed.md`). It sends load only for its controller, and exits when the run
//! ends (0) or when it cannot go on (1, with the reason on stderr).

use crate::fleet::worker::{run_worker, WorkerConfig};
use crate::headless::exit::BadInput;
use crate::secrets::WORKER_TOKEN_ENV;
use crate::values::parse_timeout;
use clap::Args;
use std::process::ExitCode;
use std::time::Duration;

/// Flags of `rightsize worker`.
#[derive(Debug, Clone, Args)]
#[command(
    after_help = "The run's token comes from RIGHTSIZE_WORKER_TOKEN (never a flag, so it \
stays out of process lists). Started by `--worker-backend local` on this machine, or by the \
Indexed Job `rightsize k8s render` prints."
)]
pub struct WorkerArgs {
    /// The controller's URL, e.g. http://rightsize-controller.perf.svc:7077
    #[arg(long, value_name = "URL")]
    pub controller: String,
    /// This worker's index in the run (0-based); a Kubernetes Indexed Job sets
    /// JOB_COMPLETION_INDEX [default: the first free place]
    #[arg(long, value_name = "I", env = "JOB_COMPLETION_INDEX")]
    pub index: Option<u32>,
    /// Give up (exit 1) when the controller cannot be reached for this long
    #[arg(long, value_name = "DURATION", value_parser = parse_timeout, default_value = "60s")]
    pub connect_timeout: Duration,
    /// Exit at once when standard input closes: `--worker-backend local` starts its workers
    /// with a pipe from the controller here, which the system closes when the controller
    /// process ends, however it ends (SIGKILL included)
    #[arg(long, hide = true)]
    pub exit_with_stdin: bool,
}

/// Runs the worker until its controller ends the run.
pub async fn execute(args: WorkerArgs) -> anyhow::Result<ExitCode> {
    let url = url::Url::parse(&args.controller)
        .ok()
        .filter(|u| matches!(u.scheme(), "http" | "https") && u.host().is_some())
        .ok_or_else(|| {
            BadInput(format!(
                "--controller `{}` is not an http(s) URL, e.g. http://127.0.0.1:7077",
                args.controller
            ))
        })?;
    let token = std::env::var(WORKER_TOKEN_ENV)
        .ok()
        .map(|t| t.trim().to_string())
        .filter(|t| !t.is_empty())
        .ok_or_else(|| {
            BadInput(format!(
                "{WORKER_TOKEN_ENV} is not set: a worker presents the run's token to its controller"
            ))
        })?;
    if args.exit_with_stdin {
        exit_when_stdin_closes();
    }
    let cfg = WorkerConfig {
        controller: url.as_str().trim_end_matches('/').to_string(),
        index: args.index,
        token,
        connect_timeout: args.connect_timeout,
    };
    match run_worker(cfg).await {
        Ok(()) => Ok(ExitCode::SUCCESS),
        Err(e) => {
            eprintln!("rightsize worker: {e}");
            Ok(ExitCode::FAILURE)
        }
    }
}

/// Watches standard input on a thread of its own and ends the process when it closes (the
/// controller that holds its other end is gone): a worker never outlives its controller.
fn exit_when_stdin_closes() {
    std::thread::spawn(|| {
        use std::io::Read;
        let mut buf = [0u8; 64];
        let mut stdin = std::io::stdin();
        loop {
            match stdin.read(&mut buf) {
                Ok(0) | Err(_) => {
                    // stderr is a pipe to the controller too, gone with it: never `eprintln!`,
                    // which panics on a write that fails
                    use std::io::Write;
                    let _ = writeln!(
                        std::io::stderr(),
                        "rightsize worker: the controller went away (its pipe closed)"
                    );
                    std::process::exit(1);
                }
                Ok(_) => {}
            }
        }
    });
}
