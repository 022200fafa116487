//! Tool calls end to end: a sweep with tools against the simulator whose answers are only
//! tool calls reports TTFT, inter-token latency and output tokens per level, and the broken
//! calls the simulator makes at its set share are counted (and, when asked, fail their
//! requests as `bad_tool_call`) within their binomial interval.

use rightsize::engine::{run, EngineEvent, RunOutcome};
use rightsize::plan::SweepPlanner;
use rightsize::record::ErrorKind;
use rightsize::sim::SimConfig;
use rightsize::workload::tools::ToolsSpec;
use rightsize::workload::WorkloadSpec;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

use crate::support::common;

pub(crate) const TOOLS: &str = r#"[{"type":"function","function":{"name":"search_docs","description":"Search the manual","parameters":{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}}}]"#;

fn workload(output: u32, fail_on_bad: bool) -> WorkloadSpec {
    let mut tools = ToolsSpec::parse("tools.json", TOOLS, None).expect("tools parse");
    tools.fail_on_bad_tool_call = fail_on_bad;
    WorkloadSpec {
        tools: Some(tools),
        ..WorkloadSpec::fixed(64, output)
    }
}

/// A streamed sweep of `levels`, `requests` each, against a simulator set by `sim`.
pub(crate) async fn sweep(
    sim: SimConfig,
    levels: Vec<u32>,
    requests: u32,
    w: WorkloadSpec,
) -> (RunOutcome, common::MemorySink) {
    let server = rightsize::sim::start(sim).await.expect("sim starts");
    let sink = common::MemorySink::default();
    let req = common::sim_run_request(
        &server,
        w,
        requests,
        Duration::from_secs(30),
        Box::new(sink.clone()),
    );
    let (tx, mut rx) = tokio::sync::mpsc::channel::<EngineEvent>(64);
    let drain = tokio::spawn(async move { while rx.recv().await.is_some() {} });
    let out = run(
        req,
        Box::new(SweepPlanner::fixed(levels)),
        tx,
        CancellationToken::new(),
    )
    .await
    .expect("run completes");
    drain.await.unwrap();
    server.shutdown();
    (out, sink)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_that_are_only_tool_calls_have_ttft_itl_and_output_tokens() {
    let (out, sink) = sweep(SimConfig::fast(50.0), vec![2, 8], 32, workload(12, false)).await;
    assert_eq!(out.levels.len(), 2);
    for l in &out.levels {
        assert_eq!((l.ok_count(), l.error_count()), (32, 0));
        let ttft = l.time_to_first_token.as_ref().expect("a TTFT");
        assert_eq!(ttft.count, 32);
        assert!(ttft.p50 > 0.0);
        let itl = l
            .inter_token_latency
            .as_ref()
            .expect("an inter-token latency");
        assert_eq!(itl.count, 32);
        assert!(itl.p50 > 0.0);
        // 11 gaps between 12 token events per answer
        assert_eq!(l.inter_chunk_latency.as_ref().unwrap().count, 32 * 11);
        assert_eq!(l.output_sequence_length.as_ref().unwrap().avg, 12.0);
        assert_eq!(l.output_tokens_source.server, 32);
        let t = &l.workload.tools;
        assert_eq!(t.tool_call_answers, Some(32));
        assert_eq!(t.tool_call_answer_share, Some(1.0));
        assert_eq!(t.tool_calls, Some(32));
        assert_eq!(t.tool_call_errors, Some(0));
        // an answer of tool calls has no answer text: no time to first output token
        assert_eq!(l.workload.time_to_first_output_token, None);
    }
    let got = sink.recorded();
    let counted: Vec<_> = got.records.iter().filter(|(_, r)| r.counted()).collect();
    assert_eq!(counted.len(), 64);
    for (_, r) in counted {
        assert_eq!((r.detail.tool_calls, r.detail.tool_call_errors), (1, 0));
        assert_eq!(r.content_chunks, 12);
        assert_eq!(r.output_tokens, Some(12));
    }
}

/// Whole answers (`--no-stream`): the tool calls count the same, without TTFT.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn whole_answers_that_are_tool_calls_count_alike() {
    let w = WorkloadSpec {
        stream: false,
        ..workload(9, false)
    };
    let (out, _) = sweep(SimConfig::fast(50.0), vec![4], 16, w).await;
    let l = &out.levels[0];
    assert_eq!((l.ok_count(), l.error_count()), (16, 0));
    assert_eq!(l.time_to_first_token, None);
    assert_eq!(l.inter_token_latency, None);
    assert_eq!(l.output_sequence_length.as_ref().unwrap().avg, 9.0);
    assert_eq!(l.workload.tools.tool_call_answers, Some(16));
    assert_eq!(l.workload.tools.tool_call_errors, Some(0));
}

/// The interval `[lo, hi]` holding a Binomial(n, p) count with probability at least 99.9 %:
/// at most 0.05 % below `lo` and at most 0.05 % above `hi`, from the exact probabilities.
pub(crate) fn binomial_999(n: u64, p: f64) -> (u64, u64) {
    let ln_fact = |k: u64| (1..=k).map(|i| (i as f64).ln()).sum::<f64>();
    let pmf = |k: u64| {
        (ln_fact(n) - ln_fact(k) - ln_fact(n - k)
            + k as f64 * p.ln()
            + (n - k) as f64 * (1.0 - p).ln())
        .exp()
    };
    let tail = 0.0005;
    let (mut lo, mut below) = (0, 0.0);
    while below + pmf(lo) <= tail {
        below += pmf(lo);
        lo += 1;
    }
    let (mut hi, mut above) = (n, 0.0);
    while above + pmf(hi) <= tail {
        above += pmf(hi);
        hi -= 1;
    }
    (lo, hi)
}

#[test]
fn the_binomial_interval_is_exact() {
    // Binomial(400, 0.2): P(X <= 54) = 0.000443, P(X <= 55) = 0.000720;
    // P(X >= 108) = 0.000447, P(X >= 107) = 0.000675
    assert_eq!(binomial_999(400, 0.2), (55, 107));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn broken_tool_calls_are_counted_within_their_binomial_interval() {
    let sim = SimConfig {
        tool_call_broken_share: 0.2,
        seed: 11,
        ..SimConfig::fast(50.0)
    };
    let (out, _) = sweep(sim, vec![8], 400, workload(6, true)).await;
    let l = &out.levels[0];
    let broken = l
        .workload
        .tools
        .tool_call_errors
        .expect("tool-call figures");
    let (lo, hi) = binomial_999(400, 0.2);
    assert!((lo..=hi).contains(&broken), "{broken} outside [{lo}, {hi}]");
    // every answer was a tool call; the broken ones failed their requests, each as its kind
    assert_eq!(l.workload.tools.tool_call_answers, Some(400));
    assert_eq!(l.workload.tools.tool_calls, Some(400));
    assert_eq!(l.errors_by_kind.get(&ErrorKind::BadToolCall), Some(&broken));
    assert_eq!(l.error_count(), broken);
    assert_eq!(l.ok_count(), 400 - broken);
}
