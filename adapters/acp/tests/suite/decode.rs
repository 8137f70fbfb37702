//! Single updates: the plan, and gemini's mode announcement among its look-alikes.

use forge_adapter_acp::AcpDecoder;
use forge_adapter_acp::flow::FlowConfig;
use forge_domain::{AgentEvent, PermissionMode, PlanEntry, PlanStatus};
use forge_ports::Decoder;

fn update(update: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"s1","update":{update}}}}}"#
    )
}

fn chunk(kind: &str, text: &str) -> String {
    let text = serde_json::to_string(text).unwrap();
    update(&format!(
        r#"{{"sessionUpdate":"{kind}","content":{{"type":"text","text":{text}}}}}"#
    ))
}

const INIT: &str = r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}"#;
const OPENED: &str = r#"{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1","modes":{"currentModeId":"default","availableModes":[{"id":"default","name":"Default"},{"id":"yolo","name":"YOLO"}]}}}"#;
const MODE_SET: &str = r#"{"jsonrpc":"2.0","id":2,"result":{}}"#;
const ANSWERED: &str = r#"{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}"#;

fn content(mode: Option<PermissionMode>, lines: &[&str]) -> String {
    let mut decoder = AcpDecoder::new(FlowConfig {
        permission_mode: mode,
        ..FlowConfig::default()
    });
    let mut events = Vec::new();
    for line in lines {
        decoder.decode_line(1, line, &mut events).unwrap();
    }
    decoder.finish(None).content
}

#[test]
fn geminis_mode_announcement_is_not_the_answer() {
    let bypass = Some(PermissionMode::Bypass);
    let check = |mode, before: &[&str], text: &str, after: &[&str], kept: bool| {
        let line = chunk("agent_message_chunk", text);
        let lines: Vec<&str> = [INIT, OPENED]
            .iter()
            .chain(before)
            .copied()
            .chain([line.as_str()])
            .chain(after.iter().copied())
            .chain([ANSWERED])
            .collect();
        let got = content(mode, &lines);
        assert_eq!(got == text, kept, "{text:?} → {got:?}");
    };
    // gemini 0.61 with `session/set_mode` yolo in flight: dropped.
    check(bypass, &[], "[MODE_UPDATE] yolo", &[MODE_SET], false);
    // Look-alikes, kept: another mode, more text, other spacing, after the mode was set,
    // without a mode asked for.
    check(bypass, &[], "[MODE_UPDATE] plan", &[MODE_SET], true);
    check(bypass, &[], "[MODE_UPDATE] yolo now", &[MODE_SET], true);
    check(bypass, &[], "[MODE_UPDATE]  yolo", &[MODE_SET], true);
    check(bypass, &[], " [MODE_UPDATE] yolo", &[MODE_SET], true);
    check(bypass, &[], "[mode_update] yolo", &[MODE_SET], true);
    check(bypass, &[MODE_SET], "[MODE_UPDATE] yolo", &[], true);
    check(None, &[], "[MODE_UPDATE] yolo", &[], true);
}

#[test]
fn a_plan_update_is_a_plan_event() {
    let plan = update(
        r#"{"sessionUpdate":"plan","entries":[{"content":"read","priority":"high","status":"completed"},{"content":"write","priority":"low","status":"in_progress"},{"content":"test","priority":"medium","status":"pending"}]}"#,
    );
    let mut decoder = AcpDecoder::new(FlowConfig::default());
    let mut events = Vec::new();
    decoder.decode_line(1, &plan, &mut events).unwrap();
    let entry = |content: &str, status| PlanEntry {
        content: content.to_owned(),
        status,
    };
    assert_eq!(
        events,
        [AgentEvent::Plan {
            entries: vec![
                entry("read", PlanStatus::Completed),
                entry("write", PlanStatus::InProgress),
                entry("test", PlanStatus::Pending),
            ]
        }]
    );
}

#[test]
fn an_agent_that_fails_at_start_says_what_its_stderr_said() {
    const QUERY_CLOSED: &str = r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error","data":{"details":"Query closed before response received"}}}"#;
    let check = |lines: &[&str], stderr: &str, said: Option<&str>, hinted: bool| {
        let mut decoder = AcpDecoder::new(FlowConfig::default());
        let mut events = Vec::new();
        for line in lines {
            decoder.decode_line(1, line, &mut events).unwrap();
        }
        let exit = forge_ports::ProcessExit {
            stderr_tail: stderr.to_owned(),
            ..forge_ports::ProcessExit::default()
        };
        let pieces = decoder.finish(Some(&exit));
        let Some(forge_domain::ForgeError::ProviderExecution {
            stderr_summary,
            hint,
            ..
        }) = pieces.errors.first()
        else {
            panic!("no provider error: {:?}", pieces.errors);
        };
        assert!(stderr_summary.contains("session/new"), "{stderr_summary}");
        match said {
            Some(said) => assert!(stderr_summary.contains(said), "{stderr_summary}"),
            None => assert!(!stderr_summary.contains("stderr ends"), "{stderr_summary}"),
        }
        assert_eq!(hint.is_some(), hinted, "{hint:?}");
    };
    let spawn_failed = "Error: spawn /tmp/clis/node_modules/.bin/claude ENOENT\n";
    check(
        &[INIT, QUERY_CLOSED],
        spawn_failed,
        Some("spawn /tmp/clis/node_modules/.bin/claude ENOENT"),
        true,
    );
    // Nothing on stderr: the protocol's reason and the hint.
    check(&[INIT, QUERY_CLOSED], "\n", None, true);
    // Look-alike: a failure after the session opened is the prompt's, not the start's.
    const PROMPT_FAILED: &str =
        r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"Internal error"}}"#;
    let mut decoder = AcpDecoder::new(FlowConfig::default());
    let mut events = Vec::new();
    for line in [INIT, OPENED, MODE_SET, PROMPT_FAILED] {
        decoder.decode_line(1, line, &mut events).unwrap();
    }
    let exit = forge_ports::ProcessExit {
        stderr_tail: spawn_failed.to_owned(),
        ..forge_ports::ProcessExit::default()
    };
    let pieces = decoder.finish(Some(&exit));
    if let Some(forge_domain::ForgeError::ProviderExecution {
        stderr_summary,
        hint,
        ..
    }) = pieces.errors.first()
    {
        assert!(!stderr_summary.contains("ENOENT"), "{stderr_summary}");
        assert!(hint.is_none());
    }
}
