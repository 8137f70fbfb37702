//! The session and the decoder together against scripted agent transcripts: what forge sends
//! back, and what the run reports.

use std::sync::Arc;

use forge_adapter_acp::flow::FlowConfig;
use forge_adapter_acp::{AcpDecoder, AcpSession};
use forge_ports::{AgentSession, Decoder, ResultPieces, SessionServices, SessionStep};
use forge_testkit::fakes::process::ScriptedProcessRunner;
use forge_testkit::fakes::workspace::PassthroughWorkspace;
use serde_json::Value;

/// Plays `agent` (its stdout lines) to a session and a decoder: the method (or `answer`) of
/// each line forge wrote, the params of those named in `show`, and the decoded result.
fn converse(config: FlowConfig, agent: &[&str]) -> (Vec<String>, ResultPieces) {
    let services = SessionServices {
        workspace: Arc::new(PassthroughWorkspace::default()),
        runner: Arc::new(ScriptedProcessRunner::new([])),
        workdir: "/work".into(),
        ladder: forge_ports::KillLadder::default(),
        permissions: None,
    };
    let mut session = AcpSession::new(config.clone(), services);
    let mut decoder = AcpDecoder::new(config);
    let mut sent = session.opening();
    let mut events = Vec::new();
    for line in agent {
        let step = futures::executor::block_on(session.on_line(line));
        sent.extend(step.send);
        decoder.decode_line(1, line, &mut events).unwrap();
        if step.done {
            break;
        }
    }
    let sent = sent
        .iter()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            match (v["method"].as_str(), v["params"]["methodId"].as_str()) {
                (Some(m), Some(id)) => format!("{m} {id}"),
                (Some(m), None) => m.to_owned(),
                (None, _) => "answer".to_owned(),
            }
        })
        .collect();
    (sent, decoder.finish(None))
}

const INIT: &str = r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"authMethods":[{"id":"api-key","name":"API key"},{"id":"oauth","name":"Log in"}]}}"#;
const AUTH_REQUIRED: &str =
    r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"Authentication required"}}"#;
const OPENED: &str = r#"{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}}"#;
const ANSWERED: &str = r#"{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}"#;

fn auth(method: Option<&str>) -> FlowConfig {
    FlowConfig {
        auth_method: method.map(str::to_owned),
        ..FlowConfig::default()
    }
}

#[test]
fn an_agent_that_requires_auth_is_authenticated_with_the_configured_method() {
    let authenticated = r#"{"jsonrpc":"2.0","id":4,"result":{}}"#;
    let (sent, pieces) = converse(
        auth(Some("api-key")),
        &[INIT, AUTH_REQUIRED, authenticated, OPENED, ANSWERED],
    );
    assert_eq!(
        sent,
        [
            "initialize",
            "session/new",
            "authenticate api-key",
            "session/new",
            "session/prompt"
        ]
    );
    assert_eq!(pieces.reported_success, Some(true), "{:?}", pieces.errors);
    assert_eq!(pieces.metadata.session_id.unwrap().as_str(), "s1");
}

#[test]
fn auth_that_cannot_be_done_is_an_error_naming_the_methods() {
    let refused = r#"{"jsonrpc":"2.0","id":4,"error":{"code":-32603,"message":"bad key"}}"#;
    let check = |config: FlowConfig, agent: &[&str], want_sent: &[&str], want: &str| {
        let (sent, pieces) = converse(config, agent);
        assert_eq!(sent, want_sent, "{want}");
        assert_eq!(pieces.reported_success, Some(false), "{want}");
        let errors = format!("{:?}", pieces.errors);
        assert!(errors.contains(want), "{errors}");
    };
    let asked = ["initialize", "session/new"];
    check(
        auth(None),
        &[INIT, AUTH_REQUIRED],
        &asked,
        "requires authentication (Authentication required); methods offered: api-key, oauth; name one with auth_method",
    );
    check(
        auth(Some("password")),
        &[INIT, AUTH_REQUIRED],
        &asked,
        "auth_method = \\\"password\\\" is not one of them",
    );
    check(
        auth(Some("api-key")),
        &[INIT, AUTH_REQUIRED, refused],
        &["initialize", "session/new", "authenticate api-key"],
        "the agent refused authenticate: bad key",
    );
    // Authenticated, and still refused: asked once, never a loop.
    check(
        auth(Some("api-key")),
        &[
            INIT,
            AUTH_REQUIRED,
            r#"{"jsonrpc":"2.0","id":4,"result":{}}"#,
            AUTH_REQUIRED,
        ],
        &[
            "initialize",
            "session/new",
            "authenticate api-key",
            "session/new",
        ],
        "still after authenticate with \\\"api-key\\\"",
    );
    // Another error on session/new is not an auth question.
    check(
        auth(Some("api-key")),
        &[
            INIT,
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"no cwd"}}"#,
        ],
        &asked,
        "the agent refused session/new: no cwd",
    );
}

