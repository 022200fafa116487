//! Datasets: prompts read from a file instead of generated. Four formats (see
//! `docs/workloads.md`): JSONL single-turn prompts, ShareGPT conversations, Mooncake-style
//! traces whose hash ids stand for shared blocks of tokens, and SageMaker Data Capture files
//! (or a folder of them). The format is detected from the first record unless given; every
//! problem is reported with the file and line.
//!
//! Which record request `index` of level `level` gets is a pure function of (seed, level,
//! index) for each [`Sampling`], so runs repeat exactly.

mod capture;
mod jsonl;
mod mooncake;
mod sharegpt;

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::messages::{count_messages, split_turns, ChatMessage, ConversationTurn};
use super::tokenizer::{sha256_hex, Tokenizer};
use crate::rng::{mix64, SplitMix64};

pub use mooncake::DEFAULT_BLOCK_TOKENS;

/// A dataset file's format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DatasetFormat {
    /// One JSON object a line: `{"text": ...}` or `{"messages": [...]}`, optional
    /// `output_length`.
    Jsonl,
    /// ShareGPT conversations: a JSON array (or JSON lines) of `{"conversations": [...]}`.
    Sharegpt,
    /// Mooncake trace: JSON lines of `{"timestamp", "input_length", "output_length",
    /// "hash_ids"}`.
    Mooncake,
    /// SageMaker Data Capture: JSON lines with `captureData` (a file, or a folder of them).
    SagemakerCapture,
}

impl DatasetFormat {
    /// Parses `jsonl`, `sharegpt`, `mooncake` or `sagemaker-capture`.
    pub fn parse(s: &str) -> Result<DatasetFormat, String> {
        match s.trim().to_ascii_lowercase().replace('_', "-").as_str() {
            "jsonl" => Ok(DatasetFormat::Jsonl),
            "sharegpt" => Ok(DatasetFormat::Sharegpt),
            "mooncake" => Ok(DatasetFormat::Mooncake),
            "sagemaker-capture" | "data-capture" | "capture" => Ok(DatasetFormat::SagemakerCapture),
            _ => Err(format!(
                "`{s}` is not a dataset format: use jsonl, sharegpt, mooncake or \
                 sagemaker-capture"
            )),
        }
    }
}

/// How requests draw records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Sampling {
    /// Record `index mod N`: every level sends the file's records in file order.
    #[default]
    InOrder,
    /// A seeded permutation per level (and per pass over the file).
    Shuffle,
    /// Uniform draws with replacement, seeded.
    Replace,
}

impl Sampling {
    /// Parses `in-order`, `shuffle` or `replace`.
    pub fn parse(s: &str) -> Result<Sampling, String> {
        match s.trim().to_ascii_lowercase().replace('_', "-").as_str() {
            "in-order" | "inorder" | "sequential" => Ok(Sampling::InOrder),
            "shuffle" => Ok(Sampling::Shuffle),
            "replace" | "replacement" | "random" => Ok(Sampling::Replace),
            _ => Err(format!(
                "`{s}` is not a sampling: use in-order, shuffle or replace"
            )),
        }
    }
}

/// Records whose lengths fall outside these bounds (tokens, inclusive) are skipped. Output
/// bounds apply to records that say their output length.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct LengthFilter {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_input: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_input: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_output: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_output: Option<u32>,
}

impl LengthFilter {
    fn keeps(&self, input: u32, output: Option<u32>) -> bool {
        let inside = |v: u32, lo: Option<u32>, hi: Option<u32>| {
            lo.is_none_or(|lo| v >= lo) && hi.is_none_or(|hi| v <= hi)
        };
        inside(input, self.min_input, self.max_input)
            && output.is_none_or(|o| inside(o, self.min_output, self.max_output))
    }
}

/// A dataset as asked for and, once loaded, as found: what `run.json` records.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DatasetSpec {
    /// The file, as given.
    pub path: String,
    /// The format: given (`--dataset-format`) or, after loading, detected.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<DatasetFormat>,
    #[serde(default)]
    pub sampling: Sampling,
    /// Mooncake: tokens each hash id stands for.
    pub block_tokens: u32,
    #[serde(default)]
    pub filter: LengthFilter,
    /// sha256 (hex) of the file, filled when it is loaded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
    /// Records kept, filled when loaded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub records: Option<u64>,
    /// Records left out, by reason, filled when loaded.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub skipped: BTreeMap<String, u64>,
}

