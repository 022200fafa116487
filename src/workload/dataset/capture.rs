//! A SageMaker Data Capture (`workload::capture`) read as a dataset: each JSON request in time
//! order is a record, its body kept to send as captured to a SageMaker endpoint, its prompt
//! (chat messages, or a completions `prompt` / TGI `inputs` text) sent to an OpenAI-compatible
//! one. The output length to ask for is the captured response's (`usage.completion_tokens`, or
//! its text counted by the run's tokenizer), else the request's own `max_tokens`. Records of
//! other content types are counted as skipped, by reason.

use std::path::Path;

use super::{DatasetError, Parsed, RawRecord, RawText};
use crate::workload::capture::{self, Captured, CapturedOutput, CapturedPrompt};
use crate::workload::tokenizer::Tokenizer;

/// The records and skips of the capture at `path`, and the bytes its sha256 is taken of.
pub(super) fn parse(path: &Path, tok: &dyn Tokenizer) -> Result<(Parsed, Vec<u8>), DatasetError> {
    let c = capture::read(path).map_err(|e| DatasetError {
        file: e.file,
        line: e.line,
        column: None,
        message: e.message,
    })?;
    let skipped = c.skipped();
    let mut out = Vec::new();
    for r in &c.records {
        let Captured::Request {
            body,
            request,
            output,
        } = &r.captured
        else {
            continue;
        };
        let answered = match output {
            Some(CapturedOutput::Tokens(n)) => Some(*n),
            Some(CapturedOutput::Text(t)) => Some(tok.count(t)),
            None => None,
        };
        // an empty captured answer says nothing of the length to ask for (nor does a
        // max_tokens of 0: then the workload's drawn length is asked for)
        let output_tokens = answered
            .filter(|n| *n > 0)
            .or(request.max_tokens.filter(|n| *n > 0));
        out.push(RawRecord {
            line: r.line,
            text: match &request.prompt {
                CapturedPrompt::Text(t) => RawText::Text(t.clone()),
                CapturedPrompt::Messages(list) => RawText::Messages(list.clone()),
            },
            output_tokens,
            answer: None,
            conversation: None,
            body: Some(body.clone()),
        });
    }
    Ok(((out, skipped), c.bytes))
}
