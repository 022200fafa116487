//! Open-loop arrivals: when each request of a rate level is meant to be sent (see
//! `docs/open-loop.md`). A [`LoadShape`] says how the request rate changes over time (a fixed
//! rate, steps, a ramp); an [`Arrival`] process says how requests are spread around it
//! (evenly, Poisson, or gamma with vLLM's burstiness). Both are pure: the same seed gives the
//! same intended times, which the engine then waits for.
//!
//! Times are drawn on the shape's cumulative intensity `L(t) = integral of rate` : unit-mean
//! increments `e_i` (1, Exp(1), or Gamma(b, 1/b)) are summed and each sum is mapped back
//! through `L^-1`, so a Poisson process stays Poisson while its rate changes.

use crate::rng::SplitMix64;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// How requests are spread around the rate.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Arrival {
    /// Evenly spaced.
    Constant,
    /// Exponential gaps (a Poisson process): coefficient of variation 1.
    Poisson,
    /// Gamma gaps of shape `burstiness` (vLLM's bench): coefficient of variation
    /// 1 / sqrt(burstiness); 1 is Poisson, below 1 burstier, above 1 more even.
    Gamma { burstiness: f64 },
}

impl Arrival {
    /// Parses `constant`, `poisson` or `gamma` (with its burstiness).
    pub fn parse(kind: &str, burstiness: Option<f64>) -> Result<Arrival, String> {
        match (kind.trim(), burstiness) {
            ("constant", None) => Ok(Arrival::Constant),
            ("poisson", None) => Ok(Arrival::Poisson),
            ("gamma", b) => {
                let b = b.unwrap_or(1.0);
                if b.is_finite() && b > 0.0 {
                    Ok(Arrival::Gamma { burstiness: b })
                } else {
                    Err(format!("--burstiness {b}: must be above 0"))
                }
            }
            ("constant" | "poisson", Some(_)) => {
                Err("--burstiness goes with --arrival gamma".to_string())
            }
            (other, _) => Err(format!(
                "`{other}` is not an arrival process (use constant, poisson or gamma)"
            )),
        }
    }

    /// One unit-mean gap.
    fn gap(&self, rng: &mut SplitMix64) -> f64 {
        match *self {
            Arrival::Constant => 1.0,
            Arrival::Poisson => -(1.0 - rng.next_f64()).ln(),
            Arrival::Gamma { burstiness } => gamma(rng, burstiness) / burstiness,
        }
    }
}

/// A Gamma(shape, 1) draw (Marsaglia and Tsang; shapes below 1 boosted by `U^(1/shape)`).
fn gamma(rng: &mut SplitMix64, shape: f64) -> f64 {
    if shape < 1.0 {
        let u = rng.next_f64().max(f64::MIN_POSITIVE);
        return gamma(rng, shape + 1.0) * u.powf(1.0 / shape);
    }
    let d = shape - 1.0 / 3.0;
    let c = 1.0 / (9.0 * d).sqrt();
    loop {
        let x = rng.normal();
        let v = (1.0 + c * x).powi(3);
        if v <= 0.0 {
            continue;
        }
        let u = rng.next_f64().max(f64::MIN_POSITIVE);
        if u.ln() < 0.5 * x * x + d - d * v + d * v.ln() {
            return d * v;
        }
    }
}

/// How the request rate (requests/s) changes over a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "shape")]
pub enum LoadShape {
    /// A fixed rate, for as many requests as the level sends.
    Rate { rps: f64 },
    /// `rates[0]` for `each`, then `rates[1]` for `each`, ...
    Steps { rates: Vec<f64>, each_s: f64 },
    /// From `from` to `to` requests/s, linearly, over `over_s` seconds.
    Ramp { from: f64, to: f64, over_s: f64 },
    /// A recorded trace sent at its own timestamps divided by `speedup` (`rightsize
    /// replay`): `records` requests over `span_s` seconds. Its times are given, not drawn.
    Replay {
        records: u64,
        span_s: f64,
        speedup: f64,
    },
}

/// The highest rate `--rate`, `--rates` and a schedule's steps take (requests/s).
pub const MAX_RATE: f64 = 1e6;

