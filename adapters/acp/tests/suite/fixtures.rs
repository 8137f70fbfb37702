//! Every recorded ACP transcript (gemini --acp, codex-acp, claude-agent-acp against the fake
//! model) decodes into the expected events and result.

use std::path::PathBuf;

use forge_adapter_acp::AcpDecoder;
use forge_adapter_acp::flow::FlowConfig;
use forge_domain::{AgentEvent, PermissionMode, ToolKind};
use forge_ports::Decoder;
use forge_testkit::fixtures::fixtures_dir;

/// `(agent, version, scenario, text)` of every recorded transcript.
fn transcripts() -> Vec<(String, String, String, String)> {
    let mut out = Vec::new();
    let root = fixtures_dir().join("acp");
    for agent in std::fs::read_dir(&root).unwrap() {
        let agent = agent.unwrap().path();
        for version in std::fs::read_dir(&agent).unwrap() {
            let version = version.unwrap().path();
            for file in std::fs::read_dir(&version).unwrap() {
                let file = file.unwrap().path();
                let name = |p: &PathBuf| p.file_name().unwrap().to_string_lossy().into_owned();
                let scenario = name(&file).trim_end_matches(".jsonl").to_owned();
                let text = std::fs::read_to_string(&file).unwrap();
                out.push((name(&agent), name(&version), scenario, text));
            }
        }
    }
    out.sort();
    out
}

fn kinds(events: &[AgentEvent]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for e in events {
        let kind = match e {
            AgentEvent::Unknown { kind, .. } => format!("unknown:{kind}"),
            e => e.kind().to_owned(),
        };
        // Runs of deltas read as one entry.
        if out.last() != Some(&kind) {
            out.push(kind);
        }
    }
    out
}

/// The session a transcript resumes: the one its first update names.
fn resumed_session(text: &str) -> Option<String> {
    text.lines().find_map(|l| {
        let v: serde_json::Value = serde_json::from_str(l).ok()?;
        v["params"]["sessionId"].as_str().map(str::to_owned)
    })
}

#[test]
fn every_transcript_decodes() {
    let all = transcripts();
    assert_eq!(all.len(), 18, "three agents × six scenarios");
    for (agent, version, scenario, text) in &all {
        let name = format!("{agent}__{version}__{scenario}");
        let resume = (scenario == "resume")
            .then(|| resumed_session(text))
            .flatten();
        // Recorded as the e2e suite runs them: `--permission-mode bypass`.
        let mut decoder = AcpDecoder::new(FlowConfig {
            workdir: "/work".into(),
            permission_mode: Some(PermissionMode::Bypass),
            resume: resume.clone(),
            ..FlowConfig::default()
        });
        let mut events = Vec::new();
        let errors = decoder.decode_document(text, &mut events);
        assert!(errors.is_empty(), "{name}: {errors:?}");
        let pieces = decoder.finish(None);
        // (reported success, a piece of the content or of the error)
        let (success, witness) = match scenario.as_str() {
            "plain_answer" => (Some(true), "fake model"),
            "write_file" => (Some(true), "hello.txt"),
            "shell" => (Some(true), ""),
            "resume" => (Some(true), "kiwi"),
            "http_500" => (Some(false), "the agent refused session/prompt"),
            "cancel" => (None, ""),
            other => panic!("{name}: no expectation for scenario {other}"),
        };
        assert_eq!(
            pieces.reported_success, success,
            "{name}: {:?}",
            pieces.errors
        );
        let said = format!("{} {:?}", pieces.content, pieces.errors);
        assert!(said.contains(witness), "{name}: {said}");
        assert!(!pieces.content.contains("[MODE_UPDATE]"), "{name}");
        assert!(pieces.metadata.session_id.is_some(), "{name}");
        if let Some(resumed) = &resume {
            assert_eq!(
                pieces.metadata.session_id.as_ref().unwrap().as_str(),
                resumed,
                "{name}"
            );
            // The replayed history is not this run's answer.
            assert!(
                !pieces.content.contains("Noted"),
                "{name}: {}",
                pieces.content
            );
        }
        if scenario == "write_file" {
            let call = pieces.tool_calls.first().expect("a tool call");
            assert_eq!(call.kind, ToolKind::FileWrite, "{name}");
            assert_eq!(pieces.metadata.changed_files, ["hello.txt"], "{name}");
        }
        if scenario == "shell" {
            let shell = pieces.tool_calls.iter().find(|t| t.kind == ToolKind::Shell);
            assert!(
                shell.is_some_and(|t| !t.is_error),
                "{name}: {:?}",
                pieces.tool_calls
            );
        }
        // gemini and claude report tokens (in `_meta` and `usage_update`); codex-acp 0.16 only
        // the context window.
        if agent != "codex" && success == Some(true) {
            assert!(pieces.metadata.usage.input_tokens > 0, "{name}");
        }
        if agent == "claude" && success == Some(true) {
            assert!(
                pieces.metadata.cost_usd.is_some(),
                "{name}: claude reports its cost"
            );
        }
        for kind in kinds(&events) {
            if let Some(k) = kind.strip_prefix("unknown:") {
                assert!(
                    forge_adapter_acp::PASSTHROUGH_KINDS.contains(&k),
                    "{name}: drift: {k}"
                );
            }
        }
        insta::assert_yaml_snapshot!(name, kinds(&events));
    }
}

