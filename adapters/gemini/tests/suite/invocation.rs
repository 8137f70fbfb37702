//! Request → invocation: argv, env, stdin, prepared files.

use std::path::{Path, PathBuf};

use forge_adapter_gemini::GeminiProvider;
use forge_domain::{ForgeError, PermissionMode, RunId, SessionId};
use forge_ports::{FileSource, Invocation, InvocationContext, Provider, ProviderSettings};
use serde_json::{Value, json};

use super::support::request;

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

fn view(inv: &Invocation) -> Value {
    let files: Vec<Value> = inv
        .files
        .iter()
        .map(|f| match &f.source {
            FileSource::Contents(bytes) => json!({
                "path": f.path,
                "contents": serde_json::from_slice::<Value>(bytes).unwrap(),
            }),
            FileSource::CopyOf(from) => json!({"path": f.path, "copy_of": from}),
            FileSource::SymlinkTo(to) => json!({"path": f.path, "link_to": to}),
        })
        .collect();
    json!({
        "program": inv.program,
        "args": inv.args,
        "cwd": inv.cwd,
        "env": {"inherit": inv.env.inherit, "set": inv.env.set, "remove": inv.env.remove},
        "stdin": inv.stdin.as_deref().map(String::from_utf8_lossy),
        "files": files,
        "install_hint": inv.install_hint,
    })
}

fn build(
    settings: ProviderSettings,
    user_home: Option<&Path>,
    req: &forge_domain::ExecutionRequest,
    home: Option<&str>,
) -> Result<Invocation, ForgeError> {
    GeminiProvider::new(settings)
        .with_user_home(user_home.map(Path::to_path_buf))
        .invocation(req, &ctx(home))
}

#[test]
fn minimal_request_puts_the_prompt_on_stdin() {
    let req = request("Say hello.\nTwo lines.", "/w");
    let inv = build(ProviderSettings::default(), None, &req, None).unwrap();
    insta::assert_yaml_snapshot!("minimal", view(&inv));
    assert!(!inv.args.iter().any(|a| a.contains("Say hello")));
}

#[test]
fn every_knob_maps_to_a_flag() {
    let mut req = request("fix it", "/w");
    req.model = Some("gemini-2.5-pro".into());
    req.permission_mode = Some(PermissionMode::Bypass);
    req.allowed_tools = vec!["run_shell_command".into(), "write_file".into()];
    req.add_dirs = vec!["/a".into(), "/b c".into()];
    req.resume_session_id = Some(SessionId::new("8f4ba29d-f65d-4863-8141-dbb9fe95f0a5").unwrap());
    req.extra_args = vec!["--debug".into()];
    req.env.insert("SHARED".into(), "from-request".into());
    let settings = ProviderSettings {
        binary: Some("/opt/gemini/bin/gemini".into()),
        args: vec!["--screen-reader".into()],
        env: [
            ("SHARED".to_owned(), "from-settings".to_owned()),
            ("ONLY_SETTINGS".to_owned(), "1".to_owned()),
        ]
        .into(),
        model: Some("ignored-because-request-names-one".into()),
        ..ProviderSettings::default()
    };
    let inv = build(settings, None, &req, None).unwrap();
    insta::assert_yaml_snapshot!("every_knob", view(&inv));
}

#[test]
fn permission_modes_map_to_approval_modes() {
    let check = |mode: PermissionMode, want: &str| {
        let mut req = request("p", "/w");
        req.permission_mode = Some(mode);
        let inv = build(ProviderSettings::default(), None, &req, None).unwrap();
        let at = inv
            .args
            .iter()
            .position(|a| a == "--approval-mode")
            .unwrap();
        assert_eq!(inv.args[at + 1], want, "{mode:?}");
    };
    check(PermissionMode::Default, "default");
    check(PermissionMode::AcceptEdits, "auto_edit");
    check(PermissionMode::Bypass, "yolo");
    check(PermissionMode::Plan, "plan");
}

#[test]
fn settings_model_is_the_default() {
    let settings = ProviderSettings {
        model: Some("gemini-3.8-flash".into()),
        ..ProviderSettings::default()
    };
    let inv = build(settings, None, &request("p", "/w"), None).unwrap();
    assert!(inv.args.windows(2).any(|w| w == ["-m", "gemini-3.8-flash"]));
}