impl LoadShape {
    /// Parses `--schedule`: `steps:1,2,4,8@60s` or `ramp:0-20rps@10m`.
    pub fn parse_schedule(s: &str) -> Result<LoadShape, String> {
        let bad = |why: &str| {
            format!("--schedule `{s}`: {why} (e.g. steps:1,2,4,8@60s or ramp:0-20rps@10m)")
        };
        let (kind, rest) = s.split_once(':').ok_or_else(|| bad("no shape"))?;
        let (values, dur) = rest.split_once('@').ok_or_else(|| bad("no @DURATION"))?;
        let secs = crate::values::parse_duration(dur)
            .map_err(|e| bad(&e))?
            .as_secs_f64();
        if secs <= 0.0 {
            return Err(bad("the duration must be above zero"));
        }
        // the bounds `--rate` has (0 allowed: a step or a ramp's end may send nothing)
        let rate = |v: &str| -> Result<f64, String> {
            let v = v.trim().trim_end_matches("rps").trim();
            match v.parse::<f64>() {
                Ok(r) if (0.0..=MAX_RATE).contains(&r) => Ok(r),
                Ok(_) => Err(bad(&format!(
                    "rate `{v}` must be between 0 and {MAX_RATE} requests/s"
                ))),
                _ => Err(bad(&format!("`{v}` is not a rate"))),
            }
        };
        let shape = match kind.trim() {
            "steps" => {
                let rates = values
                    .split(',')
                    .map(rate)
                    .collect::<Result<Vec<f64>, String>>()?;
                if rates.iter().all(|r| *r == 0.0) {
                    return Err(bad("every step is 0 requests/s"));
                }
                Ok(LoadShape::Steps {
                    rates,
                    each_s: secs,
                })
            }
            "ramp" => {
                let (a, b) = values.split_once('-').ok_or_else(|| bad("no FROM-TO"))?;
                let (from, to) = (rate(a)?, rate(b)?);
                if from == 0.0 && to == 0.0 {
                    return Err(bad("the ramp never sends"));
                }
                Ok(LoadShape::Ramp {
                    from,
                    to,
                    over_s: secs,
                })
            }
            other => Err(bad(&format!("unknown shape `{other}`"))),
        }?;
        // a schedule's requests are held for the level, as a fixed rate's are
        let n = shape.expected_requests();
        if n > super::bounds::MAX_LEVEL_REQUESTS as f64 {
            return Err(bad(&format!(
                "it would send about {n:.0} requests in one level; at most {}",
                super::bounds::MAX_LEVEL_REQUESTS
            )));
        }
        Ok(shape)
    }

    /// About how many requests a schedule sends: its rate integrated over its length (a
    /// fixed rate and a replay: 0, they are counted elsewhere).
    pub fn expected_requests(&self) -> f64 {
        match self {
            LoadShape::Steps { rates, each_s } => rates.iter().sum::<f64>() * each_s,
            LoadShape::Ramp { from, to, over_s } => (from + to) / 2.0 * over_s,
            LoadShape::Rate { .. } | LoadShape::Replay { .. } => 0.0,
        }
    }

    /// How long the shape lasts (s); `None` for a fixed rate (it lasts as many requests).
    pub fn duration_s(&self) -> Option<f64> {
        match self {
            LoadShape::Rate { .. } => None,
            LoadShape::Steps { rates, each_s } => Some(rates.len() as f64 * each_s),
            LoadShape::Ramp { over_s, .. } => Some(*over_s),
            LoadShape::Replay { span_s, .. } => Some(*span_s),
        }
    }

    /// What a level of this shape is called in messages and tables.
    pub fn label(&self) -> String {
        match self {
            LoadShape::Rate { rps } => format!("{} req/s", crate::values::fmt_rps(*rps)),
            LoadShape::Steps { rates, each_s } => format!(
                "steps {} req/s, {} each",
                rates
                    .iter()
                    .map(|r| crate::values::fmt_rps(*r))
                    .collect::<Vec<_>>()
                    .join(","),
                fmt_secs(*each_s)
            ),
            LoadShape::Ramp { from, to, over_s } => format!(
                "ramp {}-{} req/s over {}",
                crate::values::fmt_rps(*from),
                crate::values::fmt_rps(*to),
                fmt_secs(*over_s)
            ),
            LoadShape::Replay {
                records, speedup, ..
            } => format!("replay of {records} requests at {speedup}x"),
        }
    }