#[test]
fn replayed_history_of_a_load_is_not_this_runs() {
    let init = r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{"loadSession":true}}}"#;
    let replay = r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"old"}}}}"#;
    let loaded = r#"{"jsonrpc":"2.0","id":1,"result":{}}"#;
    let fresh = r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"new"}}}}"#;
    let done = r#"{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}"#;
    let mut decoder = AcpDecoder::new(FlowConfig {
        resume: Some("s1".into()),
        ..FlowConfig::default()
    });
    let mut events = Vec::new();
    for line in [init, replay, loaded, fresh, done] {
        decoder.decode_line(1, line, &mut events).unwrap();
    }
    let pieces = decoder.finish(None);
    assert_eq!(pieces.content, "new");
    assert_eq!(pieces.metadata.session_id.unwrap().as_str(), "s1");
    assert_eq!(pieces.reported_success, Some(true));
}

#[test]
fn answers_and_stop_reasons_decide_the_outcome() {
    let check =
        |lines: &[&str], resume: Option<&str>, success: Option<bool>, error: Option<&str>| {
            let mut decoder = AcpDecoder::new(FlowConfig {
                resume: resume.map(str::to_owned),
                ..FlowConfig::default()
            });
            let mut events = Vec::new();
            for line in lines {
                let _ = decoder.decode_line(1, line, &mut events);
            }
            let pieces = decoder.finish(None);
            assert_eq!(pieces.reported_success, success, "{lines:?}");
            let text = format!("{:?}", pieces.errors);
            match error {
                Some(e) => assert!(text.contains(e), "{text}"),
                None => assert!(pieces.errors.is_empty(), "{text}"),
            }
        };
    let v1 = r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}"#;
    check(
        &[
            v1,
            r#"{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}"#,
        ],
        None,
        Some(true),
        None,
    );
    check(
        &[
            v1,
            r#"{"jsonrpc":"2.0","id":3,"result":{"stopReason":"refusal"}}"#,
        ],
        None,
        Some(false),
        Some("refusal"),
    );
    check(
        &[
            v1,
            r#"{"jsonrpc":"2.0","id":3,"result":{"stopReason":"max_tokens"}}"#,
        ],
        None,
        Some(false),
        Some("max_tokens"),
    );
    check(
        &[
            v1,
            r#"{"jsonrpc":"2.0","id":3,"result":{"stopReason":"cancelled"}}"#,
        ],
        None,
        None,
        None,
    );
    check(
        &[
            v1,
            r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"Internal error: 500 from model"}}"#,
        ],
        None,
        Some(false),
        Some("500 from model"),
    );
    check(
        &[r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":2}}"#],
        None,
        Some(false),
        Some("version 2; forge speaks version 1"),
    );
    check(
        &[v1],
        Some("s9"),
        Some(false),
        Some("neither session/resume nor session/load"),
    );
    check(
        &[
            r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{"loadSession":true}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32002,"message":"session s9 not found"}}"#,
        ],
        Some("s9"),
        Some(false),
        Some("session s9 not found"),
    );
    // Look-alikes that must not decide anything: a stray answer, a malformed line, text.
    check(
        &[
            v1,
            r#"{"jsonrpc":"2.0","id":77,"result":{"stopReason":"refusal"}}"#,
            "{\"jsonrpc\":",
            "Warning: not json",
        ],
        None,
        None,
        None,
    );
}
