//! The scheduler's own OS thread: takes requests from a channel, runs steps, and waits out each
//! step's modelled duration (divided by the time scale, times the noise) to absolute deadlines,
//! so the average step rate is right even when single sleeps are coarse. It waits on its
//! channel with a timeout rather than sleeping, so a shutdown never waits for a long step.

use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, TryRecvError};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use super::scheduler::{NewSeq, Scheduler, SchedulerLimits, StepPlan};
use super::sim_config::SimConfig;
use super::stats::SharedMetrics;
use crate::clock::now_ns;
use crate::rng::SplitMix64;

/// How far (real ns) the step loop may fall behind its deadlines before it stops catching up:
/// past this the model simply runs slower than nominal instead of bursting.
const MAX_LAG_NS: u64 = 50_000_000;

/// Messages to the scheduler thread.
#[derive(Debug)]
pub enum SchedulerMessage {
    /// A new request for the waiting queue.
    Submit(NewSeq),
    /// Empty the prefix cache (`POST /reset_prefix_cache`); `done` fires once it is empty.
    ResetPrefixCache(tokio::sync::oneshot::Sender<()>),
    /// Stop the thread.
    Shutdown,
}

/// The modelled cost of steps, in model milliseconds.
#[derive(Debug, Clone, Copy)]
pub struct StepCost {
    /// Fixed cost per step.
    pub base_ms: f64,
    /// Cost per running sequence.
    pub per_seq_ms: f64,
    /// Cost per prefilled token.
    pub prefill_per_token_ms: f64,
}

impl StepCost {
    /// The step costs `cfg` asks for.
    pub fn of(cfg: &SimConfig) -> StepCost {
        StepCost {
            base_ms: cfg.decode_base_ms,
            per_seq_ms: cfg.decode_per_seq_ms,
            prefill_per_token_ms: cfg.prefill_per_token_ms,
        }
    }

    /// Model duration of a step, in milliseconds.
    pub fn step_ms(&self, plan: StepPlan) -> f64 {
        self.base_ms
            + self.per_seq_ms * plan.batch as f64
            + self.prefill_per_token_ms * plan.prefill_tokens as f64
    }
}

/// Multiplicative step-time noise: a slow factor drawn again every `period_ms` of model time
/// (2 s by default; lognormal, median 1, sigma `sigma`) times a per-step jitter (lognormal, sigma `sigma / 4`).
#[derive(Debug)]
pub struct Noise {
    sigma: f64,
    rng: SplitMix64,
    period_ms: f64,
    slow: f64,
    next_resample_ms: f64,
}

impl Noise {
    /// Noise of strength `sigma` (0 = none) whose slow factor lasts `period_ms` of model
    /// time, repeatable with `seed`.
    pub fn new(sigma: f64, period_ms: f64, seed: u64) -> Self {
        Self {
            sigma,
            period_ms,
            rng: SplitMix64::new(seed ^ 0x4e4f_4953_4500_0000),
            slow: 1.0,
            next_resample_ms: 0.0,
        }
    }

    /// The factor for a step starting at `model_now_ms`.
    pub fn factor(&mut self, model_now_ms: f64) -> f64 {
        if self.sigma == 0.0 {
            return 1.0;
        }
        if model_now_ms >= self.next_resample_ms {
            self.slow = (self.sigma * self.rng.normal()).exp();
            self.next_resample_ms = model_now_ms + self.period_ms;
        }
        let jitter = (0.25 * self.sigma * self.rng.normal()).exp();
        (self.slow * jitter).clamp(0.1, 10.0)
    }
}

/// Starts the scheduler thread for `cfg`; it runs until [`SchedulerMessage::Shutdown`].
pub fn spawn(
    cfg: &SimConfig,
    metrics: Arc<SharedMetrics>,
) -> std::io::Result<(Sender<SchedulerMessage>, JoinHandle<()>)> {
    let (tx, rx) = std::sync::mpsc::channel();
    let limits = SchedulerLimits::of(cfg);
    let cost = StepCost::of(cfg);
    let noise = Noise::new(cfg.noise, cfg.noise_period_ms, cfg.seed);
    let time_scale = cfg.time_scale;
    let handle = std::thread::Builder::new()
        .name("sim-scheduler".to_string())
        .spawn(move || {
            let sched = Scheduler::new(limits, Arc::clone(&metrics));
            run(rx, sched, &metrics, cost, noise, time_scale)
        })?;
    Ok((tx, handle))
}

/// The real time one step takes: its modelled `step_ms` times the noise `factor`, divided by
/// the time scale, in nanoseconds.
fn real_step_ns(step_ms: f64, factor: f64, time_scale: f64) -> u64 {
    (step_ms * factor * 1e6 / time_scale) as u64
}

