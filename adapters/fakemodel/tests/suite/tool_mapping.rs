//! Abstract actions → the concrete tools each real CLI advertised (recorded tool lists).

use forge_adapter_fakemodel::ToolAction;
use forge_adapter_fakemodel::tools::{CallPayload, ToolCatalog, Vendor, map_action};
use serde_json::{Value, json};

use super::fixtures::tools_request;

fn write() -> ToolAction {
    ToolAction::WriteFile {
        path: "hello.txt".into(),
        content: "hi\nthere\n".into(),
    }
}
fn read() -> ToolAction {
    ToolAction::ReadFile {
        path: "hello.txt".into(),
    }
}
fn shell() -> ToolAction {
    ToolAction::Shell {
        command: "exit 3".into(),
        description: Some("Fail".into()),
        escalate: false,
    }
}

/// Map `action` with the tools in `body` and compare name + payload.
fn check(vendor: Vendor, body: &Value, action: &ToolAction, name: &str, payload: CallPayload) {
    let catalog = ToolCatalog::from_request(vendor, body);
    let call = map_action(vendor, action, &catalog, Some("/ws"));
    assert_eq!(
        (call.name.as_str(), &call.payload),
        (name, &payload),
        "{action:?}"
    );
}

fn args(value: Value) -> CallPayload {
    CallPayload::Json(value)
}

#[test]
fn claude_gets_write_read_bash_with_absolute_paths() {
    let tools = tools_request(Vendor::Anthropic);
    check(
        Vendor::Anthropic,
        &tools,
        &write(),
        "Write",
        args(json!({"file_path": "/ws/hello.txt", "content": "hi\nthere\n"})),
    );
    check(
        Vendor::Anthropic,
        &tools,
        &read(),
        "Read",
        args(json!({"file_path": "/ws/hello.txt"})),
    );
    check(
        Vendor::Anthropic,
        &tools,
        &shell(),
        "Bash",
        args(json!({"command": "exit 3", "description": "Fail"})),
    );
}

#[test]
fn codex_gets_apply_patch_as_a_custom_call_and_exec_command() {
    let tools = tools_request(Vendor::OpenAi);
    let patch = "*** Begin Patch\n*** Add File: hello.txt\n+hi\n+there\n*** End Patch";
    check(
        Vendor::OpenAi,
        &tools,
        &write(),
        "apply_patch",
        CallPayload::Custom(patch.into()),
    );
    check(
        Vendor::OpenAi,
        &tools,
        &read(),
        "exec_command",
        args(json!({"cmd": "cat 'hello.txt'"})),
    );
    check(
        Vendor::OpenAi,
        &tools,
        &shell(),
        "exec_command",
        args(json!({"cmd": "exit 3"})),
    );
}

#[test]
fn gemini_gets_its_snake_case_tools_with_schema_field_names() {
    let tools = tools_request(Vendor::Gemini);
    check(
        Vendor::Gemini,
        &tools,
        &write(),
        "write_file",
        args(json!({"file_path": "/ws/hello.txt", "content": "hi\nthere\n"})),
    );
    check(
        Vendor::Gemini,
        &tools,
        &read(),
        "read_file",
        args(json!({"file_path": "/ws/hello.txt"})),
    );
    check(
        Vendor::Gemini,
        &tools,
        &shell(),
        "run_shell_command",
        args(json!({"command": "exit 3", "description": "Fail"})),
    );
}

#[test]
fn gemini_read_file_follows_an_absolute_path_schema() {
    let tools = json!({"tools": [{"functionDeclarations": [
        {"name": "read_file", "parametersJsonSchema": {"properties": {"absolute_path": {}}}},
        {"name": "run_shell_command", "parameters": {"properties": {"command": {}}}}
    ]}]});
    check(
        Vendor::Gemini,
        &tools,
        &read(),
        "read_file",
        args(json!({"absolute_path": "/ws/hello.txt"})),
    );
    check(
        Vendor::Gemini,
        &tools,
        &shell(),
        "run_shell_command",
        args(json!({"command": "exit 3"})),
    );
}

#[test]
fn missing_file_tools_fall_back_to_the_shell() {
    let heredoc = "cat > 'hello.txt' <<'FAKEMODEL_EOF'\nhi\nthere\nFAKEMODEL_EOF";
    let claude = json!({"tools": [{"name": "Bash"}]});
    check(
        Vendor::Anthropic,
        &claude,
        &write(),
        "Bash",
        args(json!({"command": heredoc, "description": "Write a file"})),
    );
    check(
        Vendor::Anthropic,
        &claude,
        &read(),
        "Bash",
        args(json!({"command": "cat 'hello.txt'", "description": "Read a file"})),
    );
    // Older codex builds: `shell {command: [argv]}` and no apply_patch.
    let codex = json!({"tools": [{"type": "function", "name": "shell"}]});
    check(
        Vendor::OpenAi,
        &codex,
        &write(),
        "shell",
        args(json!({"command": ["bash", "-lc", heredoc]})),
    );
    let function_patch = json!({"tools": [{"type": "function", "name": "apply_patch"}]});
    let patch = "*** Begin Patch\n*** Add File: hello.txt\n+hi\n+there\n*** End Patch";
    check(
        Vendor::OpenAi,
        &function_patch,
        &write(),
        "apply_patch",
        args(json!({"input": patch})),
    );
    let gemini = json!({"tools": [{"functionDeclarations": [{"name": "run_shell_command",
        "parametersJsonSchema": {"properties": {"command": {}, "description": {}}}}]}]});
    check(
        Vendor::Gemini,
        &gemini,
        &write(),
        "run_shell_command",
        args(json!({"command": heredoc, "description": "Write a file"})),
    );
}

#[test]
fn absolute_paths_and_unknown_workdirs_are_kept() {
    let tools = tools_request(Vendor::Anthropic);
    let catalog = ToolCatalog::from_request(Vendor::Anthropic, &tools);
    let absolute = ToolAction::ReadFile {
        path: "/etc/hosts".into(),
    };
    let call = map_action(Vendor::Anthropic, &absolute, &catalog, Some("/ws"));
    assert_eq!(call.payload, args(json!({"file_path": "/etc/hosts"})));
    let call = map_action(Vendor::Anthropic, &read(), &catalog, None);
    assert_eq!(call.payload, args(json!({"file_path": "hello.txt"})));
}

#[test]
fn an_escalated_shell_asks_codex_for_it_and_changes_nothing_for_the_others() {
    let escalated = ToolAction::Shell {
        command: "touch made.txt".into(),
        description: Some("Make the marker file".into()),
        escalate: true,
    };
    // codex's exec_command with its per-command sandbox override.
    let codex = json!({"tools": [{"type": "function", "name": "exec_command", "parameters":
        {"type": "object", "properties": {"cmd": {"type": "string"},
         "sandbox_permissions": {"type": "string"}, "justification": {"type": "string"}}}}]});
    check(
        Vendor::OpenAi,
        &codex,
        &escalated,
        "exec_command",
        args(
            json!({"cmd": "touch made.txt", "sandbox_permissions": "require_escalated",
                    "justification": "Make the marker file"}),
        ),
    );
    // A codex without the argument gets the plain command.
    let plain = json!({"tools": [{"type": "function", "name": "exec_command"}]});
    check(
        Vendor::OpenAi,
        &plain,
        &escalated,
        "exec_command",
        args(json!({"cmd": "touch made.txt"})),
    );
    check(
        Vendor::Anthropic,
        &tools_request(Vendor::Anthropic),
        &escalated,
        "Bash",
        args(json!({"command": "touch made.txt", "description": "Make the marker file"})),
    );
}
