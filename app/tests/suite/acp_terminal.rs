//! ACP's `terminal/*` end to end through the runtime, the REAL process runner and workspace,
//! with a scripted ACP agent (a shell script: none of the three pinned agents asks for a
//! terminal). The agent logs every line forge writes to it, so the test sees the answers in
//! the order they came.

use std::path::Path;
use std::time::Duration;

use forge_app::{CodeAgent, ProviderRegistry};
use forge_domain::{
    AgentEvent, ExecutionResult, ExecutionStatus, ForgeError, ProviderId, ToolKind,
};
use forge_ports::{KillLadder, ProviderSettings};
use serde_json::{Value, json};

use super::harness::real_runtime;

/// Reads one line from forge into `answers.log`; `tid` is the terminal id in the last one.
const PRELUDE: &str = r#"
reply() { read -r line; printf '%s\n' "$line" >> answers.log; }
tid() { printf '%s' "$line" | sed -n 's/.*"terminalId":"\([^"]*\)".*/\1/p'; }
reply; echo '{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}'
reply; echo '{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}}'
reply
"#;

/// A command that waits for the agent (`cat` on a FIFO the agent writes only after forge
/// answered a later request): forge must keep serving while it waits for the exit.
const WAITS_FOR_THE_AGENT: &str = r#"
mkfifo go
echo '{"jsonrpc":"2.0","id":100,"method":"terminal/create","params":{"sessionId":"s1","command":"sh","args":["-c","cat go; exit 7"],"outputByteLimit":100}}'
reply; t=$(tid)
echo '{"jsonrpc":"2.0","id":101,"method":"terminal/wait_for_exit","params":{"sessionId":"s1","terminalId":"'"$t"'"}}'
echo '{"jsonrpc":"2.0","id":102,"method":"fs/read_text_file","params":{"sessionId":"s1","path":"note.txt"}}'
reply; echo hello > go
reply
echo '{"jsonrpc":"2.0","id":103,"method":"terminal/output","params":{"sessionId":"s1","terminalId":"'"$t"'"}}'
reply
echo '{"jsonrpc":"2.0","id":104,"method":"terminal/release","params":{"sessionId":"s1","terminalId":"'"$t"'"}}'
reply
echo '{"jsonrpc":"2.0","id":105,"method":"terminal/create","params":{"sessionId":"s1","command":"true","cwd":"/"}}'
reply
echo '{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}'
"#;

/// A command that runs until the run is cancelled; it writes its pid first.
const RUNS_UNTIL_CANCELLED: &str = r#"
echo '{"jsonrpc":"2.0","id":100,"method":"terminal/create","params":{"sessionId":"s1","command":"sh","args":["-c","echo $$ > pid.tmp; mv pid.tmp pid; exec sleep 30"]}}'
reply; t=$(tid)
echo '{"jsonrpc":"2.0","id":101,"method":"terminal/wait_for_exit","params":{"sessionId":"s1","terminalId":"'"$t"'"}}'
reply
echo '{"jsonrpc":"2.0","id":3,"result":{"stopReason":"cancelled"}}'
"#;

fn agent(workdir: &Path, script: &str) -> CodeAgent {
    let path = workdir.join("agent.sh");
    std::fs::write(&path, format!("{PRELUDE}{script}")).unwrap();
    let id = ProviderId::new("scripted-acp").unwrap();
    let registry = ProviderRegistry::new().register(id.clone(), move |s: ProviderSettings| {
        forge_adapter_acp::provider(id.clone(), s)
    });
    let settings = ProviderSettings {
        command: vec!["sh".into(), path.display().to_string()],
        ..ProviderSettings::default()
    };
    CodeAgent::builder(real_runtime(), registry)
        .provider("scripted-acp")
        .provider_settings("scripted-acp", settings)
        .workdir(workdir)
        .kill_ladder(KillLadder {
            interrupt_grace: Duration::from_millis(200),
            terminate_grace: Duration::from_millis(200),
        })
        .build()
        .unwrap()
}

