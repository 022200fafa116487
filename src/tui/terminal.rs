//! Taking the terminal and giving it back, when the terminal may be gone.
//!
//! ratatui's `init` and `restore` report a failed restore with `eprintln!`, which panics when
//! stderr is a closed tty (EIO: the tmux session or ssh connection went away), and its panic
//! hook restores the same way, so a lost terminal aborted the process (exit 134) before the
//! run could be closed. Here restoring a terminal that is gone is not an error, and the panic
//! hook never writes to it.

use ratatui::crossterm::execute;
use ratatui::crossterm::terminal::{enable_raw_mode, EnterAlternateScreen};
use ratatui::prelude::CrosstermBackend;
use ratatui::{DefaultTerminal, Terminal};
use std::io::stdout;

/// Raw mode and the alternate screen, with a panic hook that gives the terminal back first
/// (quietly: a panic on a lost terminal must not panic again).
pub fn init() -> std::io::Result<DefaultTerminal> {
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        restore();
        hook(info);
    }));
    enable_raw_mode()?;
    execute!(stdout(), EnterAlternateScreen)?;
    Terminal::new(CrosstermBackend::new(stdout()))
}

/// Leaves raw mode and the alternate screen; a terminal that is no longer there has nothing
/// to restore.
pub fn restore() {
    let _ = ratatui::try_restore();
}