    /// The rate at `t` seconds.
    pub fn rate_at(&self, t: f64) -> f64 {
        match self {
            LoadShape::Rate { rps } => *rps,
            LoadShape::Steps { rates, each_s } => {
                let i = ((t / each_s).floor().max(0.0) as usize).min(rates.len() - 1);
                rates[i]
            }
            LoadShape::Ramp { from, to, over_s } => {
                from + (to - from) * (t / over_s).clamp(0.0, 1.0)
            }
            LoadShape::Replay {
                records, span_s, ..
            } => *records as f64 / span_s.max(1e-3),
        }
    }

    /// The time at which the cumulative intensity reaches `w` (requests), or `None` when the
    /// shape ends first.
    fn time_of(&self, w: f64) -> Option<f64> {
        match self {
            LoadShape::Rate { rps } => (*rps > 0.0).then(|| w / rps),
            LoadShape::Steps { rates, each_s } => {
                let mut left = w;
                for (i, r) in rates.iter().enumerate() {
                    let step = r * each_s;
                    if left <= step && *r > 0.0 {
                        return Some(i as f64 * each_s + left / r);
                    }
                    left -= step;
                }
                None
            }
            LoadShape::Ramp { from, to, over_s } => {
                // L(t) = from t + (to - from) t^2 / (2 T), for t in [0, T]
                let a = (to - from) / (2.0 * over_s);
                let t = if a.abs() < 1e-12 {
                    w / from
                } else {
                    (-from + (from * from + 4.0 * a * w).sqrt()) / (2.0 * a)
                };
                (t.is_finite() && t <= *over_s).then_some(t)
            }
            LoadShape::Replay { .. } => None,
        }
    }
}

/// `90s`, `10m`, `1.5h`: a duration as the flags take it.
fn fmt_secs(s: f64) -> String {
    if s >= 3600.0 && s % 360.0 == 0.0 {
        format!("{}h", s / 3600.0)
    } else if s >= 60.0 && s % 60.0 == 0.0 {
        format!("{}m", s / 60.0)
    } else {
        format!("{s}s")
    }
}

/// Requests an open-loop level keeps in flight at most unless `--max-in-flight` says
/// otherwise (`none` lifts the cap). Each request in flight holds a connection and its buffers
/// (about 70 KB against the built-in simulator, both ends counted), so an endpoint that falls
/// behind a high rate cannot make the client hold tens of thousands of them before the
/// saturation watch decides: a 20,000 req/s level peaked at 1.4 GB without a cap (README,
/// "Open-loop memory"). Past it, sends wait for a slot; the wait shows in the schedule lag and
/// the latency from the intended send, and a level stopped there says so (`at_cap`). k6's
/// arrival-rate executors and GuideLLM bound their in-flight requests the same way.
pub const DEFAULT_MAX_IN_FLIGHT: u32 = 2048;

/// How a run's open-loop levels send: the arrival process, a cap on requests in flight (none
/// when `None`), the width of the per-window metrics, and how many requests a fixed-rate level
/// sends: `requests` when given (`-n`), else `rate x level_s`, at least what the plan needs
/// to decide its SLAs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct OpenSettings {
    pub arrival: Arrival,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_in_flight: Option<u32>,
    #[serde(serialize_with = "ser_secs")]
    pub window_s: Duration,
    #[serde(serialize_with = "ser_secs")]
    pub level_s: Duration,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requests: Option<u32>,
}

impl OpenSettings {
    /// Requests a fixed-rate level of `rps` sends (`min` is what the plan needs to decide).
    pub fn rate_requests(&self, rps: f64, min: u64) -> u64 {
        match self.requests {
            Some(n) => u64::from(n),
            None => ((rps * self.level_s.as_secs_f64()).ceil() as u64)
                .max(min)
                .max(16),
        }
    }
}

