//! The continuous-batching model, in the shape of vLLM's scheduler: batch slots, a KV-cache
//! budget in tokens, a FIFO waiting queue, chunked prefill under a per-step token budget
//! (decodes first), a prefix cache, and recompute-style preemption. It only decides what each
//! step does and delivers its tokens; how long a step takes is the caller's business
//! (see `engine.rs`), so this file is plain, clock-free logic.

use std::collections::VecDeque;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;

use tokio::sync::mpsc::UnboundedSender;

use super::prefix_cache::PrefixCache;
use super::stats::SharedMetrics;

/// One output token delivered to the HTTP task that owns the sequence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TokenEvent {
    /// Whether this is the sequence's last token.
    pub last: bool,
    /// Prompt tokens found in the prefix cache when the sequence was first admitted; `None`
    /// when the prefix cache is off.
    pub cached: Option<u32>,
}

/// A request as the HTTP layer hands it to the scheduler.
#[derive(Debug)]
pub struct NewSeq {
    /// Request number (1-based, arrival order).
    pub id: u64,
    /// Prompt length, in tokens (at least 1).
    pub prompt_tokens: u32,
    /// Chained hashes of the prompt's whole blocks (see `prefix_cache::block_hashes`).
    pub block_hashes: Vec<u64>,
    /// Tokens to generate before stopping (at least 1).
    pub output_len: u32,
    /// Arrival time, `clock::now_ns()`.
    pub arrival_ns: u64,
    /// Where the tokens go; a send failure means the client went away.
    pub tx: UnboundedSender<TokenEvent>,
}

#[derive(Debug)]
struct Seq {
    new: NewSeq,
    generated: u32,
    /// Tokens whose KV is computed (prefix-cache hits count as computed).
    computed: u32,
    /// Tokens to prefill before the next token can be sampled: the prompt, plus the generated
    /// tokens after a recompute-style preemption.
    target: u32,
    /// KV-cache tokens held.
    kv: u64,
    /// Tokens scheduled in the current step, and whether the step ends with a new token.
    scheduled: u32,
    prefill_step: bool,
    emits: bool,
    admitted_once: bool,
    prefilled_once: bool,
    /// Prompt tokens the prefix cache held at the first admission.
    cached: u32,
}

impl Seq {
    fn decoding(&self) -> bool {
        self.computed >= self.target
    }
}

/// Sizes of the scheduler.
#[derive(Debug, Clone, Copy)]
pub struct SchedulerLimits {
    /// Batch slots.
    pub max_num_seqs: u32,
    /// Tokens per step.
    pub max_num_batched_tokens: u32,
    /// KV-cache capacity, in tokens.
    pub kv_cache_tokens: u64,
    /// Block size of the prefix cache, in tokens.
    pub block_size: u32,
    /// Prefix-cache capacity, in blocks.
    pub prefix_cache_blocks: u64,
}

impl SchedulerLimits {
    /// The sizes `cfg` asks for.
    pub fn of(cfg: &super::sim_config::SimConfig) -> SchedulerLimits {
        SchedulerLimits {
            max_num_seqs: cfg.max_num_seqs,
            max_num_batched_tokens: cfg.max_num_batched_tokens,
            kv_cache_tokens: cfg.kv_cache_tokens,
            block_size: cfg.block_size,
            prefix_cache_blocks: cfg.prefix_cache_blocks,
        }
    }
}

/// What one scheduled step holds, which is what its duration depends on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StepPlan {
    /// Sequences in the running batch.
    pub batch: usize,
    /// Uncached prompt tokens prefilled this step.
    pub prefill_tokens: u64,
}

/// The batching model's state.
#[derive(Debug)]
pub struct Scheduler {
    limits: SchedulerLimits,
    running: Vec<Seq>,
    waiting: VecDeque<Seq>,
    kv_used: u64,
    cache: PrefixCache,
    metrics: Arc<SharedMetrics>,
}

