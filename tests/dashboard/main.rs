//! The dashboard in tmux as a person drives it: the run and setup screens, past runs, the
//! campaign view, closed terminals. Skips (saying so) where tmux is not installed; `.ci/run`
//! installs it.

#[path = "../support/mod.rs"]
mod support;

mod campaign_tmux;
mod campaign_watch_tmux;
mod dashboard_daily;
mod tui_tmux;
mod watch_tmux;