fn ser_secs<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

impl Default for OpenSettings {
    fn default() -> Self {
        OpenSettings {
            arrival: Arrival::Poisson,
            max_in_flight: Some(DEFAULT_MAX_IN_FLIGHT),
            window_s: Duration::from_secs(10),
            level_s: Duration::from_secs(60),
            requests: None,
        }
    }
}

/// When the requests of a level are meant to go out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Schedule {
    pub shape: LoadShape,
    pub arrival: Arrival,
    pub seed: u64,
}

impl Schedule {
    /// Intended send times (ns since the level's start) of up to `max` requests, in order;
    /// a shape with an end stops there. The first request goes at 0. The engine draws them as
    /// it goes ([`Schedule::iter`]); the tests hold them.
    #[cfg(test)]
    pub fn times(&self, max: u64) -> Vec<u64> {
        self.iter().take(max as usize).collect()
    }

    /// The intended send times (ns since the level's start), in order, drawn one at a time as
    /// they are asked for (the first at 0; a shape with an end stops there): a
    /// long high-rate level holds none of them ahead.
    pub fn iter(&self) -> Times {
        Times {
            shape: self.shape.clone(),
            arrival: self.arrival,
            rng: SplitMix64::new(crate::rng::mix64(self.seed ^ 0xA881_7A15)),
            w: 0.0,
        }
    }

    /// How long the schedule lasts, when its shape has an end.
    pub fn duration(&self) -> Option<Duration> {
        self.shape.duration_s().map(Duration::from_secs_f64)
    }
}

/// A schedule's intended send times (ns since the level's start), in order, drawn as they
/// are used; see [`Schedule::iter`].
#[derive(Debug, Clone)]
pub struct Times {
    shape: LoadShape,
    arrival: Arrival,
    rng: SplitMix64,
    /// The cumulative intensity (requests) of the next time.
    w: f64,
}

impl Iterator for Times {
    type Item = u64;

