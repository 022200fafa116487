//! How many streamed token events per second the simulator sustains, and its CPU per event.
//!
//! `cargo bench --bench sim_events [-- --seconds S --concurrency N --max-tokens T]`
//!
//! The sim runs with every model cost set to 0 on one thread (a current_thread runtime for
//! HTTP, plus its scheduler thread), pinned to CPU 0 when the machine has a second core;
//! the client (keep-alive connections, one streaming request after another) runs on another
//! thread pinned to CPU 1. Prints token events/s, requests/s and CPU time per event.
//!
//! Linux only: it pins threads to CPUs and reads per-thread CPU time.

#[cfg(target_os = "linux")]
#[path = "sim_events/linux.rs"]
mod linux;

fn main() {
    #[cfg(target_os = "linux")]
    linux::main();
    #[cfg(not(target_os = "linux"))]
    eprintln!("the sim_events benchmark runs on Linux only");
}
