//! What the imports of other tools' results share once a file is parsed: a metric's summary
//! as [`Stats`] from whatever statistics the file gives (a missing percentile interpolated
//! between its neighbours and said in the notes), the percentiles of per-request values as
//! numpy computes them, time stamps, and error classes.

use std::collections::BTreeMap;
use std::time::{Duration, UNIX_EPOCH};

use crate::metrics::{ErrorDetails, ErrorSummaryEntry, Stats};
use crate::record::ErrorKind;
use crate::wallclock::rfc3339_utc;

/// The percentiles a [`Stats`] carries, by rank (0 = min and 100 = max are anchors).
pub const RANKS: [(&str, f64); 9] = [
    ("p1", 1.0),
    ("p5", 5.0),
    ("p10", 10.0),
    ("p25", 25.0),
    ("p50", 50.0),
    ("p75", 75.0),
    ("p90", 90.0),
    ("p95", 95.0),
    ("p99", 99.0),
];

/// A metric as [`Stats`] from `get`, which answers our field names (`avg`, `min`, `max`,
/// `std`, `count`, `p1` .. `p99`) in `unit`; `None` when it knows no value at all. A missing
/// percentile is interpolated between the known ones (min and max as the ends; a missing min
/// or max is the nearest known value), a missing `avg` is the p50, a missing `std` 0, a
/// missing `count` is `count`: what was filled in is said once in `notes`, under `name`.
pub fn stats_from(
    name: &str,
    unit: &str,
    get: impl Fn(&str) -> Option<f64>,
    count: u64,
    notes: &mut Vec<String>,
) -> Option<Stats> {
    let get = |k: &str| get(k).filter(|x| x.is_finite());
    let mut known: Vec<(f64, f64)> = RANKS
        .iter()
        .filter_map(|(k, r)| Some((*r, get(k)?)))
        .collect();
    let avg = get("avg");
    if known.is_empty() && avg.is_none() && get("min").is_none() && get("max").is_none() {
        return None;
    }
    let min = get("min")
        .or_else(|| known.first().map(|k| k.1))
        .or(avg)
        .or_else(|| get("max"))?;
    let max = get("max")
        .or_else(|| known.last().map(|k| k.1))
        .or(avg)
        .unwrap_or(min);
    let mut filled: Vec<String> = ["min", "max"]
        .into_iter()
        .filter(|k| get(k).is_none())
        .map(String::from)
        .collect();
    known.insert(0, (0.0, min));
    known.push((100.0, max));
    let mut at = |key: &str, rank: f64| -> f64 {
        if let Some(v) = get(key) {
            return v;
        }
        filled.push(key.to_string());
        let hi = known
            .iter()
            .position(|(r, _)| *r > rank)
            .unwrap_or(known.len() - 1);
        let (r0, v0) = known[hi.saturating_sub(1)];
        let (r1, v1) = known[hi];
        if r1 > r0 {
            v0 + (v1 - v0) * (rank - r0) / (r1 - r0)
        } else {
            v0
        }
    };
    let p = RANKS.map(|(k, r)| at(k, r));
    let avg = avg.unwrap_or_else(|| {
        filled.push("avg".into());
        p[4]
    });
    let std = get("std").unwrap_or_else(|| {
        filled.push("std".into());
        0.0
    });
    let count = get("count").map(|c| c as u64).unwrap_or_else(|| {
        filled.push("count".into());
        count
    });
    if !filled.is_empty() {
        notes.push(format!("{name}: {} not in the export", filled.join(", ")));
    }
    Some(Stats {
        unit: unit.to_string(),
        avg,
        min,
        max,
        p1: p[0],
        p5: p[1],
        p10: p[2],
        p25: p[3],
        p50: p[4],
        p75: p[5],
        p90: p[6],
        p95: p[7],
        p99: p[8],
        std,
        count,
        ci95: None,
        past_limit: None,
    })
}

/// Per-request values of one metric, answering [`stats_from`]'s names as numpy would:
/// `np.percentile` (linear between closest ranks), `np.mean`, `np.std` (ddof 0).
#[derive(Debug, Clone, PartialEq)]
pub struct Sample(Vec<f64>);

