//! Session tests: synthetic turns grow the history by the answers given, dataset
//! conversations become turns, and every turn is a pure function of its inputs.

use super::*;
use crate::workload::dataset::DatasetSpec;
use crate::workload::session_spec::SessionSpec;

fn synthetic(turns: u32, later: Option<u32>) -> WorkloadSpec {
    WorkloadSpec {
        sessions: Some(SessionSpec {
            turns,
            turn_input_tokens: later,
            think_time_ms: 0,
            agent: None,
        }),
        ..WorkloadSpec::fixed(40, 3)
    }
}

#[test]
fn synthetic_turns_carry_the_history_and_the_answers_given() {
    let w = synthetic(3, Some(8));
    let mut s = w.session(0, 7).unwrap();
    assert_eq!(s.turns(), 3);
    let t1 = s.next_turn(&w).unwrap();
    assert_eq!(
        (t1.number, t1.prompt.input_tokens, t1.prompt.max_tokens),
        (1, 40, 3)
    );
    assert_eq!(t1.prompt.messages.len(), 1);
    s.answered(&w, " key slow edge".into());
    let t2 = s.next_turn(&w).unwrap();
    // 40 + the answer's 3 tokens + 8 new
    assert_eq!((t2.number, t2.prompt.input_tokens), (2, 40 + 3 + 8));
    let roles: Vec<&str> = t2.prompt.messages.iter().map(|m| m.role.as_str()).collect();
    assert_eq!(roles, ["user", "assistant", "user"]);
    assert_eq!(t2.prompt.messages[0], t1.prompt.messages[0]);
    assert_eq!(t2.prompt.messages[1].content, " key slow edge");
    s.answered(&w, " a b".into());
    let t3 = s.next_turn(&w).unwrap();
    assert_eq!(t3.prompt.input_tokens, 40 + 3 + 8 + 2 + 8);
    assert_eq!(t3.prompt.messages.len(), 5);
    assert!(s.finished());
    assert!(s.next_turn(&w).is_none());

    // the same session gives the same messages; another session others
    let mut again = w.session(0, 7).unwrap();
    assert_eq!(
        again.next_turn(&w).unwrap().prompt.messages,
        t1.prompt.messages
    );
    let mut other = w.session(0, 8).unwrap();
    assert_ne!(
        other.next_turn(&w).unwrap().prompt.messages,
        t1.prompt.messages
    );
}

#[test]
fn later_turns_default_to_the_input_length() {
    let w = synthetic(2, None);
    let mut s = w.session(1, 0).unwrap();
    s.next_turn(&w).unwrap();
    s.answered(&w, " x".into());
    assert_eq!(s.next_turn(&w).unwrap().prompt.input_tokens, 40 + 1 + 40);
}

#[test]
fn single_turn_workloads_have_no_sessions() {
    assert!(WorkloadSpec::fixed(4, 4).session(0, 0).is_none());
}

#[test]
fn a_conversation_dataset_runs_its_user_turns_at_most_turns_of_them() {
    let dir = std::env::temp_dir().join(format!("rightsize-session-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("conv.jsonl");
    std::fs::write(
        &path,
        concat!(
            "{\"messages\": [{\"role\": \"system\", \"content\": \"be brief\"}, ",
            "{\"role\": \"user\", \"content\": \"first question\"}, ",
            "{\"role\": \"assistant\", \"content\": \"abcd abcd\"}, ",
            "{\"role\": \"user\", \"content\": \"second\"}, ",
            "{\"role\": \"assistant\", \"content\": \"abcd\"}, ",
            "{\"role\": \"user\", \"content\": \"third\"}]}\n",
        ),
    )
    .unwrap();
    let w = WorkloadSpec {
        dataset: Some(DatasetSpec::new(path.to_str().unwrap())),
        ..synthetic(2, None)
    }
    .load()
    .unwrap();
    let mut s = w.session(0, 0).unwrap();
    assert_eq!(s.turns(), 2);
    let t1 = s.next_turn(&w).unwrap();
    assert_eq!(
        t1.prompt.messages,
        vec![
            ChatMessage::new("system", "be brief"),
            ChatMessage::new("user", "first question"),
        ]
    );
    // the reference answer's length (abcd abcd: 2 tokens) is max_tokens
    assert_eq!(
        (t1.prompt.input_tokens, t1.prompt.max_tokens),
        (1 + 2 + 2 + 2, 2)
    );
    s.answered(&w, " the server's own".into());
    let t2 = s.next_turn(&w).unwrap();
    assert_eq!(
        t2.prompt.messages,
        vec![
            ChatMessage::new("system", "be brief"),
            ChatMessage::new("user", "first question"),
            ChatMessage::new("assistant", " the server's own"),
            ChatMessage::new("user", "second"),
        ]
    );
    assert_eq!(t2.prompt.max_tokens, 1);
    assert!(s.finished());
}

fn agent(turns: u32, result_tokens: u32) -> WorkloadSpec {
    let mut w = synthetic(turns, None);
    if let Some(s) = w.sessions.as_mut() {
        s.agent = Some(crate::workload::session_spec::AgentSpec {
            tool_latency_ms: 0,
            tool_result_tokens: result_tokens,
        });
    }
    w
}

fn call(id: &str, name: &str, arguments: &str) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: name.into(),
        arguments: arguments.into(),
    }
}

