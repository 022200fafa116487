//! Dataset tests: each format with good files and a bad line each (exact error text),
//! detection, filters, sampling, and Mooncake prompts that share exact token prefixes.

use super::*;
use crate::workload::tokenizer::ApproxTokenizer;

/// Writes `text` to a fresh file named `name` and returns its path.
fn file(name: &str, text: &str) -> String {
    let dir = std::env::temp_dir().join(format!(
        "rightsize-dataset-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_str().unwrap().to_string()
}

fn load_file(path: &str, format: Option<DatasetFormat>) -> Result<(DatasetSpec, Dataset), String> {
    let mut spec = DatasetSpec::new(path);
    spec.format = format;
    load(&mut spec, &ApproxTokenizer)
        .map(|d| (spec, d))
        .map_err(|e| e.to_string())
}

/// Each `(file text, error after the path)` loaded as `format` fails with exactly that error.
fn assert_errors(name: &str, format: DatasetFormat, cases: &[(&str, &str)]) {
    for (text, want) in cases {
        let path = file(name, text);
        let e = load_file(&path, Some(format)).unwrap_err();
        assert_eq!(e, format!("{path}{want}"), "{text:?}");
    }
}

fn text_of(r: &Record) -> &str {
    match &r.source {
        Source::Text(t) => t,
        Source::Blocks(_) | Source::Messages(_) => panic!("expected text"),
    }
}

#[test]
fn jsonl_reads_text_texts_and_messages() {
    let path = file(
        "prompts.jsonl",
        concat!(
            "{\"text\": \"What is machine learning?\"}\n",
            "\n",
            "{\"text\": \"Write a haiku.\", \"output_length\": 50, \"timestamp\": 5, \"extra\": {}}\n",
            "{\"texts\": [\"one\", \"two\"], \"output_tokens\": 7}\n",
            "{\"messages\": [{\"role\": \"system\", \"content\": \"be brief\"},",
            " {\"role\": \"user\", \"content\": [{\"type\": \"text\", \"text\": \"hi there\"}]}]}\n",
        ),
    );
    let (spec, ds) = load_file(&path, None).unwrap();
    assert_eq!(spec.format, Some(DatasetFormat::Jsonl));
    assert_eq!(spec.records, Some(4));
    assert_eq!(spec.sha256.as_deref().map(str::len), Some(64));
    let r = &ds.records;
    assert_eq!(
        (
            r[0].line,
            text_of(&r[0]),
            r[0].input_tokens,
            r[0].output_tokens
        ),
        (1, "What is machine learning?", 7, None)
    );
    assert_eq!((r[1].line, r[1].output_tokens), (3, Some(50)));
    assert_eq!((text_of(&r[2]), r[2].output_tokens), ("one\ntwo", Some(7)));
    // a message list stays one, roles kept; its input is its contents' count
    assert_eq!(
        r[3].source,
        Source::Messages(vec![
            ChatMessage::new("system", "be brief"),
            ChatMessage::new("user", "hi there"),
        ])
    );
    assert_eq!(r[3].input_tokens, (1 + 2) + (1 + 2));
}

#[test]
fn jsonl_bad_lines_name_file_line_and_problem() {
    let cases = [
        (
            "{\"text\": \"a\"}\n{\"text\": \"b\"}\n{\"text\": \"c\"\n",
            ":3:12: EOF while parsing an object",
        ),
        (
            "{\"text\": \"a\"}\n{\"prompt\": \"b\"}\n",
            ":2: the record has no `text`, `texts` or `messages`",
        ),
        (
            "{\"text\": \"a\", \"messages\": []}\n",
            ":1: give one of `text`, `texts` and `messages`, not several",
        ),
        (
            "{\"text\": 5}\n",
            ":1:10: invalid type: integer `5`, expected a string",
        ),
        ("{\"text\": \"  \"}\n", ":1: the prompt is empty"),
        (
            "{\"messages\": [{\"role\": \"user\", \"content\": \" \"}]}\n",
            ":1: the prompt is empty",
        ),
        (
            "{\"text\": \"a\"}\n{\"messages\": [{\"role\": \"user\", \"content\": \"a\"}, {\"content\": \"b\"}]}\n",
            ":2: message 2 has no `role` (system, user, assistant, ...)",
        ),
        (
            "{\"text\": \"a\", \"output_length\": 0}\n",
            ":1: `output_length` must be at least 1",
        ),
    ];
    assert_errors("bad.jsonl", DatasetFormat::Jsonl, &cases);
}

const SHAREGPT: &str = r#"[
  {"id": "a", "conversations": [
    {"from": "human", "value": "Tell me about load testing."},
    {"from": "gpt", "value": "It sends traffic and measures."}]},
  {"id": "b", "conversations": [
    {"from": "system", "value": "You are terse."},
    {"from": "human", "value": "Why?"},
    {"from": "gpt", "value": "Because."},
    {"from": "human", "value": "More?"}]},
  {"id": "c", "conversations": [{"from": "human", "value": "No answer here"}]},
  {"id": "d", "conversations": [{"from": "gpt", "value": "no question"}]}
]
"#;

#[test]
fn sharegpt_takes_the_first_human_turn_and_sizes_the_answer() {
    let path = file("sg.json", SHAREGPT);
    let (spec, ds) = load_file(&path, None).unwrap();
    assert_eq!(spec.format, Some(DatasetFormat::Sharegpt));
    assert_eq!(spec.records, Some(2));
    assert_eq!(
        spec.skipped,
        BTreeMap::from([("no answer".into(), 1), ("no human turn".into(), 1)])
    );
    let r = &ds.records;
    // the answer: It sends traffic and measures. = 1 + 2 + 2 + 1 + 3 approximate tokens
    assert_eq!(
        (r[0].line, text_of(&r[0]), r[0].output_tokens),
        (2, "Tell me about load testing.", Some(9))
    );
    assert_eq!(
        (r[1].line, text_of(&r[1]), r[1].output_tokens),
        (5, "Why?", Some(2))
    );
    // the same records, one a line
    let lines: Vec<String> = serde_json::from_str::<Vec<serde_json::Value>>(SHAREGPT)
        .unwrap()
        .iter()
        .map(|v| v.to_string())
        .collect();
    let path = file("sg.jsonl", &lines.join("\n"));
    let (spec, ds) = load_file(&path, None).unwrap();
    assert_eq!(spec.format, Some(DatasetFormat::Sharegpt));
    assert_eq!((ds.records.len(), ds.records[1].line), (2, 2));
}

#[test]
fn sharegpt_bad_record_names_its_line() {
    let text = "[\n  {\"conversations\": [{\"from\": \"human\", \"value\": \"ok\"}]},\n  \
                {\"conversations\": [{\"from\": \"human\", \"value\": 5}]}\n]\n";
    let path = file("bad.json", text);
    let e = load_file(&path, None).unwrap_err();
    assert_eq!(
        e,
        format!("{path}:3:49: invalid type: integer `5`, expected a string")
    );
    let path = file("notarray.json", "{\"conversations\": 3}\n");
    let e = load_file(&path, None).unwrap_err();
    assert_eq!(
        e,
        format!("{path}:1:19: invalid type: integer `3`, expected a sequence")
    );
}

const TRACE: &str =
    "{\"timestamp\": 0, \"input_length\": 1200, \"output_length\": 4, \"hash_ids\": [1, 2, 3]}\n\
{\"timestamp\": 27, \"input_length\": 1100, \"output_length\": 9, \"hash_ids\": [1, 2, 7]}\n\
{\"timestamp\": 30, \"input_length\": 40, \"output_length\": 3, \"hash_ids\": []}\n";

#[test]
fn mooncake_records_keep_their_ids_and_lengths() {
    let path = file("trace.jsonl", TRACE);
    let (spec, ds) = load_file(&path, None).unwrap();
    assert_eq!(spec.format, Some(DatasetFormat::Mooncake));
    assert_eq!(ds.block_tokens, 512);
    assert_eq!(ds.records[1].source, Source::Blocks(vec![1, 2, 7]));
    assert_eq!(
        (ds.records[1].input_tokens, ds.records[1].output_tokens),
        (1100, Some(9))
    );
}

#[test]
fn mooncake_bad_lines_name_file_line_and_problem() {
    let cases = [
        (
            "{\"input_length\": 1200, \"output_length\": 4, \"hash_ids\": [1, 2]}\n",
            ":1: input_length 1200 does not fit 2 hash ids of 512 tokens (it must be more than \
             512 and at most 1024); set --block-tokens to the trace's block size",
        ),
        (
            "{\"input_length\": 10, \"output_length\": 4}\n{\"input_length\": 10}\n",
            ":2:20: missing field `output_length`",
        ),
        (
            "{\"input_length\": 0, \"output_length\": 4}\n",
            ":1: `input_length` must be at least 1",
        ),
        (
            "{\"input_length\": 10, \"output_length\": 4, \"hash_ids\": [-1]}\n",
            ":1:56: invalid value: integer `-1`, expected u64",
        ),
        // the caps --input-tokens and --output-tokens have, before a prompt is built
        (
            "{\"input_length\": 10, \"output_length\": 4}\n\
             {\"input_length\": 4000000000, \"output_length\": 4}\n",
            ":2: `input_length` 4000000000: at most 1000000 tokens (as --input-tokens and \
             --output-tokens take)",
        ),
        (
            "{\"input_length\": 10, \"output_length\": 2000000}\n",
            ":1: `output_length` 2000000: at most 1000000 tokens (as --input-tokens and \
             --output-tokens take)",
        ),
    ];
    assert_errors("bad-trace.jsonl", DatasetFormat::Mooncake, &cases);
}

#[test]
fn unknown_shapes_and_empty_files_are_explained() {
    let path = file("what.jsonl", "\n{\"question\": \"x\", \"answer\": \"y\"}\n");
    let e = load_file(&path, None).unwrap_err();
    assert_eq!(
        e,
        format!(
            "{path}:2: cannot tell the dataset format from the first record (keys: answer, \
             question); pass --dataset-format jsonl, sharegpt, mooncake or sagemaker-capture"
        )
    );
    let path = file("empty.jsonl", "\n\n");
    assert_eq!(
        load_file(&path, None).unwrap_err(),
        format!("{path}: the dataset is empty")
    );
    let e = load_file("/nonexistent/data.jsonl", None).unwrap_err();
    assert!(
        e.starts_with("/nonexistent/data.jsonl: cannot read the dataset: "),
        "{e}"
    );
}

#[test]
fn filters_skip_records_and_say_so_when_nothing_is_left() {
    let path = file(
        "f.jsonl",
        "{\"text\": \"a b c\"}\n{\"text\": \"a b c d e f g h\"}\n",
    );
    let mut spec = DatasetSpec::new(&path);
    spec.filter.max_input = Some(5);
    let ds = load(&mut spec, &ApproxTokenizer).unwrap();
    assert_eq!(ds.records.len(), 1);
    assert_eq!(spec.skipped["outside the length filter"], 1);
    spec.filter.min_input = Some(4);
    let e = load(&mut spec, &ApproxTokenizer).unwrap_err().to_string();
    assert_eq!(
        e,
        format!("{path}: no record is usable (2 outside the length filter)")
    );
}

#[test]
fn sampling_is_in_order_a_permutation_or_seeded_draws() {
    let ds = Dataset {
        format: DatasetFormat::Jsonl,
        records: (0..37)
            .map(|i| Record {
                line: i + 1,
                source: Source::Text(format!("r{i}")),
                input_tokens: 1,
                output_tokens: None,
                conversation: None,
                body: None,
            })
            .collect(),
        block_tokens: 512,
    };
    let lines = |s: Sampling, level: u32, n: u64| -> Vec<usize> {
        (0..n).map(|i| ds.pick(s, 9, level, i).line).collect()
    };
    assert_eq!(lines(Sampling::InOrder, 3, 40)[..3], [1, 2, 3]);
    assert_eq!(lines(Sampling::InOrder, 3, 40)[37..], [1, 2, 3]);
    let mut shuffled = lines(Sampling::Shuffle, 0, 37);
    assert_ne!(shuffled, lines(Sampling::InOrder, 0, 37));
    assert_ne!(shuffled, lines(Sampling::Shuffle, 1, 37));
    assert_eq!(shuffled, lines(Sampling::Shuffle, 0, 37));
    shuffled.sort_unstable();
    assert_eq!(shuffled, (1..=37).collect::<Vec<_>>());
    // with replacement: 37 draws repeat some records and miss others
    let drawn = lines(Sampling::Replace, 0, 37);
    assert_eq!(drawn, lines(Sampling::Replace, 0, 37));
    assert_ne!(drawn, lines(Sampling::Replace, 1, 37));
    let distinct: std::collections::BTreeSet<_> = drawn.iter().collect();
    assert!(distinct.len() < 37, "{}", distinct.len());
}

#[test]
#[cfg(feature = "exact-tokenizers")]
fn mooncake_prompts_share_exact_token_prefixes() {
    use crate::workload::tokenizer::load as load_tokenizer;
    use crate::workload::WorkloadSpec;
    let path = file("share.jsonl", TRACE);
    let mut w = WorkloadSpec::fixed(100, 10);
    w.tokenizer = "o200k".into();
    w.dataset = Some(DatasetSpec::new(&path));
    let w = w.load().unwrap();
    let tok = load_tokenizer("o200k").unwrap().tokenizer;
    let (a, b, c) = (w.prompt(0, 0), w.prompt(0, 1), w.prompt(0, 2));
    assert_eq!((a.input_tokens, a.max_tokens), (1200, 4));
    assert_eq!((b.input_tokens, b.max_tokens), (1100, 9));
    assert_eq!((c.input_tokens, c.max_tokens), (40, 3));
    let (ta, tb) = (tok.encode(&a.text), tok.encode(&b.text));
    assert_eq!((ta.len(), tb.len(), tok.count(&c.text)), (1200, 1100, 40));
    let common = ta.iter().zip(&tb).take_while(|(x, y)| x == y).count();
    // blocks 1 and 2 are shared; block 3 and 7 differ from their first token on (or nearly:
    // two random blocks may start with the same word)
    assert!((1024..1030).contains(&common), "{common}");
    assert_eq!(w.target_input(0, 1), Some(1100));
}

#[test]
fn a_capture_is_detected_and_sized_by_its_answers() {
    let rec = |time: &str, input: &str, output: &str| {
        format!(
            r#"{{"captureData":{{"endpointInput":{input}{output}}},"eventMetadata":{{"inferenceTime":"{time}"}},"eventVersion":"0"}}"#
        )
    };
    let json = |mode: &str, body: &str| {
        format!(
            r#"{{"observedContentType":"application/json","mode":"{mode}","encoding":"JSON","data":{}}}"#,
            serde_json::to_string(body).unwrap()
        )
    };
    let chat = json(
        "INPUT",
        r#"{"messages":[{"role":"user","content":"abcd efgh"}],"max_tokens":50}"#,
    );
    let completion = json("INPUT", r#"{"prompt":"one two three","max_tokens":9}"#);
    let text_answer = format!(
        r#","endpointOutput":{}"#,
        json("OUTPUT", r#"{"choices":[{"text":"abcd efgh ijkl"}]}"#)
    );
    let usage_answer = format!(
        r#","endpointOutput":{}"#,
        json("OUTPUT", r#"{"usage":{"completion_tokens":21}}"#)
    );
    let csv = r#"{"observedContentType":"text/csv","mode":"INPUT","encoding":"CSV","data":"1,2"}"#;
    // out of time order in the file: read back in time order
    let path = file(
        "capture.jsonl",
        &[
            rec("2024-05-01T12:00:02Z", &completion, &text_answer),
            rec("2024-05-01T12:00:01Z", &chat, &usage_answer),
            rec("2024-05-01T12:00:03Z", csv, ""),
            rec("2024-05-01T12:00:04Z", &completion, ""),
        ]
        .join("\n"),
    );
    let (spec, ds) = load_file(&path, None).unwrap();
    assert_eq!(spec.format, Some(DatasetFormat::SagemakerCapture));
    assert_eq!(spec.records, Some(3));
    assert_eq!(
        spec.skipped,
        BTreeMap::from([("content type text/csv, not JSON".to_string(), 1)])
    );
    let got: Vec<(usize, u32, Option<u32>)> = ds
        .records
        .iter()
        .map(|r| (r.line, r.input_tokens, r.output_tokens))
        .collect();
    // (line, input tokens by the approximation: 4 characters a token per word, output:
    // usage 21; the answer text's 3 tokens; the request's own 9)
    assert_eq!(
        got,
        vec![(2, 2, Some(21)), (1, 4, Some(3)), (4, 4, Some(9))]
    );
    assert!(matches!(&ds.records[0].source, Source::Messages(m) if m[0].content == "abcd efgh"));
    assert_eq!(
        ds.records[1].body.as_deref(),
        Some(&br#"{"prompt":"one two three","max_tokens":9}"#[..])
    );
}

#[test]
fn a_record_longer_than_the_flags_allow_is_refused_with_its_line() {
    // the probe sent a 1,100,000-word text record to the server (benches/hostile_probe.sh)
    let long = "word ".repeat(1_100_000);
    let n = ApproxTokenizer.count(&long);
    assert!(n > crate::workload::bounds::MAX_INPUT_TOKENS, "{n}");
    let text = format!("{{\"text\": \"a\"}}\n{{\"text\": \"{long}\"}}\n");
    let path = file("long.jsonl", &text);
    assert_eq!(
        load_file(&path, Some(DatasetFormat::Jsonl)).unwrap_err(),
        format!("{path}:2: the prompt is {n} tokens: at most 1000000 (as --input-tokens takes)")
    );
    assert_errors(
        "long-answer.jsonl",
        DatasetFormat::Jsonl,
        &[(
            "{\"text\": \"a\", \"output_length\": 1000001}\n",
            ":1: the answer asks for 1000001 tokens: at most 1000000 (as --output-tokens takes)",
        )],
    );
}

/// A chat record's tool calls and tool results go to the server as the file gave them:
/// each line's `messages`, loaded and written into a chat request body, are the same JSON.
#[test]
fn jsonl_tool_calls_and_tool_messages_are_sent_as_they_are() {
    let cases = [
        concat!(
            r#"[{"role":"system","content":"You are a coding agent."},"#,
            r#"{"role":"user","content":"Why does the build fail?"},"#,
            r#"{"role":"assistant","content":null,"tool_calls":["#,
            r#"{"id":"call_1","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"Cargo.toml\"}"}},"#,
            r#"{"id":"call_2","type":"function","function":{"name":"run","arguments":"{\"cmd\":\"cargo build\"}"}}]},"#,
            r#"{"role":"tool","tool_call_id":"call_1","content":"[package] name = \"x\""},"#,
            r#"{"role":"tool","tool_call_id":"call_2","content":"error[E0432]: unresolved import"},"#,
            r#"{"role":"assistant","content":"An import is missing."},"#,
            r#"{"role":"user","content":"Fix it."}]"#
        ),
        concat!(
            r#"[{"role":"user","content":"Weather?"},"#,
            r#"{"role":"assistant","content":"Looking it up.","tool_calls":["#,
            r#"{"id":"w","type":"function","function":{"name":"get_weather","arguments":"{\"city\": \"Par"}}]},"#,
            r#"{"role":"tool","tool_call_id":"w","content":"sunny"}]"#
        ),
    ];
    let spec = crate::endpoint::EndpointSpec {
        name: "t".into(),
        base_url: "http://h/v1".into(),
        model: "m".into(),
        api: crate::endpoint::Api::Chat,
        stream: false,
        exact_output_length: false,
        headers: vec![],
        api_key_env: None,
        sim_timing: false,
        sagemaker: None,
    };
    for messages in cases {
        let path = file("agent.jsonl", &format!("{{\"messages\": {messages}}}\n"));
        let (_, ds) = load_file(&path, None).unwrap();
        let Source::Messages(list) = &ds.records[0].source else {
            panic!("expected messages");
        };
        let body = crate::endpoint::openai::request_body(
            &spec,
            crate::workload::messages::RequestInput::Messages(list),
            5,
            None,
        );
        let sent: serde_json::Value = serde_json::from_slice(&body).unwrap();
        let given: serde_json::Value = serde_json::from_str(messages).unwrap();
        assert_eq!(sent["messages"], given, "{messages}");
    }
}