impl Sample {
    /// The finite values of `values`, sorted; `None` when none is.
    pub fn new(values: impl IntoIterator<Item = f64>) -> Option<Sample> {
        let mut v: Vec<f64> = values.into_iter().filter(|x| x.is_finite()).collect();
        if v.is_empty() {
            return None;
        }
        v.sort_by(f64::total_cmp);
        Some(Sample(v))
    }

    /// `np.percentile(values, q)`.
    pub fn percentile(&self, q: f64) -> f64 {
        let v = &self.0;
        let pos = q / 100.0 * (v.len() - 1) as f64;
        let lo = pos.floor() as usize;
        let hi = pos.ceil() as usize;
        v[lo] + (v[hi] - v[lo]) * (pos - lo as f64)
    }

    /// The value of one of [`stats_from`]'s names.
    pub fn get(&self, key: &str) -> Option<f64> {
        let v = &self.0;
        let n = v.len() as f64;
        let mean = v.iter().sum::<f64>() / n;
        Some(match key {
            "avg" => mean,
            "min" => v[0],
            "max" => v[v.len() - 1],
            "count" => n,
            "std" => (v.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n).sqrt(),
            _ => self.percentile(key.strip_prefix('p')?.parse().ok()?),
        })
    }
}

/// A time stamp as RFC 3339: strings are kept; numbers are read as epoch seconds, ms, µs or ns
/// by their size.
pub fn time_text(v: &serde_json::Value) -> String {
    if let Some(s) = v.as_str() {
        return s.to_string();
    }
    let Some(x) = v.as_f64().filter(|x| x.is_finite() && *x > 0.0) else {
        return String::new();
    };
    let secs = if x > 1e17 {
        x / 1e9
    } else if x > 1e14 {
        x / 1e6
    } else if x > 1e11 {
        x / 1e3
    } else {
        x
    };
    rfc3339_utc(UNIX_EPOCH + Duration::from_secs_f64(secs))
}

/// The class of an error another tool named `kind` (an exception or class name), with its
/// HTTP status if any.
pub fn error_kind(kind: &str, code: Option<u16>) -> Option<ErrorKind> {
    let lower = kind.to_ascii_lowercase();
    ErrorKind::ALL
        .into_iter()
        .find(|k| k.as_str() == lower)
        .or_else(|| lower.contains("timeout").then_some(ErrorKind::Timeout))
        .or_else(|| lower.contains("cancel").then_some(ErrorKind::Cancelled))
        .or_else(|| lower.contains("connect").then_some(ErrorKind::Connect))
        .or_else(|| code.map(|_| ErrorKind::HttpStatus))
}

/// A failed request's error text as another tool kept it (an exception's repr such as
/// `HTTPStatusError("Server error '500 Internal Server Error' ...")`, a Python traceback, or
/// an HTTP reason): the exception's name (a traceback's last line's), the HTTP status quoted
/// in it if any, and its first line.
pub fn error_parts(text: &str) -> (String, Option<u16>, String) {
    let line = if text.starts_with("Traceback") {
        text.lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("")
    } else {
        text.lines().next().unwrap_or("")
    };
    let kind = line
        .split(['(', ':'])
        .next()
        .unwrap_or("")
        .trim()
        .to_string();
    let code = line.split('\'').skip(1).find_map(|part| {
        let code = part.get(..3)?.parse::<u16>().ok()?;
        let rest = part.get(3..)?;
        ((100..600).contains(&code) && (rest.is_empty() || rest.starts_with(' '))).then_some(code)
    });
    (kind, code, line.trim().to_string())
}

/// Failed requests' error texts grouped as AIPerf's `error_summary` (by class and status, the
/// first message of each).
pub fn group_errors<'a>(texts: impl IntoIterator<Item = &'a str>) -> Vec<ErrorSummaryEntry> {
    let mut groups: BTreeMap<(String, Option<u16>), ErrorSummaryEntry> = BTreeMap::new();
    for text in texts {
        let (kind, code, message) = error_parts(text);
        groups
            .entry((kind.clone(), code))
            .or_insert_with(|| ErrorSummaryEntry {
                error_details: ErrorDetails {
                    code,
                    kind,
                    message,
                },
                count: 0,
            })
            .count += 1;
    }
    groups.into_values().collect()
}