#[test]
fn an_agent_turn_sends_the_calls_and_one_result_per_call() {
    let w = agent(3, 25);
    let tok = crate::workload::tokenizer::ApproxTokenizer;
    let mut s = w.session(0, 3).unwrap();
    let t1 = s.next_turn(&w).unwrap();
    assert_eq!((t1.number, t1.prompt.input_tokens), (1, 40));
    let calls = vec![
        call("call-a", "read_file", r#"{"path": "src/main.rs"}"#),
        call("call-b", "grep", r#"{"q": "fn main"#),
    ];
    assert!(s.take_answer(&w, String::new(), calls.clone()));
    let t2 = s.next_turn(&w).unwrap();
    let m = &t2.prompt.messages;
    assert_eq!(m.len(), 4);
    assert_eq!(m[0], t1.prompt.messages[0]);
    assert_eq!(m[1], ChatMessage::assistant_calls("", &calls));
    assert_eq!(
        serde_json::to_value(&m[1]).unwrap(),
        serde_json::json!({"role": "assistant", "content": "", "tool_calls": [
            {"id": "call-a", "type": "function",
             "function": {"name": "read_file", "arguments": "{\"path\": \"src/main.rs\"}"}},
            {"id": "call-b", "type": "function",
             "function": {"name": "grep", "arguments": "{\"q\": \"fn main"}}]})
    );
    let got: Vec<(&str, Option<&str>, u32)> = m[2..]
        .iter()
        .map(|m| {
            (
                m.role.as_str(),
                m.tool_call_id.as_deref(),
                crate::workload::token_counter::Tokenizer::count(&tok, &m.content),
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![("tool", Some("call-a"), 25), ("tool", Some("call-b"), 25)]
    );
    assert_ne!(m[2].content, m[3].content);
    // the calls' names and arguments count (approx: read_file 3, its arguments 2 + 4, grep
    // 1, its arguments 2 + 1 + 1), and the results
    assert_eq!(t2.prompt.input_tokens, 40 + 14 + 25 + 25);
    // an answer without a tool call ends the session
    assert!(!s.take_answer(&w, " done".into(), Vec::new()));
    assert!(!s.finished());

    // the same session sends the same results
    let mut again = w.session(0, 3).unwrap();
    again.next_turn(&w).unwrap();
    again.take_answer(&w, String::new(), calls);
    assert_eq!(again.next_turn(&w).unwrap().prompt.messages, *m);
}

#[test]
fn an_agent_session_ends_after_its_turns() {
    let w = agent(2, 4);
    let mut s = w.session(1, 0).unwrap();
    s.next_turn(&w).unwrap();
    assert!(s.take_answer(&w, " ok".into(), vec![call("x", "f", "{}")]));
    let t2 = s.next_turn(&w).unwrap();
    let roles: Vec<&str> = t2.prompt.messages.iter().map(|m| m.role.as_str()).collect();
    assert_eq!(roles, ["user", "assistant", "tool"]);
    assert_eq!(t2.prompt.messages[1].content, " ok");
    assert!(s.finished());
    assert!(s.next_turn(&w).is_none());
}
