//! Data Capture lines and folders: exact records, skips and errors.

use super::*;
use crate::workload::messages::ChatMessage;

fn line(input: &str, output: Option<&str>, time: &str) -> String {
    let out = output
        .map(|o| format!(r#","endpointOutput":{o}"#))
        .unwrap_or_default();
    format!(
        r#"{{"captureData":{{"endpointInput":{input}{out}}},"eventMetadata":{{"eventId":"e","inferenceTime":"{time}"}},"eventVersion":"0"}}"#
    )
}

fn json_payload(data: &str) -> String {
    format!(
        r#"{{"observedContentType":"application/json","mode":"INPUT","data":{},"encoding":"JSON"}}"#,
        serde_json::to_string(data).unwrap()
    )
}

#[test]
fn lines_become_requests_or_skips() {
    let chat = r#"{"messages":[{"role":"user","content":"hello"}],"max_tokens":20}"#;
    // base64 of {"inputs":"abc","parameters":{"max_new_tokens":8}}
    let b64 = "eyJpbnB1dHMiOiJhYmMiLCJwYXJhbWV0ZXJzIjp7Im1heF9uZXdfdG9rZW5zIjo4fX0=";
    let answer = json_payload(
        r#"{"choices":[{"message":{"content":"hi"}}],"usage":{"completion_tokens":6}}"#,
    )
    .replace("INPUT", "OUTPUT");
    let table: Vec<(String, f64, Captured)> = vec![
        (
            line(&json_payload(chat), Some(&answer), "2024-05-01T12:00:00Z"),
            1_714_564_800_000.0,
            Captured::Request {
                body: Arc::from(chat.as_bytes()),
                request: CapturedRequest {
                    prompt: CapturedPrompt::Messages(vec![ChatMessage::new("user", "hello")]),
                    max_tokens: Some(20),
                },
                output: Some(CapturedOutput::Tokens(6)),
            },
        ),
        (
            line(
                &format!(
                    r#"{{"observedContentType":"application/json; charset=utf-8","mode":"INPUT","data":"{b64}","encoding":"BASE64"}}"#
                ),
                None,
                "2024-05-01T12:00:00.250Z",
            ),
            1_714_564_800_250.0,
            Captured::Request {
                body: Arc::from(&br#"{"inputs":"abc","parameters":{"max_new_tokens":8}}"#[..]),
                request: CapturedRequest {
                    prompt: CapturedPrompt::Text("abc".into()),
                    max_tokens: Some(8),
                },
                output: None,
            },
        ),
        (
            line(
                r#"{"observedContentType":"text/csv","mode":"INPUT","data":"1,2,3","encoding":"CSV"}"#,
                None,
                "2024-05-01T12:00:01Z",
            ),
            1_714_564_801_000.0,
            Captured::Skipped("content type text/csv, not JSON".into()),
        ),
        (
            line(
                &json_payload(r#"{"instances":[[1,2]]}"#),
                None,
                "2024-05-01T12:00:02Z",
            ),
            1_714_564_802_000.0,
            Captured::Skipped("a JSON body without `messages`, `prompt` or `inputs`".into()),
        ),
    ];
    for (text, at, want) in table {
        assert_eq!(read_line(&text).unwrap(), (at, want), "{text}");
    }
}

#[test]
fn bad_lines_name_the_field() {
    let ok_input = json_payload(r#"{"prompt":"x"}"#);
    let table: Vec<(String, &str)> = vec![
        (
            r#"{"captureData":{}}"#.into(),
            "no `eventMetadata.inferenceTime`: every record needs its time",
        ),
        (
            line(&ok_input, None, "yesterday"),
            "`eventMetadata.inferenceTime`: `yesterday` is not an ISO 8601 UTC time (expected \
             YYYY-MM-DDThh:mm:ss)",
        ),
        (
            r#"{"captureData":{},"eventMetadata":{"inferenceTime":"2024-05-01T12:00:00Z"}}"#.into(),
            "no `captureData.endpointInput`",
        ),
        (
            line(
                r#"{"observedContentType":"application/json","data":"{}","encoding":"GZIP"}"#,
                None,
                "2024-05-01T12:00:00Z",
            ),
            "`captureData.endpointInput.encoding` is `GZIP`: Data Capture writes JSON, BASE64 \
             or CSV",
        ),
        (
            line(
                r#"{"observedContentType":"application/json","data":"%%%","encoding":"BASE64"}"#,
                None,
                "2024-05-01T12:00:00Z",
            ),
            "`captureData.endpointInput.data` is not BASE64 (Invalid symbol 37, offset 0.)",
        ),
        (
            line(&json_payload("{not json"), None, "2024-05-01T12:00:00Z"),
            "`captureData.endpointInput.data` is not JSON although its content type is (key \
             must be a string at line 1 column 2)",
        ),
        (
            line(
                &json_payload(r#"{"prompt":7}"#),
                None,
                "2024-05-01T12:00:00Z",
            ),
            "`captureData.endpointInput.data`: `prompt` is 7, not a string",
        ),
        (
            line(
                r#"{"mode":"INPUT","data":"{}","encoding":"JSON"}"#,
                None,
                "2024-05-01T12:00:00Z",
            ),
            "no `captureData.endpointInput.observedContentType`",
        ),
    ];
    for (text, want) in table {
        assert_eq!(read_line(&text).unwrap_err(), want, "{text}");
    }
}

/// A folder laid out as `aws s3 sync` copies a capture: records from two hour folders, out of
/// order across files, come back in time order; an error names the file and line.
#[test]
fn folders_are_walked_and_sorted_by_time() {
    let root = std::env::temp_dir().join(format!("rightsize-capture-{}", std::process::id()));
    let hour = |h: &str| root.join(format!("ep/AllTraffic/2024/05/01/{h}"));
    std::fs::create_dir_all(hour("12")).unwrap();
    std::fs::create_dir_all(hour("11")).unwrap();
    let rec = |t: &str, p: &str| line(&json_payload(&format!(r#"{{"prompt":"{p}"}}"#)), None, t);
    std::fs::write(
        hour("12").join("a.jsonl"),
        format!(
            "{}\n\n{}\n",
            rec("2024-05-01T12:00:05Z", "c"),
            rec("2024-05-01T12:00:01Z", "b")
        ),
    )
    .unwrap();
    std::fs::write(
        hour("11").join("z.jsonl"),
        rec("2024-05-01T11:59:59Z", "a") + "\n",
    )
    .unwrap();
    std::fs::write(hour("11").join("notes.txt"), "not a capture").unwrap();
    let c = read(&root).unwrap();
    assert_eq!(c.files, 2);
    let order: Vec<(String, usize)> = c
        .records
        .iter()
        .map(|r| {
            let Captured::Request { request, .. } = &r.captured else {
                panic!("a request")
            };
            let CapturedPrompt::Text(t) = &request.prompt else {
                panic!("a text")
            };
            (t.clone(), r.line)
        })
        .collect();
    assert_eq!(
        order,
        vec![("a".into(), 1), ("b".into(), 3), ("c".into(), 1)]
    );
    assert!(is_capture(&root));
    std::fs::write(hour("12").join("b.jsonl"), "{\"captureData\": 3}\n").unwrap();
    let e = read(&root).unwrap_err();
    assert!(e.file.ends_with("b.jsonl"), "{e}");
    assert_eq!(e.line, Some(1));
    assert_eq!(
        e.message,
        "no `eventMetadata.inferenceTime`: every record needs its time"
    );
    std::fs::remove_dir_all(&root).unwrap();
}