    fn next(&mut self) -> Option<u64> {
        let t = self.shape.time_of(self.w)?;
        self.w += self.arrival.gap(&mut self.rng);
        Some((t * 1e9).round() as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sched(shape: LoadShape, arrival: Arrival) -> Schedule {
        Schedule {
            shape,
            arrival,
            seed: 7,
        }
    }

    /// Mean gap (s) and coefficient of variation of the gaps.
    fn gaps(times: &[u64]) -> (f64, f64) {
        let g: Vec<f64> = times
            .windows(2)
            .map(|w| (w[1] - w[0]) as f64 / 1e9)
            .collect();
        let n = g.len() as f64;
        let mean = g.iter().sum::<f64>() / n;
        let var = g.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n;
        (mean, var.sqrt() / mean)
    }

    #[test]
    fn processes_have_their_rate_and_dispersion() {
        // 100,000 gaps at 50 req/s: the mean gap within 1 %, the CV within 2 % of theory
        let rate = LoadShape::Rate { rps: 50.0 };
        let cases = [
            (Arrival::Constant, 0.0),
            (Arrival::Poisson, 1.0),
            (Arrival::Gamma { burstiness: 0.5 }, 2f64.sqrt()),
            (Arrival::Gamma { burstiness: 4.0 }, 0.5),
        ];
        for (arrival, cv) in cases {
            let t = sched(rate.clone(), arrival).times(100_001);
            let (mean, got_cv) = gaps(&t);
            assert!((mean - 0.02).abs() < 0.0002, "{arrival:?}: mean gap {mean}");
            assert!(
                (got_cv - cv).abs() <= 0.02 * cv.max(0.01),
                "{arrival:?}: CV {got_cv}"
            );
            // the same seed, the same times
            assert_eq!(t, sched(rate.clone(), arrival).times(100_001));
        }
        // a constant rate is exact: 0, 20 ms, 40 ms, ...
        assert_eq!(
            sched(rate, Arrival::Constant).times(4),
            vec![0, 20_000_000, 40_000_000, 60_000_000]
        );
    }

    #[test]
    fn poisson_counts_pass_a_chi_square_test() {
        // counts per 1 s window at 10 req/s over 2,000 s: Poisson(10). Bins 0-4, 5..=15 one
        // each, 16+; the statistic with 12 degrees of freedom stays under 26.2 (p = 0.01).
        let t = sched(LoadShape::Rate { rps: 10.0 }, Arrival::Poisson).times(20_000);
        let mut counts = vec![0u32; 2000];
        for x in &t {
            let w = (*x / 1_000_000_000) as usize;
            if w < 2000 {
                counts[w] += 1;
            }
        }
        let pmf = |k: u32| {
            (-10.0f64).exp() * 10f64.powi(k as i32) / (1..=k).map(f64::from).product::<f64>()
        };
        let bins: Vec<(u32, u32)> = std::iter::once((0, 4))
            .chain((5..=15).map(|k| (k, k)))
            .chain(std::iter::once((16, 60)))
            .collect();
        let chi: f64 = bins
            .iter()
            .map(|(lo, hi)| {
                let p: f64 = (*lo..=*hi).map(pmf).sum();
                let expected = p * 2000.0;
                let seen = counts.iter().filter(|c| (*lo..=*hi).contains(*c)).count() as f64;
                (seen - expected).powi(2) / expected
            })
            .sum();
        assert!(chi < 26.2, "chi-square {chi}");
    }

    #[test]
    fn shapes_change_the_rate_over_time() {
        // steps 1 then 3 req/s, 10 s each: 10 requests in the first step, 30 in the second
        let steps = LoadShape::parse_schedule("steps:1,3@10s").unwrap();
        let t = sched(steps.clone(), Arrival::Constant).times(1_000);
        assert_eq!(t.len(), 41);
        assert_eq!(t.iter().filter(|x| **x < 10_000_000_000).count(), 10);
        assert_eq!(steps.rate_at(15.0), 3.0);
        // a ramp 0 -> 20 req/s over 10 s sends 101 requests (one at 0), a quarter of them in the
        // first 5 s (L(5) = 25: the 26th is due at 5 s exactly)
        let ramp = LoadShape::parse_schedule("ramp:0-20rps@10s").unwrap();
        let t = sched(ramp, Arrival::Constant).times(1_000);
        assert_eq!(t.len(), 101);
        assert_eq!(t.iter().filter(|x| **x < 5_000_000_000).count(), 25);
        for bad in [
            "steps:1,2",
            "ramp:5@10s",
            "wave:1@1s",
            "steps:0,0@1s",
            "steps:x@1s",
        ] {
            assert!(LoadShape::parse_schedule(bad).is_err(), "{bad}");
        }
        // the bounds --rate has, and a level's request count: refused, never run or cut
        // (`ramp:0-1e20rps@10s` ran until killed; `ramp:0-1e7rps@10s` was cut at 10,000,000
        // requests without a word)
        let e = "(e.g. steps:1,2,4,8@60s or ramp:0-20rps@10m)";
        for (bad, why) in [
            (
                "ramp:0-1e20rps@10s",
                "rate `1e20` must be between 0 and 1000000 requests/s",
            ),
            (
                "steps:1e20@10s",
                "rate `1e20` must be between 0 and 1000000 requests/s",
            ),
            (
                "ramp:0-1e7rps@10s",
                "rate `1e7` must be between 0 and 1000000 requests/s",
            ),
            (
                "ramp:0-1000000rps@60s",
                "it would send about 30000000 requests in one level; at most 10000000",
            ),
            (
                "steps:500000,1000000@10s",
                "it would send about 15000000 requests in one level; at most 10000000",
            ),
        ] {
            assert_eq!(
                LoadShape::parse_schedule(bad).unwrap_err(),
                format!("--schedule `{bad}`: {why} {e}")
            );
        }
        assert!(LoadShape::parse_schedule("steps:100000,900000@10s").is_ok());
        assert_eq!(
            Arrival::parse("gamma", Some(0.0)).unwrap_err(),
            "--burstiness 0: must be above 0"
        );
    }
}
