//! Unit tests of the batching model, stepping the scheduler by hand (no clock, no threads).

use std::sync::Arc;

use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver};

use super::scheduler::{NewSeq, Scheduler, SchedulerLimits, StepPlan, TokenEvent};
use super::stats::SharedMetrics;

fn limits(seqs: u32, budget: u32, kv: u64) -> SchedulerLimits {
    SchedulerLimits {
        max_num_seqs: seqs,
        max_num_batched_tokens: budget,
        kv_cache_tokens: kv,
        block_size: 16,
        prefix_cache_blocks: 1000,
    }
}

fn seq(
    id: u64,
    prompt: u32,
    out: u32,
    hashes: Vec<u64>,
) -> (NewSeq, UnboundedReceiver<TokenEvent>) {
    let (tx, rx) = unbounded_channel();
    let new = NewSeq {
        id,
        prompt_tokens: prompt,
        block_hashes: hashes,
        output_len: out,
        arrival_ns: 0,
        tx,
    };
    (new, rx)
}

fn drain(rx: &mut UnboundedReceiver<TokenEvent>) -> Vec<bool> {
    let mut v = Vec::new();
    while let Ok(ev) = rx.try_recv() {
        v.push(ev.last);
    }
    v
}

fn new_sched(l: SchedulerLimits) -> (Scheduler, Arc<SharedMetrics>) {
    let m = Arc::new(SharedMetrics::default());
    (Scheduler::new(l, Arc::clone(&m)), m)
}

#[test]
fn first_token_at_end_of_prefill_then_one_per_step() {
    let (mut s, m) = new_sched(limits(4, 100, 10_000));
    let (a, mut rx) = seq(1, 250, 3, vec![]);
    m.pending.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    s.add(a);
    // 250 prompt tokens under a budget of 100: three chunked prefill steps
    for want in [100, 100, 50] {
        let plan = s.schedule();
        assert_eq!(
            plan,
            StepPlan {
                batch: 1,
                prefill_tokens: want
            }
        );
        s.finish_step(0);
    }
    assert_eq!(drain(&mut rx), vec![false]);
    assert_eq!(
        s.schedule(),
        StepPlan {
            batch: 1,
            prefill_tokens: 0
        }
    );
    s.finish_step(0);
    s.schedule();
    s.finish_step(0);
    assert_eq!(drain(&mut rx), vec![false, true]);
    assert!(s.is_idle());
    let st = m.snapshot(10_000);
    assert_eq!(
        (st.generation_tokens_total, st.prompt_tokens_total),
        (3, 250)
    );
    assert_eq!((st.kv_used_tokens, st.requests_finished), (0, 1));
}

#[test]
fn decodes_take_budget_first_and_slots_cap_the_batch() {
    let (mut s, _m) = new_sched(limits(2, 10, 10_000));
    let (a, _ra) = seq(1, 5, 100, vec![]);
    let (b, _rb) = seq(2, 30, 100, vec![]);
    let (c, _rc) = seq(3, 5, 100, vec![]);
    s.add(a);
    s.add(b);
    s.add(c);
    assert_eq!(
        s.schedule(),
        StepPlan {
            batch: 2,
            prefill_tokens: 10
        }
    ); // a: 5, b: 5
    s.finish_step(0);
    // a decodes (1 token), b gets the other 9 of the budget; c waits for a slot
    assert_eq!(
        s.schedule(),
        StepPlan {
            batch: 2,
            prefill_tokens: 9
        }
    );
    s.finish_step(0);
}

#[test]
fn kv_exhaustion_preempts_the_newest_and_it_recomputes() {
    // two sequences of 10 prompt tokens fit; each decode step needs one more KV token
    let (mut s, m) = new_sched(limits(8, 100, 24));
    let (a, mut ra) = seq(1, 10, 10, vec![]);
    let (b, mut rb) = seq(2, 10, 10, vec![]);
    s.add(a);
    s.add(b);
    for _ in 0..40 {
        if s.is_idle() {
            break;
        }
        s.schedule();
        s.finish_step(0);
    }
    let st = m.snapshot(24);
    assert!(st.preemptions_total >= 1, "{st:?}");
    // both still get exactly their tokens, the last one marked
    let (ta, tb) = (drain(&mut ra), drain(&mut rb));
    assert_eq!((ta.len(), tb.len()), (10, 10));
    assert_eq!((ta.last(), tb.last()), (Some(&true), Some(&true)));
    assert!(s.is_idle());
    assert_eq!(st.requests_finished, 2);
}

#[test]
fn prefix_cache_skips_cached_whole_blocks() {
    let (mut s, m) = new_sched(limits(8, 1000, 10_000));
    let (a, _ra) = seq(1, 40, 5, vec![11, 12]);
    s.add(a);
    assert_eq!(s.schedule().prefill_tokens, 40);
    s.finish_step(0);
    let (b, _rb) = seq(2, 40, 5, vec![11, 12]);
    s.add(b);
    let plan = s.schedule();
    assert_eq!(plan.prefill_tokens, 8); // 32 cached tokens skipped
    let st = m.snapshot(10_000);
    assert_eq!(
        (st.prefix_cache_queries_total, st.prefix_cache_hits_total),
        (80, 32)
    );
}

