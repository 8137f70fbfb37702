//! Tools, max turns and excluded tools in the user's own home: a run-private view of the
//! user's gemini home (`GEMINI_CLI_HOME`) links to every entry of their `~/.gemini/` but
//! `settings.json`, which is theirs merged with forge's — in any directory (these run under
//! /tmp) and for any user. The user's files are read, never written.

use std::path::{Path, PathBuf};

use forge_adapter_gemini::GeminiProvider;
use forge_adapter_gemini::home_view::workspace_overrides;
use forge_domain::{ForgeError, RunId};
use forge_ports::{
    FileSource, Invocation, InvocationContext, McpEndpoint, Provider, ProviderSettings,
};
use serde_json::{Value, json};

use super::support::request;

fn ctx(run_dir: &Path) -> InvocationContext {
    InvocationContext {
        run_id: RunId::new("run-1").unwrap(),
        run_dir: run_dir.to_path_buf(),
        home: None,
        in_repository: Some(true),
        resumed_usage: None,
        mcp: Some(McpEndpoint {
            url: "http://127.0.0.1:4242/mcp".into(),
            bearer_token: "tok".into(),
            tool_names: vec![],
        }),
    }
}

/// Max turns 3 and `run_shell_command` excluded, in `workdir`, with `env` in the request.
fn invoke(
    run_dir: &Path,
    workdir: &Path,
    env: &[(&str, &str)],
    user_home: Option<PathBuf>,
) -> Result<Invocation, ForgeError> {
    let mut req = request("p", &workdir.display().to_string());
    req.max_turns = Some(3);
    req.disallowed_tools = vec!["run_shell_command".into()];
    for (key, value) in env {
        req.env.insert((*key).into(), (*value).into());
    }
    GeminiProvider::new(ProviderSettings::default())
        .with_user_home(user_home)
        .invocation(&req, &ctx(run_dir))
}

const USER_SETTINGS: &str = r#"{
  "security": {"auth": {"selectedType": "oauth-personal"}},
  "mcpServers": {"mine": {"command": "my-mcp"}},
  "tools": {"exclude": ["web_fetch"]}
}
"#;

/// A user home with settings, a login, session history and skills.
fn user_home(root: &Path) -> PathBuf {
    let home = root.join("user");
    let gemini = home.join(".gemini");
    std::fs::create_dir_all(gemini.join("tmp/proj/chats")).unwrap();
    std::fs::create_dir_all(home.join(".agents/skills")).unwrap();
    std::fs::write(gemini.join("settings.json"), USER_SETTINGS).unwrap();
    std::fs::write(
        gemini.join("oauth_creds.json"),
        "{\"refresh_token\": \"r\"}",
    )
    .unwrap();
    std::fs::write(gemini.join("installation_id"), "id").unwrap();
    home
}

/// (link, target) pairs.
type Links = Vec<(PathBuf, PathBuf)>;
/// (path, parsed contents) pairs.
type Contents = Vec<(PathBuf, Value)>;

fn links_and_contents(inv: &Invocation) -> (Links, Contents) {
    let (mut links, mut contents) = (Vec::new(), Vec::new());
    for file in &inv.files {
        match &file.source {
            FileSource::SymlinkTo(target) => links.push((file.path.clone(), target.clone())),
            FileSource::Contents(bytes) => {
                contents.push((file.path.clone(), serde_json::from_slice(bytes).unwrap()))
            }
            FileSource::CopyOf(source) => panic!("nothing is copied: {}", source.display()),
        }
    }
    (links, contents)
}

