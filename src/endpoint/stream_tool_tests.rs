//! The stream reader on answers with tool calls: content, reasoning and tool-call fragments
//! in every order, one call's arguments split at every byte (with and without vLLM's first
//! fragment that carries only the id and the name), broken arguments, and whole bodies.

use super::*;

/// One chunk of a chat stream.
#[derive(Debug, Clone, Copy)]
enum Piece {
    Content(&'static str),
    Reasoning(&'static str),
    /// A tool-call fragment: index, the name (with an id and `type`) when given, and a piece
    /// of arguments.
    Tool(u32, Option<&'static str>, &'static str),
}

fn sse(piece: Piece) -> String {
    let delta = match piece {
        Piece::Content(t) => serde_json::json!({ "content": t }),
        Piece::Reasoning(t) => serde_json::json!({ "reasoning_content": t }),
        Piece::Tool(index, Some(name), args) => serde_json::json!({ "tool_calls": [{
            "index": index, "id": format!("chatcmpl-tool-{index}"), "type": "function",
            "function": { "name": name, "arguments": args }
        }]}),
        Piece::Tool(index, None, args) => serde_json::json!({ "tool_calls": [{
            "index": index, "function": { "arguments": args }
        }]}),
    };
    format!(
        "data: {}\n\n",
        serde_json::json!({ "choices": [{ "index": 0, "delta": delta, "finish_reason": null }] })
    )
}

const END: &str =
    "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n\
    data: [DONE]\n\n";

/// The outcome of a stream of `pieces`, each chunk read in a part of its own stamped with
/// its position (1-based); the end in a last part.
fn read(pieces: &[Piece]) -> ExchangeOutcome {
    let mut parts: Vec<String> = pieces.iter().map(|p| sse(*p)).collect();
    parts.push(END.to_string());
    let mut out = ExchangeOutcome::default();
    let mut reader = StreamReader::new(Dialect::OpenAi);
    for (i, part) in parts.iter().enumerate() {
        assert!(!reader.on_bytes(part.as_bytes(), i as u64 + 1, &mut out, None));
    }
    reader.on_end(&mut out);
    reader.finish(&mut out, None);
    out
}

/// What the tests compare: first token's part, token events' parts, answer, reasoning, tool
/// calls, broken calls, names and arguments.
type Seen = (Option<u64>, Vec<u64>, String, String, u32, u32, Vec<String>);

fn seen(o: &ExchangeOutcome) -> Seen {
    assert_eq!(o.error, None);
    (
        o.first_token_ns,
        o.content_chunk_ns.clone(),
        o.answer_text.clone(),
        o.reasoning_text.clone(),
        o.tool_calls,
        o.tool_call_errors,
        o.tool_call_text.clone(),
    )
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

/// Every order of a content chunk, a reasoning chunk and a tool call in two fragments (the
/// second after the first): TTFT is the first chunk whatever it carries, and each is a token
/// event.
#[test]
fn content_reasoning_and_tool_fragments_in_every_order() {
    let c = Piece::Content("Sure.");
    let r = Piece::Reasoning("think");
    let t1 = Piece::Tool(0, Some("get_weather"), "{\"city\":");
    let t2 = Piece::Tool(0, None, "\"Paris\"}");
    let orders: [[Piece; 4]; 12] = [
        [c, r, t1, t2],
        [c, t1, r, t2],
        [c, t1, t2, r],
        [r, c, t1, t2],
        [r, t1, c, t2],
        [r, t1, t2, c],
        [t1, c, r, t2],
        [t1, r, c, t2],
        [t1, t2, c, r],
        [t1, t2, r, c],
        [t1, c, t2, r],
        [t1, r, t2, c],
    ];
    for order in orders {
        let got = read(&order);
        assert_eq!(
            seen(&got),
            (
                Some(1),
                vec![1, 2, 3, 4],
                "Sure.".to_string(),
                "think".to_string(),
                1,
                0,
                strings(&["get_weather", "{\"city\":\"Paris\"}"]),
            ),
            "{order:?}"
        );
        // time to first output (answer content) is the content chunk's part
        let content_at = order
            .iter()
            .position(|p| matches!(p, Piece::Content(_)))
            .unwrap() as u64
            + 1;
        assert_eq!(got.first_output_ns, Some(content_at), "{order:?}");
        assert_eq!(got.last_token_ns, Some(4), "{order:?}");
        assert_eq!(got.output_tokens_source, TokenSource::Client, "{order:?}");
    }
    // only tool calls: the first fragment is the first token
    let only = read(&[t1, t2]);
    assert_eq!(only.first_token_ns, Some(1));
    assert_eq!(only.first_output_ns, None);
    assert_eq!(only.content_chunk_ns, vec![1, 2]);
}

const ARGS: &str = r#"{"location": "Paris, \"FR\"", "unit": "celsius", "days": [1, 2]}"#;

/// One call's arguments split at every byte into two fragments: the first with the id and
/// the name (as OpenAI does), or after a fragment with the id and the name alone (as vLLM
/// does). An empty piece is no token event.
#[test]
fn arguments_split_at_every_byte_reassemble() {
    assert!(ARGS.is_ascii());
    for k in 0..=ARGS.len() {
        let (a, b) = ARGS.split_at(k);
        let want_args = strings(&["get_weather", ARGS]);
        // name with the first piece
        let got = read(&[
            Piece::Tool(0, Some("get_weather"), a),
            Piece::Tool(0, None, b),
        ]);
        let events: Vec<u64> = if b.is_empty() { vec![1] } else { vec![1, 2] };
        assert_eq!(
            seen(&got),
            (
                Some(1),
                events,
                String::new(),
                String::new(),
                1,
                0,
                want_args.clone()
            ),
            "openai-style split at {k}"
        );
        // vLLM: id and name first, then the two pieces
        let got = read(&[
            Piece::Tool(0, Some("get_weather"), ""),
            Piece::Tool(0, None, a),
            Piece::Tool(0, None, b),
        ]);
        let events: Vec<u64> = [(1, true), (2, !a.is_empty()), (3, !b.is_empty())]
            .into_iter()
            .filter_map(|(t, any)| any.then_some(t))
            .collect();
        assert_eq!(
            seen(&got),
            (
                Some(1),
                events,
                String::new(),
                String::new(),
                1,
                0,
                want_args
            ),
            "vLLM-style split at {k}"
        );
    }
}

/// Arguments cut short are a broken call; two calls are told apart by their index, and only
/// the broken one counts as broken.
#[test]
fn broken_arguments_are_counted() {
    let got = read(&[
        Piece::Tool(0, Some("search"), "{\"q\": \"ru"),
        Piece::Tool(1, Some("get_weather"), ""),
        Piece::Tool(0, None, "st"),
        Piece::Tool(1, None, "{}"),
    ]);
    assert_eq!(
        seen(&got),
        (
            Some(1),
            vec![1, 2, 3, 4],
            String::new(),
            String::new(),
            2,
            1,
            strings(&["search", "{\"q\": \"rust", "get_weather", "{}"]),
        )
    );
    // the calls as an agent loop sends them back: ids, names and arguments as streamed
    let call = |id: &str, name: &str, arguments: &str| crate::record::ToolCall {
        id: id.into(),
        name: name.into(),
        arguments: arguments.into(),
    };
    assert_eq!(
        got.tool_call_list,
        vec![
            call("chatcmpl-tool-0", "search", "{\"q\": \"rust"),
            call("chatcmpl-tool-1", "get_weather", "{}"),
        ]
    );
    // an empty arguments text is no JSON either
    let got = read(&[Piece::Tool(0, Some("ping"), "")]);
    assert_eq!((got.tool_calls, got.tool_call_errors), (1, 1));
}

/// A whole (non-streaming) body's `message.tool_calls` count likewise: no TTFT, the body is
/// the one token event.
#[test]
fn whole_bodies_carry_tool_calls() {
    let body = br#"{"choices":[{"message":{"role":"assistant","content":null,"tool_calls":[
        {"id":"a","type":"function","function":{"name":"f","arguments":"{\"x\": 1}"}},
        {"id":"b","type":"function","function":{"name":"g","arguments":"{\"x\": "}}]},
        "finish_reason":"tool_calls"}],"usage":{"prompt_tokens":9,"completion_tokens":12,
        "prompt_tokens_details":{"cached_tokens":8}}}"#;
    let mut out = ExchangeOutcome::default();
    parse_whole(&Dialect::OpenAi, body, 7, &mut out, None);
    assert_eq!(out.error, None);
    assert_eq!(out.first_token_ns, None);
    assert_eq!(out.content_chunk_ns, vec![7]);
    assert_eq!((out.tool_calls, out.tool_call_errors), (2, 1));
    assert_eq!(out.output_tokens, Some(12));
    assert_eq!(out.cached_tokens, Some(8));
    assert_eq!(out.output_tokens_source, TokenSource::Server);
    let ids: Vec<&str> = out.tool_call_list.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["a", "b"]);
    assert_eq!(
        out.tool_call_text,
        strings(&["f", "{\"x\": 1}", "g", "{\"x\": "])
    );
}
