//! Registered tools: one tool server per run, stopped however the run ends, its record folded
//! into the result.

use std::sync::Arc;

use forge_app::CodeAgent;
use forge_domain::{ExecutionStatus, ForgeError, HostedTool, ToolExecution};
use forge_ports::ToolContext;
use forge_testkit::fakes::{RecordingToolHost, ScriptedProcessRunner, ScriptedRun};
use serde_json::{Value, json};

use super::harness::{OK, SESSION, TEXT, harness};

fn echo_tool() -> HostedTool {
    HostedTool::new("echo", "echoes", json!({"type": "object"})).unwrap()
}

fn agent_with_tools(host: &RecordingToolHost, runner: ScriptedProcessRunner) -> CodeAgent {
    // The harness's runtime, with the tools and the host added.
    let h = harness(Vec::new());
    let runtime = forge_app::Runtime {
        runner: Arc::new(runner),
        ..h.agent.runtime().clone()
    };
    CodeAgent::builder(runtime, super::harness::registry())
        .provider("echo")
        .workdir("/ws")
        .tool(echo_tool(), |args: Value, _ctx: ToolContext| async move {
            Ok(args)
        })
        .tool_host(Arc::new(host.clone()))
        .build()
        .unwrap()
}

#[tokio::test]
async fn a_run_with_tools_starts_its_server_stops_it_and_keeps_its_failures() {
    let failure = ToolExecution {
        call_id: None,
        tool: "echo".into(),
        input: json!({}),
        output: "bad".into(),
        is_error: true,
        duration_ms: 4,
        error: Some(ForgeError::ToolExecution {
            tool: "echo".into(),
            message: "bad".into(),
        }),
    };
    let host = RecordingToolHost::returning(vec![failure.clone()]);
    let runner = ScriptedProcessRunner::new(vec![ScriptedRun::lines([SESSION, TEXT, OK], 0)]);
    let agent = agent_with_tools(&host, runner);
    let result = agent.run(agent.request("go")).await;

    // The tool failed; the run did not.
    assert_eq!(result.status, ExecutionStatus::Success);
    assert_eq!(result.errors, vec![failure.error.unwrap()]);
    assert_eq!(host.started(), ["run-0001"]);
    assert_eq!(host.ended(), (1, 0));
}

#[tokio::test]
async fn the_server_is_stopped_when_the_cli_cannot_start_or_crashes() {
    let host = RecordingToolHost::default();
    let missing = ScriptedProcessRunner::new(vec![]).with_missing("fake-agent-cli");
    let agent = agent_with_tools(&host, missing);
    let result = agent.run(agent.request("go")).await;
    assert_eq!(result.status, ExecutionStatus::Error);

    let crash = ScriptedProcessRunner::new(vec![ScriptedRun::lines([SESSION], 134)]);
    let agent = agent_with_tools(&host, crash);
    let result = agent.run(agent.request("go")).await;
    assert_ne!(result.status, ExecutionStatus::Success);

    assert_eq!(host.started().len(), 2);
    let (stopped, dropped) = host.ended();
    assert_eq!(stopped + dropped, 2, "every server ended");
}

#[test]
fn tools_without_a_host_or_registered_twice_are_refused_at_build() {
    let h = harness(Vec::new());
    let builder = || {
        CodeAgent::builder(h.agent.runtime().clone(), super::harness::registry()).provider("echo")
    };
    let no_host = builder()
        .tool(echo_tool(), |args: Value, _ctx: ToolContext| async move {
            Ok(args)
        })
        .build();
    assert!(matches!(no_host, Err(ForgeError::InvalidRequest { .. })));
    let twice = builder()
        .tool_host(Arc::new(RecordingToolHost::default()))
        .tool(echo_tool(), |args: Value, _ctx: ToolContext| async move {
            Ok(args)
        })
        .tool(echo_tool(), |args: Value, _ctx: ToolContext| async move {
            Ok(args)
        })
        .build();
    assert!(matches!(twice, Err(ForgeError::InvalidRequest { .. })));
}
