//! `CodeAgent::run`: status, result pieces, bundle, errors.

use forge_domain::{AgentEvent, ExecutionStatus, ForgeError, SessionId, ToolCallStatus};
use forge_ports::{ProviderSettings, RunRecord};
use forge_testkit::fakes::{PassthroughWorkspace, ScriptStep, ScriptedRun, StoredRun};
use pretty_assertions::assert_eq;

use super::harness::{OK, SESSION, TEXT, harness, harness_with, request};

#[tokio::test]
async fn a_successful_run_fills_result_bundle_metrics_and_invocation() {
    let tool = r#"{"type":"tool","id":"t1","name":"Bash","input":{"command":"ls"}}"#;
    let tool_result = r#"{"type":"tool_result","id":"t1","output":"a.txt"}"#;
    let h = harness(vec![ScriptedRun::lines(
        [SESSION, TEXT, tool, tool_result, OK],
        0,
    )]);
    let result = h.agent.run(request(&h, "do it")).await;

    assert_eq!(result.status, ExecutionStatus::Success);
    assert_eq!(result.content, "all done");
    assert_eq!(result.raw_events.len(), 5);
    assert_eq!(result.tool_calls.len(), 1);
    assert_eq!(result.tool_calls[0].status, ToolCallStatus::Completed);
    assert_eq!(
        result.metadata.session_id,
        Some(SessionId::new("s-1").unwrap())
    );
    assert_eq!(result.metadata.exit_code, Some(0));
    assert_eq!(
        result.metadata.run_id.as_ref().map(|r| r.as_str()),
        Some("run-0001")
    );
    assert!(result.errors.is_empty(), "{:?}", result.errors);

    // The prompt went on stdin, in the workdir.
    let inv = &h.runner.invocations()[0];
    assert_eq!(inv.stdin.as_deref(), Some(&b"do it"[..]));
    assert_eq!(inv.cwd, std::path::PathBuf::from("/ws"));

    // The bundle has the events as they arrived and the final result and record.
    let stored = h.store.runs();
    assert_eq!(stored.len(), 1);
    let kinds: Vec<&str> = stored[0].events.iter().map(AgentEvent::kind).collect();
    assert_eq!(
        kinds,
        [
            "session_started",
            "text",
            "tool_call_started",
            "tool_call_finished",
            "completed"
        ]
    );
    assert_eq!(
        stored[0].result.as_ref().map(|r| r.status),
        Some(ExecutionStatus::Success)
    );
    assert_eq!(stored[0].record.status, Some(ExecutionStatus::Success));
    assert_eq!(
        stored[0].record.session_id,
        Some(SessionId::new("s-1").unwrap())
    );

    assert_eq!(
        h.metrics.calls(),
        [
            "started echo",
            "finished echo Success timed_out=false cancelled=false"
        ]
    );
    assert!(
        h.logger
            .lines()
            .iter()
            .any(|l| l == "run-0001/echo: finished Success")
    );
}

#[tokio::test]
async fn a_crash_mid_stream_is_partial_with_what_arrived() {
    let h = harness(vec![ScriptedRun::lines([SESSION, TEXT], 134)]);
    let result = h.agent.run(request(&h, "x")).await;
    assert_eq!(result.status, ExecutionStatus::Partial);
    assert_eq!(result.content, "hello");
    assert!(result.errors.iter().any(|e| matches!(
        e,
        ForgeError::ProviderExecution {
            exit_code: Some(134),
            ..
        }
    )));
    assert!(
        h.store.runs()[0].result.is_some(),
        "bundle finished after a crash"
    );
}

