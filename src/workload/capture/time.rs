//! `eventMetadata.inferenceTime` of a Data Capture record: ISO 8601 / RFC 3339 date-times
//! (`2024-05-01T12:00:03Z`, with fractional seconds, or with a `+hh:mm` offset) read into
//! milliseconds since the Unix epoch, UTC. Written here rather than taken from a date crate:
//! the tree has none, and this is the one format SageMaker writes.

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
/// seconds): how `rightsize traffic` names a moment of the capture.
pub fn format_ms(ms: f64) -> String {
    let total = ms.floor() as i64;
    let (secs, milli) = (total.div_euclid(1000), total.rem_euclid(1000));
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // civil_from_days (Hinnant)
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
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
