//! The `rightsize` binary: parse, build the runtime, run, map errors to exit codes.

use clap::Parser;
use rightsize::cli::{run, Cli};
use rightsize::headless::exit::exit_code_for;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = Cli::parse();
    // workers wake for a request's bytes or a send the open-loop dispatcher hands over; a
    // short slice lets them run at once instead of after another process's time slice
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .on_thread_start(rightsize::sched::short_slice)
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::from(1);
        }
    };
    match runtime.block_on(run(cli)) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::from(exit_code_for(&err))
        }
    }
}