#[test]
fn a_run_in_the_users_home_gets_a_view_of_it() {
    let root = tempfile::tempdir().unwrap();
    let home = user_home(root.path());
    let run_dir = root.path().join("ws/.forgecode/runs/run-1");
    let home_str = home.display().to_string();
    let inv = invoke(
        &run_dir,
        &root.path().join("ws"),
        &[("HOME", &home_str)],
        None,
    )
    .unwrap();

    let view = run_dir.join("gemini-home");
    assert_eq!(inv.env.set["GEMINI_CLI_HOME"], view.display().to_string());
    // HOME stays the user's (the request's own, not replaced), and no system settings.
    assert_eq!(inv.env.set["HOME"], home_str);
    assert!(!inv.env.set.contains_key("GEMINI_CLI_SYSTEM_SETTINGS_PATH"));

    let (links, contents) = links_and_contents(&inv);
    let user = home.join(".gemini");
    assert_eq!(
        links,
        [
            (
                view.join(".gemini/installation_id"),
                user.join("installation_id")
            ),
            (
                view.join(".gemini/oauth_creds.json"),
                user.join("oauth_creds.json")
            ),
            (view.join(".gemini/tmp"), user.join("tmp")),
            (view.join(".agents"), home.join(".agents")),
        ]
    );
    assert_eq!(
        contents,
        [(
            view.join(".gemini/settings.json"),
            json!({
                "security": {"auth": {"selectedType": "oauth-personal"}},
                "mcpServers": {
                    "mine": {"command": "my-mcp"},
                    "forge": {"httpUrl": "http://127.0.0.1:4242/mcp",
                              "headers": {"Authorization": "Bearer tok"}, "trust": true}
                },
                "tools": {"exclude": ["web_fetch", "run_shell_command"]},
                "model": {"maxSessionTurns": 3}
            })
        )]
    );
    // The user's own MCP servers stay allowed beside forge's.
    assert!(
        !inv.args.iter().any(|a| a == "--allowed-mcp-server-names"),
        "{:?}",
        inv.args
    );
    // Building the invocation wrote nothing: the user's settings are as they were.
    assert_eq!(
        std::fs::read_to_string(user.join("settings.json")).unwrap(),
        USER_SETTINGS
    );
    assert!(!run_dir.exists());
}

