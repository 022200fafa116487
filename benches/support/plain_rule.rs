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

/// The factors of the share past the limit tried (`PastLimit::plain_by`); the tool uses
/// `PLAIN_FACTOR`.
pub const FACTORS: [f64; 5] = [1.0, 2.0, 3.0, 5.0, 10.0];

/// What one statistic's calls added up to over the short levels.
#[derive(Default)]
pub struct Tally {
    /// Per factor, per ratio: (levels judged, wrong `fail`s, wrong `pass`es) by the rule alone.
    pub rule: Vec<Vec<(u32, u32, u32)>>,
    /// Per ratio, the same for the verdict: the interval first, the tool's rule where it is
    /// open.
    pub verdict: Vec<(u32, u32, u32)>,
    /// Per ratio, levels the tool's rule decided where the interval was open.
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
            rule: vec![vec![(0, 0, 0); RATIOS.len()]; FACTORS.len()],
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
        // a call: Some(true) above the limit (fail), Some(false) within (pass)
        fn count(tally: &mut (u32, u32, u32), call: Option<bool>, passes: bool) {
            tally.0 += 1;
            match call {
                Some(true) if passes => tally.1 += 1,
                Some(false) if !passes => tally.2 += 1,
                _ => {}
            }
        }
        for (i, ratio) in RATIOS.iter().enumerate() {
            let limit = truth * ratio;
            let passes = truth <= limit;
            let past = past_limit(values, limit, round);
            for (f, factor) in FACTORS.iter().enumerate() {
                let call = past.as_ref().and_then(|p| p.plain_by(q, *factor));
                count(&mut self.rule[f][i], call.map(|Plain::Above| true), passes);
            }
            let plain = past
                .as_ref()
                .and_then(|p| p.plain(q))
                .map(|Plain::Above| true);
            // the interval's pass counts as a call within, its fail as one above
            let by_interval = if ci.1.is_some_and(|hi| hi <= limit) {
                Some(false)
            } else if ci.0.is_some_and(|lo| lo > limit) {
                Some(true)
            } else {
                None
            };
            if by_interval.is_none() && plain.is_some() {
                self.decided_open[i] += 1;
            }
            count(&mut self.verdict[i], by_interval.or(plain), passes);
        }
    }

    /// The tables: per factor and ratio the rule's wrong calls, then the tool's verdict.
    pub fn print(&self, name: &str) {
        let levels = self.verdict[0].0;
        println!(
            "\nplain rule, {name}: wrong calls of {levels} levels, by the limit / the long value"
        );
        print!("{:>22}", "factor \\ limit / long");
        for r in RATIOS {
            print!(" {r:>6.2}");
        }
        println!("   worst fail / pass");
        let worst = |rows: &[(u32, u32, u32)], pick: fn(&(u32, u32, u32)) -> u32| {
            rows.iter()
                .map(|r| pick(r) as f64 / r.0.max(1) as f64)
                .fold(0.0, f64::max)
        };
        let row = |label: String, rows: &[(u32, u32, u32)]| {
            print!("{label:>22}");
            for r in rows {
                print!(" {:>6}", r.1 + r.2);
            }
            println!(
                "   {:.1} % / {:.1} %",
                100.0 * worst(rows, |r| r.1),
                100.0 * worst(rows, |r| r.2)
            );
        };
        for (f, factor) in FACTORS.iter().enumerate() {
            row(format!("rule, factor {factor}"), &self.rule[f]);
        }
        row("verdict (the tool's)".into(), &self.verdict);
        print!("{:>22}", "decided where open");
        for d in &self.decided_open {
            print!(" {d:>6}");
        }
        println!("\n(below 1 a wrong call is a pass, from 1 on a fail)");
    }
}
