//! Modes and permission answers read from what the agents send (the rule tables themselves
//! are `forge_domain::agent_protocol`'s tests).

use agent_client_protocol::v1::schema::{RequestPermissionRequest, SessionModeState};
use forge_adapter_acp::flow::{FlowConfig, mode, permission};
use forge_domain::PermissionMode;
use serde_json::json;

fn modes(current: &str, ids: &[&str]) -> SessionModeState {
    let available: Vec<_> = ids.iter().map(|id| json!({"id": id, "name": id})).collect();
    serde_json::from_value(json!({"currentModeId": current, "availableModes": available})).unwrap()
}

#[test]
fn the_mode_is_chosen_among_those_the_agent_advertises() {
    let gemini = modes("default", &["default", "autoEdit", "yolo", "plan"]);
    let codex = modes("auto", &["read-only", "auto", "full-access"]);
    let check = |state: Option<&SessionModeState>, wanted, want: Result<Option<&str>, &str>| {
        let config = FlowConfig {
            permission_mode: wanted,
            ..FlowConfig::default()
        };
        match (mode(state, &config), want) {
            (Ok(got), Ok(want)) => assert_eq!(got.as_deref(), want, "{wanted:?}"),
            (Err(got), Err(want)) => assert!(got.contains(want), "{got}"),
            (got, want) => panic!("{wanted:?}: got {got:?}, want {want:?}"),
        }
    };
    check(
        Some(&gemini),
        Some(PermissionMode::Bypass),
        Ok(Some("yolo")),
    );
    // Already in it: nothing to switch.
    check(Some(&codex), Some(PermissionMode::AcceptEdits), Ok(None));
    check(
        Some(&modes("a", &["a"])),
        Some(PermissionMode::Plan),
        Err("offers no mode"),
    );
    // No modes, or none asked: permission requests are answered from the run's mode.
    check(None, Some(PermissionMode::Bypass), Ok(None));
    check(Some(&gemini), None, Ok(None));
}

#[test]
fn permission_requests_are_answered_with_the_agents_option_ids() {
    let request = |kind: &str, options: &[(&str, &str)]| -> RequestPermissionRequest {
        let options: Vec<_> = options
            .iter()
            .map(|(id, kind)| json!({"optionId": id, "name": id, "kind": kind}))
            .collect();
        serde_json::from_value(json!({
            "sessionId": "s",
            "toolCall": {"toolCallId": "t1", "kind": kind},
            "options": options
        }))
        .unwrap()
    };
    let all = [
        ("yes", "allow_once"),
        ("always", "allow_always"),
        ("no", "reject_once"),
    ];
    let check = |mode: Option<PermissionMode>, kind: &str, options: &[(&str, &str)], want| {
        let got = permission(mode, &request(kind, options)).map(|o| o.0.to_string());
        assert_eq!(got.as_deref(), want, "{mode:?} {kind}");
    };
    check(Some(PermissionMode::Bypass), "execute", &all, Some("yes"));
    check(
        Some(PermissionMode::AcceptEdits),
        "execute",
        &all,
        Some("no"),
    );
    check(Some(PermissionMode::Plan), "read", &all, Some("yes"));
    check(None, "read", &all, Some("no"));
    // No option to reject with: the request is cancelled.
    check(Some(PermissionMode::Plan), "edit", &all[..2], None);
}
