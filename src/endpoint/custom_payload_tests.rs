//! Table tests of the custom payload format: filling the template, checking it and the
//! pointers, and reading events through the pointers.

use super::*;

fn payload(template: &str, text: &str, count: Option<&str>) -> CustomPayload {
    CustomPayload {
        request_template: parse_template(template).unwrap(),
        text_pointer: text.to_string(),
        token_count_pointer: count.map(str::to_string),
    }
}

/// Bodies are written by serde_json: an object's keys in sorted order (JSON objects are
/// unordered).
#[test]
fn placeholders_are_filled_as_json_values() {
    // (template, prompt, max tokens, stream, the body)
    let cases: &[(&str, &str, u32, bool, &str)] = &[
        (
            r#"{"inputs":"{prompt}","parameters":{"max_new_tokens":"{max_tokens}"},"stream":"{stream}"}"#,
            "hi",
            7,
            true,
            r#"{"inputs":"hi","parameters":{"max_new_tokens":7},"stream":true}"#,
        ),
        // quotes, a backslash, a newline, a control character and non-ASCII: escaped by
        // serde_json, never pasted into the JSON text
        (
            r#"{"prompt":"{prompt}"}"#,
            "say \"hi\" \\ now\nand\u{1}é",
            1,
            false,
            r#"{"prompt":"say \"hi\" \\ now\nand\u0001é"}"#,
        ),
        // a placeholder inside a longer string is replaced in its text
        (
            r#"{"text":"<s>[INST] {prompt} [/INST]","note":"up to {max_tokens} tokens, stream {stream}"}"#,
            "a \"b\"",
            64,
            false,
            r#"{"note":"up to 64 tokens, stream false","text":"<s>[INST] a \"b\" [/INST]"}"#,
        ),
        // arrays, nesting, other values untouched; keys are not placeholders
        (
            r#"{"messages":[{"role":"user","content":"{prompt}"}],"{prompt}":1,"n":[1.5,null,false],"max":["{max_tokens}"]}"#,
            "x",
            3,
            true,
            r#"{"max":[3],"messages":[{"content":"x","role":"user"}],"n":[1.5,null,false],"{prompt}":1}"#,
        ),
        // one pass: a prompt that itself says {max_tokens} or {stream} stays as it is
        (
            r#"{"p":"> {prompt} <"}"#,
            "{max_tokens} {stream} {prompt} {",
            9,
            true,
            r#"{"p":"> {max_tokens} {stream} {prompt} { <"}"#,
        ),
        // a template that is the prompt alone
        (r#""{prompt}""#, "q", 1, true, r#""q""#),
    ];
    for (template, prompt, max, stream, want) in cases {
        let p = payload(template, "/x", None);
        let body = String::from_utf8(p.request_body(prompt, *max, *stream)).unwrap();
        assert_eq!(&body, want, "{template}");
        // what was sent is JSON, and the prompt reads back as given
        serde_json::from_str::<Value>(&body).unwrap();
    }
}

#[test]
fn bad_templates_and_pointers_say_what_would_fix_them() {
    assert_eq!(
        parse_template(r#"{"inputs": "{prompt}""#).unwrap_err(),
        "the request template is not JSON (EOF while parsing an object at line 1 column 21): \
         write the body as JSON with \"{prompt}\" where the prompt goes, e.g. {\"inputs\": \
         \"{prompt}\", \"max_new_tokens\": \"{max_tokens}\"}"
    );
    assert_eq!(
        parse_template(r#"{"inputs": "hello", "n": "{max_tokens}"}"#).unwrap_err(),
        "the request template has no \"{prompt}\" placeholder: put \"{prompt}\" where the \
         container reads the prompt, e.g. {\"inputs\": \"{prompt}\"}"
    );
    // a key is not where a prompt goes
    assert!(parse_template(r#"{"{prompt}": 1}"#).is_err());
    for (pointer, ok) in [
        ("/token/text", true),
        ("/choices/0/text", true),
        ("", true),
        ("/a~1b/c~0d", true),
        ("token/text", false),
        ("/a~2", false),
        ("/a~", false),
        ("$.token.text", false),
    ] {
        assert_eq!(check_pointer(pointer).is_ok(), ok, "{pointer}");
    }
    assert_eq!(
        check_pointer("token.text").unwrap_err(),
        "`token.text` is not a JSON pointer (RFC 6901): start it with / and name each key or \
         array index, e.g. /token/text or /choices/0/text (~1 for a / in a key, ~0 for a ~)"
    );
}

/// (text, token count, openai_shaped) an event gave.
fn read(p: &CustomPayload, event: &str) -> Result<(Option<String>, Option<u32>, bool), ChunkError> {
    p.parse(event.as_bytes()).map(|c| {
        (
            c.content.map(|t| t.into_owned()),
            c.usage.and_then(|u| u.completion_tokens),
            c.openai_shaped,
        )
    })
}

#[test]
fn pointers_read_the_text_and_the_count() {
    let tgi = payload(
        r#"{"inputs":"{prompt}"}"#,
        "/token/text",
        Some("/details/generated_tokens"),
    );
    let completions = payload(
        r#"{"prompt":"{prompt}"}"#,
        "/choices/0/text",
        Some("/usage/completion_tokens"),
    );
    let escaped = payload(r#"{"p":"{prompt}"}"#, "/out~1put/a~0b", None);
    type Case<'a> = (
        &'a CustomPayload,
        &'a str,
        Result<(Option<String>, Option<u32>, bool), ChunkError>,
    );
    let s = |t: &str| Some(t.to_string());
    let cases: Vec<Case> = vec![
        (
            &tgi,
            r#"{"token":{"id":5,"text":" Hello","special":false},"generated_text":null,"details":null}"#,
            Ok((s(" Hello"), None, true)),
        ),
        (
            &tgi,
            r#"{"token":{"text":" there"},"generated_text":" Hello there","details":{"generated_tokens":2}}"#,
            Ok((s(" there"), Some(2), true)),
        ),
        // an empty piece is no text (no first token), but the event was this format's
        (&tgi, r#"{"token":{"text":""}}"#, Ok((None, None, true))),
        // nothing at either pointer
        (&tgi, r#"{"ping":1}"#, Ok((None, None, false))),
        (
            &completions,
            r#"{"choices":[{"index":0,"text":" a","finish_reason":null}]}"#,
            Ok((s(" a"), None, true)),
        ),
        // the usage chunk: no choice 0, a count
        (
            &completions,
            r#"{"choices":[],"usage":{"prompt_tokens":9,"completion_tokens":16}}"#,
            Ok((None, Some(16), true)),
        ),
        (
            &escaped,
            r#"{"out/put":{"a~b":"z"}}"#,
            Ok((s("z"), None, true)),
        ),
        (
            &tgi,
            r#"{"token":{"text":{"t":"x"}}}"#,
            Err(ChunkError::BadPayload(
                "the text pointer /token/text points at an object, not a string".into(),
            )),
        ),
        (
            &tgi,
            r#"{"token":{"text":"x"},"details":{"generated_tokens":"2"}}"#,
            Err(ChunkError::BadPayload(
                "the token count pointer /details/generated_tokens points at a string, not a \
                 whole number"
                    .into(),
            )),
        ),
        (
            &tgi,
            r#"{"details":{"generated_tokens":-1}}"#,
            Err(ChunkError::BadPayload(
                "the token count pointer /details/generated_tokens points at a number, not a \
                 whole number"
                    .into(),
            )),
        ),
        (
            &tgi,
            r#"{"token":"#,
            Err(ChunkError::BadPayload(
                "EOF while parsing a value at line 1 column 9".into(),
            )),
        ),
    ];
    for (p, event, want) in cases {
        assert_eq!(read(p, event), want, "{event}");
    }
    // the simulator's ground-truth send time rides along
    let c = tgi
        .parse(br#"{"token":{"text":"x"},"sim_sent_ns":42}"#)
        .unwrap();
    assert_eq!(c.sim_sent_ns, Some(42));
}
