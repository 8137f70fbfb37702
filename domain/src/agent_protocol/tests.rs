use std::collections::BTreeMap;

use super::{AgentStopReason, AgentToolKind, PermissionOptionKind, choose_mode, permission_answer};
use crate::{ExecutionStatus, PermissionMode, ToolKind};

const GEMINI: &[&str] = &["default", "autoEdit", "yolo", "plan"];
const CLAUDE: &[&str] = &[
    "default",
    "acceptEdits",
    "plan",
    "dontAsk",
    "bypassPermissions",
];
const CODEX: &[&str] = &["read-only", "auto", "full-access"];

/// (offered, current, wanted, overrides, the mode to switch to or a piece of the error)
type ModeCase = (
    &'static [&'static str],
    &'static str,
    PermissionMode,
    &'static [(&'static str, &'static str)],
    Result<Option<&'static str>, &'static str>,
);

/// (mode, tool kind, options offered, the index answered)
type AnswerCase = (
    Option<PermissionMode>,
    &'static str,
    &'static [PermissionOptionKind],
    Option<usize>,
);

#[test]
fn permission_modes_become_the_agents_modes() {
    use PermissionMode::{AcceptEdits, Bypass, Default, Plan};
    let cases: &[ModeCase] = &[
        (GEMINI, "default", Bypass, &[], Ok(Some("yolo"))),
        (GEMINI, "default", AcceptEdits, &[], Ok(Some("autoEdit"))),
        (GEMINI, "default", Plan, &[], Ok(Some("plan"))),
        (GEMINI, "default", Default, &[], Ok(None)),
        (
            CLAUDE,
            "default",
            Bypass,
            &[],
            Ok(Some("bypassPermissions")),
        ),
        (CLAUDE, "default", AcceptEdits, &[], Ok(Some("acceptEdits"))),
        (CODEX, "auto", Bypass, &[], Ok(Some("full-access"))),
        (CODEX, "auto", Plan, &[], Ok(Some("read-only"))),
        // Already in it: nothing to switch.
        (CODEX, "auto", AcceptEdits, &[], Ok(None)),
        // The override wins, and must name an offered mode.
        (
            CLAUDE,
            "default",
            Bypass,
            &[("bypass", "dontAsk")],
            Ok(Some("dontAsk")),
        ),
        (
            CLAUDE,
            "default",
            Bypass,
            &[("bypass", "yolo")],
            Err("does not offer"),
        ),
        // An override for another mode is not this one's.
        (
            CLAUDE,
            "default",
            Plan,
            &[("bypass", "dontAsk")],
            Ok(Some("plan")),
        ),
        // Nothing matches: refused, never silently the agent's default.
        (
            &["a", "b"],
            "a",
            Bypass,
            &[],
            Err("offers no mode for permission mode bypass"),
        ),
        // A look-alike id is not a match.
        (
            &["Plan", "readonly"],
            "Plan",
            Plan,
            &[],
            Err("offers no mode"),
        ),
        // `default` with no match is the agent's own default.
        (&["a"], "a", Default, &[], Ok(None)),
    ];
    for (offered, current, wanted, overrides, want) in cases {
        let overrides: BTreeMap<String, String> = overrides
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        let got = choose_mode(*wanted, offered, current, &overrides);
        let case = format!("{offered:?} {wanted:?} {overrides:?}");
        match (got, want) {
            (Ok(got), Ok(want)) => assert_eq!(got.as_deref(), *want, "{case}"),
            (Err(got), Err(want)) => assert!(got.contains(want), "{case}: {got}"),
            (got, want) => panic!("{case}: got {got:?}, want {want:?}"),
        }
    }
}

#[test]
fn permission_requests_are_answered_from_the_mode() {
    use PermissionMode::{AcceptEdits, Bypass, Default, Plan};
    use PermissionOptionKind::{AllowAlways, AllowOnce, RejectAlways, RejectOnce};
    const ALL: &[PermissionOptionKind] = &[AllowOnce, AllowAlways, RejectOnce];
    let kind = |name: &str| serde_json::from_value(serde_json::json!(name)).ok();
    let cases: &[AnswerCase] = &[
        (Some(Bypass), "execute", ALL, Some(0)),
        (Some(AcceptEdits), "edit", ALL, Some(0)),
        (Some(AcceptEdits), "execute", ALL, Some(2)),
        (Some(AcceptEdits), "fetch", ALL, Some(2)),
        (Some(Plan), "read", ALL, Some(0)),
        (Some(Plan), "edit", ALL, Some(2)),
        (Some(Default), "edit", ALL, Some(2)),
        (None, "read", ALL, Some(2)),
        // Only "always" offered: taken.
        (Some(Bypass), "execute", &[RejectOnce, AllowAlways], Some(1)),
        (Some(Plan), "edit", &[AllowOnce, RejectAlways], Some(1)),
        // No option of the wanted kind: none (the request is cancelled).
        (Some(Plan), "edit", &[AllowOnce], None),
        // A kind the agent invents is `other`: accept-edits lets it run.
        (Some(AcceptEdits), "teleport", ALL, Some(0)),
    ];
    for (mode, tool, offered, want) in cases {
        let got = permission_answer(*mode, kind(tool), offered);
        assert_eq!(got, *want, "{mode:?} {tool} {offered:?}");
    }
    // No kind at all: accept-edits asks, so refuses.
    assert_eq!(permission_answer(Some(AcceptEdits), None, ALL), Some(2));
}

#[test]
fn agent_tool_kinds_are_forges() {
    let cases = [
        ("read", ToolKind::FileRead),
        ("edit", ToolKind::FileWrite),
        ("delete", ToolKind::FileWrite),
        ("move", ToolKind::FileWrite),
        ("search", ToolKind::Search),
        ("execute", ToolKind::Shell),
        ("fetch", ToolKind::Web),
        ("think", ToolKind::Other),
        ("switch_mode", ToolKind::Other),
        ("Execute", ToolKind::Other),
    ];
    for (name, want) in cases {
        let kind: AgentToolKind = serde_json::from_value(serde_json::json!(name)).unwrap();
        assert_eq!(kind.canonical(), want, "{name}");
    }
}

#[test]
fn stop_reasons_decide_the_status() {
    let cases = [
        ("end_turn", ExecutionStatus::Success, None),
        ("cancelled", ExecutionStatus::Partial, None),
        (
            "refusal",
            ExecutionStatus::Error,
            Some("the agent stopped: refusal"),
        ),
        (
            "max_tokens",
            ExecutionStatus::Error,
            Some("the agent stopped: max_tokens"),
        ),
        (
            "max_turn_requests",
            ExecutionStatus::Error,
            Some("the agent stopped: max_turn_requests"),
        ),
        (
            "end-turn",
            ExecutionStatus::Error,
            Some("the agent stopped: other"),
        ),
    ];
    for (name, status, error) in cases {
        let reason: AgentStopReason = serde_json::from_value(serde_json::json!(name)).unwrap();
        assert_eq!(reason.status(), status, "{name}");
        assert_eq!(reason.error().as_deref(), error, "{name}");
    }
}
