//! A SageMaker Data Capture record's request body as a SageMaker endpoint gets it
//! (`docs/open-loop.md`, "SageMaker Data Capture"): as captured, but for the two fields the
//! run decides. `stream` follows `--stream` / `--no-stream` (the invocation API is chosen by
//! it, and a container answering a streamed call must stream), with the OpenAI formats'
//! `stream_options.include_usage` on when streaming so the server's count is read; and the
//! output length to ask for (the captured response's, else the request's own) goes in the
//! field the body's format reads it from: `max_completion_tokens` when the body has it, else
//! `max_tokens` (OpenAI), or `parameters.max_new_tokens` (TGI `inputs`). A body that is not a
//! JSON object is sent byte for byte.

use serde_json::{json, Value};

/// The body to send for captured `body`, streamed or not, asking for `max_tokens`.
pub fn sagemaker_body(body: &[u8], stream: bool, max_tokens: u32) -> Vec<u8> {
    let Ok(Value::Object(mut obj)) = serde_json::from_slice::<Value>(body) else {
        return body.to_vec();
    };
    if obj.contains_key("inputs") {
        obj.insert("stream".into(), json!(stream));
        let parameters = obj.entry("parameters").or_insert_with(|| json!({}));
        if let Value::Object(p) = parameters {
            p.insert("max_new_tokens".into(), json!(max_tokens));
        }
    } else {
        obj.insert("stream".into(), json!(stream));
        if stream {
            obj.entry("stream_options")
                .or_insert_with(|| json!({}))
                .as_object_mut()
                .map(|o| o.insert("include_usage".into(), json!(true)));
        } else {
            obj.remove("stream_options");
        }
        let field = if obj.contains_key("max_completion_tokens") {
            "max_completion_tokens"
        } else {
            "max_tokens"
        };
        obj.insert(field.into(), json!(max_tokens));
    }
    // a map of JSON values always serializes
    serde_json::to_vec(&Value::Object(obj)).unwrap_or_else(|_| body.to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn captured_bodies_keep_all_but_stream_and_length() {
        let table: &[(&str, bool, u32, &str)] = &[
            (
                r#"{"messages":[{"role":"user","content":"hi"}],"max_tokens":9,"temperature":0.2}"#,
                true,
                30,
                r#"{"max_tokens":30,"messages":[{"content":"hi","role":"user"}],"stream":true,"stream_options":{"include_usage":true},"temperature":0.2}"#,
            ),
            (
                r#"{"prompt":"x","max_completion_tokens":4,"stream":true,"stream_options":{"include_usage":true}}"#,
                false,
                4,
                r#"{"max_completion_tokens":4,"prompt":"x","stream":false}"#,
            ),
            (
                r#"{"inputs":"t","parameters":{"max_new_tokens":5,"details":true}}"#,
                true,
                12,
                r#"{"inputs":"t","parameters":{"details":true,"max_new_tokens":12},"stream":true}"#,
            ),
            (
                r#"{"inputs":"t"}"#,
                false,
                3,
                r#"{"inputs":"t","parameters":{"max_new_tokens":3},"stream":false}"#,
            ),
            ("1,2,3", true, 3, "1,2,3"),
        ];
        for (body, stream, max, want) in table {
            let got = sagemaker_body(body.as_bytes(), *stream, *max);
            assert_eq!(String::from_utf8(got).unwrap(), *want, "{body}");
        }
    }
}