#[test]
fn private_home_gets_api_key_settings_with_max_turns() {
    let mut req = request("p", "/w");
    req.max_turns = Some(3);
    req.disallowed_tools = vec!["web_fetch".into()];
    let inv = build(
        ProviderSettings::default(),
        None,
        &req,
        Some("/w/.forgecode/runs/run-1/home"),
    )
    .unwrap();
    insta::assert_yaml_snapshot!("private_home_max_turns", view(&inv));
}

#[test]
fn copied_auth_is_copied_or_merged() {
    let user = std::env::temp_dir().join(format!("forge-gemini-user-{}", std::process::id()));
    std::fs::create_dir_all(user.join(".gemini")).unwrap();
    std::fs::write(
        user.join(".gemini/settings.json"),
        r#"{"security":{"auth":{"selectedType":"oauth-personal"}},"model":{"name":"x"}}"#,
    )
    .unwrap();
    let settings = ProviderSettings {
        copy_user_auth: true,
        ..ProviderSettings::default()
    };
    let home = "/h";
    // Without an overlay: plain copies.
    let inv = build(
        settings.clone(),
        Some(&user),
        &request("p", "/w"),
        Some(home),
    )
    .unwrap();
    let sources: Vec<_> = inv
        .files
        .iter()
        .map(|f| (f.path.clone(), f.source.clone()))
        .collect();
    assert_eq!(
        sources,
        vec![
            (
                PathBuf::from("/h/.gemini/settings.json"),
                FileSource::CopyOf(user.join(".gemini/settings.json"))
            ),
            (
                PathBuf::from("/h/.gemini/oauth_creds.json"),
                FileSource::CopyOf(user.join(".gemini/oauth_creds.json"))
            ),
            (
                PathBuf::from("/h/.gemini/google_accounts.json"),
                FileSource::CopyOf(user.join(".gemini/google_accounts.json"))
            ),
        ]
    );
    // With max turns: the user's settings are read and the limit merged in.
    let mut req = request("p", "/w");
    req.max_turns = Some(5);
    let inv = build(settings, Some(&user), &req, Some(home)).unwrap();
    let FileSource::Contents(bytes) = &inv.files[0].source else {
        panic!("settings must be written, not copied");
    };
    assert_eq!(
        serde_json::from_slice::<Value>(bytes).unwrap(),
        json!({"security":{"auth":{"selectedType":"oauth-personal"}},"model":{"name":"x","maxSessionTurns":5}})
    );
    std::fs::remove_dir_all(&user).unwrap();
}

#[test]
fn what_gemini_cannot_do_is_refused() {
    let check =
        |edit: &dyn Fn(&mut forge_domain::ExecutionRequest), home: Option<&str>, want: &str| {
            let mut req = request("p", "/w");
            edit(&mut req);
            match build(ProviderSettings::default(), None, &req, home) {
                Err(ForgeError::InvalidRequest { reason }) => {
                    assert!(reason.contains(want), "{reason:?} lacks {want:?}");
                }
                other => panic!("expected InvalidRequest for {want:?}, got {other:?}"),
            }
        };
    check(&|r| r.max_turns = Some(0), Some("/h"), "at least 1");
    check(
        &|r| r.append_system_prompt = Some("x".into()),
        None,
        "system prompt",
    );
    check(&|r| r.output_schema = Some("s.json".into()), None, "schema");
    check(&|r| r.mcp_config = Some("{}".into()), None, "mcpServers");
    check(&|r| r.prompt = "  ".into(), None, "non-empty prompt");
    check(&|r| r.add_dirs = vec!["/a,b".into()], None, "comma");
    check(&|r| r.allowed_tools = vec!["a,b".into()], None, "comma");
}

#[test]
fn capabilities_are_declared() {
    let caps = GeminiProvider::new(ProviderSettings::default()).capabilities();
    assert!(caps.streams_text_deltas && caps.max_turns && caps.resume && caps.allowed_tools);
    assert!(!caps.max_budget && !caps.reports_cost && !caps.append_system_prompt);
    // Every mode but `ask`: headless, this CLI cannot ask (the ACP provider can).
    assert_eq!(
        caps.permission_modes,
        [
            PermissionMode::Default,
            PermissionMode::AcceptEdits,
            PermissionMode::Bypass,
            PermissionMode::Plan
        ]
    );
    let p = forge_adapter_gemini::provider(ProviderSettings::default());
    assert_eq!(p.id().as_str(), "gemini");
    assert_eq!(p.install_hint(), "npm i -g @google/gemini-cli");
}
