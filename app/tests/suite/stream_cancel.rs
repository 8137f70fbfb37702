//! `CodeAgent::stream`: live events, cancel, timeout, kill.

use std::time::Duration;

use forge_domain::{AgentEvent, ExecutionStatus, ForgeError};
use forge_testkit::fakes::{ScriptStep, ScriptedRun};
use pretty_assertions::assert_eq;

use super::harness::{OK, SESSION, TEXT, harness, request};

fn hanging() -> ScriptedRun {
    ScriptedRun {
        steps: vec![
            ScriptStep::Line(SESSION.into()),
            ScriptStep::Line(TEXT.into()),
            ScriptStep::Hang,
        ],
        exit_code: 0,
        stderr: String::new(),
        on_interrupt: vec![r#"{"type":"result","ok":false,"text":"aborted"}"#.into()],
    }
}

#[tokio::test]
async fn events_stream_live_in_order_then_the_result() {
    let h = harness(vec![ScriptedRun::lines([SESSION, TEXT, OK], 0)]);
    let mut handle = h.agent.stream(request(&h, "x"));
    let mut kinds = Vec::new();
    while let Some(ev) = handle.next_event().await {
        kinds.push(ev.kind());
    }
    assert_eq!(kinds, ["session_started", "text", "completed"]);
    let result = handle.result().await;
    assert_eq!(result.status, ExecutionStatus::Success);
}

#[tokio::test]
async fn cancel_keeps_what_arrived_and_reports_cancelled_whatever_the_cli_printed() {
    let h = harness(vec![hanging()]);
    let mut handle = h.agent.stream(request(&h, "x"));
    assert_eq!(
        handle.next_event().await.map(|e| e.kind()),
        Some("session_started")
    );
    assert_eq!(handle.next_event().await.map(|e| e.kind()), Some("text"));
    handle.cancel();
    let mut rest = Vec::new();
    while let Some(ev) = handle.next_event().await {
        rest.push(ev);
    }
    // The CLI's own answer to SIGINT still arrives, then forge's cancel notice.
    assert_eq!(
        rest.iter().map(AgentEvent::kind).collect::<Vec<_>>(),
        ["completed", "error"]
    );
    let result = handle.result().await;
    assert_eq!(result.status, ExecutionStatus::Partial);
    assert!(result.was_cancelled());
    assert_eq!(result.content, "aborted");
    assert_eq!(result.metadata.stop_reason.as_deref(), Some("cancelled"));
    assert_eq!(h.runner.signals(), ["shutdown"]);
    let stored = &h.store.runs()[0];
    assert_eq!(
        stored.result.as_ref().map(|r| r.status),
        Some(ExecutionStatus::Partial)
    );
    assert_eq!(stored.events.len(), 4);
}

#[tokio::test]
async fn cancel_before_any_output_wins_the_race() {
    let h = harness(vec![ScriptedRun::lines([SESSION, OK], 0)]);
    let handle = h.agent.stream(request(&h, "x"));
    handle.cancel();
    let result = handle.result().await;
    assert!(result.was_cancelled());
    assert_eq!(result.status, ExecutionStatus::Partial);
}

#[tokio::test(start_paused = true)]
async fn a_timeout_walks_the_ladder_and_reports_the_deadline() {
    let h = harness(vec![hanging()]);
    let mut req = request(&h, "x");
    req.timeout_ms = Some(5_000);
    let result = h.agent.run(req).await;
    assert_eq!(result.status, ExecutionStatus::Partial);
    assert!(
        result
            .errors
            .contains(&ForgeError::ProviderTimeout { after_ms: 5_000 })
    );
    assert_eq!(result.metadata.stop_reason.as_deref(), Some("timeout"));
    assert_eq!(h.runner.signals(), ["shutdown"]);
    assert!(
        h.metrics
            .calls()
            .iter()
            .any(|c| c.contains("timed_out=true"))
    );
}

#[tokio::test]
async fn kill_now_kills_at_once() {
    let h = harness(vec![hanging()]);
    let mut handle = h.agent.stream(request(&h, "x"));
    let _ = handle.next_event().await;
    handle.canceller().kill_now();
    let result = tokio::time::timeout(Duration::from_secs(5), handle.result())
        .await
        .unwrap();
    assert!(result.was_cancelled());
    assert!(h.runner.signals().contains(&"kill_now".to_owned()));
}

#[tokio::test]
async fn a_reader_that_stops_reading_does_not_block_the_run() {
    let lines: Vec<String> = (0..5000)
        .map(|i| format!(r#"{{"type":"text","text":"{i}"}}"#))
        .collect();
    let mut all = vec![SESSION.to_owned()];
    all.extend(lines);
    all.push(OK.to_owned());
    let h = harness(vec![ScriptedRun::lines(all, 0)]);
    let handle = h.agent.stream(request(&h, "x"));
    let result = tokio::time::timeout(Duration::from_secs(10), handle.result())
        .await
        .unwrap();
    assert_eq!(result.status, ExecutionStatus::Success);
    assert_eq!(result.raw_events.len(), 5002);
}