impl DatasetSpec {
    /// A dataset at `path`, format detected, in order, default block size, no filter.
    pub fn new(path: &str) -> DatasetSpec {
        DatasetSpec {
            path: path.to_string(),
            format: None,
            sampling: Sampling::InOrder,
            block_tokens: DEFAULT_BLOCK_TOKENS,
            filter: LengthFilter::default(),
            sha256: None,
            records: None,
            skipped: BTreeMap::new(),
        }
    }
}

/// A problem with a dataset file; the message names the file and, where there is one, the
/// line (and column).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}{message}", location(.file, .line, .column))]
pub struct DatasetError {
    pub file: String,
    pub line: Option<usize>,
    pub column: Option<usize>,
    pub message: String,
}

fn location(file: &str, line: &Option<usize>, column: &Option<usize>) -> String {
    match (line, column) {
        (Some(l), Some(c)) => format!("{file}:{l}:{c}: "),
        (Some(l), None) => format!("{file}:{l}: "),
        _ => format!("{file}: "),
    }
}

impl DatasetError {
    fn file(file: &str, message: impl Into<String>) -> DatasetError {
        DatasetError {
            file: file.to_string(),
            line: None,
            column: None,
            message: message.into(),
        }
    }

    fn line(file: &str, line: usize, message: impl Into<String>) -> DatasetError {
        DatasetError {
            line: Some(line),
            ..DatasetError::file(file, message)
        }
    }

    /// A serde_json error, placed at its line and column (`line_base` is the line the
    /// parsed text starts on, for JSON lines).
    fn json(file: &str, line_base: usize, e: &serde_json::Error) -> DatasetError {
        let text = e.to_string();
        // serde_json ends its message with " at line L column C": the location goes first
        let message = match text.rfind(" at line ") {
            Some(i) => text[..i].to_string(),
            None => text,
        };
        DatasetError {
            file: file.to_string(),
            line: Some(line_base + e.line().max(1) - 1),
            column: (e.column() > 0).then_some(e.column()),
            message,
        }
    }
}

/// The non-blank lines of `text` parsed as `T`, each with its line number (1-based); a line
/// that does not parse is an error at its line and column.
pub(crate) fn json_lines<'a, T: serde::de::DeserializeOwned>(
    file: &'a str,
    text: &'a str,
) -> impl Iterator<Item = Result<(usize, T), DatasetError>> + 'a {
    text.lines()
        .enumerate()
        .filter(|(_, raw)| !raw.trim().is_empty())
        .map(move |(i, raw)| {
            serde_json::from_str(raw)
                .map(|v| (i + 1, v))
                .map_err(|e| DatasetError::json(file, i + 1, &e))
        })
}

/// What a request's prompt is made of.
#[derive(Debug, Clone, PartialEq)]
pub enum Source {
    /// The text as the file gives it.
    Text(String),
    /// A JSONL `messages` record: sent as this message list, roles preserved.
    Messages(Vec<ChatMessage>),
    /// Mooncake: one block of deterministic text per hash id, the last cut to fit.
    Blocks(Vec<u64>),
}

/// One usable record.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    /// Line of the file the record starts on (1-based).
    pub line: usize,
    pub source: Source,
    /// Input tokens: the tokenizer's count of the text, or the trace's `input_length`.
    pub input_tokens: u32,
    /// Output tokens the record asks for (`max_tokens`), when it says.
    pub output_tokens: Option<u32>,
    /// ShareGPT, for multi-turn sessions: the whole conversation as chat messages.
    pub conversation: Option<Vec<ChatMessage>>,
    /// Data Capture: the request body as captured, sent as it is to a SageMaker endpoint.
    pub body: Option<std::sync::Arc<[u8]>>,
}

impl Record {
    /// The record as the user turns of a session (see `docs/workloads.md`, multi-turn
    /// sessions): a conversation's user messages, a message list's, or the text (or trace
    /// blocks) as one turn; `None` for a Mooncake record, whose text is made from its blocks.
    pub fn turns(&self, tok: &dyn Tokenizer) -> Option<Vec<ConversationTurn>> {
        let list = match (&self.conversation, &self.source) {
            (Some(c), _) => c,
            (None, Source::Messages(list)) => list,
            (None, Source::Text(t)) => {
                return Some(vec![ConversationTurn {
                    messages: vec![ChatMessage::new("user", t.clone())],
                    reference_answer_tokens: self.output_tokens,
                }])
            }
            (None, Source::Blocks(_)) => return None,
        };
        Some(split_turns(tok, list))
    }
}

