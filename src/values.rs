//! Values with their own validation (durations, counts, fractions, concurrency lists) and the
//! formatting of a rate: a leaf, used by the TOML file and the flags, the workloads' load
//! shapes and the SLA thresholds alike, so a bad value gets the same message wherever it came
//! from (and, in a file, its line).

use serde::{Deserialize, Deserializer};
use std::time::Duration;

/// `s` as an error message quotes it: whole up to 80 characters, else its first 60 and `…`
/// (a 50 MB value in a config file was quoted whole).
pub fn shown(s: &str) -> std::borrow::Cow<'_, str> {
    const MOST: usize = 80;
    match s.char_indices().nth(MOST) {
        None => s.into(),
        Some(_) => {
            let cut = s.char_indices().nth(60).map_or(s.len(), |(i, _)| i);
            format!("{}…", &s[..cut]).into()
        }
    }
}

/// Parses a duration such as `1.5s`, `800ms`, `2m`, `1h` or `250us`. A bare number is seconds.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let q = shown(s);
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let value: f64 = num
        .parse()
        .map_err(|_| format!("`{q}` is not a duration (use e.g. 800ms, 1.5s, 2m)"))?;
    let secs = match unit.trim() {
        "" | "s" | "sec" | "secs" => value,
        "ms" => value / 1e3,
        "us" | "µs" => value / 1e6,
        "m" | "min" | "mins" => value * 60.0,
        "h" => value * 3600.0,
        other => {
            return Err(format!(
                "`{q}`: unknown unit `{}` (use us, ms, s, m or h)",
                shown(other)
            ))
        }
    };
    if !secs.is_finite() || secs < 0.0 {
        return Err(format!("`{q}` is not a valid duration"));
    }
    if secs > MAX_DURATION.as_secs_f64() {
        return Err(format!("`{q}` is too long (at most 365 days)"));
    }
    Duration::try_from_secs_f64(secs).map_err(|_| format!("`{q}` is not a valid duration"))
}

/// The longest duration any setting takes: a year (a deadline further out than that is a
/// typo, and would overflow the clock's arithmetic for large enough values).
pub const MAX_DURATION: Duration = Duration::from_secs(365 * 24 * 3600);

/// A per-request timeout: a duration above zero.
pub fn parse_timeout(s: &str) -> Result<Duration, String> {
    let q = shown(s);
    let d = parse_duration(s)?;
    if d.is_zero() {
        return Err(format!("`{q}`: a timeout of zero fails every request"));
    }
    Ok(d)
}

/// A length of time above zero that is not a timeout (a metrics window, a level's
/// duration): `what` names it in the message.
pub fn parse_span(s: &str, what: &str) -> Result<Duration, String> {
    let q = shown(s);
    let d = parse_duration(s)?;
    if d.is_zero() {
        return Err(format!("`{q}`: {what} must be longer than zero"));
    }
    Ok(d)
}

/// A timeout in a config file, written as a string (`"10m"`): above zero.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DurationValue(pub Duration);

impl<'de> Deserialize<'de> for DurationValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        parse_timeout(&s)
            .map(DurationValue)
            .map_err(serde::de::Error::custom)
    }
}

/// A count that must be at least 1 (concurrency, request count, tokens).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Positive(pub u32);

impl<'de> Deserialize<'de> for Positive {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = i64::deserialize(d)?;
        check_positive(v)
            .map(Positive)
            .map_err(serde::de::Error::custom)
    }
}

/// Checks a count is in 1..=u32::MAX.
pub fn check_positive(v: i64) -> Result<u32, String> {
    if v < 1 {
        Err(format!("must be at least 1, got {v}"))
    } else if v > u32::MAX as i64 {
        Err(format!("{v} is too large"))
    } else {
        Ok(v as u32)
    }
}

/// A fraction in [0, 1].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fraction(pub f64);

impl<'de> Deserialize<'de> for Fraction {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = f64::deserialize(d)?;
        check_fraction(v)
            .map(Fraction)
            .map_err(serde::de::Error::custom)
    }
}

/// Checks a value is a fraction in [0, 1].
pub fn check_fraction(v: f64) -> Result<f64, String> {
    if (0.0..=1.0).contains(&v) {
        Ok(v)
    } else {
        Err(format!("must be a fraction between 0 and 1, got {v}"))
    }
}

/// Parses a comma-separated concurrency list (`16,64,256`) for clap.
pub fn parse_concurrency_list(s: &str) -> Result<Vec<u32>, String> {
    let mut out = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        out.push(parse_concurrency(part)?);
    }
    if out.is_empty() {
        return Err("give at least one concurrency level, e.g. 16,64,256".into());
    }
    Ok(out)
}

/// clap value parser for one concurrency level.
pub fn parse_concurrency(s: &str) -> Result<u32, String> {
    let q = shown(s);
    let v: i64 = s
        .trim()
        .parse()
        .map_err(|_| format!("`{q}` is not a whole number"))?;
    check_positive(v).map_err(|e| format!("concurrency {e}"))
}

/// clap value parser for counts that must be at least 1.
pub fn parse_positive(s: &str) -> Result<u32, String> {
    let q = shown(s);
    let v: i64 = s
        .trim()
        .parse()
        .map_err(|_| format!("`{q}` is not a whole number"))?;
    check_positive(v)
}

/// clap value parser for fractions.
pub fn parse_fraction(s: &str) -> Result<f64, String> {
    let q = shown(s);
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("`{q}` is not a number"))?;
    check_fraction(v)
}

