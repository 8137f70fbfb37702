//! Tools, max turns and excluded tools in the user's own home: a system settings file of the
//! run (`GEMINI_CLI_SYSTEM_SETTINGS_PATH`) carries them, merged onto the machine's system
//! settings, and the user's files are not touched — or, where gemini 0.61 would skip that
//! file (not root-owned, or under a group/world-writable directory), the run is refused.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use forge_adapter_gemini::GeminiProvider;
use forge_adapter_gemini::system_settings::honoured_at;
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

/// A directory under this repository's `target/` (root-owned, mode 755, when the tests run
/// as root; never under /tmp, which is world-writable).
fn target_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../target/gemini-system-settings")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir.canonicalize().unwrap()
}

fn invoke(run_dir: &Path, machine: Option<&Path>) -> Result<Invocation, ForgeError> {
    let mut req = request("p", "/w");
    req.max_turns = Some(3);
    req.disallowed_tools = vec!["run_shell_command".into()];
    if let Some(machine) = machine {
        req.env.insert(
            "GEMINI_CLI_SYSTEM_SETTINGS_PATH".into(),
            machine.display().to_string(),
        );
    }
    GeminiProvider::new(ProviderSettings::default()).invocation(&req, &ctx(run_dir))
}

#[test]
fn a_run_in_the_users_home_gets_a_system_settings_file_or_a_reason() {
    let root = target_dir("own-home");
    let run_dir = root.join("runs/run-1");
    std::fs::create_dir_all(&run_dir).unwrap();
    // The machine's system settings: kept, with forge's on top.
    let machine = root.join("etc/settings.json");
    std::fs::create_dir_all(machine.parent().unwrap()).unwrap();
    std::fs::write(
        &machine,
        r#"{"mcpServers": {"admin": {"command": "admin-mcp"}}, "tools": {"exclude": ["web_fetch"]}}"#,
    )
    .unwrap();

    let result = invoke(&run_dir, Some(&machine));
    if let Err(why) = honoured_at(&run_dir) {
        // Not root (or a writable directory above): gemini would skip the file.
        match result {
            Err(ForgeError::InvalidRequest { reason }) => {
                assert!(
                    reason.contains(&why) && reason.contains("private home"),
                    "{reason}"
                );
            }
            other => panic!("expected a refusal ({why}), got {other:?}"),
        }
        return;
    }
    let inv = result.unwrap();
    let file = run_dir.join("gemini-system-settings.json");
    assert_eq!(
        inv.env.set["GEMINI_CLI_SYSTEM_SETTINGS_PATH"],
        file.display().to_string()
    );
    assert_eq!(
        inv.env.set["GEMINI_CLI_SYSTEM_DEFAULTS_PATH"],
        root.join("etc/system-defaults.json").display().to_string()
    );
    // The user's home is theirs: no HOME, no GEMINI_CLI_HOME, no file of theirs written.
    assert!(!inv.env.set.contains_key("HOME") && !inv.env.set.contains_key("GEMINI_CLI_HOME"));
    assert_eq!(inv.files.len(), 1);
    assert_eq!(inv.files[0].path, file);
    let FileSource::Contents(bytes) = &inv.files[0].source else {
        panic!("written, not copied");
    };
    assert_eq!(
        serde_json::from_slice::<Value>(bytes).unwrap(),
        json!({
            "mcpServers": {
                "admin": {"command": "admin-mcp"},
                "forge": {"httpUrl": "http://127.0.0.1:4242/mcp",
                          "headers": {"Authorization": "Bearer tok"}, "trust": true}
            },
            "tools": {"exclude": ["web_fetch", "run_shell_command"]},
            "model": {"maxSessionTurns": 3}
        })
    );
    // The user's own MCP servers stay allowed beside forge's.
    assert!(
        !inv.args.iter().any(|a| a == "--allowed-mcp-server-names"),
        "{:?}",
        inv.args
    );
}

#[test]
fn a_run_dir_gemini_would_not_trust_is_refused_with_the_reason() {
    // Under /tmp (mode 1777): gemini 0.61 skips such a file with a warning.
    let tmp = tempfile::tempdir().unwrap();
    assert_ne!(std::fs::metadata("/tmp").unwrap().mode() & 0o002, 0);
    match invoke(tmp.path(), None) {
        Err(ForgeError::InvalidRequest { reason }) => {
            assert!(reason.contains("writable by group or others"), "{reason}");
            assert!(reason.contains("private home"), "{reason}");
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn unreadable_machine_settings_are_named() {
    let root = target_dir("bad-machine");
    let run_dir = root.join("run");
    std::fs::create_dir_all(&run_dir).unwrap();
    if honoured_at(&run_dir).is_err() {
        return; // refused before the machine's settings are read (the test above).
    }
    let machine = root.join("settings.json");
    std::fs::write(&machine, "{ // a comment\n }").unwrap();
    match invoke(&run_dir, Some(&machine)) {
        Err(ForgeError::InvalidRequest { reason }) => {
            assert!(reason.contains("not plain JSON"), "{reason}");
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
}