impl Scheduler {
    /// An empty scheduler publishing into `metrics`.
    pub fn new(limits: SchedulerLimits, metrics: Arc<SharedMetrics>) -> Self {
        Self {
            limits,
            running: Vec::new(),
            waiting: VecDeque::new(),
            kv_used: 0,
            cache: PrefixCache::new(limits.prefix_cache_blocks),
            metrics,
        }
    }

    /// Empties the prefix cache (vLLM's `reset_prefix_cache`): every block forgotten, so
    /// the next lookups hit nothing; its counters go on.
    pub fn reset_prefix_cache(&mut self) {
        self.cache = PrefixCache::new(self.limits.prefix_cache_blocks);
    }

    /// Appends a request to the waiting queue.
    pub fn add(&mut self, new: NewSeq) {
        let target = new.prompt_tokens.max(1);
        self.waiting.push_back(Seq {
            new,
            generated: 0,
            computed: 0,
            target,
            kv: 0,
            scheduled: 0,
            prefill_step: false,
            emits: false,
            admitted_once: false,
            prefilled_once: false,
            cached: 0,
        });
        self.publish();
    }

    /// Whether there is nothing to run.
    pub fn is_idle(&self) -> bool {
        self.running.is_empty() && self.waiting.is_empty()
    }

    /// Decides the next step: decodes first (one token each), then running prefill chunks,
    /// then new sequences from the head of the waiting queue while slots, budget and KV allow.
    pub fn schedule(&mut self) -> StepPlan {
        let mut budget = self.limits.max_num_batched_tokens;
        let mut preempted = false;
        for seq in &mut self.running {
            seq.scheduled = 0;
            seq.prefill_step = false;
            seq.emits = false;
        }
        for pass_decode in [true, false] {
            let mut i = 0;
            while i < self.running.len() && budget > 0 {
                let seq = &self.running[i];
                if seq.decoding() != pass_decode {
                    i += 1;
                    continue;
                }
                let need = if pass_decode {
                    1
                } else {
                    (seq.target - seq.computed).min(budget)
                };
                if !self.make_room(i, need as u64, &mut budget, &mut preempted) {
                    break; // seq i itself was preempted, and it was the last one
                }
                let seq = &mut self.running[i];
                seq.scheduled = need;
                seq.kv += need as u64;
                self.kv_used += need as u64;
                budget -= need;
                if pass_decode {
                    seq.emits = true;
                } else {
                    seq.prefill_step = true;
                    seq.computed += need;
                    seq.emits = seq.computed >= seq.target;
                }
                i += 1;
            }
        }
        // as vLLM does: a step that had to preempt admits nothing new
        if !preempted {
            self.admit_waiting(&mut budget);
        }
        self.publish();
        StepPlan {
            batch: self.running.len(),
            prefill_tokens: self
                .running
                .iter()
                .filter(|s| s.prefill_step)
                .map(|s| s.scheduled as u64)
                .sum(),
        }
    }

    /// Frees KV for `need` more tokens of running seq `i` by preempting the newest running
    /// sequences. Returns false when seq `i` had to be preempted itself.
    fn make_room(&mut self, i: usize, need: u64, budget: &mut u32, preempted: &mut bool) -> bool {
        while self.kv_used + need > self.limits.kv_cache_tokens {
            *preempted = true;
            let Some(mut victim) = self.running.pop() else {
                return false;
            };
            let was_self = self.running.len() == i;
            *budget += victim.scheduled;
            self.kv_used -= victim.kv;
            victim.kv = 0;
            victim.computed = 0;
            victim.target = victim.new.prompt_tokens.max(1) + victim.generated;
            victim.scheduled = 0;
            victim.prefill_step = false;
            victim.emits = false;
            self.waiting.push_front(victim);
            self.metrics.preemptions.fetch_add(1, Relaxed);
            if was_self {
                return false;
            }
        }
        true
    }