/// A span of time for people: `12 s`, `1.5 min`, `2.1 h` (seconds up to a minute and a half,
/// minutes up to an hour and a half). The dashboard's time left and the engine's notes say
/// durations with it.
pub fn fmt_duration(s: f64) -> String {
    if s < 90.0 {
        format!("{s:.0} s")
    } else if s < 5400.0 {
        format!("{:.1} min", s / 60.0)
    } else {
        format!("{:.1} h", s / 3600.0)
    }
}

/// A rate as the flags take it: `2`, `0.5`, `12.25` (no trailing zeros).
pub fn fmt_rps(rps: f64) -> String {
    let s = format!("{rps:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// `v` scaled to its SI prefix from a thousand up, and the prefix: `(73.0, "k")` for 73,000,
/// `(850.0, "")` for 850.
pub fn si_prefix(v: f64) -> (f64, &'static str) {
    let a = v.abs();
    if a >= 1e9 {
        (v / 1e9, "G")
    } else if a >= 1e6 {
        (v / 1e6, "M")
    } else if a >= 1e3 {
        (v / 1e3, "k")
    } else {
        (v, "")
    }
}

/// A figure people read (tokens/s, cost, an instance's capacity) to three significant
/// digits, SI style from a thousand up: `0.0150`, `2.22`, `22.2`, `222`, `1.23k`, `73.0k`,
/// `123k`, `1.50M`. Every surface shows these figures through this one function, so a
/// number reads the same in the table, the dashboard, the report and the charts; CSV and
/// JSON keep full precision.
pub fn sig3(v: f64) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    if v == 0.0 {
        return "0".into();
    }
    // round to three significant digits first, so 999.6 becomes 1.00k, not 1000
    let mag = v.abs().log10().floor() as i32;
    let step = 10f64.powi(mag - 2);
    let r = (v / step).round() * step;
    let (scaled, unit) = si_prefix(r);
    let m = scaled.abs().log10().floor() as i32;
    let digits = (2 - m).max(0) as usize;
    format!("{scaled:.digits$}{unit}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_value_is_quoted_by_its_start() {
        let long = "a".repeat(50_000_000);
        let e = parse_duration(&long).unwrap_err();
        assert_eq!(
            e,
            format!(
                "`{}…` is not a duration (use e.g. 800ms, 1.5s, 2m)",
                "a".repeat(60)
            )
        );
        let e = parse_duration(&format!("1{long}")).unwrap_err();
        assert!(e.len() < 200, "{} bytes", e.len());
        assert_eq!(shown("800ms"), "800ms");
        assert_eq!(shown(&"é".repeat(80)), "é".repeat(80));
        assert_eq!(shown(&"é".repeat(81)), format!("{}…", "é".repeat(60)));
    }

    #[test]
    fn three_significant_digits() {
        for (v, want) in [
            (0.015, "0.0150"),
            (0.01549, "0.0155"),
            (2.2222, "2.22"),
            (22.24, "22.2"),
            (221.5, "222"),
            (999.6, "1.00k"),
            (1234.0, "1.23k"),
            (73004.2, "73.0k"),
            (123_456.0, "123k"),
            (1_499_999.0, "1.50M"),
            (0.0, "0"),
            (-2.5, "-2.50"),
        ] {
            assert_eq!(sig3(v), want, "{v}");
        }
    }

    #[test]
    fn spans_are_said_in_seconds_minutes_or_hours() {
        for (s, want) in [
            (0.4, "0 s"),
            (42.0, "42 s"),
            (89.4, "89 s"),
            (90.0, "1.5 min"),
            (5399.0, "90.0 min"),
            (5400.0, "1.5 h"),
            (7200.0, "2.0 h"),
        ] {
            assert_eq!(fmt_duration(s), want, "{s}");
        }
    }

    #[test]
    fn durations_table() {
        let ok: &[(&str, f64)] = &[
            ("1.5s", 1.5),
            ("800ms", 0.8),
            ("2m", 120.0),
            ("1h", 3600.0),
            ("250us", 0.00025),
            ("30", 30.0),
            (" 10 s", 10.0),
        ];
        for (s, want) in ok {
            let got = parse_duration(s).unwrap().as_secs_f64();
            assert!((got - want).abs() < 1e-9, "{s}: {got}");
        }
        for bad in ["", "fast", "10 parsecs", "-1s", "1..5s"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
        assert_eq!(
            parse_duration("3d").unwrap_err(),
            "`3d`: unknown unit `d` (use us, ms, s, m or h)"
        );
    }

    #[test]
    fn concurrency_lists_table() {
        assert_eq!(
            parse_concurrency_list("16,64, 256").unwrap(),
            vec![16, 64, 256]
        );
        assert_eq!(
            parse_concurrency_list("16,0").unwrap_err(),
            "concurrency must be at least 1, got 0"
        );
        assert_eq!(
            parse_concurrency_list("-4").unwrap_err(),
            "concurrency must be at least 1, got -4"
        );
        assert_eq!(
            parse_concurrency_list("x").unwrap_err(),
            "`x` is not a whole number"
        );
        assert!(parse_concurrency_list(" , ").is_err());
    }

    #[test]
    fn fractions_and_positives() {
        assert_eq!(parse_fraction("0.25").unwrap(), 0.25);
        assert!(parse_fraction("1.5").is_err());
        assert_eq!(parse_positive("7").unwrap(), 7);
        assert!(parse_positive("0").is_err());
    }
}