#[test]
fn the_users_gemini_home_is_theirs_first_then_home_then_the_providers() {
    let root = tempfile::tempdir().unwrap();
    let home = user_home(root.path());
    let run_dir = root.path().join("run");
    let view_settings = |inv: &Invocation| links_and_contents(inv).1[0].1.clone();
    // GEMINI_CLI_HOME of the user's environment names their gemini home.
    let gemini_home = home.display().to_string();
    let inv = invoke(
        &run_dir,
        root.path(),
        &[("GEMINI_CLI_HOME", &gemini_home), ("HOME", "/nowhere")],
        None,
    )
    .unwrap();
    assert_eq!(
        view_settings(&inv)["mcpServers"]["mine"]["command"],
        "my-mcp"
    );
    // No HOME in the run's environment: the provider's user home.
    let inv = invoke(
        &run_dir,
        root.path(),
        &[("GEMINI_CLI_HOME", ""), ("HOME", "")],
        Some(home.clone()),
    )
    .unwrap();
    assert_eq!(
        view_settings(&inv)["mcpServers"]["mine"]["command"],
        "my-mcp"
    );
    // A user without a gemini home: forge's settings alone, nothing linked.
    let empty = root.path().join("empty");
    let inv = invoke(
        &run_dir,
        root.path(),
        &[
            ("GEMINI_CLI_HOME", ""),
            ("HOME", &empty.display().to_string()),
        ],
        None,
    )
    .unwrap();
    let (links, contents) = links_and_contents(&inv);
    assert!(links.is_empty(), "{links:?}");
    assert_eq!(contents[0].1["model"]["maxSessionTurns"], 3);
    assert!(contents[0].1.get("security").is_none());
    // No home at all: refused, pointing at a private home.
    match invoke(
        &run_dir,
        root.path(),
        &[("GEMINI_CLI_HOME", ""), ("HOME", "")],
        None,
    ) {
        Err(ForgeError::InvalidRequest { reason }) => {
            assert!(reason.contains("private home"), "{reason}");
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn user_settings_forge_cannot_merge_into_are_named() {
    let root = tempfile::tempdir().unwrap();
    let home = user_home(root.path());
    let settings = home.join(".gemini/settings.json");
    std::fs::write(&settings, "{ // a comment\n }").unwrap();
    match invoke(
        &root.path().join("run"),
        root.path(),
        &[("HOME", &home.display().to_string())],
        None,
    ) {
        Err(ForgeError::InvalidRequest { reason }) => {
            assert!(reason.contains("not plain JSON"), "{reason}");
            assert!(reason.contains(&settings.display().to_string()), "{reason}");
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn workspace_settings_that_would_override_forges_refuse_the_run() {
    let overlay = json!({
        "model": {"maxSessionTurns": 3},
        "mcpServers": {"forge": {"httpUrl": "http://127.0.0.1:1/mcp"}}
    });
    let tools_only = json!({"mcpServers": {"forge": {"httpUrl": "x"}}});
    // (workspace settings, overlay, the key named in the refusal or None)
    let check = |workspace: Option<&str>, overlay: &Value, expected: Option<&str>| {
        let dir = tempfile::tempdir().unwrap();
        if let Some(text) = workspace {
            std::fs::create_dir_all(dir.path().join(".gemini")).unwrap();
            std::fs::write(dir.path().join(".gemini/settings.json"), text).unwrap();
        }
        match (workspace_overrides(dir.path(), overlay), expected) {
            (Ok(()), None) => {}
            (Err(ForgeError::InvalidRequest { reason }), Some(key)) => {
                assert!(reason.contains(key), "{workspace:?}: {reason}");
                assert!(reason.contains(".gemini/settings.json"), "{reason}");
            }
            (got, _) => panic!("{workspace:?} with {overlay}: {got:?}, expected {expected:?}"),
        }
    };
    // Positives.
    check(
        Some(r#"{"model": {"maxSessionTurns": 50}}"#),
        &overlay,
        Some("model.maxSessionTurns"),
    );
    check(
        Some(r#"{"mcpServers": {"forge": {"command": "evil"}}}"#),
        &overlay,
        Some("mcpServers.forge"),
    );
    // Look-alikes that must not fire.
    check(None, &overlay, None);
    check(Some(r#"{"model": {"name": "gemini-pro"}}"#), &overlay, None);
    check(
        Some(r#"{"mcpServers": {"mine": {"command": "m"}}}"#),
        &overlay,
        None,
    );
    check(
        Some(r#"{"tools": {"exclude": ["web_fetch"]}}"#),
        &overlay,
        None,
    );
    check(
        Some(r#"{"model": {"maxSessionTurns": 50}}"#),
        &tools_only,
        None,
    );
    check(Some("{ // gemini reports this itself\n }"), &overlay, None);
}

#[test]
fn a_private_home_is_checked_against_the_workspace_too() {
    let root = tempfile::tempdir().unwrap();
    let ws = root.path().join("ws");
    std::fs::create_dir_all(ws.join(".gemini")).unwrap();
    std::fs::write(
        ws.join(".gemini/settings.json"),
        r#"{"model": {"maxSessionTurns": 99}}"#,
    )
    .unwrap();
    let mut req = request("p", &ws.display().to_string());
    req.max_turns = Some(3);
    let mut context = ctx(&root.path().join("run"));
    context.home = Some(root.path().join("run/home"));
    match GeminiProvider::new(ProviderSettings::default())
        .with_user_home(None)
        .invocation(&req, &context)
    {
        Err(ForgeError::InvalidRequest { reason }) => {
            assert!(reason.contains("model.maxSessionTurns"), "{reason}");
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn the_users_mcp_filters_let_forges_server_through() {
    let root = tempfile::tempdir().unwrap();
    let home = user_home(root.path());
    // (the user's `mcp` settings, what the view's must be)
    let check = |mcp: Value, expected: Value| {
        let settings = json!({"mcpServers": {"mine": {"command": "m"}}, "mcp": mcp});
        std::fs::write(
            home.join(".gemini/settings.json"),
            serde_json::to_vec(&settings).unwrap(),
        )
        .unwrap();
        let inv = invoke(
            &root.path().join("run"),
            root.path(),
            &[("HOME", &home.display().to_string())],
            None,
        )
        .unwrap();
        let view = &links_and_contents(&inv).1[0].1;
        assert_eq!(view["mcp"], expected, "from {mcp}");
    };
    // Positives: an allow-list gains forge, an exclusion of the name is dropped.
    check(
        json!({"allowed": ["mine"]}),
        json!({"allowed": ["mine", "forge"]}),
    );
    check(
        json!({"excluded": ["forge", "other"]}),
        json!({"excluded": ["other"]}),
    );
    // Look-alikes: an empty allow-list allows all; other keys and names stay as they were.
    check(json!({"allowed": []}), json!({"allowed": []}));
    check(
        json!({"excluded": ["forged"], "serverCommand": "x"}),
        json!({"excluded": ["forged"], "serverCommand": "x"}),
    );
}
