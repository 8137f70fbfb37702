//! Request → invocation: argv, env, stdin, prepared files.

use std::collections::BTreeMap;
use std::path::PathBuf;

use forge_adapter_claude::{ClaudeProvider, UserPaths};
use forge_domain::{ForgeError, PermissionMode, RunId};
use forge_ports::{FileSource, Invocation, InvocationContext, Provider, ProviderSettings};
use serde_json::json;

use super::support::{provider, request};

fn ctx(home: Option<&str>) -> InvocationContext {
    InvocationContext {
        run_id: RunId::new("run-1").unwrap(),
        run_dir: PathBuf::from("/w/.forgecode/runs/run-1"),
        home: home.map(PathBuf::from),
        in_repository: Some(true),
        resumed_usage: None,
        mcp: None,
    }
}

/// The invocation as plain JSON, for snapshots.
fn view(inv: &Invocation) -> serde_json::Value {
    json!({
        "program": inv.program,
        "args": inv.args,
        "cwd": inv.cwd,
        "env": { "inherit": inv.env.inherit, "set": inv.env.set, "remove": inv.env.remove },
        "stdin": inv.stdin.as_deref().map(String::from_utf8_lossy),
        "files": inv.files.iter().map(|f| json!({
            "path": f.path,
            "source": match &f.source {
                FileSource::CopyOf(p) => json!({"copy_of": p}),
                FileSource::SymlinkTo(p) => json!({"link_to": p}),
                FileSource::Contents(c) => json!({"contents": String::from_utf8_lossy(c)}),
            },
        })).collect::<Vec<_>>(),
        "install_hint": inv.install_hint,
    })
}

fn check(
    name: &str,
    p: &ClaudeProvider,
    req: &forge_domain::ExecutionRequest,
    ctx: &InvocationContext,
) -> Invocation {
    let inv = p.invocation(req, ctx).unwrap();
    insta::with_settings!({ snapshot_path => "snapshots/invocation", prepend_module_to_snapshot => false }, {
        insta::assert_yaml_snapshot!(name, view(&inv));
    });
    // Whatever the request, the prompt never reaches argv and the headless flags lead.
    assert!(
        !inv.args.iter().any(|a| a == &req.prompt),
        "{name}: prompt in argv"
    );
    assert_eq!(
        inv.args[..4],
        ["-p", "--output-format", "stream-json", "--verbose"]
    );
    assert_eq!(inv.stdin.as_deref(), Some(req.prompt.as_bytes()));
    assert_eq!(inv.cwd, req.workdir);
    inv
}

#[test]
fn a_minimal_request_is_headless_stream_json_with_the_prompt_on_stdin() {
    let inv = check("minimal", &provider(), &request("Say hello."), &ctx(None));
    assert_eq!(inv.program, PathBuf::from("claude"));
    assert_eq!(
        inv.env.set.get("DISABLE_AUTOUPDATER").map(String::as_str),
        Some("1")
    );
    assert!(inv.files.is_empty());
}

