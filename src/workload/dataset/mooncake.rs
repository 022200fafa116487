//! Mooncake-style traces: JSON lines of `{"timestamp", "input_length", "output_length",
//! "hash_ids"}`. Each hash id stands for one block of `block_tokens` tokens of deterministic
//! text derived from the id alone, so records that share leading ids share an exact token
//! prefix and a server's prefix cache sees the trace's reuse. A record's prompt is its blocks
//! in order, the last one cut so the prompt is `input_length` tokens: `input_length` must be
//! more than `(n - 1) * block_tokens` and at most `n * block_tokens` for `n` hash ids (a record
//! without ids gets text of its own). Timestamps are read and not used here: records are sent
//! closed-loop in file order.

use crate::workload::bounds::{MAX_INPUT_TOKENS, MAX_OUTPUT_TOKENS};
use serde::Deserialize;

use super::{DatasetError, Parsed, RawRecord, RawText};

/// Tokens per hash id unless `--block-tokens` says otherwise (Mooncake's traces use 512).
pub const DEFAULT_BLOCK_TOKENS: u32 = 512;

/// A trace line; `timestamp` and any other field are not used here.
#[derive(Deserialize)]
struct Line {
    input_length: u32,
    output_length: u32,
    #[serde(default)]
    hash_ids: Vec<u64>,
}

pub(super) fn parse(file: &str, text: &str, block_tokens: u32) -> Result<Parsed, DatasetError> {
    let mut out = Vec::new();
    for parsed in super::json_lines::<Line>(file, text) {
        let (n, line) = parsed?;
        let bad = |m: String| DatasetError::line(file, n, m);
        if line.input_length == 0 {
            return Err(bad("`input_length` must be at least 1".into()));
        }
        if line.output_length == 0 {
            return Err(bad("`output_length` must be at least 1".into()));
        }
        // the prompt is built to this length: the cap `--input-tokens` has, before anything
        // is allocated (4000000000 took 20 GB and aborted)
        for (field, value, most) in [
            ("input_length", line.input_length, MAX_INPUT_TOKENS),
            ("output_length", line.output_length, MAX_OUTPUT_TOKENS),
        ] {
            if value > most {
                return Err(bad(format!(
                    "`{field}` {value}: at most {most} tokens (as --input-tokens and \
                     --output-tokens take)"
                )));
            }
        }
        let blocks = line.hash_ids.len() as u64;
        let (lo, hi) = (
            blocks.saturating_sub(1) * block_tokens as u64,
            blocks * block_tokens as u64,
        );
        let length = line.input_length as u64;
        if blocks > 0 && !(length > lo && length <= hi) {
            return Err(bad(format!(
                "input_length {length} does not fit {blocks} hash ids of {block_tokens} tokens \
                 (it must be more than {lo} and at most {hi}); set --block-tokens to the \
                 trace's block size"
            )));
        }
        out.push(RawRecord {
            line: n,
            text: RawText::Blocks {
                hash_ids: line.hash_ids,
                input_length: line.input_length,
            },
            output_tokens: Some(line.output_length),
            answer: None,
            conversation: None,
            body: None,
        });
    }
    Ok((out, Default::default()))
}