/// The run's events and result, the run cancelled once `cancel_when` exists.
async fn run(
    workdir: &Path,
    script: &str,
    cancel_when: Option<&str>,
) -> (Vec<AgentEvent>, ExecutionResult) {
    let agent = agent(workdir, script);
    let mut request = agent.request("go");
    // Bounds a hang (a blocked answer) instead of the test runner's own limit.
    request.timeout_ms = Some(20_000);
    let mut handle = agent.stream(request);
    if let Some(file) = cancel_when {
        while !workdir.join(file).exists() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        handle.cancel();
    }
    let mut events = Vec::new();
    while let Some(event) = handle.next_event().await {
        events.push(event);
    }
    (events, handle.result().await)
}

/// The lines forge wrote to the agent, from the create's answer on (`id`, `result`, `error`).
fn answers(workdir: &Path) -> Vec<Value> {
    let log = std::fs::read_to_string(workdir.join("answers.log")).unwrap();
    log.lines()
        .skip(3)
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            json!({"id": v["id"], "result": v["result"], "error": v["error"]["message"]})
        })
        .collect()
}

#[tokio::test]
async fn terminal_requests_are_served_and_waiting_for_an_exit_blocks_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (events, result) = run(dir.path(), WAITS_FOR_THE_AGENT, None).await;
    assert_eq!(
        result.status,
        ExecutionStatus::Success,
        "{:?}",
        result.errors
    );
    let answers = answers(dir.path());
    assert_eq!(answers[0]["result"], json!({"terminalId": "term-1"}));
    // The file read is answered before the command ends: the wait blocked nothing.
    assert_eq!(answers[1]["id"], 102);
    assert_eq!(answers[2]["id"], 101);
    assert_eq!(answers[2]["result"], json!({"exitCode": 7}));
    assert_eq!(
        answers[3]["result"],
        json!({"output": "hello\n", "truncated": false, "exitStatus": {"exitCode": 7}})
    );
    assert_eq!(answers[4], json!({"id": 104, "result": {}, "error": null}));
    assert_eq!(answers[5]["id"], 105);
    assert!(answers[5]["error"].is_string(), "{:?}", answers[5]);
    assert!(
        result
            .errors
            .iter()
            .any(|e| matches!(e, ForgeError::WorkspaceSecurity { .. })),
        "{:?}",
        result.errors
    );
    let finished = events.iter().find_map(|e| match e {
        AgentEvent::ToolCallFinished {
            call_id,
            output,
            exit_code,
            ..
        } => Some((
            call_id.to_string(),
            output.as_deref().map(str::to_owned),
            *exit_code,
        )),
        _ => None,
    });
    assert_eq!(
        finished,
        Some((
            "terminal:term-1".to_owned(),
            Some("hello\n".to_owned()),
            Some(7)
        ))
    );
    let call = result
        .tool_calls
        .iter()
        .find(|c| &*c.id == "terminal:term-1");
    let call = call.map(|c| (c.kind, c.output.as_deref(), c.exit_code, c.is_error));
    assert_eq!(
        call,
        Some((ToolKind::Shell, Some("hello\n"), Some(7), true))
    );
}

#[tokio::test]
async fn a_cancelled_run_ends_the_commands_it_started() {
    let dir = tempfile::tempdir().unwrap();
    let (_, result) = run(dir.path(), RUNS_UNTIL_CANCELLED, Some("pid")).await;
    assert_eq!(result.status, ExecutionStatus::Partial);
    let pid: u32 = std::fs::read_to_string(dir.path().join("pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // The command's group was ended and reaped with the run: the pid is gone.
    assert!(
        !forge_testkit::procs::is_alive(pid),
        "the terminal's command {pid} outlived the run"
    );
    // The agent's cancel came while it waited for the exit.
    let log = std::fs::read_to_string(dir.path().join("answers.log")).unwrap();
    assert!(
        log.lines().last().unwrap().contains("session/cancel"),
        "{log}"
    );
}
