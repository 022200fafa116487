//! UTC wall-clock time without a date library: the clock labels read ([`now`], which tests
//! can start at a set time), RFC 3339 time stamps read and written, and sortable run ids.
//! Written here rather than taken from a date crate: the tree has none, and these few
//! formats are all the tool reads or writes. Wall time is for labels only; measurements use
//! the monotonic clock ([`crate::clock`]).

use std::time::{SystemTime, UNIX_EPOCH};

/// The proleptic Gregorian (year, month 1-12, day 1-31) of `days` since 1970-01-01
/// (Howard Hinnant's `civil_from_days`).
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097); // [0, 146096]
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365; // [0, 399]
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100); // [0, 365]
    let mp = (5 * doy + 2) / 153; // [0, 11], March-based
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// UTC calendar fields of `t`: (year, month, day, hour, minute, second, millisecond).
/// Times before 1970 are clamped to the epoch.
fn utc_fields(t: SystemTime) -> (i64, u32, u32, u32, u32, u32, u32) {
    let since = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = since.as_secs() as i64;
    let (y, mo, d) = civil_from_days(secs.div_euclid(86_400));
    let sod = secs.rem_euclid(86_400) as u32;
    (
        y,
        mo,
        d,
        sod / 3600,
        sod / 60 % 60,
        sod % 60,
        since.subsec_millis(),
    )
}

/// RFC 3339 UTC time stamp with milliseconds, e.g. `2026-11-29T08:30:12.345Z`.
pub fn rfc3339_utc(t: SystemTime) -> String {
    let (y, mo, d, h, mi, s, ms) = utc_fields(t);
    format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{ms:03}Z")
}

/// A run id that sorts by time: `20261129-083012-sweep` (UTC). `kind` is reduced to
/// lowercase ASCII letters, digits, `-` and `_`.
pub fn new_run_id(kind: &str, now: SystemTime) -> String {
    let (y, mo, d, h, mi, s, _) = utc_fields(now);
    let kind: String = kind
        .chars()
        .map(|c| c.to_ascii_lowercase())
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
        .collect();
    let stamp = format!("{y:04}{mo:02}{d:02}-{h:02}{mi:02}{s:02}");
    if kind.is_empty() {
        stamp
    } else {
        format!("{stamp}-{kind}")
    }
}

/// The environment variable that sets the wall clock's start: an RFC 3339 UTC time.
pub const NOW_VAR: &str = "RIGHTSIZE_NOW";

/// The wall clock every label reads (run ids, `started_at`, `ended_at`, the simulator's
/// stamps). It is the system's, unless `RIGHTSIZE_NOW` holds an RFC 3339 time
/// (`2026-11-29T08:30:12Z`): then the clock starts there at the process's first look and
/// runs on with the monotonic clock, so runs made in a row get known, distinct ids (the tests
/// use it instead of sleeping past a second). A value that does not parse is said once, on
/// stderr, and the system clock is used.
pub fn now() -> SystemTime {
    use std::sync::OnceLock;
    use std::time::{Duration, Instant};
    static START: OnceLock<Option<(SystemTime, Instant)>> = OnceLock::new();
    let start = START.get_or_init(|| {
        let set = std::env::var(NOW_VAR).ok()?;
        match parse_ms(&set) {
            Ok(ms) if ms >= 0.0 => Some((
                UNIX_EPOCH + Duration::from_secs_f64(ms / 1e3),
                Instant::now(),
            )),
            Ok(_) => {
                eprintln!("{NOW_VAR}: `{set}` is before 1970; using the system clock");
                None
            }
            Err(e) => {
                eprintln!("{NOW_VAR}: {e}; using the system clock");
                None
            }
        }
    });
    match start {
        Some((at, mono)) => *at + mono.elapsed(),
        None => SystemTime::now(),
    }
}

/// Milliseconds since 1970-01-01T00:00:00Z of `s`, or why it is not a date-time.
pub fn parse_ms(s: &str) -> Result<f64, String> {
    let bad = |why: &str| format!("`{s}` is not an ISO 8601 UTC time ({why})");
    let b = s.trim().as_bytes();
    if b.len() < 19 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return Err(bad("expected YYYY-MM-DDThh:mm:ss"));
    }
    if b[13] != b':' || b[16] != b':' {
        return Err(bad("expected YYYY-MM-DDThh:mm:ss"));
    }
    let num = |from: usize, to: usize| -> Result<i64, String> {
        let part = &b[from..to];
        if part.iter().all(u8::is_ascii_digit) {
            Ok(part.iter().fold(0i64, |n, d| n * 10 + i64::from(d - b'0')))
        } else {
            Err(bad("a field is not a number"))
        }
    };
    let (year, month, day) = (num(0, 4)?, num(5, 7)?, num(8, 10)?);
    let (hour, minute, second) = (num(11, 13)?, num(14, 16)?, num(17, 19)?);
    if !(1..=12).contains(&month) || day < 1 || day > days_in_month(year, month) {
        return Err(bad("no such date"));
    }
    if hour > 23 || minute > 59 || second > 60 {
        return Err(bad("no such time of day"));
    }
    let mut rest = &b[19..];
    let mut fraction_ms = 0.0;
    if let Some((b'.' | b',', tail)) = rest.split_first() {
        let digits = tail.iter().take_while(|c| c.is_ascii_digit()).count();
        if digits == 0 {
            return Err(bad("no digits after the decimal point"));
        }
        let mut scale = 100.0;
        for d in &tail[..digits] {
            fraction_ms += f64::from(d - b'0') * scale;
            scale /= 10.0;
        }
        rest = &tail[digits..];
    }
    let offset_min = match rest {
        b"Z" | b"z" => 0,
        [sign @ (b'+' | b'-'), h1, h2, b':', m1, m2] | [sign @ (b'+' | b'-'), h1, h2, m1, m2] => {
            let digits = [*h1, *h2, *m1, *m2];
            if !digits.iter().all(u8::is_ascii_digit) {
                return Err(bad("the offset is not +hh:mm"));
            }
            let v = |a: u8, c: u8| i64::from(a - b'0') * 10 + i64::from(c - b'0');
            let m = v(digits[0], digits[1]) * 60 + v(digits[2], digits[3]);
            if *sign == b'-' {
                -m
            } else {
                m
            }
        }
        [] => return Err(bad("no time zone: end it with Z")),
        _ => return Err(bad("unexpected text after the seconds")),
    };
    let days = days_from_civil(year, month, day);
    let secs = days * 86_400 + hour * 3600 + minute * 60 + second - offset_min * 60;
    Ok(secs as f64 * 1e3 + fraction_ms)
}

