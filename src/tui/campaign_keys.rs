//! The keys of the campaign views, read on a thread of their own (crossterm's read blocks):
//! only the ones that stop or leave.

use ratatui::crossterm::event::{self, Event, KeyCode, KeyEventKind, KeyModifiers};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

/// A key the campaign views act on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopKey {
    /// `q`.
    Quit,
    /// `x`.
    Stop,
    /// Ctrl-C.
    Interrupt,
}

/// The thread reading the keys, for a view to end when it leaves.
pub struct KeyReader {
    stop: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<()>,
}

impl KeyReader {
    /// Asks the thread to end, and waits for it unless the view left `unattended` (a signal,
    /// a failed draw, the key channel closed): with the terminal gone the thread may be in a
    /// poll that never settles (crossterm on a closed tty, spinning a core), and a view that
    /// waited for it stayed until SIGKILL.
    pub fn end(self, unattended: bool) {
        self.stop.store(true, Ordering::Relaxed);
        if !unattended {
            let _ = self.thread.join();
        }
    }
}

/// The thread that reads the keys: each of `q`, `x` and Ctrl-C goes on the channel; ending
/// the [`KeyReader`] ends the thread, and so does a terminal that has gone (a SIGHUP closed
/// it): the channel then ends, which a view reads as the user leaving.
pub fn spawn_key_reader() -> (mpsc::Receiver<StopKey>, KeyReader) {
    let (key_tx, key_rx) = mpsc::channel::<StopKey>(16);
    let stop_keys = Arc::new(AtomicBool::new(false));
    let stop = stop_keys.clone();
    let keys = std::thread::spawn(move || {
        while !stop.load(Ordering::Relaxed) {
            match event::poll(Duration::from_millis(100)) {
                Ok(true) => {}
                Ok(false) => continue,
                Err(_) => break,
            }
            let Ok(Event::Key(k)) = event::read() else {
                continue;
            };
            if k.kind == KeyEventKind::Release {
                continue;
            }
            let key = match k.code {
                KeyCode::Char('q') => StopKey::Quit,
                KeyCode::Char('x') => StopKey::Stop,
                KeyCode::Char('c') if k.modifiers.contains(KeyModifiers::CONTROL) => {
                    StopKey::Interrupt
                }
                _ => continue,
            };
            if key_tx.blocking_send(key).is_err() {
                break;
            }
        }
    });
    (
        key_rx,
        KeyReader {
            stop: stop_keys,
            thread: keys,
        },
    )
}
