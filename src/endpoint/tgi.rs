//! The Hugging Face TGI wire format as SageMaker's TGI / LLM containers speak it
//! (docs/sagemaker.md): the request `{"inputs", "parameters": {"max_new_tokens", ...},
//! "stream"}`, stream lines `data:{"token":{"text","special"}, "generated_text", "details"}`
//! (the last one carries `generated_text` and `details.generated_tokens`), and the whole answer
//! `[{"generated_text", "details"}]`. Read into the same [`Chunk`] the OpenAI format gives, so
//! the stream reader times and counts both alike.

use std::borrow::Cow;

use serde::Deserialize;
#[cfg(feature = "sagemaker")]
use serde::Serialize;

use super::openai::{truncate_chars, Chunk, ChunkError, Usage, MAX_MESSAGE_CHARS};

#[cfg(feature = "sagemaker")]
#[derive(Serialize)]
struct Parameters {
    max_new_tokens: u32,
    /// `details.generated_tokens` in the answer: the server's own output count.
    details: bool,
    /// The answer without the prompt in front of it.
    return_full_text: bool,
}

#[cfg(feature = "sagemaker")]
#[derive(Serialize)]
struct Request<'a> {
    inputs: &'a str,
    parameters: Parameters,
    stream: bool,
}

/// The request body for `prompt` with at most `max_tokens` new tokens.
#[cfg(feature = "sagemaker")]
pub fn request_body(prompt: &str, max_tokens: u32, stream: bool) -> Vec<u8> {
    let body = Request {
        inputs: prompt,
        parameters: Parameters {
            max_new_tokens: max_tokens,
            details: true,
            return_full_text: false,
        },
        stream,
    };
    // a struct of strings, integers and booleans always serializes
    serde_json::to_vec(&body).unwrap_or_default()
}

fn opt_cow<'de: 'a, 'a, D>(d: D) -> Result<Option<Cow<'a, str>>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    #[derive(Deserialize)]
    struct Borrowed<'a>(#[serde(borrow)] Cow<'a, str>);
    Ok(Option::<Borrowed<'a>>::deserialize(d)?.map(|b| b.0))
}

#[derive(Deserialize)]
struct Token<'a> {
    #[serde(borrow, default, deserialize_with = "opt_cow")]
    text: Option<Cow<'a, str>>,
    #[serde(default)]
    special: bool,
}

#[derive(Deserialize)]
struct Details {
    #[serde(default)]
    generated_tokens: Option<u32>,
}

#[derive(Deserialize)]
struct Raw<'a> {
    #[serde(borrow, default)]
    token: Option<Token<'a>>,
    #[serde(borrow, default, deserialize_with = "opt_cow")]
    generated_text: Option<Cow<'a, str>>,
    #[serde(default)]
    details: Option<Details>,
    #[serde(borrow, default, deserialize_with = "opt_cow")]
    error: Option<Cow<'a, str>>,
    #[serde(default)]
    sim_sent_ns: Option<u64>,
}

fn usage(details: Option<&Details>) -> Option<Usage> {
    details.and_then(|d| d.generated_tokens).map(|n| Usage {
        prompt_tokens: None,
        completion_tokens: Some(n),
        completion_tokens_details: None,
        prompt_tokens_details: None,
    })
}

fn in_stream(message: Option<Cow<'_, str>>) -> Result<(), ChunkError> {
    match message {
        Some(m) => Err(ChunkError::InStream(truncate_chars(&m, MAX_MESSAGE_CHARS))),
        None => Ok(()),
    }
}

/// One stream line: the token's text (special tokens such as `</s>` carry none), and at the
/// end `generated_text` (`finished`) with `details.generated_tokens` as usage.
pub fn parse_stream_chunk(data: &[u8]) -> Result<Chunk<'_>, ChunkError> {
    let raw: Raw<'_> =
        serde_json::from_slice(data).map_err(|e| ChunkError::BadPayload(e.to_string()))?;
    in_stream(raw.error)?;
    let shaped = raw.token.is_some() || raw.generated_text.is_some();
    let content = raw
        .token
        .filter(|t| !t.special)
        .and_then(|t| t.text)
        .filter(|t| !t.is_empty());
    Ok(Chunk {
        content,
        reasoning: None,
        tool_calls: Vec::new(),
        usage: usage(raw.details.as_ref()),
        openai_shaped: shaped,
        finished: raw.generated_text.is_some(),
        sim_sent_ns: raw.sim_sent_ns,
    })
}

