//! The traffic a capture or trace holds (`rightsize traffic`, `docs/open-loop.md`, "Your own
//! traffic"): requests per second over time (the peak minute and second, p50/p99 of the
//! per-minute rate, the peak hour), input and output length distributions, concurrency by
//! Little's law where the file holds response times, and what to plan and replay with: the
//! peak minute's rate as `--peak-rps` (rounded up to a hundredth), and the `--speedup` at
//! which a replay of the whole file averages 1.5x and 2x the peak hour's rate.
//!
//! Minutes and seconds are the file's own clock's (a capture's UTC minutes; a trace's
//! milliseconds from its zero), every minute from the first record's to the last's counted,
//! empty ones included. Percentiles are nearest-rank over the exact values (a file is read
//! whole, once).

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::capture;
use super::dataset::{self, DatasetSpec};
use super::tokenizer::Tokenizer;

/// p50, p90, p99 and max of a length (tokens).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Lengths {
    pub count: u64,
    pub p50: u32,
    pub p90: u32,
    pub p99: u32,
    pub max: u32,
}

/// The busiest window of a length (minute, second or hour).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Peak {
    /// Its start, seconds after the first record.
    pub start_s: f64,
    /// Its start as a UTC time, for a capture.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_utc: Option<String>,
    pub requests: u64,
    /// Requests over the window's length (s).
    pub rps: f64,
}

/// What the file says of concurrency.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "source", rename_all = "snake_case")]
pub enum Concurrency {
    /// No response times in the file: nothing to multiply the rate by.
    Absent { why: String },
}

/// What to plan and replay with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Suggested {
    /// The peak minute's rate rounded up to a hundredth: `--peak-rps`.
    pub peak_rps: f64,
    /// `--peak-concurrency` by Little's law; absent without response times.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_concurrency: Option<f64>,
    /// `--speedup` at which a replay of the file averages 1.5x the peak hour's rate.
    pub speedup_1_5x: f64,
    /// ... and 2x.
    pub speedup_2x: f64,
}

/// The traffic of one file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Traffic {
    /// The file, as given.
    pub file: String,
    /// Records with a time (a capture's skipped records included: they were traffic).
    pub requests: u64,
    /// From the first record's time to the last's (s).
    pub span_s: f64,
    /// The first record's time as UTC, for a capture.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_utc: Option<String>,
    /// Minutes counted, first to last.
    pub minutes: u64,
    /// Requests over the minutes counted (req/s).
    pub mean_rps: f64,
    pub peak_minute: Peak,
    pub peak_second: Peak,
    /// The busiest 60 consecutive minutes (all of them when fewer).
    pub peak_hour: Peak,
    /// p50 and p99 of the per-minute rate (req/s).
    pub minute_rps_p50: f64,
    pub minute_rps_p99: f64,
    /// Input tokens of the records that can be sent (the run's tokenizer's count, or the
    /// trace's `input_length`).
    pub input_tokens: Option<Lengths>,
    /// Output tokens: a captured response's, else what the request asked for.
    pub output_tokens: Option<Lengths>,
    pub concurrency: Concurrency,
    pub suggested: Suggested,
}

/// Nearest-rank percentile `q` (0-1) of sorted `v`.
fn rank<T: Copy>(v: &[T], q: f64) -> T {
    let i = ((q * v.len() as f64).ceil() as usize).clamp(1, v.len());
    v[i - 1]
}

fn lengths(mut v: Vec<u32>) -> Option<Lengths> {
    if v.is_empty() {
        return None;
    }
    v.sort_unstable();
    Some(Lengths {
        count: v.len() as u64,
        p50: rank(&v, 0.5),
        p90: rank(&v, 0.9),
        p99: rank(&v, 0.99),
        max: v[v.len() - 1],
    })
}

/// Up to the next hundredth (a peak rate is never planned below what was seen).
fn ceil_hundredth(x: f64) -> f64 {
    // the small epsilon keeps 1.5 from becoming 1.51 through float noise
    ((x * 100.0) - 1e-9).ceil() / 100.0
}