/// Takes one message: a request joins the waiting queue, a reset empties the prefix cache
/// (and says so); `false` for a shutdown.
fn take(sched: &mut Scheduler, m: SchedulerMessage) -> bool {
    match m {
        SchedulerMessage::Submit(seq) => sched.add(seq),
        SchedulerMessage::ResetPrefixCache(done) => {
            sched.reset_prefix_cache();
            let _ = done.send(());
        }
        SchedulerMessage::Shutdown => return false,
    }
    true
}

fn run(
    rx: Receiver<SchedulerMessage>,
    mut sched: Scheduler,
    metrics: &SharedMetrics,
    cost: StepCost,
    mut noise: Noise,
    time_scale: f64,
) {
    let start = now_ns();
    let mut deadline = start;
    loop {
        // idle: wait for a request (a reset meanwhile empties the cache and waits on)
        while sched.is_idle() {
            match rx.recv() {
                Ok(m) => {
                    if !take(&mut sched, m) {
                        return;
                    }
                }
                Err(_) => return,
            }
            if !sched.is_idle() {
                deadline = now_ns();
                metrics.gpu.wake(deadline, time_scale);
            }
        }
        loop {
            match rx.try_recv() {
                Ok(m) => {
                    if !take(&mut sched, m) {
                        return;
                    }
                }
                Err(TryRecvError::Disconnected) => return,
                Err(TryRecvError::Empty) => break,
            }
        }
        let plan = sched.schedule();
        let model_now_ms = (deadline.saturating_sub(start)) as f64 / 1e6 * time_scale;
        let (step_ms, factor) = (cost.step_ms(plan), noise.factor(model_now_ms));
        deadline += real_step_ns(step_ms, factor, time_scale);
        // wait out the step; arrivals meanwhile join the waiting queue for the next one
        loop {
            let now = now_ns();
            if deadline <= now {
                if now - deadline > MAX_LAG_NS {
                    deadline = now - MAX_LAG_NS;
                }
                break;
            }
            match rx.recv_timeout(Duration::from_nanos(deadline - now)) {
                Ok(m) => {
                    if !take(&mut sched, m) {
                        return;
                    }
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return,
            }
        }
        let ended = now_ns();
        sched.finish_step(ended);
        metrics.minutes.stepped(
            crate::wallclock::now(),
            real_step_ns(step_ms, factor, time_scale),
        );
        metrics
            .busy_slot_steps
            .fetch_add(plan.batch as u64, std::sync::atomic::Ordering::Relaxed);
        let watts = crate::sim::gpu::step_power_w(step_ms, step_ms - cost.base_ms);
        metrics
            .gpu
            .step(step_ms * factor, watts, ended, sched.is_idle());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn noise_off_is_exactly_one_and_on_varies_slowly() {
        let mut off = Noise::new(0.0, 2000.0, 1);
        assert_eq!(off.factor(0.0), 1.0);
        let mut on = Noise::new(0.3, 2000.0, 1);
        let periods: Vec<f64> = (0..200)
            .map(|p| {
                let t = p as f64 * 2000.0;
                (0..20).map(|k| on.factor(t + k as f64)).sum::<f64>() / 20.0
            })
            .collect();
        let mean_log = periods.iter().map(|f| f.ln()).sum::<f64>() / 200.0;
        let sd = (periods
            .iter()
            .map(|f| (f.ln() - mean_log).powi(2))
            .sum::<f64>()
            / 200.0)
            .sqrt();
        assert!(mean_log.abs() < 0.08, "{mean_log}");
        assert!((0.2..0.4).contains(&sd), "{sd}");
    }

    #[test]
    fn the_slow_factor_lasts_its_period() {
        // drawn at 0, kept until 250 ms of model time, drawn again from then on
        let mut n = Noise::new(0.3, 250.0, 7);
        n.factor(0.0);
        let first = n.slow;
        n.factor(249.9);
        assert_eq!(n.slow, first);
        n.factor(250.0);
        assert_ne!(n.slow, first);
        assert_eq!(n.next_resample_ms, 500.0);
    }

    #[test]
    fn step_cost_matches_the_formula() {
        let c = StepCost {
            base_ms: 10.0,
            per_seq_ms: 0.12,
            prefill_per_token_ms: 0.02,
        };
        let ms = c.step_ms(StepPlan {
            batch: 100,
            prefill_tokens: 1000,
        });
        assert!((ms - 42.0).abs() < 1e-9);
    }

    /// The time scale divides every step's real duration (how closely the thread keeps to it
    /// on a machine is `cargo bench --bench sim_pacing`'s question, not a test's).
    #[test]
    fn the_time_scale_divides_each_steps_real_time() {
        let cases = [
            // (model ms, noise factor, time scale, real ns)
            (10.12, 1.0, 25.0, 404_800),
            (10.12, 1.0, 1.0, 10_120_000),
            (42.0, 1.5, 10.0, 6_300_000),
            (0.0, 1.0, 20.0, 0),
        ];
        for (ms, factor, scale, want) in cases {
            assert_eq!(
                real_step_ns(ms, factor, scale),
                want,
                "{ms} ms x{factor} /{scale}"
            );
        }
    }
}
