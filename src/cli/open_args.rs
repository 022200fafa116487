//! Open-loop flags (`docs/open-loop.md`): how rate levels, schedules and replays send
//! (shared by `sweep`, `search --by rate` and `replay`), and the parsers for `--rates` and
//! `--rate`.

use crate::launch::OpenChoice;
use crate::workload::arrivals::MAX_RATE;
use crate::workload::arrivals::{Arrival, LoadShape, OpenSettings};
use clap::{Args, ValueEnum};
use std::time::Duration;

/// `--arrival` values.
#[derive(Debug, Clone, Copy, PartialEq, ValueEnum)]
pub enum ArrivalArg {
    /// Evenly spaced sends
    Constant,
    /// A Poisson process (exponential gaps)
    Poisson,
    /// Gamma gaps, burstier or more even than Poisson as --burstiness says
    Gamma,
}

/// How open-loop levels send.
#[derive(Debug, Clone, Default, Args)]
pub struct OpenLoopArgs {
    /// Open loop: how sends are spread around the rate (default poisson); seeded by --seed
    #[arg(long, value_enum, value_name = "PROCESS")]
    pub arrival: Option<ArrivalArg>,
    /// With --arrival gamma: the shape of the gaps as vLLM's bench defines it (1 is Poisson,
    /// below 1 burstier, above 1 more even)
    #[arg(long, value_name = "B")]
    pub burstiness: Option<f64>,
    /// Open loop: never more than N requests in flight (default 2048, `none` for no cap);
    /// later sends wait for a free slot (the schedule lag and the latency from the intended
    /// send then show the wait)
    #[arg(long, value_name = "N|none", value_parser = max_in_flight_arg)]
    pub max_in_flight: Option<InFlightCap>,
    /// Open loop: width of the per-window metrics of schedules and replays, e.g. 10s
    #[arg(long, value_name = "DURATION", value_parser = window_arg)]
    pub window: Option<Duration>,
    /// Open loop: how long a fixed-rate level sends when -n is not given (rate x this many
    /// requests, at least what the SLAs need), e.g. 60s
    #[arg(long, value_name = "DURATION", value_parser = level_duration_arg)]
    pub level_duration: Option<Duration>,
}

impl OpenLoopArgs {
    /// The settings these flags ask for.
    pub fn settings(&self) -> Result<OpenSettings, String> {
        let kind = match self.arrival {
            None | Some(ArrivalArg::Poisson) => "poisson",
            Some(ArrivalArg::Constant) => "constant",
            Some(ArrivalArg::Gamma) => "gamma",
        };
        if self.arrival.is_none() && self.burstiness.is_some() {
            return Err("--burstiness goes with --arrival gamma".into());
        }
        let d = OpenSettings::default();
        Ok(OpenSettings {
            arrival: Arrival::parse(kind, self.burstiness)?,
            max_in_flight: match self.max_in_flight {
                None => d.max_in_flight,
                Some(InFlightCap::None) => None,
                Some(InFlightCap::At(n)) => Some(n),
            },
            window_s: self.window.unwrap_or(d.window_s),
            level_s: self.level_duration.unwrap_or(d.level_s),
            requests: None,
        })
    }

    /// Whether any flag of the group was given (they need an open-loop plan).
    pub fn given(&self) -> bool {
        self.arrival.is_some()
            || self.burstiness.is_some()
            || self.max_in_flight.is_some()
            || self.window.is_some()
            || self.level_duration.is_some()
    }
}

/// `--max-in-flight`: a number of requests, or `none` for no cap.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum InFlightCap {
    None,
    At(u32),
}

/// clap value parser for `--max-in-flight`.
fn max_in_flight_arg(s: &str) -> Result<InFlightCap, String> {
    if s.trim().eq_ignore_ascii_case("none") {
        return Ok(InFlightCap::None);
    }
    crate::values::parse_positive(s)
        .map(InFlightCap::At)
        .map_err(|e| format!("{e} (or `none` for no cap)"))
}

/// clap value parser for `--window`.
fn window_arg(s: &str) -> Result<Duration, String> {
    crate::values::parse_span(s, "a metrics window")
}

/// clap value parser for `--level-duration`.
fn level_duration_arg(s: &str) -> Result<Duration, String> {
    crate::values::parse_span(s, "a level's duration")
}

/// How many rates `--rates auto` spreads by default.
pub const AUTO_RATES: u32 = 8;
/// The concurrency of `--rates auto`'s saturated level by default.
pub const AUTO_SATURATE: u32 = 512;

/// A request rate: a positive number of requests per second (`2`, `0.5`, `12rps`).
pub fn parse_rate(s: &str) -> Result<f64, String> {
    let t = s
        .trim()
        .trim_end_matches("rps")
        .trim_end_matches("/s")
        .trim();
    match t.parse::<f64>() {
        Ok(r) if (0.01..=MAX_RATE).contains(&r) => Ok((r * 100.0).round() / 100.0),
        Ok(_) => Err(format!(
            "rate `{s}` must be between 0.01 and {MAX_RATE} requests/s"
        )),
        Err(_) => Err(format!(
            "`{s}` is not a rate in requests/s (e.g. 2, 0.5, 12rps)"
        )),
    }
}