#[test]
fn a_load_waits_out_the_replay_that_follows_its_answer() {
    // gemini 0.61 answers `session/load` first and replays the history after: forge sets the
    // session's mode (the one it is in) and counts updates only after that answer.
    let init = r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{"loadSession":true}}}"#;
    let loaded = r#"{"jsonrpc":"2.0","id":1,"result":{"modes":{"currentModeId":"default","availableModes":[{"id":"default","name":"Default"}]}}}"#;
    let old = r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"old"}}}}"#;
    let set = r#"{"jsonrpc":"2.0","id":2,"result":{}}"#;
    let new = r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"new"}}}}"#;
    let config = FlowConfig {
        resume: Some("s1".into()),
        ..FlowConfig::default()
    };
    let (sent, pieces) = converse(config, &[init, loaded, old, set, new, ANSWERED]);
    assert_eq!(
        sent,
        [
            "initialize",
            "session/load",
            "session/set_mode",
            "session/prompt"
        ]
    );
    assert_eq!(pieces.content, "new");
    assert_eq!(pieces.reported_success, Some(true));
}

/// An asker whose requests wait for a person; the run's cancel closes them as cancelled.
struct Waiting;

#[async_trait::async_trait]
impl forge_ports::PermissionAsker for Waiting {
    async fn ask(
        &self,
        tool: forge_domain::permission::ToolRequest,
    ) -> Result<forge_domain::permission::PermissionRequest, forge_domain::ForgeError> {
        Ok(forge_domain::permission::PermissionRequest {
            id: forge_domain::permission::PermissionId::new("perm-1").unwrap(),
            provider: forge_domain::ProviderId::new("gemini-acp").unwrap(),
            owner: forge_domain::permission::PermissionOwner::Run(
                forge_domain::RunId::new("run-1").unwrap(),
            ),
            tool,
            requested_at_ms: 1,
            expires_at_ms: 2,
            decision: None,
        })
    }

    async fn answer(
        &self,
        id: &forge_domain::permission::PermissionId,
    ) -> Result<forge_domain::permission::PermissionRequest, forge_domain::ForgeError> {
        let mut request = self
            .ask(serde_json::from_value(serde_json::json!({"tool": "x", "kind": "shell"})).unwrap())
            .await?;
        assert_eq!(id.as_str(), "perm-1");
        request.decision = Some(forge_domain::permission::PermissionDecision::cancelled());
        Ok(request)
    }

    async fn close(
        &self,
    ) -> Result<Vec<forge_domain::permission::PermissionRequest>, forge_domain::ForgeError> {
        Ok(Vec::new())
    }
}