/// Failed requests by rightsize's error class, from an error summary (entries whose class is
/// not known are left out).
pub fn errors_by_kind(list: &[ErrorSummaryEntry]) -> BTreeMap<ErrorKind, u64> {
    let mut by_kind: BTreeMap<ErrorKind, u64> = BTreeMap::new();
    for e in list {
        if let Some(k) = error_kind(&e.error_details.kind, e.error_details.code) {
            *by_kind.entry(k).or_default() += e.count;
        }
    }
    by_kind
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn missing_percentiles_are_interpolated_and_noted() {
        let obj = json!({"avg": 50.0, "min": 10.0, "max": 110.0, "p50": 50.0, "p90": 90.0,
            "p99": 100.0, "std": 5.0});
        let mut notes = Vec::new();
        let s = stats_from(
            "request_latency",
            "ms",
            |k| obj.get(k)?.as_f64(),
            7,
            &mut notes,
        )
        .unwrap();
        assert_eq!(s.p25, 30.0);
        assert_eq!(s.p95, 90.0 + 10.0 * 5.0 / 9.0);
        assert_eq!(s.p1, 10.0 + 40.0 / 50.0);
        assert_eq!(s.count, 7);
        assert_eq!(
            notes,
            ["request_latency: p1, p5, p10, p25, p75, p95, count not in the export"]
        );
    }

    #[test]
    fn a_sample_answers_as_numpy() {
        // np.percentile([1, 2, 3, 4, 10], [0, 25, 50, 90, 99]) = [1, 2, 3, 7.6, 9.76]; np.std: sqrt(10)
        let s = Sample::new([10.0, 2.0, 4.0, 1.0, 3.0, f64::NAN]).unwrap();
        assert_eq!(s.get("min"), Some(1.0));
        assert_eq!(s.get("p25"), Some(2.0));
        assert_eq!(s.get("p50"), Some(3.0));
        assert!((s.get("p90").unwrap() - 7.6).abs() < 1e-12);
        assert!((s.get("p99").unwrap() - 9.76).abs() < 1e-12);
        assert_eq!(s.get("max"), Some(10.0));
        assert_eq!(s.get("avg"), Some(4.0));
        assert_eq!(s.get("count"), Some(5.0));
        assert_eq!(s.get("std"), Some(10f64.sqrt()));
        assert_eq!(Sample::new([f64::INFINITY]), None);
    }

    #[test]
    fn error_texts() {
        let http = "HTTPStatusError(\"Client error '429 Too Many Requests' for url 'u'\")";
        assert_eq!(error_parts(http).0, "HTTPStatusError");
        assert_eq!(error_parts(http).1, Some(429));
        assert_eq!(
            error_parts("ReadTimeout('')"),
            ("ReadTimeout".into(), None, "ReadTimeout('')".into())
        );
        let tb = "Traceback (most recent call last):\n  File \"x.py\"\naiohttp.ClientConnectorError:                   Cannot connect\n";
        let list = group_errors([tb, tb, "Internal Server Error"]);
        assert_eq!(list.len(), 2);
        assert_eq!(list[0].error_details.kind, "Internal Server Error");
        assert_eq!(list[1].error_details.kind, "aiohttp.ClientConnectorError");
        assert_eq!(list[1].count, 2);
        let by = errors_by_kind(&list);
        assert_eq!(
            by.into_iter().collect::<Vec<_>>(),
            [(ErrorKind::Connect, 2)]
        );
    }

    #[test]
    fn numeric_times_by_magnitude() {
        let ns = json!(1_764_405_012_000_000_000u64);
        assert_eq!(time_text(&ns), "2025-11-29T08:30:12.000Z");
        assert_eq!(
            time_text(&json!(1_764_405_012.0)),
            "2025-11-29T08:30:12.000Z"
        );
        assert_eq!(time_text(&json!("x")), "x");
    }
}