#[test]
fn a_reset_prefix_cache_hits_nothing_and_its_counters_go_on() {
    let (mut s, m) = new_sched(limits(8, 1000, 10_000));
    let (a, _ra) = seq(1, 40, 5, vec![11, 12]);
    s.add(a);
    s.schedule();
    s.finish_step(0);
    s.reset_prefix_cache();
    let (b, _rb) = seq(2, 40, 5, vec![11, 12]);
    s.add(b);
    assert_eq!(s.schedule().prefill_tokens, 40); // nothing cached any more
    s.finish_step(1);
    let (c, _rc) = seq(3, 40, 5, vec![11, 12]);
    s.add(c);
    assert_eq!(s.schedule().prefill_tokens, 8); // b cached its blocks again
    let st = m.snapshot(10_000);
    assert_eq!(
        (st.prefix_cache_queries_total, st.prefix_cache_hits_total),
        (120, 32)
    );
}

#[test]
fn abandoned_sequences_free_their_slot() {
    let (mut s, m) = new_sched(limits(8, 1000, 10_000));
    let (a, ra) = seq(1, 10, 50, vec![]);
    s.add(a);
    s.schedule();
    s.finish_step(0);
    drop(ra);
    s.schedule();
    s.finish_step(0);
    assert!(s.is_idle());
    assert_eq!(m.snapshot(10_000).requests_aborted, 1);
}

/// Closed-loop clients against the pure model with the default costs: (output tok/s, mean
/// end-to-end latency in s), both in model time.
fn closed_loop(concurrency: usize, requests: usize, prompt: u32, out: u32) -> (f64, f64) {
    use super::scheduler_thread::StepCost;
    let cfg = super::sim_config::SimConfig::default();
    let (mut s, _m) = new_sched(SchedulerLimits::of(&cfg));
    let cost = StepCost::of(&cfg);
    let mut now_ms = 0.0;
    let mut started = 0usize;
    let mut live: Vec<(UnboundedReceiver<TokenEvent>, f64)> = Vec::new();
    let (mut tokens, mut latency_sum, mut done) = (0u64, 0.0, 0usize);
    while done < requests {
        while live.len() < concurrency && started < requests {
            started += 1;
            let (n, rx) = seq(started as u64, prompt, out, vec![]); // no shared prefix
            s.add(n);
            live.push((rx, now_ms));
        }
        let plan = s.schedule();
        now_ms += cost.step_ms(plan);
        s.finish_step(0);
        live.retain_mut(|(rx, t0)| {
            let evs = drain(rx);
            tokens += evs.len() as u64;
            if evs.last() == Some(&true) {
                done += 1;
                latency_sum += now_ms - *t0;
                false
            } else {
                true
            }
        });
    }
    (
        tokens as f64 / (now_ms / 1e3),
        latency_sum / done as f64 / 1e3,
    )
}

#[test]
fn default_model_gives_the_documented_throughput_and_knee() {
    let (t16, l16) = closed_loop(16, 64, 1024, 256);
    let (t256, l256) = closed_loop(256, 768, 1024, 256);
    let (t512, l512) = closed_loop(512, 1536, 1024, 256);
    eprintln!("16: {t16:.0} tok/s {l16:.1} s; 256: {t256:.0} tok/s {l256:.1} s; 512: {t512:.0} tok/s {l512:.1} s");
    assert!((1100.0..1300.0).contains(&t16), "{t16}");
    assert!((3900.0..4400.0).contains(&t256), "{t256}");
    assert!(
        (t512 / t256 - 1.0).abs() < 0.05,
        "flat past the slots: {t256} vs {t512}"
    );
    assert!(l512 > 1.7 * l256, "latency keeps rising: {l256} vs {l512}");
}

#[test]
fn random_workloads_deliver_every_token_once_and_free_all_kv() {
    use crate::rng::SplitMix64;
    let mut rng = SplitMix64::new(12345);
    let (mut preemptions, mut hits) = (0, 0);
    for round in 0..60 {
        let kv = 200 + rng.below(2000);
        let l = SchedulerLimits {
            max_num_seqs: 1 + rng.below(12) as u32,
            max_num_batched_tokens: 1 + rng.below(300) as u32,
            kv_cache_tokens: kv,
            block_size: 4,
            prefix_cache_blocks: rng.below(50),
        };
        let (mut s, m) = new_sched(l);
        let mut live = Vec::new();
        let n = 1 + rng.below(30);
        for id in 0..n {
            let prompt = 1 + rng.below(kv / 2) as u32;
            let out = 1 + rng.below(kv - prompt as u64 - 1).min(80) as u32;
            // a few shared prefixes, so the prefix cache gets hits
            let hashes: Vec<u64> = (0..prompt / 4)
                .map(|b| (id % 3) * 1000 + b as u64)
                .collect();
            let (new, rx) = seq(id, prompt, out, hashes);
            m.pending.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            s.add(new);
            live.push((rx, out, Vec::new()));
        }
        let mut steps = 0;
        while !s.is_idle() {
            s.schedule();
            s.finish_step(0);
            for (rx, _, got) in &mut live {
                got.extend(drain(rx));
            }
            steps += 1;
            assert!(steps < 200_000, "round {round}: no progress");
        }
        for (_, out, got) in &live {
            assert_eq!(got.len(), *out as usize, "round {round}");
            assert!(got[..got.len() - 1].iter().all(|last| !last));
            assert_eq!(got.last(), Some(&true));
        }
        let st = m.snapshot(kv);
        assert_eq!((st.kv_used_tokens, st.running, st.waiting), (0, 0, 0));
        assert_eq!(st.requests_finished, n);
        preemptions += st.preemptions_total;
        hits += st.prefix_cache_hits_total;
        assert_eq!(m.pending.load(std::sync::atomic::Ordering::Relaxed), 0);
    }
    // the rounds exercised preemption and the prefix cache
    assert!(preemptions > 0 && hits > 0, "{preemptions} {hits}");
}
