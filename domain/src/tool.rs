//! Tools the agents call, mapped onto one canonical set of kinds.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::raw::RawJson;

/// The canonical kind of a tool, whatever the CLI calls it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolKind {
    Shell,
    FileRead,
    FileWrite,
    Search,
    Web,
    Mcp,
    Subagent,
    Other,
}

/// A tool a provider offers, as forge describes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolDefinition {
    /// The CLI's own name (`Bash`, `run_shell_command`, `exec_command`).
    pub name: String,
    pub kind: ToolKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolCallStatus {
    /// Started, no result seen (yet, or ever: the run ended first).
    Pending,
    Completed,
    Failed,
}

/// One tool call with its result, paired by the CLI's call id. The strings are shared with
/// the events that reported the call (a clone is a reference count).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: Arc<str>,
    pub kind: ToolKind,
    /// The CLI's raw tool name.
    pub name: Arc<str>,
    /// The arguments as the CLI printed them (see [`RawJson::to_value`] for a tree).
    pub input: RawJson,
    #[serde(default)]
    pub output: Option<Arc<str>>,
    #[serde(default)]
    pub is_error: bool,
    /// A shell command's exit code, where the CLI reports one.
    #[serde(default)]
    pub exit_code: Option<i32>,
    pub status: ToolCallStatus,
    /// For a tool forge served (kind `mcp`): the registered name, without the CLI's prefix.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub canonical_name: Option<Arc<str>>,
    /// How long forge's handler ran, for a tool forge served.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
}

/// The tool names of one run, each allocated once: a run calls a handful of tools many
/// times, and every call's events and accumulator entry share the one name.
#[derive(Debug, Clone, Default)]
pub struct ToolNames {
    names: Vec<Arc<str>>,
}

impl ToolNames {
    /// Names kept at most; any further name is allocated per call (a linear scan stays cheap).
    const MAX: usize = 32;

    pub fn new() -> Self {
        Self::default()
    }

    /// The shared copy of `name`.
    pub fn get(&mut self, name: &str) -> Arc<str> {
        if let Some(known) = self.names.iter().find(|n| n.as_ref() == name) {
            return Arc::clone(known);
        }
        let shared: Arc<str> = Arc::from(name);
        if self.names.len() < Self::MAX {
            self.names.push(Arc::clone(&shared));
        }
        shared
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_is_allocated_once_and_shared() {
        let mut names = ToolNames::new();
        let a = names.get("Bash");
        let b = names.get("Bash");
        assert!(Arc::ptr_eq(&a, &b));
        assert_eq!(&*names.get("Write"), "Write");
        for i in 0..40 {
            assert_eq!(&*names.get(&format!("t{i}")), format!("t{i}"));
        }
        // Past the cap names still come back right, just not shared.
        assert!(!Arc::ptr_eq(&names.get("t39"), &names.get("t39")));
    }

    #[test]
    fn tool_calls_serialise_their_shared_strings_as_plain_strings() {
        let call = ToolCall {
            id: "t1".into(),
            kind: ToolKind::Shell,
            name: "Bash".into(),
            input: RawJson::from_parsed(r#"{"command":"ls"}"#),
            output: Some("a\nb".into()),
            is_error: false,
            exit_code: Some(0),
            status: ToolCallStatus::Completed,
            canonical_name: None,
            duration_ms: None,
        };
        let json = serde_json::to_string(&call).unwrap();
        assert_eq!(
            json,
            r#"{"id":"t1","kind":"shell","name":"Bash","input":{"command":"ls"},"output":"a\nb","is_error":false,"exit_code":0,"status":"completed"}"#
        );
        let back: ToolCall = serde_json::from_str(&json).unwrap();
        assert_eq!(back, call);
    }
}