/// A loaded dataset.
#[derive(Debug, Clone)]
pub struct Dataset {
    pub format: DatasetFormat,
    pub records: Vec<Record>,
    pub block_tokens: u32,
}

/// What a format parser produces before lengths are known.
pub(crate) enum RawText {
    Text(String),
    Messages(Vec<ChatMessage>),
    Blocks {
        hash_ids: Vec<u64>,
        input_length: u32,
    },
}

/// One record as a parser read it.
pub(crate) struct RawRecord {
    pub line: usize,
    pub text: RawText,
    /// The output length the record gives.
    pub output_tokens: Option<u32>,
    /// ShareGPT: the reference answer, whose token count is the output length.
    pub answer: Option<String>,
    /// ShareGPT, when conversations are kept: the whole conversation.
    pub conversation: Option<Vec<ChatMessage>>,
    /// Data Capture: the request body as captured.
    pub body: Option<std::sync::Arc<[u8]>>,
}

/// What a parser returns: records, and records left out by reason.
pub(crate) type Parsed = (Vec<RawRecord>, BTreeMap<String, u64>);

/// Reads, validates and counts a dataset; fills `spec`'s format, sha256, record and skip
/// counts.
pub fn load(spec: &mut DatasetSpec, tok: &dyn Tokenizer) -> Result<Dataset, DatasetError> {
    load_with(spec, tok, false)
}

/// [`load`]; with `keep_conversations` ShareGPT records keep their whole conversations (for
/// multi-turn sessions).
pub fn load_with(
    spec: &mut DatasetSpec,
    tok: &dyn Tokenizer,
    keep_conversations: bool,
) -> Result<Dataset, DatasetError> {
    let file = spec.path.as_str();
    if spec.block_tokens == 0 {
        return Err(DatasetError::file(
            file,
            "--block-tokens must be at least 1",
        ));
    }
    let path = Path::new(file);
    let capture = match spec.format {
        Some(f) => f == DatasetFormat::SagemakerCapture,
        None => super::capture::is_capture(path),
    };
    let (format, (raw, mut skipped), bytes) = if capture {
        let (parsed, bytes) = capture::parse(path, tok)?;
        (DatasetFormat::SagemakerCapture, parsed, bytes)
    } else {
        let bytes = std::fs::read(path)
            .map_err(|e| DatasetError::file(file, format!("cannot read the dataset: {e}")))?;
        let text = std::str::from_utf8(&bytes)
            .map_err(|e| DatasetError::file(file, format!("not UTF-8 text: {e}")))?;
        let format = match spec.format {
            Some(f) => f,
            None => detect(file, text)?,
        };
        let parsed = match format {
            DatasetFormat::Jsonl => jsonl::parse(file, text)?,
            DatasetFormat::Sharegpt => sharegpt::parse(file, text, keep_conversations)?,
            DatasetFormat::Mooncake => mooncake::parse(file, text, spec.block_tokens)?,
            DatasetFormat::SagemakerCapture => unreachable!("captures are read above"),
        };
        (format, parsed, bytes)
    };
    let mut records = Vec::with_capacity(raw.len());
    for r in raw {
        let output_tokens = match &r.answer {
            Some(a) => Some(tok.count(a)),
            None => r.output_tokens,
        };
        if output_tokens == Some(0) {
            *skipped.entry("empty answer".into()).or_insert(0) += 1;
            continue;
        }
        let (source, input_tokens) = match r.text {
            RawText::Text(t) => {
                let n = tok.count(&t);
                (Source::Text(t), n)
            }
            RawText::Messages(list) => {
                let n = count_messages(tok, &list);
                (Source::Messages(list), n)
            }
            RawText::Blocks {
                hash_ids,
                input_length,
            } => (Source::Blocks(hash_ids), input_length),
        };
        check_lengths(file, r.line, input_tokens, output_tokens)?;
        if !spec.filter.keeps(input_tokens, output_tokens) {
            *skipped
                .entry("outside the length filter".into())
                .or_insert(0) += 1;
            continue;
        }
        records.push(Record {
            line: r.line,
            source,
            input_tokens,
            output_tokens,
            conversation: r.conversation,
            body: r.body,
        });
    }
    if records.is_empty() {
        let why = if skipped.is_empty() {
            "it has no records".to_string()
        } else {
            let reasons: Vec<String> = skipped.iter().map(|(k, v)| format!("{v} {k}")).collect();
            format!("no record is usable ({})", reasons.join(", "))
        };
        return Err(DatasetError::file(file, why));
    }
    spec.format = Some(format);
    spec.sha256 = Some(sha256_hex(&bytes));
    spec.records = Some(records.len() as u64);
    spec.skipped = skipped;
    Ok(Dataset {
        format,
        records,
        block_tokens: spec.block_tokens,
    })
}