/// Traffic of records at `times_ms` (sorted), their lengths, read from `file`; `utc` when the
/// times are ms since the Unix epoch (a capture).
pub fn analyse(
    file: &str,
    times_ms: &[f64],
    utc: bool,
    inputs: Vec<u32>,
    outputs: Vec<u32>,
) -> Option<Traffic> {
    let (&first, &last) = (times_ms.first()?, times_ms.last()?);
    let bucket = |t: f64, width: f64| (t / width).floor() as i64;
    let utc_of = |ms: f64| utc.then(|| crate::wallclock::format_ms(ms));
    let peak_of = |width_ms: f64| {
        let mut best = (bucket(first, width_ms), 0u64);
        let mut run = (best.0, 0u64);
        for t in times_ms {
            let b = bucket(*t, width_ms);
            if b != run.0 {
                run = (b, 0);
            }
            run.1 += 1;
            if run.1 > best.1 {
                best = run;
            }
        }
        let start = best.0 as f64 * width_ms;
        Peak {
            start_s: ((start - first) / 1e3).max(0.0),
            start_utc: utc_of(start),
            requests: best.1,
            rps: best.1 as f64 / (width_ms / 1e3),
        }
    };
    let (m0, m1) = (bucket(first, 60_000.0), bucket(last, 60_000.0));
    let minutes = (m1 - m0 + 1) as usize;
    let mut per_minute = vec![0u64; minutes];
    for t in times_ms {
        per_minute[(bucket(*t, 60_000.0) - m0) as usize] += 1;
    }
    let hour = minutes.min(60);
    let (mut hour_at, mut hour_best, mut sum) = (0usize, 0u64, 0u64);
    for i in 0..minutes {
        sum += per_minute[i];
        if i >= hour {
            sum -= per_minute[i - hour];
        }
        if i + 1 >= hour && sum > hour_best {
            (hour_at, hour_best) = (i + 1 - hour, sum);
        }
    }
    let hour_start = (m0 + hour_at as i64) as f64 * 60_000.0;
    let peak_hour = Peak {
        start_s: ((hour_start - first) / 1e3).max(0.0),
        start_utc: utc_of(hour_start),
        requests: hour_best,
        rps: hour_best as f64 / (hour as f64 * 60.0),
    };
    let mut rates: Vec<f64> = per_minute.iter().map(|n| *n as f64 / 60.0).collect();
    rates.sort_by(f64::total_cmp);
    let requests = times_ms.len() as u64;
    let mean_rps = requests as f64 / (minutes as f64 * 60.0);
    let peak_minute = peak_of(60_000.0);
    let speedup = |k: f64| ceil_hundredth(k * peak_hour.rps / mean_rps);
    Some(Traffic {
        file: file.to_string(),
        requests,
        span_s: (last - first) / 1e3,
        first_utc: utc_of(first),
        minutes: minutes as u64,
        mean_rps,
        suggested: Suggested {
            peak_rps: ceil_hundredth(peak_minute.rps),
            peak_concurrency: None,
            speedup_1_5x: speedup(1.5),
            speedup_2x: speedup(2.0),
        },
        peak_second: peak_of(1_000.0),
        peak_minute,
        peak_hour,
        minute_rps_p50: rank(&rates, 0.5),
        minute_rps_p99: rank(&rates, 0.99),
        input_tokens: lengths(inputs),
        output_tokens: lengths(outputs),
        concurrency: Concurrency::Absent {
            why: if utc {
                "SageMaker Data Capture records no response times".into()
            } else {
                "the trace records no response times".into()
            },
        },
    })
}

/// The record times (ms, sorted) of a capture or trace, and whether they are UTC.
fn times(path: &Path) -> Result<(Vec<f64>, bool), String> {
    if capture::is_capture(path) {
        let c = capture::read(path).map_err(|e| e.to_string())?;
        return Ok((c.records.iter().map(|r| r.at_ms).collect(), true));
    }
    let ns = super::trace::read_send_times(path, 1.0)?;
    Ok((ns.iter().map(|n| *n as f64 / 1e6).collect(), false))
}