/// A whole answer: `[{"generated_text", "details"}]` (SageMaker's containers) or the object
/// alone (TGI's `/generate`).
pub fn parse_whole(data: &[u8]) -> Result<Chunk<'_>, ChunkError> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Whole<'a> {
        List(#[serde(borrow)] Vec<Raw<'a>>),
        One(#[serde(borrow)] Raw<'a>),
    }
    let whole: Whole<'_> =
        serde_json::from_slice(data).map_err(|e| ChunkError::BadPayload(e.to_string()))?;
    let raw = match whole {
        Whole::One(r) => r,
        Whole::List(list) => list
            .into_iter()
            .next()
            .ok_or_else(|| ChunkError::BadPayload("the answer is an empty list".to_string()))?,
    };
    in_stream(raw.error)?;
    Ok(Chunk {
        openai_shaped: raw.generated_text.is_some(),
        finished: raw.generated_text.is_some(),
        content: raw.generated_text.filter(|t| !t.is_empty()),
        reasoning: None,
        tool_calls: Vec::new(),
        usage: usage(raw.details.as_ref()),
        sim_sent_ns: raw.sim_sent_ns,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(feature = "sagemaker")]
    #[test]
    fn request_body_shape() {
        assert_eq!(
            String::from_utf8(request_body("hi \"x\"", 7, true)).unwrap(),
            r#"{"inputs":"hi \"x\"","parameters":{"max_new_tokens":7,"details":true,"return_full_text":false},"stream":true}"#
        );
    }

    fn text(c: &Chunk<'_>) -> Option<String> {
        c.content.as_deref().map(str::to_string)
    }

    #[test]
    fn stream_chunks() {
        let c = parse_stream_chunk(
            br#"{"index":1,"token":{"id":5,"text":" Hello","logprob":-0.1,"special":false},"generated_text":null,"details":null}"#,
        )
        .unwrap();
        assert_eq!(
            (text(&c), c.finished, c.usage, c.openai_shaped),
            (Some(" Hello".into()), false, None, true)
        );
        let c = parse_stream_chunk(
            br#"{"index":3,"token":{"id":2,"text":"</s>","logprob":0,"special":true},"generated_text":" Hello there","details":{"finish_reason":"eos_token","generated_tokens":3,"seed":null}}"#,
        )
        .unwrap();
        assert_eq!(text(&c), None);
        assert!(c.finished);
        assert_eq!(c.usage.and_then(|u| u.completion_tokens), Some(3));
        let c = parse_stream_chunk(br#"{"token":{"text":"x"},"sim_sent_ns":42}"#).unwrap();
        assert_eq!(c.sim_sent_ns, Some(42));
        assert_eq!(
            parse_stream_chunk(
                br#"{"error":"Request failed during generation","error_type":"generation"}"#
            ),
            Err(ChunkError::InStream(
                "Request failed during generation".into()
            ))
        );
        assert!(matches!(
            parse_stream_chunk(br#"{"token":"#),
            Err(ChunkError::BadPayload(_))
        ));
    }

    #[test]
    fn whole_answers() {
        for body in [
            &br#"[{"generated_text":" a b","details":{"finish_reason":"length","generated_tokens":2}}]"#[..],
            &br#"{"generated_text":" a b","details":{"generated_tokens":2}}"#[..],
        ] {
            let c = parse_whole(body).unwrap();
            assert_eq!(text(&c), Some(" a b".into()));
            assert_eq!(c.usage.and_then(|u| u.completion_tokens), Some(2));
        }
        assert_eq!(
            parse_whole(b"[]"),
            Err(ChunkError::BadPayload("the answer is an empty list".into()))
        );
        assert_eq!(
            parse_whole(
                br#"{"error":"Input validation error: inputs must have less than 4096 tokens"}"#
            ),
            Err(ChunkError::InStream(
                "Input validation error: inputs must have less than 4096 tokens".into()
            ))
        );
    }
}