#[test]
fn a_cancel_answers_every_pending_permission_request_cancelled_at_once() {
    let services = SessionServices {
        workspace: Arc::new(PassthroughWorkspace::default()),
        runner: Arc::new(ScriptedProcessRunner::new([])),
        workdir: "/work".into(),
        ladder: forge_ports::KillLadder::default(),
        permissions: Some(Arc::new(Waiting)),
    };
    let config = FlowConfig {
        permission_mode: Some(forge_domain::PermissionMode::Ask),
        ..FlowConfig::default()
    };
    let mut session = AcpSession::new(config, services);
    let _ = session.opening();
    let asks = r#"{"jsonrpc":"2.0","id":7,"method":"session/request_permission","params":{"sessionId":"s1","toolCall":{"toolCallId":"t1","title":"touch x","kind":"execute","rawInput":{"command":"touch x"}},"options":[{"optionId":"yes","name":"Allow","kind":"allow_once"},{"optionId":"no","name":"Reject","kind":"reject_once"}]}}"#;
    let mut step = SessionStep::default();
    for line in [INIT, OPENED, asks] {
        step = futures::executor::block_on(session.on_line(line));
    }
    assert!(
        step.send.is_empty(),
        "a person answers later: {:?}",
        step.send
    );
    assert_eq!(step.later.len(), 1);
    let kinds: Vec<&str> = step.events.iter().map(|e| e.kind()).collect();
    assert_eq!(kinds, ["permission_requested"]);

    let sent: Vec<Value> = session
        .cancel()
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(sent.len(), 2, "{sent:?}");
    assert_eq!(sent[0]["method"], "session/cancel");
    assert_eq!(sent[1]["id"], 7);
    assert_eq!(
        sent[1]["result"]["outcome"],
        serde_json::json!({"outcome": "cancelled"})
    );
    // Nothing more to answer on a second cancel.
    assert_eq!(session.cancel().len(), 1);

    // The decision that comes later is recorded, not sent again.
    let later = futures::executor::block_on(step.later.pop().unwrap());
    assert!(later.send.is_empty(), "{:?}", later.send);
    let kinds: Vec<&str> = later.events.iter().map(|e| e.kind()).collect();
    assert_eq!(kinds, ["permission_decided"]);
}

#[test]
fn a_shell_request_without_raw_input_names_its_title_as_the_command() {
    // gemini 0.61: `kind: execute`, the command only in the title.
    let services = SessionServices {
        workspace: Arc::new(PassthroughWorkspace::default()),
        runner: Arc::new(ScriptedProcessRunner::new([])),
        workdir: "/work".into(),
        ladder: forge_ports::KillLadder::default(),
        permissions: Some(Arc::new(Waiting)),
    };
    let config = FlowConfig {
        permission_mode: Some(forge_domain::PermissionMode::Ask),
        ..FlowConfig::default()
    };
    let mut session = AcpSession::new(config, services);
    let _ = session.opening();
    let asks = r#"{"jsonrpc":"2.0","id":7,"method":"session/request_permission","params":{"sessionId":"s1","toolCall":{"toolCallId":"t1","title":"touch made.txt","kind":"execute"},"options":[{"optionId":"yes","name":"Allow","kind":"allow_once"}]}}"#;
    let mut step = SessionStep::default();
    for line in [INIT, OPENED, asks] {
        step = futures::executor::block_on(session.on_line(line));
    }
    let Some(forge_domain::AgentEvent::PermissionRequested { request }) = step.events.first()
    else {
        panic!("no request: {:?}", step.events);
    };
    assert_eq!(request.tool.command.as_deref(), Some("touch made.txt"));
    assert_eq!(request.tool.kind, forge_domain::ToolKind::Shell);

    // codex-acp: the command as its shell's argv; the script is the command.
    let asks = r#"{"jsonrpc":"2.0","id":8,"method":"session/request_permission","params":{"sessionId":"s1","toolCall":{"toolCallId":"t2","title":"touch made.txt","kind":"execute","rawInput":{"command":["/bin/bash","-lc","touch made.txt"]}},"options":[{"optionId":"yes","name":"Allow","kind":"allow_once"}]}}"#;
    let step = futures::executor::block_on(session.on_line(asks));
    let Some(forge_domain::AgentEvent::PermissionRequested { request }) = step.events.first()
    else {
        panic!("no request: {:?}", step.events);
    };
    assert_eq!(request.tool.command.as_deref(), Some("touch made.txt"));
}