/// The traffic of the capture or trace at `path`, lengths counted with `tok`.
pub fn of_file(path: &Path, tok: &dyn Tokenizer) -> Result<Traffic, String> {
    let (times_ms, utc) = times(path)?;
    let mut spec = DatasetSpec::new(&path.display().to_string());
    let ds = dataset::load(&mut spec, tok).map_err(|e| e.to_string())?;
    let inputs = ds.records.iter().map(|r| r.input_tokens).collect();
    let outputs = ds.records.iter().filter_map(|r| r.output_tokens).collect();
    analyse(&spec.path, &times_ms, utc, inputs, outputs)
        .ok_or_else(|| format!("{}: no records", path.display()))
}

/// `--peak-rps from:FILE`: the suggested peak rate of the capture or trace at `path` (no
/// tokenizer needed: lengths are not read).
pub fn peak_rps_of(path: &Path) -> Result<f64, String> {
    let (times_ms, utc) = times(path)?;
    analyse(
        &path.display().to_string(),
        &times_ms,
        utc,
        Vec::new(),
        Vec::new(),
    )
    .map(|t| t.suggested.peak_rps)
    .ok_or_else(|| format!("{}: no records", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_and_peaks_of_a_small_trace() {
        // minute 0: 3 requests, two in second 1; minute 1: none; minute 2: 6 in second 125
        let mut t = vec![0.0, 1_000.0, 1_500.0];
        t.extend((0..6).map(|i| 125_000.0 + i as f64 * 100.0));
        let got = analyse("t", &t, false, vec![5, 1, 9, 3], vec![2, 2]).unwrap();
        assert_eq!(got.requests, 9);
        assert_eq!(got.minutes, 3);
        assert_eq!(got.span_s, 125.5);
        assert_eq!(got.mean_rps, 9.0 / 180.0);
        assert_eq!(
            got.peak_minute,
            Peak {
                start_s: 120.0,
                start_utc: None,
                requests: 6,
                rps: 0.1
            }
        );
        assert_eq!(
            got.peak_second,
            Peak {
                start_s: 125.0,
                start_utc: None,
                requests: 6,
                rps: 6.0
            }
        );
        assert_eq!(got.peak_hour.requests, 9);
        assert_eq!(got.peak_hour.start_s, 0.0);
        assert_eq!((got.minute_rps_p50, got.minute_rps_p99), (0.05, 0.1));
        assert_eq!(
            got.input_tokens,
            Some(Lengths {
                count: 4,
                p50: 3,
                p90: 9,
                p99: 9,
                max: 9
            })
        );
        assert_eq!(got.output_tokens.map(|l| l.max), Some(2));
        assert_eq!(
            got.suggested,
            Suggested {
                peak_rps: 0.1,
                peak_concurrency: None,
                speedup_1_5x: 1.5,
                speedup_2x: 2.0
            }
        );
    }

    #[test]
    fn the_peak_hour_is_the_busiest_sixty_minutes() {
        // 90 minutes: one request a minute, ten a minute in minutes 40-49
        let mut t = Vec::new();
        for m in 0..90 {
            let n = if (40..50).contains(&m) { 10 } else { 1 };
            t.extend((0..n).map(|i| (m * 60_000 + i * 1_000) as f64));
        }
        let got = analyse("t", &t, true, vec![], vec![]).unwrap();
        assert_eq!(got.requests, 180);
        assert_eq!(got.peak_hour.requests, 150);
        assert_eq!(got.peak_hour.start_s, 0.0);
        assert_eq!(
            got.peak_hour.start_utc.as_deref(),
            Some("1970-01-01T00:00:00Z")
        );
        assert_eq!(
            got.peak_minute.start_utc.as_deref(),
            Some("1970-01-01T00:40:00Z")
        );
        // the file averages 180 / 5400 s; the peak hour 150 / 3600 s: 1.25x the mean
        assert_eq!(got.suggested.speedup_1_5x, 1.88);
        assert_eq!(got.suggested.speedup_2x, 2.5);
        assert_eq!(got.suggested.peak_rps, 0.17);
        assert_eq!(got.input_tokens, None);
    }
}
