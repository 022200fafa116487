//! The plain rule's error rates on the coverage benchmark's levels (`docs/search.md`, "Plain
//! verdicts"): for each short level and each percentile SLA, limits put at fixed ratios of
//! the long level's value (what the level "really" measures), and how often the rule calls
//! `fail` where the long value passes (a limit at or above it) or `pass` where it fails (a
//! limit below it). Both the rule alone and the verdict it serves (the level's interval
//! first, the rule where the interval is open) are counted.
//!
//! The limit a level file's interval was computed for is none (the benchmark runs without
//! SLAs), so the interval here is the one around the percentile's estimate; a run with the
//! SLA reads its blocks at the limit instead (a little wider where the values past the limit
//! come in bursts).

use rightsize::metrics::batch::{past_limit, Plain};
use rightsize::record::RequestRecord;
use std::path::Path;

/// Limits as ratios of the long level's value: below 1 the long value fails them, from 1 on
/// it passes.
pub const RATIOS: [f64; 9] = [0.8, 0.9, 0.95, 0.98, 1.0, 1.02, 1.05, 1.1, 1.25];

/// What one statistic's calls added up to over the short levels.
#[derive(Default)]
pub struct Tally {
    /// (levels judged, wrong `fail`s, wrong `pass`es) per ratio, by the rule alone.
    pub rule: Vec<(u32, u32, u32)>,
    /// The same for the verdict: the interval first, the rule where it is open.
    pub verdict: Vec<(u32, u32, u32)>,
    /// Levels the rule decided where the interval was open, per ratio.
    pub decided_open: Vec<u32>,
}

/// The successful measured requests of the one run under `dir`, in start order:
/// (TTFT ms, e2e ms).
pub fn requests_in_order(dir: &Path) -> Vec<(Option<f64>, f64)> {
    let file = find(dir, "requests.jsonl").expect("the run wrote requests.jsonl");
    let text = std::fs::read_to_string(file).expect("requests.jsonl reads");
    let mut recs: Vec<RequestRecord> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("a request record"))
        .filter(|r: &RequestRecord| r.ok() && !r.warmup && !r.cooldown)
        .collect();
    recs.sort_by_key(|r| r.start_ns);
    recs.iter()
        .filter_map(|r| {
            Some((
                r.ttft_ns().map(|t| t as f64 / 1e6),
                r.e2e_ns()? as f64 / 1e6,
            ))
        })
        .collect()
}

fn find(dir: &Path, name: &str) -> Option<std::path::PathBuf> {
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let path = entry.path();
        if path.is_dir() {
            if let Some(found) = find(&path, name) {
                return Some(found);
            }
        } else if path.file_name().is_some_and(|n| n == name) {
            return Some(path);
        }
    }
    None
}

impl Tally {
    pub fn new() -> Self {
        Tally {
            rule: vec![(0, 0, 0); RATIOS.len()],
            verdict: vec![(0, 0, 0); RATIOS.len()],
            decided_open: vec![0; RATIOS.len()],
        }
    }

    /// Judges one short level's `values` (start order, `round` in flight together) whose
    /// `q`-quantile has the 95 % interval `ci`, against limits at each ratio of `truth`.
    pub fn add(
        &mut self,
        values: &[f64],
        q: f64,
        round: u32,
        ci: (Option<f64>, Option<f64>),
        truth: f64,
    ) {
        for (i, ratio) in RATIOS.iter().enumerate() {
            let limit = truth * ratio;
            let passes = truth <= limit;
            let plain = past_limit(values, limit, round).and_then(|p| p.plain(q));
            let by_interval = if ci.1.is_some_and(|hi| hi <= limit) {
                Some(Plain::Below)
            } else if ci.0.is_some_and(|lo| lo > limit) {
                Some(Plain::Above)
            } else {
                None
            };
            if by_interval.is_none() && plain.is_some() {
                self.decided_open[i] += 1;
            }
            let verdict = by_interval.or(plain);
            for (tally, call) in [(&mut self.rule[i], plain), (&mut self.verdict[i], verdict)] {
                tally.0 += 1;
                match call {
                    Some(Plain::Above) if passes => tally.1 += 1,
                    Some(Plain::Below) if !passes => tally.2 += 1,
                    _ => {}
                }
            }
        }
    }

    /// The table: per ratio, the wrong calls of the rule and of the verdict.
    pub fn print(&self, name: &str) {
        println!(
            "\nplain rule, {name}: wrong calls of {} levels per limit",
            self.rule[0].0
        );
        println!(
            "{:>14} {:>16} {:>16} {:>22}",
            "limit / long", "rule: wrong", "verdict: wrong", "decided where open"
        );
        for (i, ratio) in RATIOS.iter().enumerate() {
            let word = if *ratio < 1.0 { "pass" } else { "fail" };
            let (n, f, p) = self.rule[i];
            let (_, vf, vp) = self.verdict[i];
            println!(
                "{ratio:>14.2} {:>11} {word} {:>11} {word} {:>22}",
                f + p,
                vf + vp,
                self.decided_open[i]
            );
            let _ = n;
        }
        let worst = |pick: fn(&(u32, u32, u32)) -> u32, rows: &[(u32, u32, u32)]| {
            rows.iter()
                .map(|r| pick(r) as f64 / r.0.max(1) as f64)
                .fold(0.0, f64::max)
        };
        println!(
            "worst over the limits: rule {:.1} % wrong fails, {:.1} % wrong passes; verdict {:.1} % / {:.1} %",
            100.0 * worst(|r| r.1, &self.rule),
            100.0 * worst(|r| r.2, &self.rule),
            100.0 * worst(|r| r.1, &self.verdict),
            100.0 * worst(|r| r.2, &self.verdict),
        );
    }
}
