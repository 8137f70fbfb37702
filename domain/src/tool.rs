//! Tools the agents call, mapped onto one canonical set of kinds.

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

/// One tool call with its result, paired by the CLI's call id.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    pub kind: ToolKind,
    /// The CLI's raw tool name.
    pub name: String,
    /// The arguments as the CLI printed them (see [`RawJson::to_value`] for a tree).
    pub input: RawJson,
    #[serde(default)]
    pub output: Option<String>,
    #[serde(default)]
    pub is_error: bool,
    /// A shell command's exit code, where the CLI reports one.
    #[serde(default)]
    pub exit_code: Option<i32>,
    pub status: ToolCallStatus,
}
