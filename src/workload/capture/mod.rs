//! SageMaker Data Capture files (`docs/open-loop.md`, "SageMaker Data Capture"): JSON lines,
//! one invocation each, with `captureData.endpointInput` (`observedContentType`, `mode`,
//! `encoding` JSON, BASE64 or CSV, `data`), optionally `captureData.endpointOutput` (the
//! response, same fields), `eventMetadata.inferenceTime` (ISO 8601 UTC) and `eventVersion`.
//! Read from one file, from a folder as `aws s3 sync` leaves it
//! (`PREFIX/ENDPOINT/VARIANT/yyyy/mm/dd/hh/*.jsonl`, walked recursively), or from S3 itself
//! (`s3://bucket/prefix`, [`s3`], with the `sagemaker` feature), every record put in time
//! order. A record whose body is JSON becomes a request (its body kept as captured, its
//! prompt and output length read by [`body`]); any other content type is kept as a skipped
//! record with the reason, so it still counts as traffic. `replay`, `--dataset` and
//! `traffic` all read captures through [`read`].

pub mod body;
#[cfg(feature = "sagemaker")]
pub mod s3;
#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use base64::Engine as _;
use serde_json::Value;

pub use body::{CapturedOutput, CapturedPrompt, CapturedRequest};

/// Why a captured record cannot be sent: a location and a message naming the field.
#[derive(Debug, Clone, PartialEq)]
pub struct CaptureError {
    pub file: String,
    pub line: Option<usize>,
    pub message: String,
}

impl std::fmt::Display for CaptureError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line {
            Some(l) => write!(f, "{}:{l}: {}", self.file, self.message),
            None => write!(f, "{}: {}", self.file, self.message),
        }
    }
}

/// What one captured invocation holds.
#[derive(Debug, Clone, PartialEq)]
pub enum Captured {
    /// A JSON request rightsize can send.
    Request {
        /// The request body as captured (decoded from BASE64 when it was).
        body: Arc<[u8]>,
        request: CapturedRequest,
        /// The captured response's length, when a response was captured and says.
        output: Option<CapturedOutput>,
    },
    /// A record that is not sent, and why (e.g. `content type text/csv`).
    Skipped(String),
}

/// One line of a capture file.
#[derive(Debug, Clone, PartialEq)]
pub struct CaptureRecord {
    /// The file it came from, as shown in messages.
    pub file: Arc<str>,
    /// Its line in that file (1-based).
    pub line: usize,
    /// `eventMetadata.inferenceTime`, ms since the Unix epoch.
    pub at_ms: f64,
    pub captured: Captured,
}

/// A capture read whole, in time order.
#[derive(Debug, Clone)]
pub struct Capture {
    pub records: Vec<CaptureRecord>,
    /// Every file's bytes in the order read (sorted paths), for the sha256 `run.json` keeps.
    pub bytes: Vec<u8>,
    /// Files read.
    pub files: usize,
}

impl Capture {
    /// The records that are requests, in time order.
    pub fn requests(&self) -> impl Iterator<Item = &CaptureRecord> {
        self.records
            .iter()
            .filter(|r| matches!(r.captured, Captured::Request { .. }))
    }

    /// Skipped records counted by reason.
    pub fn skipped(&self) -> std::collections::BTreeMap<String, u64> {
        let mut out = std::collections::BTreeMap::new();
        for r in &self.records {
            if let Captured::Skipped(why) = &r.captured {
                *out.entry(why.clone()).or_insert(0) += 1;
            }
        }
        out
    }
}

/// Whether `text`'s first non-blank line is a Data Capture record (an object with
/// `captureData`).
pub fn looks_like_capture(text: &str) -> bool {
    text.lines()
        .find(|l| !l.trim().is_empty())
        .and_then(|l| serde_json::from_str::<Value>(l).ok())
        .is_some_and(|v| v.get("captureData").is_some())
}

