//! `on_rate_limit = "wait"`: a run that ends on a limit with a reset time waits for it, then
//! resumes the same session in a run of its own; the wait is an event and a record.

use forge_app::CodeAgent;
use forge_domain::{AgentEvent, ExecutionStatus, OnRateLimit};
use forge_testkit::fakes::ScriptedRun;
use pretty_assertions::assert_eq;

use super::harness::{Harness, OK, SESSION, TEXT, harness, registry};

/// Ends with an error result and a rate limit that resets in 10 ms on stderr.
fn limited() -> ScriptedRun {
    ScriptedRun {
        stderr: "API Error: 429 rate limit reached, please try again in 10ms".into(),
        ..ScriptedRun::lines(
            [SESSION, r#"{"type":"result","ok":false,"text":"limited"}"#],
            1,
        )
    }
}

fn agent(h: &Harness, policy: OnRateLimit) -> CodeAgent {
    CodeAgent::builder(h.agent.runtime().clone(), registry())
        .provider("echo")
        .workdir("/ws")
        .on_rate_limit(policy)
        .build()
        .unwrap()
}

#[tokio::test]
async fn wait_resumes_the_session_after_the_reset_and_records_the_wait() {
    let h = harness(vec![limited(), ScriptedRun::lines([SESSION, TEXT, OK], 0)]);
    let agent = agent(&h, OnRateLimit::Wait);
    let mut handle = agent.stream(agent.request("do it"));
    let mut events = Vec::new();
    while let Some(event) = handle.next_event().await {
        events.push(event);
    }
    let result = handle.result().await;

    assert_eq!(
        result.status,
        ExecutionStatus::Success,
        "{:?}",
        result.errors
    );
    assert_eq!(result.content, "all done");
    let waits = &result.metadata.rate_limit_waits;
    assert_eq!(waits.len(), 1);
    assert_eq!(waits[0].run_id.as_deref(), Some("run-0001"));
    assert!(waits[0].message.contains("try again in 10ms"), "{waits:?}");
    assert_eq!(
        result.metadata.run_id.as_ref().map(|r| r.as_str()),
        Some("run-0002"),
        "the resumed session runs as a run of its own"
    );
    let invocations = h.runner.invocations();
    assert_eq!(invocations.len(), 2);
    assert!(
        invocations[1].args.iter().any(|a| a == "--resume=s-1"),
        "{:?}",
        invocations[1].args
    );
    let waited: Vec<_> = events
        .iter()
        .filter(|e| matches!(e, AgentEvent::RateLimitWait { .. }))
        .collect();
    assert_eq!(waited.len(), 1, "one wait event on the stream");
    // Both runs have a finished bundle; the resumed one opens with the wait.
    let stored = h.store.runs();
    assert_eq!(stored.len(), 2);
    let waits_in = |run: &str| -> Vec<AgentEvent> {
        let stored = stored.iter().find(|s| s.record.run_id.as_str() == run);
        let events = stored.map(|s| s.events.clone()).unwrap_or_default();
        events
            .into_iter()
            .filter(|e| matches!(e, AgentEvent::RateLimitWait { .. }))
            .collect()
    };
    assert_eq!(waits_in("run-0001"), []);
    let resumed = stored
        .iter()
        .find(|s| s.record.run_id.as_str() == "run-0002")
        .unwrap();
    assert_eq!(resumed.events.first(), waited.first().copied());
    assert_eq!(waits_in("run-0002").len(), 1);
}

#[tokio::test]
async fn fail_keeps_the_failed_result_and_does_not_resume() {
    let h = harness(vec![limited(), ScriptedRun::lines([SESSION, TEXT, OK], 0)]);
    let result = agent(&h, OnRateLimit::Fail)
        .run(h.agent.request("do it"))
        .await;
    assert_eq!(result.status, ExecutionStatus::Error);
    assert!(result.metadata.rate_limit_waits.is_empty());
    assert_eq!(h.runner.invocations().len(), 1);
}

#[tokio::test]
async fn a_reset_past_the_deadline_fails_with_a_note() {
    let h = harness(vec![limited(), ScriptedRun::lines([SESSION, TEXT, OK], 0)]);
    let agent = agent(&h, OnRateLimit::Wait);
    let mut request = agent.request("do it");
    // The reset (10 ms) plus the resume margin (1 s) is past a 500 ms deadline.
    request.timeout_ms = Some(500);
    let result = agent.run(request).await;
    assert_eq!(result.status, ExecutionStatus::Error);
    assert_eq!(h.runner.invocations().len(), 1);
    assert!(
        result.metadata.notes.iter().any(|n| n.contains("deadline")),
        "{:?}",
        result.metadata.notes
    );
}

#[tokio::test]
async fn a_failure_without_a_limit_is_not_waited_for() {
    let h = harness(vec![
        ScriptedRun {
            stderr: "server error 500, try again in 10ms".into(),
            ..ScriptedRun::lines([SESSION, r#"{"type":"result","ok":false,"text":"x"}"#], 1)
        },
        ScriptedRun::lines([SESSION, TEXT, OK], 0),
    ]);
    let result = agent(&h, OnRateLimit::Wait)
        .run(h.agent.request("do it"))
        .await;
    assert_eq!(result.status, ExecutionStatus::Error);
    assert_eq!(h.runner.invocations().len(), 1);
}

#[test]
fn on_rate_limit_is_a_configuration_key() {
    use forge_app::config::{defaults, merge, parse_file};
    let path = std::path::Path::new("/w/forge.toml");
    let check = |text: &str, expected: Result<Option<OnRateLimit>, &str>| {
        let got = parse_file(text, path).map(|layer| layer.config.on_rate_limit);
        match expected {
            Ok(policy) => assert_eq!(got.unwrap(), policy, "{text}"),
            Err(part) => {
                let message = got.unwrap_err().to_string();
                assert!(message.contains(part), "{text}: {message}");
            }
        }
    };
    check(r#"on_rate_limit = "wait""#, Ok(Some(OnRateLimit::Wait)));
    check(r#"on_rate_limit = "fail""#, Ok(Some(OnRateLimit::Fail)));
    check("", Ok(None));
    check(
        r#"on_rate_limit = "later""#,
        Err("unknown rate-limit policy"),
    );
    check("on_rate_limit = true", Err("on_rate_limit"));

    let merged = merge(&[
        defaults(),
        parse_file(r#"on_rate_limit = "wait""#, path).unwrap(),
    ]);
    assert_eq!(
        merged.on_rate_limit.map(|s| s.value),
        Some(OnRateLimit::Wait)
    );
}
