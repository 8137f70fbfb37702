//! A finished command as the run records it: a `shell` tool call with its command line,
//! output and exit code.

use std::sync::Arc;

use forge_domain::{AgentEvent, RawJson, ToolKind};

use crate::terminals::{Command, Snapshot};

/// The start and end of the tool call `call_id` that ran `command` and left `last`.
pub fn tool_call(call_id: &str, command: &Command, last: &Snapshot) -> [AgentEvent; 2] {
    let call_id: Arc<str> = call_id.into();
    let name: Arc<str> = "terminal".into();
    let input = serde_json::json!({"command": command.line(), "cwd": command.cwd});
    let exit_code = last.exit.and_then(|e| e.code);
    [
        AgentEvent::ToolCallStarted {
            call_id: call_id.clone(),
            kind: ToolKind::Shell,
            name: name.clone(),
            input: RawJson::from_parsed(&input.to_string()),
        },
        AgentEvent::ToolCallFinished {
            call_id,
            kind: ToolKind::Shell,
            name,
            output: Some(last.output.as_str().into()),
            is_error: exit_code != Some(0),
            exit_code,
        },
    ]
}
