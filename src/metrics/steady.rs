//! The all-slots-busy window of a closed-loop level and what happened inside it, folded as the
//! requests finish, in memory bounded by the level's concurrency rather than its length.
//!
//! Definitions (times since level start; `s` is when a request took its slot, `e` its end,
//! `[a, b]` the interval its `n` output tokens were produced in):
//! - window start `ws`: the `k`-th smallest `s` (`k` the concurrency: every slot filled);
//! - window end `we`: the earliest end among each worker's latest-started request;
//! - tokens in the window: each request's `n` spread uniformly over `[a, b]` and prorated by the
//!   overlap with `[ws, we)`; a zero-length interval counts whole if `a` lies in `[ws, we)`;
//! - busy time in the window: the sum of each `[s, e]`'s overlap with it;
//! - sustained: over the requests with `s > ws`, their count, tokens and busy time.
//!
//! The window is only known when the level ends, yet no request needs to be kept whole for it:
//! a request's overlap is its whole length less the part before `ws` and the part after `we`,
//! so the tally adds every request's whole length as it comes and keeps only the two kinds
//! that may need a part taken off at the end:
//! - `early`: every request with `s` at or below the `k`-th smallest `s` so far, the only ones
//!   that can start before `ws` (at most `k` of them, plus ties);
//! - `late`: every request ending at or after a lower bound on `we`, the latest start of the
//!   worker that is furthest behind (a worker's later requests start after its latest one, and
//!   end no earlier than they start). In a closed loop that is about one round of requests.
//!
//! Until every one of the `k` workers has finished a request (or once a worker outside
//! `0..k` reports: no bound then), every request is kept as late; an outside worker that
//! reports after spans were let go leaves no window (the engine numbers its workers `0..k`). A worker stuck on one
//! request holds the bound back, so at worst the tally keeps what finished while it was stuck
//! (bounded by the request timeout). Sums over whole lengths are exact integers; only the
//! prorated token parts are floating point, taken off the exact total.

use std::collections::{BTreeMap, HashMap};

/// Spans added to `late` beyond twice what its last pruning kept before it is pruned again
/// (the bound costs a pass over the workers).
const PRUNE_AFTER: usize = 1024;

/// What a request contributes to the window.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Span {
    pub start_ns: u64,
    pub end_ns: u64,
    /// Output tokens of a successful request and the interval they were produced in.
    pub tokens: Option<(u32, u64, u64)>,
}

impl Span {
    fn busy(&self) -> u64 {
        self.end_ns.saturating_sub(self.start_ns)
    }

    /// The latest instant the request touches (its end, or its last token if that is later).
    fn reach(&self) -> u64 {
        self.end_ns.max(self.tokens.map_or(0, |(_, _, b)| b))
    }

    /// Its tokens produced before `ws` (a zero-length interval before `ws` counts whole).
    fn tokens_before(&self, ws: u64) -> f64 {
        match self.tokens {
            Some((n, a, b)) if a < ws => {
                if b > a {
                    f64::from(n) * (b.min(ws) - a) as f64 / (b - a) as f64
                } else {
                    f64::from(n)
                }
            }
            _ => 0.0,
        }
    }

    /// Its tokens produced after `we` (a zero-length interval at or after `we` counts whole).
    fn tokens_after(&self, we: u64) -> f64 {
        match self.tokens {
            Some((n, a, b)) if b > a && b > we => {
                f64::from(n) * (b - a.max(we)) as f64 / (b - a) as f64
            }
            Some((n, a, b)) if b == a && a >= we => f64::from(n),
            _ => 0.0,
        }
    }
}

/// The window's figures at the end of a level.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Window {
    pub start_ns: u64,
    pub end_ns: u64,
    /// Output tokens produced inside it, prorated.
    pub tokens: f64,
    /// Time-weighted mean number of requests in flight over it.
    pub in_flight: f64,
}

/// The requests that started after the window opened.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct After {
    pub requests: u64,
    pub tokens: u64,
    pub busy_ns: u128,
}

/// Folds requests into the window's figures (see the module docs).
#[derive(Debug, Clone, Default)]
pub struct SteadyTally {
    /// The level's concurrency; 0 tracks no window (an open loop has none).
    k: usize,
    count: u64,
    tokens: u64,
    busy_ns: u128,
    /// Spans by `s`, holding every span at or below the `k`-th smallest `s` seen.
    early: BTreeMap<u64, Vec<Span>>,
    early_len: usize,
    /// Spans that may reach past the window's end.
    late: Vec<Span>,
    /// `late.len()` after its last pruning.
    late_kept: usize,
    /// The lower bound on the window's end when `late` was last pruned.
    floor: u64,
    /// Per worker: (start, end) of its latest-started request, in ns.
    last_by_worker: HashMap<u32, (u64, u64)>,
    /// A worker outside `0..k` reported: `we` has no lower bound, keep every span.
    unbounded: bool,
    /// ... after spans were let go on the bound: the window cannot be told.
    lost: bool,
}