    fn admit_waiting(&mut self, budget: &mut u32) {
        while *budget > 0 && self.running.len() < self.limits.max_num_seqs as usize {
            let Some(seq) = self.waiting.front_mut() else {
                break;
            };
            if seq.new.tx.is_closed() {
                if let Some(gone) = self.waiting.pop_front() {
                    self.drop_seq(&gone, false);
                }
                continue;
            }
            let cached_blocks = self.cache.lookup(&seq.new.block_hashes) as u64;
            let hit =
                (cached_blocks * self.limits.block_size as u64).min(seq.target as u64 - 1) as u32;
            let chunk = (seq.target - hit).min(*budget);
            let kv = hit as u64 + chunk as u64;
            if self.kv_used + kv > self.limits.kv_cache_tokens {
                break;
            }
            let Some(mut seq) = self.waiting.pop_front() else {
                break;
            };
            self.metrics
                .prefix_queries
                .fetch_add(seq.target as u64, Relaxed);
            self.metrics.prefix_hits.fetch_add(hit as u64, Relaxed);
            if !seq.admitted_once {
                seq.admitted_once = true;
                seq.cached = hit;
                self.release_pending();
            }
            seq.kv = kv;
            seq.computed = hit + chunk;
            seq.scheduled = chunk;
            seq.prefill_step = true;
            seq.emits = seq.computed >= seq.target;
            self.kv_used += kv;
            *budget -= chunk;
            self.running.push(seq);
        }
    }

    /// Ends the step at `now_ns`: every sequence whose step ends in a token gets it; finished
    /// and abandoned sequences leave the batch and free their KV. Counters and gauges are
    /// updated before the token is sent, so a client that has its last token sees them.
    pub fn finish_step(&mut self, now_ns: u64) {
        let metrics = Arc::clone(&self.metrics);
        metrics.steps.fetch_add(1, Relaxed);
        let mut i = 0;
        while i < self.running.len() {
            let seq = &mut self.running[i];
            if !seq.emits {
                i += 1;
                continue;
            }
            seq.emits = false;
            if !seq.prefilled_once {
                seq.prefilled_once = true;
                metrics
                    .prompt_tokens
                    .fetch_add(seq.new.prompt_tokens as u64, Relaxed);
                metrics.observe_ttft(now_ns.saturating_sub(seq.new.arrival_ns) as f64 / 1e9);
                self.cache.insert(&seq.new.block_hashes);
            }
            seq.generated += 1;
            metrics.generation_tokens.fetch_add(1, Relaxed);
            let cached = (self.limits.prefix_cache_blocks > 0).then_some(seq.cached);
            if seq.generated >= seq.new.output_len {
                // finished: it produced its last token, whether or not the client is still there
                let seq = self.running.remove(i);
                self.kv_used -= seq.kv;
                self.drop_seq(&seq, true);
                self.publish();
                let _ = seq.new.tx.send(TokenEvent { last: true, cached });
            } else if seq
                .new
                .tx
                .send(TokenEvent {
                    last: false,
                    cached,
                })
                .is_err()
            {
                let seq = self.running.remove(i);
                self.kv_used -= seq.kv;
                self.drop_seq(&seq, false);
            } else {
                i += 1;
            }
        }
        self.publish();
    }

    fn drop_seq(&mut self, seq: &Seq, finished: bool) {
        tracing::trace!(
            request = seq.new.id,
            finished,
            "sim: sequence leaves the scheduler"
        );
        if finished {
            self.metrics.finished.fetch_add(1, Relaxed);
            let now = crate::clock::now_ns();
            self.metrics.minutes.finished(
                crate::wallclock::now(),
                now.saturating_sub(seq.new.arrival_ns),
            );
        } else {
            self.metrics.aborted.fetch_add(1, Relaxed);
            if !seq.admitted_once {
                self.release_pending();
            }
        }
    }

    /// One fewer request counts against `--max-waiting` (it started running, or left).
    fn release_pending(&self) {
        let _ = self
            .metrics
            .pending
            .fetch_update(Relaxed, Relaxed, |p| Some(p.saturating_sub(1)));
    }

    fn publish(&self) {
        let m = &self.metrics;
        m.running.store(self.running.len() as u64, Relaxed);
        m.waiting.store(self.waiting.len() as u64, Relaxed);
        m.kv_used_tokens.store(self.kv_used, Relaxed);
    }
}