#[tokio::test]
async fn bad_lines_become_events_and_errors_and_the_stream_goes_on() {
    let run = ScriptedRun {
        steps: vec![
            ScriptStep::Line(SESSION.into()),
            ScriptStep::Line(r#"{"type":"text","te"#.into()),
            ScriptStep::Line("Warning: not json".into()),
            ScriptStep::Line(r#"{"type":"brand_new","x":1}"#.into()),
            ScriptStep::Oversize {
                size_bytes: 50 * 1024 * 1024,
                prefix: "{\"type\":\"text\"".into(),
            },
            ScriptStep::Line(String::new()),
            ScriptStep::Line(OK.into()),
        ],
        exit_code: 0,
        stderr: String::new(),
        on_interrupt: Vec::new(),
    };
    let h = harness(vec![run]);
    let result = h.agent.run(request(&h, "x")).await;
    assert_eq!(result.status, ExecutionStatus::Success);
    let kinds: Vec<&str> = h.store.runs()[0]
        .events
        .iter()
        .map(AgentEvent::kind)
        .collect();
    assert_eq!(
        kinds,
        [
            "session_started",
            "unparsed",
            "unparsed",
            "unknown",
            "oversize_line",
            "completed"
        ]
    );
    let parse_lines: Vec<u64> = result
        .errors
        .iter()
        .filter_map(|e| match e {
            ForgeError::Parsing { line, .. } => Some(*line),
            _ => None,
        })
        .collect();
    assert_eq!(parse_lines, [2, 5]);
    // Blank lines are not events; everything else is kept raw.
    assert_eq!(result.raw_events.len(), 6);
    assert_eq!(
        h.metrics
            .calls()
            .iter()
            .filter(|c| c.starts_with("parse_error"))
            .count(),
        2
    );
}

#[tokio::test]
async fn a_missing_binary_is_an_error_with_the_install_hint_and_a_bundle() {
    let settings = ProviderSettings {
        binary: Some("/nope/cli".into()),
        ..ProviderSettings::default()
    };
    let mut h = harness_with(vec![], settings, PassthroughWorkspace::default());
    h.runner = h.runner.clone();
    let runner = forge_testkit::fakes::ScriptedProcessRunner::new(vec![]).with_missing("/nope/cli");
    let runtime = forge_app::Runtime {
        runner: std::sync::Arc::new(runner),
        ..h.agent.runtime().clone()
    };
    let agent = forge_app::CodeAgent::builder(runtime, super::harness::registry())
        .provider_settings(
            "echo",
            ProviderSettings {
                binary: Some("/nope/cli".into()),
                ..ProviderSettings::default()
            },
        )
        .workdir("/ws")
        .build()
        .unwrap();
    let result = agent.run(agent.request("x")).await;
    assert_eq!(result.status, ExecutionStatus::Error);
    match &result.errors[..] {
        [ForgeError::ExecutableNotFound { program, hint }] => {
            assert_eq!(program, "/nope/cli");
            assert!(hint.contains("fake-agent-cli"), "{hint}");
        }
        other => panic!("unexpected errors {other:?}"),
    }
    let stored = h.store.runs();
    assert_eq!(stored.len(), 1);
    assert!(stored[0].result.is_some());
    assert_eq!(
        stored[0]
            .events
            .iter()
            .map(AgentEvent::kind)
            .collect::<Vec<_>>(),
        ["error"]
    );
}

#[tokio::test]
async fn unknown_provider_and_missing_workdir_are_typed_errors() {
    let h = harness_with(
        vec![],
        ProviderSettings::default(),
        PassthroughWorkspace::with_missing("/gone"),
    );
    let mut req = request(&h, "x");
    req.provider = forge_domain::ProviderId::new("nope").unwrap();
    let result = h.agent.run(req).await;
    assert_eq!(result.status, ExecutionStatus::Error);
    assert!(
        matches!(&result.errors[..], [ForgeError::ProviderNotSupported { provider, registered }] if provider == "nope" && registered == "echo")
    );

    let mut req = request(&h, "x");
    req.workdir = "/gone".into();
    let result = h.agent.run(req).await;
    assert_eq!(result.status, ExecutionStatus::Error);
    assert!(matches!(
        &result.errors[..],
        [ForgeError::InvalidRequest { .. }]
    ));
    assert!(h.store.runs().is_empty(), "no bundle without a workspace");
}

#[tokio::test]
async fn resuming_a_session_reuses_the_home_of_its_first_run() {
    let settings = ProviderSettings {
        isolate_home: true,
        ..ProviderSettings::default()
    };
    let other_session = r#"{"type":"session","id":"s-2"}"#;
    let runs = vec![
        ScriptedRun::lines([other_session, OK], 0),
        ScriptedRun::lines([SESSION, OK], 0),
    ];
    let h = harness_with(runs, settings, PassthroughWorkspace::default());
    h.store.insert(StoredRun {
        record: RunRecord {
            run_id: forge_domain::RunId::new("run-old").unwrap(),
            provider: forge_domain::ProviderId::new("echo").unwrap(),
            workdir: "/ws".into(),
            home: Some("/ws/.forgecode/runs/run-old/home".into()),
            started_at_ms: 1,
            finished_at_ms: Some(2),
            session_id: Some(SessionId::new("s-1").unwrap()),
            status: Some(ExecutionStatus::Success),
            pid: None,
        },
        request: request(&h, "first"),
        events: vec![],
        result: None,
    });
    // A fresh run gets a private home under its own bundle.
    let _ = h.agent.run(request(&h, "fresh")).await;
    let mut req = request(&h, "again");
    req.resume_session_id = Some(SessionId::new("s-1").unwrap());
    let _ = h.agent.run(req).await;
    let homes: Vec<String> = h
        .runner
        .invocations()
        .iter()
        .map(|i| i.env.set.get("HOME").cloned().unwrap_or_default())
        .collect();
    assert_eq!(
        homes,
        [
            "/ws/.forgecode/runs/run-0001/home",
            "/ws/.forgecode/runs/run-old/home"
        ]
    );
    assert_eq!(h.runner.invocations()[1].args, ["--resume=s-1"]);
}

#[tokio::test]
async fn an_empty_prompt_succeeds_with_no_content_and_starts_no_process() {
    for prompt in ["", "   ", "\n\t"] {
        let h = harness(vec![ScriptedRun::lines([SESSION, TEXT, OK], 0)]);
        let result = h.agent.run(request(&h, prompt)).await;
        assert_eq!(result.status, ExecutionStatus::Success, "{prompt:?}");
        assert_eq!(result.content, "");
        assert!(result.errors.is_empty(), "{:?}", result.errors);
        assert!(result.metadata.run_id.is_some());
        assert!(
            h.runner.invocations().is_empty(),
            "{prompt:?} started a process"
        );

        let mut handle = h.agent.stream(request(&h, prompt));
        assert_eq!(handle.next_event().await, None);
        assert_eq!(handle.result().await.status, ExecutionStatus::Success);
        assert!(h.runner.invocations().is_empty());
    }
    // A prompt of one character is asked.
    let h = harness(vec![ScriptedRun::lines([SESSION, TEXT, OK], 0)]);
    let result = h.agent.run(request(&h, ".")).await;
    assert_eq!(result.content, "all done");
    assert_eq!(h.runner.invocations().len(), 1);
}
