//! Modes and permission answers, from what the agents advertise.

use agent_client_protocol::v1::schema::{RequestPermissionRequest, SessionModeState};
use forge_adapter_acp::flow::{FlowConfig, mode, permission};
use forge_domain::PermissionMode;

fn modes(current: &str, ids: &[&str]) -> SessionModeState {
    let available: Vec<_> = ids
        .iter()
        .map(|id| serde_json::json!({"id": id, "name": id}))
        .collect();
    serde_json::from_value(
        serde_json::json!({"currentModeId": current, "availableModes": available}),
    )
    .unwrap()
}

#[test]
fn permission_modes_become_the_agents_modes() {
    let gemini = modes("default", &["default", "autoEdit", "yolo", "plan"]);
    let claude = modes(
        "default",
        &[
            "default",
            "acceptEdits",
            "plan",
            "dontAsk",
            "bypassPermissions",
        ],
    );
    let codex = modes("auto", &["read-only", "auto", "full-access"]);
    let check = |state: &SessionModeState,
                 wanted: Option<PermissionMode>,
                 overrides: &[(&str, &str)],
                 want: Result<Option<&str>, &str>| {
        let config = FlowConfig {
            permission_mode: wanted,
            modes: overrides
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
            ..FlowConfig::default()
        };
        match (mode(Some(state), &config), want) {
            (Ok(got), Ok(want)) => assert_eq!(got.as_deref(), want, "{wanted:?}"),
            (Err(got), Err(want)) => assert!(got.contains(want), "{got}"),
            (got, want) => panic!("{wanted:?}: got {got:?}, want {want:?}"),
        }
    };
    check(&gemini, Some(PermissionMode::Bypass), &[], Ok(Some("yolo")));
    check(
        &gemini,
        Some(PermissionMode::AcceptEdits),
        &[],
        Ok(Some("autoEdit")),
    );
    check(&gemini, Some(PermissionMode::Plan), &[], Ok(Some("plan")));
    check(&gemini, Some(PermissionMode::Default), &[], Ok(None));
    check(&gemini, None, &[], Ok(None));
    check(
        &claude,
        Some(PermissionMode::Bypass),
        &[],
        Ok(Some("bypassPermissions")),
    );
    check(
        &claude,
        Some(PermissionMode::AcceptEdits),
        &[],
        Ok(Some("acceptEdits")),
    );
    check(
        &codex,
        Some(PermissionMode::Bypass),
        &[],
        Ok(Some("full-access")),
    );
    check(
        &codex,
        Some(PermissionMode::Plan),
        &[],
        Ok(Some("read-only")),
    );
    // Already in it: nothing to switch.
    check(&codex, Some(PermissionMode::AcceptEdits), &[], Ok(None));
    // The override wins, and must name an offered mode.
    check(
        &claude,
        Some(PermissionMode::Bypass),
        &[("bypass", "dontAsk")],
        Ok(Some("dontAsk")),
    );
    check(
        &claude,
        Some(PermissionMode::Bypass),
        &[("bypass", "yolo")],
        Err("does not offer"),
    );
    // Nothing matches: refused, never silently the agent's default.
    check(
        &modes("a", &["a", "b"]),
        Some(PermissionMode::Bypass),
        &[],
        Err("offers no mode for permission mode bypass"),
    );
}

#[test]
fn permission_requests_are_answered_from_the_mode() {
    let request = |kind: &str| -> RequestPermissionRequest {
        serde_json::from_value(serde_json::json!({
            "sessionId": "s",
            "toolCall": {"toolCallId": "t1", "kind": kind},
            "options": [
                {"optionId": "yes", "name": "Allow", "kind": "allow_once"},
                {"optionId": "always", "name": "Always", "kind": "allow_always"},
                {"optionId": "no", "name": "Reject", "kind": "reject_once"}
            ]
        }))
        .unwrap()
    };
    let check = |mode: Option<PermissionMode>, kind: &str, want: &str| {
        let got = permission(mode, &request(kind)).map(|o| o.0.to_string());
        assert_eq!(got.as_deref(), Some(want), "{mode:?} {kind}");
    };
    check(Some(PermissionMode::Bypass), "execute", "yes");
    check(Some(PermissionMode::AcceptEdits), "edit", "yes");
    check(Some(PermissionMode::AcceptEdits), "execute", "no");
    check(Some(PermissionMode::Plan), "read", "yes");
    check(Some(PermissionMode::Plan), "edit", "no");
    check(Some(PermissionMode::Default), "edit", "no");
    check(None, "read", "no");
}