fn is_leap(y: i64) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        2 if is_leap(y) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// `ms` since the epoch as `2024-05-01T12:00:03.250Z` (milliseconds shown when not whole
/// seconds): how `rightsize traffic` names a moment of a Data Capture.
pub fn format_ms(ms: f64) -> String {
    let total = ms.floor() as i64;
    let (secs, milli) = (total.div_euclid(1000), total.rem_euclid(1000));
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (y, m, d) = civil_from_days(days);
    let (h, mi, s) = (rem / 3600, rem % 3600 / 60, rem % 60);
    if milli == 0 {
        format!("{y:04}-{m:02}-{d:02}T{h:02}:{mi:02}:{s:02}Z")
    } else {
        format!("{y:04}-{m:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{milli:03}Z")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn civil_from_days_table() {
        let cases = [
            (0, (1970, 1, 1)),
            (-1, (1969, 12, 31)),
            (59, (1970, 3, 1)),
            (10_957, (2000, 1, 1)),
            (11_016, (2000, 2, 29)),
            (11_017, (2000, 3, 1)),
            (19_782, (2024, 2, 29)),
            (20_786, (2026, 11, 29)),
            (47_541, (2100, 3, 1)),
        ];
        for (days, want) in cases {
            assert_eq!(civil_from_days(days), want, "day {days}");
        }
    }

    #[test]
    fn run_ids_and_timestamps() {
        // 2026-11-29 08:30:12.345 UTC
        let t = UNIX_EPOCH + Duration::from_millis(20_786 * 86_400_000 + 30_612_345);
        assert_eq!(new_run_id("sweep", t), "20261129-083012-sweep");
        assert_eq!(new_run_id("SLA Search!", t), "20261129-083012-slasearch");
        assert_eq!(new_run_id("", t), "20261129-083012");
        assert_eq!(rfc3339_utc(t), "2026-11-29T08:30:12.345Z");
        assert_eq!(rfc3339_utc(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
    }

    #[test]
    fn times_parse_to_exact_milliseconds() {
        let table: &[(&str, f64)] = &[
            ("1970-01-01T00:00:00Z", 0.0),
            ("2024-05-01T12:00:03Z", 1_714_564_803_000.0),
            ("2024-05-01T12:00:03.5Z", 1_714_564_803_500.0),
            ("2024-05-01T12:00:03.123456Z", 1_714_564_803_123.456),
            ("2024-05-01T14:00:03+02:00", 1_714_564_803_000.0),
            ("2024-05-01T11:30:03-0030", 1_714_564_803_000.0),
            ("2024-02-29T00:00:00Z", 1_709_164_800_000.0),
            ("2000-03-01T00:00:00z", 951_868_800_000.0),
        ];
        for (s, want) in table {
            let got = parse_ms(s).unwrap();
            assert!((got - want).abs() < 1e-3, "{s}: {got} != {want}");
        }
    }

    #[test]
    fn bad_times_say_why() {
        let table: &[(&str, &str)] = &[
            ("2024-05-01", "expected YYYY-MM-DDThh:mm:ss"),
            ("2024-05-01T12:00:03", "no time zone: end it with Z"),
            ("2023-02-29T00:00:00Z", "no such date"),
            ("2024-05-01T24:00:00Z", "no such time of day"),
            ("2024-05-01T12:00:03.Z", "no digits after the decimal point"),
            (
                "2024-05-01T12:00:03 UTC",
                "unexpected text after the seconds",
            ),
            ("2024-O5-01T12:00:03Z", "a field is not a number"),
        ];
        for (s, why) in table {
            assert_eq!(
                parse_ms(s).unwrap_err(),
                format!("`{s}` is not an ISO 8601 UTC time ({why})")
            );
        }
    }

    #[test]
    fn formats_round_trip() {
        for s in [
            "2024-05-01T12:00:03Z",
            "2024-05-01T12:00:03.250Z",
            "1999-12-31T23:59:59Z",
            "2024-02-29T08:07:06Z",
        ] {
            assert_eq!(format_ms(parse_ms(s).unwrap()), s);
        }
    }
}