impl SteadyTally {
    /// A tally for a closed-loop level of `concurrency` workers numbered `0..concurrency`
    /// (0: no window).
    pub fn new(concurrency: u32) -> SteadyTally {
        SteadyTally {
            k: concurrency as usize,
            ..SteadyTally::default()
        }
    }

    /// Requests folded.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Sum of every request's busy time (its whole `[s, e]`).
    pub fn busy_ns(&self) -> u128 {
        self.busy_ns
    }

    /// Folds one request of `worker` that started (was sent) at `sent_ns`.
    pub fn add(&mut self, worker: u32, sent_ns: u64, span: Span) {
        self.count += 1;
        self.busy_ns += u128::from(span.busy());
        self.tokens += span.tokens.map_or(0, |t| u64::from(t.0));
        if self.k == 0 {
            return;
        }
        if worker as usize >= self.k {
            // spans the bound let go may have mattered to this worker's end
            self.lost |= self.floor > 0;
            self.unbounded = true;
        }
        let last = self
            .last_by_worker
            .entry(worker)
            .or_insert((sent_ns, span.end_ns));
        if sent_ns >= last.0 {
            *last = (sent_ns, span.end_ns);
        }
        self.add_early(span);
        // the bound only rises; a stale one keeps more than needed, never less
        if span.reach() >= self.floor {
            self.late.push(span);
            if self.late.len() >= 2 * self.late_kept + PRUNE_AFTER {
                self.floor = self.end_floor();
                let floor = self.floor;
                self.late.retain(|s| s.reach() >= floor);
                self.late_kept = self.late.len();
            }
        }
    }

    fn add_early(&mut self, span: Span) {
        let kth = self.early.last_key_value().map(|(s, _)| *s);
        if self.early_len >= self.k && kth.is_some_and(|kth| span.start_ns > kth) {
            return;
        }
        self.early.entry(span.start_ns).or_default().push(span);
        self.early_len += 1;
        // drop the latest-starting group while the rest still hold k spans
        while let Some((_, group)) = self.early.last_key_value() {
            if self.early_len - group.len() < self.k {
                break;
            }
            self.early_len -= group.len();
            self.early.pop_last();
        }
    }

    /// A lower bound on the window's end: no span ending before it can matter.
    fn end_floor(&self) -> u64 {
        if self.unbounded || self.last_by_worker.len() < self.k {
            return 0;
        }
        self.last_by_worker
            .values()
            .map(|(sent, _)| *sent)
            .min()
            .unwrap_or(0)
    }

    /// The window and its figures; `None` when fewer than `k` requests (or workers) ran or
    /// the window has no length.
    pub fn window(&self) -> Option<Window> {
        if self.k == 0
            || self.lost
            || (self.count as usize) < self.k
            || self.last_by_worker.len() < self.k
        {
            return None;
        }
        let ws = *self.early.last_key_value()?.0;
        let we = self.last_by_worker.values().map(|(_, e)| *e).min()?;
        if we <= ws {
            return None;
        }
        let early = self.early.values().flatten();
        let before_busy: u128 = early
            .clone()
            .map(|s| u128::from(s.end_ns.min(ws).saturating_sub(s.start_ns)))
            .sum();
        let after_busy: u128 = self
            .late
            .iter()
            .map(|s| u128::from(s.end_ns.saturating_sub(s.start_ns.max(we))))
            .sum();
        let before_tokens: f64 = early.map(|s| s.tokens_before(ws)).sum();
        let after_tokens: f64 = self.late.iter().map(|s| s.tokens_after(we)).sum();
        let busy = self.busy_ns - before_busy - after_busy;
        Some(Window {
            start_ns: ws,
            end_ns: we,
            tokens: (self.tokens as f64 - before_tokens - after_tokens).max(0.0),
            in_flight: busy as f64 / (we - ws) as f64,
        })
    }

    /// The requests with `s` past `ws`: the totals less the early ones at or before it.
    pub fn after(&self, ws: u64) -> After {
        let (mut requests, mut tokens, mut busy_ns) = (self.count, self.tokens, self.busy_ns);
        for s in self.early.range(..=ws).flat_map(|(_, g)| g) {
            requests -= 1;
            tokens -= s.tokens.map_or(0, |t| u64::from(t.0));
            busy_ns -= u128::from(s.busy());
        }
        After {
            requests,
            tokens,
            busy_ns,
        }
    }

    /// Spans held (early and late): what the tally costs.
    #[cfg(test)]
    fn held(&self) -> usize {
        self.early_len + self.late.len()
    }
}

#[cfg(test)]
#[path = "steady_tests.rs"]
mod tests;