/// `--rates`: `1,2,4,8` (requests/s), `auto` or `auto:N` (see [`OpenChoice::AutoRates`]).
pub fn parse_rates(s: &str) -> Result<OpenChoice, String> {
    let t = s.trim();
    if let Some(rest) = t.strip_prefix("auto") {
        let count = match rest.strip_prefix(':') {
            None if rest.is_empty() => AUTO_RATES,
            Some(n) => match n.trim().parse::<u32>() {
                Ok(n) if (1..=64).contains(&n) => n,
                _ => return Err(format!("--rates {s}: auto:N takes 1 to 64 rates")),
            },
            None => return Err(format!("--rates {s}: write auto or auto:N")),
        };
        return Ok(OpenChoice::AutoRates {
            count,
            saturate: AUTO_SATURATE,
        });
    }
    let mut rates = Vec::new();
    for part in t.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let r = parse_rate(part).map_err(|e| format!("--rates: {e}"))?;
        if rates.contains(&r) {
            return Err(format!(
                "--rates lists {r} more than once; each rate runs once (remove the repeat)"
            ));
        }
        rates.push(r);
    }
    if rates.is_empty() {
        return Err("--rates: give rates in requests/s, e.g. 1,2,4,8, or auto".into());
    }
    Ok(OpenChoice::Rates(rates))
}

/// `--schedule`: `steps:1,2,4,8@60s` or `ramp:0-20rps@10m`.
pub fn parse_schedule(s: &str) -> Result<LoadShape, String> {
    LoadShape::parse_schedule(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_table() {
        assert_eq!(
            parse_rates("1,2, 4,8").unwrap(),
            OpenChoice::Rates(vec![1.0, 2.0, 4.0, 8.0])
        );
        assert_eq!(
            parse_rates("0.5,12rps").unwrap(),
            OpenChoice::Rates(vec![0.5, 12.0])
        );
        assert_eq!(
            parse_rates("auto").unwrap(),
            OpenChoice::AutoRates {
                count: 8,
                saturate: 512
            }
        );
        assert_eq!(
            parse_rates("auto:5").unwrap(),
            OpenChoice::AutoRates {
                count: 5,
                saturate: 512
            }
        );
        assert_eq!(
            parse_rates("auto:0").unwrap_err(),
            "--rates auto:0: auto:N takes 1 to 64 rates"
        );
        assert_eq!(
            parse_rates("1,2,1").unwrap_err(),
            "--rates lists 1 more than once; each rate runs once (remove the repeat)"
        );
        assert_eq!(
            parse_rates("fast").unwrap_err(),
            "--rates: `fast` is not a rate in requests/s (e.g. 2, 0.5, 12rps)"
        );
        assert_eq!(
            parse_rates("0").unwrap_err(),
            "--rates: rate `0` must be between 0.01 and 1000000 requests/s"
        );
        assert!(parse_rates(",").is_err());
        assert_eq!(parse_rate("2.345").unwrap(), 2.35);
    }

    #[test]
    fn settings_table() {
        let a = OpenLoopArgs {
            arrival: Some(ArrivalArg::Gamma),
            burstiness: Some(0.5),
            max_in_flight: Some(InFlightCap::At(4)),
            ..Default::default()
        };
        let s = a.settings().unwrap();
        assert_eq!(s.arrival, Arrival::Gamma { burstiness: 0.5 });
        assert_eq!(s.max_in_flight, Some(4));
        assert_eq!(s.window_s, Duration::from_secs(10));
        let d = OpenLoopArgs::default().settings().unwrap();
        assert_eq!(d.arrival, Arrival::Poisson);
        assert_eq!(d.max_in_flight, Some(2048));
        let none = OpenLoopArgs {
            max_in_flight: Some(InFlightCap::None),
            ..Default::default()
        };
        assert_eq!(none.settings().unwrap().max_in_flight, None);
        assert_eq!(max_in_flight_arg("none"), Ok(InFlightCap::None));
        assert_eq!(max_in_flight_arg(" NONE "), Ok(InFlightCap::None));
        assert_eq!(max_in_flight_arg("300"), Ok(InFlightCap::At(300)));
        assert_eq!(
            max_in_flight_arg("0").unwrap_err(),
            "must be at least 1, got 0 (or `none` for no cap)"
        );
        let bad = OpenLoopArgs {
            burstiness: Some(2.0),
            ..Default::default()
        };
        assert_eq!(
            bad.settings().unwrap_err(),
            "--burstiness goes with --arrival gamma"
        );
        let bad = OpenLoopArgs {
            arrival: Some(ArrivalArg::Constant),
            burstiness: Some(2.0),
            ..Default::default()
        };
        assert_eq!(
            bad.settings().unwrap_err(),
            "--burstiness goes with --arrival gamma"
        );
    }
}
