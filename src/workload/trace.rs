//! Send times of a trace replay (`rightsize replay`): every record of a JSON-lines trace
//! (Mooncake's `{"timestamp", "input_length", "output_length", "hash_ids"}` or
//! `{"timestamp", "text"}`) carries `timestamp` in milliseconds; the record is sent that long
//! after the first one, divided by the speedup. The prompts come from the same file read as a
//! dataset in file order (`workload::dataset`), so record `i` is request `i`. A SageMaker Data
//! Capture (a file, or a folder of them: `workload::capture`) is timed by each record's
//! `eventMetadata.inferenceTime`, its requests in time order; records it does not send (other
//! content types) have no send time, as the dataset read of it has no record for them.

use std::io::BufRead;
use std::path::Path;

/// Intended send times (ns since the first record), one per record, in file order.
pub fn read_send_times(path: &Path, speedup: f64) -> Result<Vec<u64>, String> {
    if !(speedup.is_finite() && speedup > 0.0) {
        return Err(format!("--speedup {speedup}: must be above 0 (e.g. 1, 10)"));
    }
    if super::capture::is_capture(path) {
        let capture = super::capture::read(path).map_err(|e| e.to_string())?;
        let stamps: Vec<f64> = capture.requests().map(|r| r.at_ms).collect();
        return relative(&stamps, speedup).map_err(|e| format!("{}: {e}", path.display()));
    }
    let name = path.display();
    let file = std::fs::File::open(path).map_err(|e| format!("{name}: {e}"))?;
    let mut stamps: Vec<f64> = Vec::new();
    for (i, line) in std::io::BufReader::new(file).lines().enumerate() {
        let line = line.map_err(|e| format!("{name}: {e}"))?;
        if line.trim().is_empty() {
            continue;
        }
        let at = |why: String| format!("{name} line {}: {why}", i + 1);
        let v: serde_json::Value =
            serde_json::from_str(&line).map_err(|e| at(format!("not JSON ({e})")))?;
        let t = match v.get("timestamp") {
            Some(serde_json::Value::Number(n)) => n.as_f64().unwrap_or(f64::NAN),
            Some(other) => return Err(at(format!("`timestamp` is {other}, not a number of ms"))),
            None => {
                return Err(at(
                    "no `timestamp` (ms): a replay needs one on every record".into(),
                ))
            }
        };
        if !(t.is_finite() && t >= 0.0) {
            return Err(at(format!("timestamp {t} is not a time in ms")));
        }
        if let Some(prev) = stamps.last().filter(|p| t < **p) {
            return Err(at(format!(
                "timestamp {t} is before the previous record's {prev}; a replay sends records \
                 in file order, so sort the trace by timestamp"
            )));
        }
        let first = stamps.first().copied().unwrap_or(t);
        let span_ms = (t - first) / speedup;
        let most_ms = crate::values::MAX_DURATION.as_secs_f64() * 1e3;
        if span_ms > most_ms {
            return Err(at(format!(
                "timestamp {t} is {:.0} days after the first record's (at --speedup {}); a \
                 replay spans at most {:.0} days",
                span_ms / 86_400_000.0,
                crate::values::fmt_rps(speedup),
                most_ms / 86_400_000.0
            )));
        }
        stamps.push(t);
    }
    if stamps.is_empty() {
        return Err(format!("{name}: no records to replay"));
    }
    relative(&stamps, speedup)
}