/// Whether `path` names a capture in S3 (`s3://bucket/prefix`).
pub fn is_s3(path: &Path) -> bool {
    path.to_str().is_some_and(|p| p.starts_with("s3://"))
}

/// Whether `path` is a capture: an `s3://` URL, a folder (read as an `aws s3 sync` copy) or a
/// file whose first record has `captureData`.
pub fn is_capture(path: &Path) -> bool {
    if is_s3(path) || path.is_dir() {
        return true;
    }
    use std::io::BufRead;
    let Ok(file) = std::fs::File::open(path) else {
        return false;
    };
    let mut reader = std::io::BufReader::new(file);
    let mut line = String::new();
    while reader.read_line(&mut line).is_ok_and(|n| n > 0) {
        if !line.trim().is_empty() {
            return looks_like_capture(&line);
        }
        line.clear();
    }
    false
}

/// One file of a capture: its name as shown in messages, and its bytes.
type Source = (Arc<str>, Arc<[u8]>);

/// The capture's files, in name order: the objects under an
/// `s3://` URL, every `*.jsonl` file under a folder, or the one file.
fn sources(path: &Path) -> Result<Vec<Source>, CaptureError> {
    let shown = path.display().to_string();
    let fail = |file: &str, message: String| CaptureError {
        file: file.to_string(),
        line: None,
        message,
    };
    if is_s3(path) {
        #[cfg(feature = "sagemaker")]
        return Ok(s3::objects(&shown)?
            .iter()
            .map(|(name, bytes)| (Arc::from(name.as_str()), Arc::from(bytes.as_slice())))
            .collect());
        #[cfg(not(feature = "sagemaker"))]
        return Err(fail(
            &shown,
            "this build has no S3 reader (the `sagemaker` feature): copy the capture with \
             `aws s3 sync URL DIR` and give DIR"
                .into(),
        ));
    }
    let files = if path.is_dir() {
        let mut found = Vec::new();
        walk(path, &mut found).map_err(|e| fail(&shown, format!("cannot read the folder: {e}")))?;
        found.sort();
        if found.is_empty() {
            return Err(fail(
                &shown,
                "no .jsonl files under this folder (a Data Capture copy holds \
                 ENDPOINT/VARIANT/yyyy/mm/dd/hh/*.jsonl)"
                    .into(),
            ));
        }
        found
    } else {
        vec![path.to_path_buf()]
    };
    files
        .iter()
        .map(|f| {
            let name = f.display().to_string();
            let bytes = std::fs::read(f)
                .map_err(|e| fail(&name, format!("cannot read the capture: {e}")))?;
            Ok((Arc::from(name), Arc::from(bytes)))
        })
        .collect()
}

/// Reads a capture (an `s3://` URL, a file, or every `*.jsonl` file under a folder) into time
/// order (records with the same time keep their file and line order).
pub fn read(path: &Path) -> Result<Capture, CaptureError> {
    let files = sources(path)?;
    let mut capture = Capture {
        records: Vec::new(),
        bytes: Vec::new(),
        files: files.len(),
    };
    for (name, bytes) in &files {
        let text = std::str::from_utf8(bytes).map_err(|e| CaptureError {
            file: name.to_string(),
            line: None,
            message: format!("not UTF-8 text: {e}"),
        })?;
        for (i, raw) in text.lines().enumerate() {
            if raw.trim().is_empty() {
                continue;
            }
            let (at_ms, captured) = read_line(raw).map_err(|message| CaptureError {
                file: name.to_string(),
                line: Some(i + 1),
                message,
            })?;
            capture.records.push(CaptureRecord {
                file: name.clone(),
                line: i + 1,
                at_ms,
                captured,
            });
        }
        capture.bytes.extend_from_slice(bytes);
    }
    if capture.records.is_empty() {
        return Err(CaptureError {
            file: path.display().to_string(),
            line: None,
            message: "no captured records".into(),
        });
    }
    capture.records.sort_by(|a, b| a.at_ms.total_cmp(&b.at_ms));
    Ok(capture)
}