/// The format of `text` from its first character and first record.
/// A record longer than `--input-tokens` or `--output-tokens` may be (the prompt's text or
/// messages as the tokenizer counts them, a reference answer, `max_tokens`) is refused, named
/// with its file and line, as the flags are.
fn check_lengths(
    file: &str,
    line: usize,
    input: u32,
    output: Option<u32>,
) -> Result<(), DatasetError> {
    use crate::workload::bounds::{MAX_INPUT_TOKENS, MAX_OUTPUT_TOKENS};
    if input > MAX_INPUT_TOKENS {
        return Err(DatasetError::line(
            file,
            line,
            format!(
                "the prompt is {input} tokens: at most {MAX_INPUT_TOKENS} (as --input-tokens \
                 takes)"
            ),
        ));
    }
    match output {
        Some(n) if n > MAX_OUTPUT_TOKENS => Err(DatasetError::line(
            file,
            line,
            format!(
                "the answer asks for {n} tokens: at most {MAX_OUTPUT_TOKENS} (as \
                 --output-tokens takes)"
            ),
        )),
        _ => Ok(()),
    }
}

fn detect(file: &str, text: &str) -> Result<DatasetFormat, DatasetError> {
    let trimmed = text.trim_start();
    if trimmed.starts_with('[') {
        return Ok(DatasetFormat::Sharegpt);
    }
    let Some((n, line)) = text.lines().enumerate().find(|(_, l)| !l.trim().is_empty()) else {
        return Err(DatasetError::file(file, "the dataset is empty"));
    };
    let first: serde_json::Value =
        serde_json::from_str(line).map_err(|e| DatasetError::json(file, n + 1, &e))?;
    let Some(obj) = first.as_object() else {
        return Err(DatasetError::line(
            file,
            n + 1,
            "expected a JSON object (or a ShareGPT array)",
        ));
    };
    let has = |k: &str| obj.contains_key(k);
    if has("hash_ids") || has("input_length") {
        Ok(DatasetFormat::Mooncake)
    } else if has("conversations") {
        Ok(DatasetFormat::Sharegpt)
    } else if has("text") || has("texts") || has("messages") {
        Ok(DatasetFormat::Jsonl)
    } else {
        let keys: Vec<&str> = obj.keys().map(String::as_str).collect();
        Err(DatasetError::line(
            file,
            n + 1,
            format!(
                "cannot tell the dataset format from the first record (keys: {}); pass \
                 --dataset-format jsonl, sharegpt, mooncake or sagemaker-capture",
                if keys.is_empty() {
                    "none".to_string()
                } else {
                    keys.join(", ")
                }
            ),
        ))
    }
}

impl Dataset {
    /// The record request `index` of level `level` draws under `sampling` and `seed`.
    pub fn pick(&self, sampling: Sampling, seed: u64, level: u32, index: u64) -> &Record {
        let n = self.records.len() as u64;
        let i = match sampling {
            Sampling::InOrder => index % n,
            Sampling::Shuffle => {
                let pass = index / n;
                let key = mix64(seed ^ mix64(((level as u64) << 32) ^ pass ^ 0x005A_FF1E));
                permute(index % n, n, key)
            }
            Sampling::Replace => {
                let mut rng = SplitMix64::new(mix64(
                    seed ^ ((level as u64) << 40) ^ index.wrapping_mul(0xD1B5_4A32_D192_ED03),
                ));
                rng.below(n)
            }
        };
        &self.records[i as usize]
    }
}

/// Position of `i` in a keyed pseudo-random permutation of `0..n`: a four-round Feistel
/// network on the smallest even-bit domain holding `n`, walking the cycle until the value
/// falls inside `0..n` (a bijection, computed without storing the permutation).
fn permute(i: u64, n: u64, key: u64) -> u64 {
    if n <= 1 {
        return 0;
    }
    let bits = (64 - (n - 1).leading_zeros()).max(2);
    let half = bits.div_ceil(2);
    let mask = (1u64 << half) - 1;
    let mut x = i;
    loop {
        let (mut l, mut r) = (x >> half, x & mask);
        for round in 0..4u64 {
            let f = mix64(r ^ key ^ round.wrapping_mul(0x9E37_79B9_7F4A_7C15)) & mask;
            (l, r) = (r, l ^ f);
        }
        x = (l << half) | r;
        if x < n {
            return x;
        }
    }
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