#[test]
fn every_knob_maps_to_its_flag() {
    let mut req = request("Fix the bug.");
    req.model = Some("claude-sonnet-5".into());
    req.max_turns = Some(7);
    req.max_budget_usd = Some(0.25);
    req.allowed_tools = vec!["Read".into(), "Bash(git *)".into()];
    req.disallowed_tools = vec!["WebFetch".into()];
    req.permission_mode = Some(PermissionMode::AcceptEdits);
    req.resume_session_id = Some("-starts-with-dash".parse().unwrap());
    req.append_system_prompt = Some("Be brief.".into());
    req.mcp_config = Some(r#"{"mcpServers":{}}"#.into());
    req.add_dirs = vec!["/data".into(), "/more".into()];
    req.extra_args = vec!["--include-partial-messages".into()];
    req.env = BTreeMap::from([
        ("DISABLE_AUTOUPDATER".into(), "0".into()),
        ("X".into(), "y".into()),
    ]);
    let settings = ProviderSettings {
        binary: Some("/opt/claude/bin/claude".into()),
        args: vec!["--setting-sources".into(), "project".into()],
        env: BTreeMap::from([
            ("X".into(), "from-settings".into()),
            ("Z".into(), "z".into()),
        ]),
        model: Some("ignored-when-the-request-names-one".into()),
        copy_user_auth: true,
        ..ProviderSettings::default()
    };
    let p = ClaudeProvider::with_user_paths(
        settings,
        UserPaths::resolve(Some("/home/user".as_ref()), None),
    );
    let inv = check(
        "every_knob",
        &p,
        &req,
        &ctx(Some("/w/.forgecode/runs/run-1/home")),
    );
    assert!(inv.args.contains(&"--resume=-starts-with-dash".to_owned()));
    // The request's env wins over settings, settings over forge's defaults.
    assert_eq!(inv.env.set["DISABLE_AUTOUPDATER"], "0");
    assert_eq!(inv.env.set["X"], "y");
    assert_eq!(
        inv.env.set["CLAUDE_CONFIG_DIR"],
        "/w/.forgecode/runs/run-1/home/.claude"
    );
    assert_eq!(inv.env.set["HOME"], "/w/.forgecode/runs/run-1/home");
}

#[test]
fn permission_modes_map_to_claude_flags() {
    let cases = [
        (
            PermissionMode::Default,
            &["--permission-mode", "default"][..],
            false,
        ),
        (
            PermissionMode::AcceptEdits,
            &["--permission-mode", "acceptEdits"][..],
            false,
        ),
        (
            PermissionMode::Plan,
            &["--permission-mode", "plan"][..],
            false,
        ),
        (
            PermissionMode::Bypass,
            &["--dangerously-skip-permissions"][..],
            true,
        ),
    ];
    for (mode, flags, sandbox) in cases {
        let mut req = request("p");
        req.permission_mode = Some(mode);
        let inv = provider().invocation(&req, &ctx(None)).unwrap();
        assert_eq!(&inv.args[4..], flags, "{mode:?}");
        // As root claude refuses bypass unless told it runs in a sandbox.
        assert_eq!(
            inv.env.set.get("IS_SANDBOX").map(String::as_str),
            sandbox.then_some("1"),
            "{mode:?}"
        );
    }
}

#[test]
fn the_settings_model_is_the_default_and_home_files_need_copy_user_auth() {
    let settings = ProviderSettings {
        model: Some("haiku".into()),
        ..ProviderSettings::default()
    };
    let p = ClaudeProvider::with_user_paths(
        settings,
        UserPaths::resolve(Some("/home/user".as_ref()), None),
    );
    let inv = p.invocation(&request("p"), &ctx(Some("/h"))).unwrap();
    assert_eq!(inv.args[4..], ["--model", "haiku"]);
    assert!(inv.files.is_empty(), "no copy_user_auth: nothing copied");
    assert_eq!(inv.env.set["CLAUDE_CONFIG_DIR"], "/h/.claude");
}

#[test]
fn a_long_prompt_goes_on_stdin_only() {
    let prompt = "x".repeat(3 * 1024 * 1024);
    let inv = provider()
        .invocation(&request(&prompt), &ctx(None))
        .unwrap();
    assert_eq!(inv.stdin.as_ref().map(Vec::len), Some(prompt.len()));
    assert!(inv.args.iter().all(|a| a.len() < 100));
}

#[test]
fn requests_claude_cannot_honour_are_refused() {
    let mut schema = request("p");
    schema.output_schema = Some("schema.json".into());
    let mut budget = request("p");
    budget.max_budget_usd = Some(-1.0);
    let mut nan = request("p");
    nan.max_budget_usd = Some(f64::NAN);
    for req in [schema, budget, nan] {
        let err = provider().invocation(&req, &ctx(None)).unwrap_err();
        assert!(matches!(err, ForgeError::InvalidRequest { .. }), "{err:?}");
    }
}

#[test]
fn a_streaming_request_asks_for_partial_messages_once() {
    let mut req = request("hi");
    req.mode = forge_domain::ExecutionMode::Stream;
    let inv = provider().invocation(&req, &ctx(None)).unwrap();
    assert_eq!(
        inv.args
            .iter()
            .filter(|a| *a == "--include-partial-messages")
            .count(),
        1
    );

    req.extra_args = vec!["--include-partial-messages".to_owned()];
    let inv = provider().invocation(&req, &ctx(None)).unwrap();
    assert_eq!(
        inv.args
            .iter()
            .filter(|a| *a == "--include-partial-messages")
            .count(),
        1
    );

    req.mode = forge_domain::ExecutionMode::Run;
    req.extra_args.clear();
    let inv = provider().invocation(&req, &ctx(None)).unwrap();
    assert!(!inv.args.iter().any(|a| a == "--include-partial-messages"));
}