/// Times in ms (in order) as ns after the first, divided by `speedup`, within the longest
/// span a replay may have.
fn relative(stamps: &[f64], speedup: f64) -> Result<Vec<u64>, String> {
    let first = *stamps.first().ok_or("no records to replay")?;
    let last = stamps.last().copied().unwrap_or(first);
    let most_ms = crate::values::MAX_DURATION.as_secs_f64() * 1e3;
    if (last - first) / speedup > most_ms {
        return Err(format!(
            "the records span {:.0} days (at --speedup {}); a replay spans at most {:.0} days",
            (last - first) / speedup / 86_400_000.0,
            crate::values::fmt_rps(speedup),
            most_ms / 86_400_000.0
        ));
    }
    // the rate the replay offers is bounded as --rate is: records over their span
    let span_s = (last - first) / speedup / 1e3;
    if stamps.len() > 1 && last > first {
        let offered = (stamps.len() - 1) as f64 / span_s;
        let most = super::arrivals::MAX_RATE;
        if offered > most {
            return Err(format!(
                "--speedup {}: the {} records would be offered at {} req/s; at most {} (as \
                 --rate takes: a --speedup of at most {})",
                crate::values::fmt_rps(speedup),
                stamps.len(),
                crate::values::fmt_rps(offered),
                crate::values::fmt_rps(most),
                crate::values::fmt_rps(speedup * most / offered)
            ));
        }
    }
    Ok(stamps
        .iter()
        .map(|t| ((t - first) / speedup * 1e6).round() as u64)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A trace file of its own (removed when the guard drops).
    struct Trace(std::path::PathBuf);
    impl Drop for Trace {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(self.0.parent().unwrap());
        }
    }

    fn file(text: &str) -> (Trace, std::path::PathBuf) {
        static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("rightsize-trace-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("trace.jsonl");
        std::fs::write(&p, text).unwrap();
        (Trace(p.clone()), p)
    }

    #[test]
    fn send_times_table() {
        let (_d, p) = file(
            "{\"timestamp\": 1000, \"input_length\": 10, \"output_length\": 2}\n\n\
             {\"timestamp\": 1500, \"text\": \"hi\"}\n{\"timestamp\": 4000.5, \"text\": \"x\"}\n",
        );
        assert_eq!(
            read_send_times(&p, 1.0).unwrap(),
            vec![0, 500_000_000, 3_000_500_000]
        );
        assert_eq!(
            read_send_times(&p, 10.0).unwrap(),
            vec![0, 50_000_000, 300_050_000]
        );
        let e = read_send_times(&p, 0.0).unwrap_err();
        assert_eq!(e, "--speedup 0: must be above 0 (e.g. 1, 10)");
        // two gaps over 3.0005 s offered past --rate's bound (1,000,000 req/s)
        assert_eq!(
            read_send_times(&p, 1e7).unwrap_err(),
            "--speedup 10000000: the 3 records would be offered at 6665555.74 req/s; at most \
             1000000 (as --rate takes: a --speedup of at most 1500250)"
        );
        assert!(read_send_times(&p, 1_500_000.0).is_ok());
    }

    #[test]
    fn a_capture_is_timed_by_its_requests_inference_times() {
        let rec = |time: &str, kind: &str, data: &str| {
            format!(
                r#"{{"captureData":{{"endpointInput":{{"observedContentType":"{kind}","mode":"INPUT","encoding":"JSON","data":{}}}}},"eventMetadata":{{"inferenceTime":"{time}"}}}}"#,
                serde_json::to_string(data).unwrap()
            )
        };
        let json = "application/json";
        let (_d, p) = file(
            &[
                rec("2024-05-01T12:00:00Z", "text/csv", "1,2"),
                rec("2024-05-01T12:00:02.5Z", json, r#"{"prompt":"b"}"#),
                rec("2024-05-01T12:00:01Z", json, r#"{"prompt":"a"}"#),
                rec("2024-05-01T12:00:07.000250Z", json, r#"{"prompt":"c"}"#),
            ]
            .join("\n"),
        );
        // the csv record is not sent; the rest in time order, from the first request's time
        assert_eq!(
            read_send_times(&p, 1.0).unwrap(),
            vec![0, 1_500_000_000, 6_000_250_000]
        );
        assert_eq!(
            read_send_times(&p, 4.0).unwrap(),
            vec![0, 375_000_000, 1_500_062_500]
        );
    }

    #[test]
    fn bad_traces_name_the_line() {
        let (_d, p) = file("{\"timestamp\": 5}\n{\"text\": \"a\"}\n");
        let e = read_send_times(&p, 1.0).unwrap_err();
        assert!(
            e.ends_with(
                "trace.jsonl line 2: no `timestamp` (ms): a replay needs one on every record"
            ),
            "{e}"
        );
        let (_d, p) = file("{\"timestamp\": 5}\n{\"timestamp\": 4}\n");
        let e = read_send_times(&p, 1.0).unwrap_err();
        assert!(
            e.contains("line 2: timestamp 4 is before the previous record's 5"),
            "{e}"
        );
        let (_d, p) = file("{\"timestamp\": \"soon\"}\n");
        assert!(read_send_times(&p, 1.0)
            .unwrap_err()
            .contains("`timestamp` is \"soon\""));
        let (_d, p) = file("\n");
        assert!(read_send_times(&p, 1.0)
            .unwrap_err()
            .ends_with("no records to replay"));
        // 1e17 ms is three million years: refused, not stored as the largest u64
        let (_d, p) = file("{\"timestamp\": 0}\n{\"timestamp\": 1e17}\n");
        let e = read_send_times(&p, 10.0).unwrap_err();
        assert!(
            e.ends_with(
                "trace.jsonl line 2: timestamp 100000000000000000 is 115740741 days after \
                 the first record's (at --speedup 10); a replay spans at most 365 days"
            ),
            "{e}"
        );
    }
}
