//! UTC wall-clock formatting without a date library: RFC 3339 time stamps and sortable run ids.
//! Wall time is for labels only; measurements use the monotonic clock ([`crate::clock`]).

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
}
