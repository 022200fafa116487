//! Turns on the machine for the tests of one binary that measure. A test that measures
//! latency or throughput reads the machine as much as the thing it measures when other tests
//! crowd the two cores; a test that only drives a screen or a file does not mind. Each
//! measuring test takes `weight` units of the lane's `capacity` (the lane's declaration says
//! what a unit stands for: a tenth of a core in the search binary), first come first served,
//! so a test that needs much is not passed over by lighter ones that arrive after it. The
//! units come back when the turn is dropped, also when its test panicked.
//!
//! A test that must have the machine to itself takes the whole lane, `alone`, in its place in
//! the queue: the lane drains while the tests behind it wait. `alone_after_the_rest` waits
//! instead until no other test holds or waits for a turn, so the lane drains once at its end
//! rather than each time such a test arrives: in the search binary, whose two tests alone
//! arrived in the middle, that (with the lane raised to one and a half cores) took its run
//! from 323 s to 151-165 s. Where the tests beside the lane's (ones that take no turn) mind
//! how busy the machine is, keep `alone`: in the dashboard binary the screen tests then ran
//! all together beside the campaign views, and a campaign's level at concurrency 1 read "not
//! held" (its client 29 ms late between two requests).
//!
//! Plain tests and `#[tokio::test]`s both take a turn the same way: it blocks the test's own
//! thread before the test has started anything.
//!
//! `LANE_TRACE=1` (with `--nocapture`) prints each turn asked for, given and given back, with
//! the seconds since the binary's first and the test's name: the timeline of a binary's lane.

use std::sync::{Condvar, Mutex, MutexGuard};

pub struct Lane {
    capacity: u32,
    state: Mutex<State>,
    changed: Condvar,
}

struct State {
    used: u32,
    /// The next ticket given out, and the ticket whose turn it is: the tickets in between
    /// are the tests waiting.
    issued: u64,
    serving: u64,
}

/// A test's units of a lane, given back when dropped.
pub struct Turn {
    lane: &'static Lane,
    weight: u32,
}

/// One line of the lane's timeline under `LANE_TRACE`.
fn trace(what: &str, weight: u32) {
    use std::sync::OnceLock;
    static START: OnceLock<std::time::Instant> = OnceLock::new();
    if std::env::var_os("LANE_TRACE").is_some() {
        let t = START
            .get_or_init(std::time::Instant::now)
            .elapsed()
            .as_secs_f64();
        let name = std::thread::current().name().unwrap_or("?").to_string();
        eprintln!("LANE {t:7.2} {what} {weight} {name}");
    }
}

impl Lane {
    pub const fn new(capacity: u32) -> Lane {
        Lane {
            capacity,
            state: Mutex::new(State {
                used: 0,
                issued: 0,
                serving: 0,
            }),
            changed: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Waits for `weight` units (at most the capacity) after every test that asked before.
    pub fn take(&'static self, weight: u32) -> Turn {
        let weight = weight.min(self.capacity);
        trace("ask", weight);
        let mut s = self.lock();
        let ticket = s.issued;
        s.issued += 1;
        while s.serving != ticket || s.used + weight > self.capacity {
            s = self.changed.wait(s).unwrap_or_else(|e| e.into_inner());
        }
        s.used += weight;
        s.serving += 1;
        drop(s);
        trace("got", weight);
        self.changed.notify_all();
        Turn { lane: self, weight }
    }

    /// The whole machine, in its place in the queue.
    pub fn alone(&'static self) -> Turn {
        self.take(self.capacity)
    }

    /// The whole machine, once no other test holds units or waits for them.
    pub fn alone_after_the_rest(&'static self) -> Turn {
        trace("ask-after", self.capacity);
        let mut s = self.lock();
        while s.used > 0 || s.serving != s.issued {
            s = self.changed.wait(s).unwrap_or_else(|e| e.into_inner());
        }
        s.used = self.capacity;
        trace("got-after", self.capacity);
        Turn {
            lane: self,
            weight: self.capacity,
        }
    }
}

impl Drop for Turn {
    fn drop(&mut self) {
        trace("drop", self.weight);
        self.lane.lock().used -= self.weight;
        self.lane.changed.notify_all();
    }
}