/// Every `*.jsonl` file under `dir`, at any depth.
fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let p = entry?.path();
        if p.is_dir() {
            walk(&p, out)?;
        } else if p.extension().is_some_and(|e| e == "jsonl") {
            out.push(p);
        }
    }
    Ok(())
}

/// One line: its time and what it holds, or a message naming the field at fault.
pub fn read_line(raw: &str) -> Result<(f64, Captured), String> {
    let v: Value = serde_json::from_str(raw).map_err(|e| format!("not JSON ({e})"))?;
    if !v.is_object() {
        return Err("a Data Capture record is a JSON object".into());
    }
    let time = v
        .pointer("/eventMetadata/inferenceTime")
        .ok_or("no `eventMetadata.inferenceTime`: every record needs its time")?;
    let time = time
        .as_str()
        .ok_or_else(|| format!("`eventMetadata.inferenceTime` is {time}, not a string"))?;
    let at_ms = crate::wallclock::parse_ms(time)
        .map_err(|e| format!("`eventMetadata.inferenceTime`: {e}"))?;
    let input = v
        .pointer("/captureData/endpointInput")
        .ok_or("no `captureData.endpointInput`")?;
    let field = "captureData.endpointInput";
    let Some(bytes) = json_data(input, field)? else {
        let kind = input
            .get("observedContentType")
            .and_then(Value::as_str)
            .unwrap_or("?");
        return Ok((
            at_ms,
            Captured::Skipped(format!("content type {kind}, not JSON")),
        ));
    };
    let body: Value = serde_json::from_slice(&bytes)
        .map_err(|e| format!("`{field}.data` is not JSON although its content type is ({e})"))?;
    let request = match body::read_request(&body).map_err(|e| format!("`{field}.data`: {e}"))? {
        Some(r) => r,
        None => {
            return Ok((
                at_ms,
                Captured::Skipped("a JSON body without `messages`, `prompt` or `inputs`".into()),
            ))
        }
    };
    let output = match v.pointer("/captureData/endpointOutput") {
        None | Some(Value::Null) => None,
        Some(out) => json_data(out, "captureData.endpointOutput")?
            .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
            .and_then(|b| body::read_response(&b)),
    };
    Ok((
        at_ms,
        Captured::Request {
            body: Arc::from(bytes),
            request,
            output,
        },
    ))
}

/// The decoded bytes of a captured JSON payload; `None` when its content type is not JSON.
fn json_data(payload: &Value, field: &str) -> Result<Option<Vec<u8>>, String> {
    let kind = payload
        .get("observedContentType")
        .and_then(Value::as_str)
        .ok_or_else(|| format!("no `{field}.observedContentType`"))?;
    let essence = kind
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    if essence != "application/json" {
        return Ok(None);
    }
    let encoding = payload
        .get("encoding")
        .and_then(Value::as_str)
        .ok_or_else(|| format!("no `{field}.encoding` (JSON, BASE64 or CSV)"))?;
    let data = payload
        .get("data")
        .ok_or_else(|| format!("no `{field}.data`"))?;
    match (encoding.to_ascii_uppercase().as_str(), data) {
        ("BASE64", Value::String(s)) => base64::engine::general_purpose::STANDARD
            .decode(s.trim())
            .map(Some)
            .map_err(|e| format!("`{field}.data` is not BASE64 ({e})")),
        ("JSON" | "CSV", Value::String(s)) => Ok(Some(s.clone().into_bytes())),
        // a body stored as JSON itself rather than as its text
        ("JSON", d @ (Value::Object(_) | Value::Array(_))) => Ok(Some(d.to_string().into_bytes())),
        ("BASE64" | "JSON" | "CSV", d) => Err(format!("`{field}.data` is {d}, not a string")),
        (e, _) => Err(format!(
            "`{field}.encoding` is `{e}`: Data Capture writes JSON, BASE64 or CSV"
        )),
    }
}
