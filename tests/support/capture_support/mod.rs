//! A SageMaker Data Capture made for the tests (issue 28): 500 records over 10 minutes from a
//! fixed generator, laid out as `aws s3 sync` copies a capture
//! (`ENDPOINT/AllTraffic/yyyy/mm/dd/hh/*.jsonl`, one file a minute across two hours). Chat
//! bodies in the JSON and the BASE64 encoding, five `text/csv` records, and responses of three
//! kinds: with `usage.completion_tokens`, with a text only, and none.

#![allow(dead_code)]

use std::path::Path;

/// One generated record, as the tests expect it to be read.
pub struct Made {
    /// `eventMetadata.inferenceTime`, ms after 2024-05-01T12:55:00Z.
    pub at_ms: u64,
    /// A `text/csv` record (counted, not sent).
    pub csv: bool,
    /// The request's `max_tokens`.
    pub max_tokens: u32,
    /// The captured response's `usage.completion_tokens`, when it has one.
    pub usage: Option<u32>,
}

/// 2024-05-01T12:55:00Z in ms since the Unix epoch.
pub const START_MS: u64 = 1_714_568_100_000;

const WORDS: [&str; 8] = [
    "river", "stone", "cloud", "amber", "pixel", "orbit", "maple", "quartz",
];

fn xorshift(x: &mut u64) -> f64 {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    (*x >> 11) as f64 / (1u64 << 53) as f64
}

fn utc(ms: u64) -> String {
    // 12:55:00 plus at most ten minutes: the hour, minute, second and millisecond suffice
    let t = ms - START_MS + (12 * 3600 + 55 * 60) * 1000;
    let (h, m, s, milli) = (t / 3_600_000, t / 60_000 % 60, t / 1000 % 60, t % 1000);
    format!("2024-05-01T{h:02}:{m:02}:{s:02}.{milli:03}Z")
}

fn base64(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(A[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn payload(mode: &str, kind: &str, encoding: &str, data: &str) -> String {
    format!(
        r#"{{"observedContentType":"{kind}","mode":"{mode}","data":{},"encoding":"{encoding}"}}"#,
        serde_json::to_string(data).unwrap()
    )
}

/// Writes the capture under `root` (the endpoint's folder is `root/sim-llm`) and returns its
/// records in time order. A busy stretch from 12:58 to 12:59 holds a quarter of them.
pub fn write_capture(root: &Path) -> Vec<Made> {
    let mut x: u64 = 0x2028_0501_1255_0000;
    let mut times: Vec<f64> = Vec::new();
    for i in 0..500 {
        // 125 records in the busy minute, the rest spread over the other nine
        let t = if i % 4 == 0 {
            180_000.0 + xorshift(&mut x) * 59_000.0
        } else {
            let u = xorshift(&mut x) * 540_000.0;
            if u < 180_000.0 {
                u
            } else {
                u + 60_000.0
            }
        };
        times.push(t.floor());
    }
    times.sort_by(f64::total_cmp);
    let mut made = Vec::new();
    let mut files: std::collections::BTreeMap<String, String> = Default::default();
    for (i, t) in times.iter().enumerate() {
        let at_ms = *t as u64;
        let csv = i % 100 == 37;
        let max_tokens = 4 + (i % 5) as u32;
        let usage = (!csv && i % 3 == 0).then_some(3 + (i % 4) as u32);
        let words: Vec<&str> = (0..20 + i % 40).map(|k| WORDS[(i * 7 + k) % 8]).collect();
        let input = if csv {
            payload("INPUT", "text/csv", "CSV", "1.5,2.5,3.5")
        } else {
            let body = format!(
                r#"{{"messages":[{{"role":"user","content":"{}"}}],"max_tokens":{max_tokens}}}"#,
                words.join(" ")
            );
            if i % 2 == 0 {
                payload("INPUT", "application/json", "JSON", &body)
            } else {
                payload(
                    "INPUT",
                    "application/json",
                    "BASE64",
                    &base64(body.as_bytes()),
                )
            }
        };
        let output = match (csv, usage, i % 3) {
            (true, _, _) => Some(payload("OUTPUT", "text/csv", "CSV", "0.42")),
            (_, Some(n), _) => Some(payload(
                "OUTPUT",
                "application/json",
                "JSON",
                &format!(
                    r#"{{"choices":[{{"message":{{"role":"assistant","content":"x"}}}}],"usage":{{"prompt_tokens":30,"completion_tokens":{n}}}}}"#
                ),
            )),
            (_, None, 1) => Some(payload(
                "OUTPUT",
                "application/json",
                "BASE64",
                &base64(br#"{"choices":[{"message":{"role":"assistant","content":"two words"}}]}"#),
            )),
            _ => None,
        };
        let output = output
            .map(|o| format!(r#","endpointOutput":{o}"#))
            .unwrap_or_default();
        let line = format!(
            r#"{{"captureData":{{"endpointInput":{input}{output}}},"eventMetadata":{{"eventId":"ev-{i:04}","inferenceTime":"{}"}},"eventVersion":"0"}}"#,
            utc(START_MS + at_ms)
        );
        let stamp = utc(START_MS + at_ms);
        let (hour, minute) = (&stamp[11..13], &stamp[14..16]);
        let file = format!("sim-llm/AllTraffic/2024/05/01/{hour}/{minute}-00-000-capture.jsonl");
        let text = files.entry(file).or_default();
        text.push_str(&line);
        text.push('\n');
        made.push(Made {
            at_ms,
            csv,
            max_tokens,
            usage,
        });
    }
    for (file, text) in files {
        let p = root.join(file);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    made
}

/// Requests in each minute from 12:55 (index 0) to 13:04, and the busiest second's count.
pub fn per_minute_and_peak_second(made: &[Made]) -> (Vec<u64>, u64) {
    let mut minutes = vec![0u64; 10];
    let mut seconds: std::collections::BTreeMap<u64, u64> = Default::default();
    for m in made {
        minutes[(m.at_ms / 60_000) as usize] += 1;
        *seconds.entry(m.at_ms / 1000).or_default() += 1;
    }
    (minutes, seconds.values().copied().max().unwrap())
}
