//! Tools forge itself serves to the agent (over MCP): what a caller registers, and forge's
//! record of each execution.
//!
//! Distinct from [`crate::ToolDefinition`], which describes a tool a CLI brings along: these
//! are the caller's own functions and configured commands, the only ones the agent may call
//! through forge's tool server.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::ForgeError;

/// The MCP server name forge registers in every CLI. No underscore: Gemini splits
/// `mcp_<server>_<tool>` at the first one.
pub const TOOL_SERVER_NAME: &str = "forge";

/// Why a tool name was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolNameError {
    #[error("tool name must not be empty")]
    Empty,
    #[error("tool name {0:?} is longer than {max} characters", max = ToolName::MAX)]
    TooLong(String),
    #[error("tool name {0:?} must start with an ASCII letter")]
    BadStart(String),
    #[error("tool name {0:?} has a character outside [A-Za-z0-9_-]")]
    BadCharacter(String),
    #[error("tool name {0:?} has a double underscore (Claude splits names at `__`)")]
    DoubleUnderscore(String),
}

/// A tool name every CLI accepts once prefixed: Claude spells it `mcp__forge__<name>`,
/// Gemini `mcp_forge_<name>`, Codex a function `<name>` in namespace `mcp__forge`; model
/// APIs take function names of `[A-Za-z0-9_-]{1,64}`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct ToolName(String);

impl ToolName {
    /// 64 minus the longest prefix a CLI adds (`mcp__forge__`).
    pub const MAX: usize = 64 - "mcp__forge__".len();

    /// Checks and wraps `name`.
    ///
    /// # Errors
    /// [`ToolNameError`] for an empty or over-long name, one not starting with a letter,
    /// with a character outside `[A-Za-z0-9_-]`, or with `__`.
    pub fn new(name: impl Into<String>) -> Result<Self, ToolNameError> {
        let name = name.into();
        let Some(first) = name.chars().next() else {
            return Err(ToolNameError::Empty);
        };
        if name.len() > Self::MAX {
            return Err(ToolNameError::TooLong(name));
        }
        if !first.is_ascii_alphabetic() {
            return Err(ToolNameError::BadStart(name));
        }
        if !name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        {
            return Err(ToolNameError::BadCharacter(name));
        }
        if name.contains("__") {
            return Err(ToolNameError::DoubleUnderscore(name));
        }
        Ok(Self(name))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The tool's name in a CLI's own output (`mcp__forge__x`, `mcp_forge_x`), or `None` when
    /// `raw` names no forge tool. Codex reports server and tool apart; its decoder's name is
    /// `mcp__forge__x` as well.
    pub fn from_cli_spelling(raw: &str) -> Option<Self> {
        let rest = raw
            .strip_prefix("mcp__forge__")
            .or_else(|| raw.strip_prefix("mcp_forge_"))
            .or_else(|| raw.strip_prefix("forge."))
            .or_else(|| raw.strip_prefix("forge/"))?;
        Self::new(rest).ok()
    }
}

impl TryFrom<String> for ToolName {
    type Error = ToolNameError;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        Self::new(value)
    }
}

impl From<ToolName> for String {
    fn from(value: ToolName) -> Self {
        value.0
    }
}

impl fmt::Display for ToolName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Hints a CLI may use to decide whether a call needs approval.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolAnnotations {
    #[serde(default)]
    pub read_only: bool,
    #[serde(default)]
    pub destructive: bool,
}

/// What a failing tool does to the run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolErrorPolicy {
    /// The agent gets an error result and the run records a `ToolExecution` error; the run
    /// goes on.
    #[default]
    Record,
    /// The agent gets an error result; the run's errors stay untouched (expected failures,
    /// e.g. a lookup that may find nothing).
    AgentOnly,
}

/// A tool registered with forge and served to the agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostedTool {
    pub name: ToolName,
    pub description: String,
    /// JSON schema of the arguments: an object schema. A top-level property with
    /// `"format": "path"` is a path argument (resolved by the workspace rule first).
    pub input_schema: Value,
    #[serde(default)]
    pub annotations: ToolAnnotations,
    /// How long one call may take; `None`: [`HostedTool::DEFAULT_TIMEOUT_MS`].
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    #[serde(default)]
    pub error_policy: ToolErrorPolicy,
}

impl HostedTool {
    pub const DEFAULT_TIMEOUT_MS: u64 = 60_000;

    /// A tool with `name`, `description` and an argument schema.
    ///
    /// # Errors
    /// [`ForgeError::InvalidRequest`] for a bad name or a schema that is not an object
    /// schema.
    pub fn new(
        name: &str,
        description: impl Into<String>,
        input_schema: Value,
    ) -> Result<Self, ForgeError> {
        let name = ToolName::new(name).map_err(|e| ForgeError::InvalidRequest {
            reason: e.to_string(),
        })?;
        let is_object_schema = input_schema.as_object().is_some_and(|schema| {
            schema
                .get("type")
                .is_none_or(|t| t.as_str() == Some("object"))
        });
        if !is_object_schema {
            return Err(ForgeError::InvalidRequest {
                reason: format!(
                    "tool {name}: input_schema must be a JSON object schema (\"type\": \"object\")"
                ),
            });
        }
        Ok(Self {
            name,
            description: description.into(),
            input_schema,
            annotations: ToolAnnotations::default(),
            timeout_ms: None,
            error_policy: ToolErrorPolicy::Record,
        })
    }

    pub fn with_timeout_ms(mut self, ms: u64) -> Self {
        self.timeout_ms = Some(ms);
        self
    }

    pub fn with_annotations(mut self, annotations: ToolAnnotations) -> Self {
        self.annotations = annotations;
        self
    }

    pub fn with_error_policy(mut self, policy: ToolErrorPolicy) -> Self {
        self.error_policy = policy;
        self
    }

    pub fn timeout_ms(&self) -> u64 {
        self.timeout_ms.unwrap_or(Self::DEFAULT_TIMEOUT_MS)
    }

    /// The top-level properties declared as paths (`"format": "path"`).
    pub fn path_args(&self) -> Vec<&str> {
        let props = self
            .input_schema
            .get("properties")
            .and_then(Value::as_object);
        props
            .into_iter()
            .flatten()
            .filter(|(_, schema)| schema.get("format").and_then(Value::as_str) == Some("path"))
            .map(|(name, _)| name.as_str())
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect()
    }
}

/// forge's record of one call its tool server answered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolExecution {
    /// The call id the CLI passed along (`_meta`), when it passed one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
    /// The name the agent asked for (it may name no registered tool).
    pub tool: String,
    pub input: Value,
    /// The text returned to the agent.
    pub output: String,
    pub is_error: bool,
    pub duration_ms: u64,
    /// Set when the failure is one the run records (per the tool's error policy).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ForgeError>,
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn names_every_cli_accepts_pass_and_look_alikes_do_not() {
        let check = |name: &str, ok: bool| {
            assert_eq!(ToolName::new(name).is_ok(), ok, "{name:?}");
        };
        check("echo", true);
        check("read_file", true);
        check("git-log2", true);
        check(&"a".repeat(ToolName::MAX), true);
        check(&"a".repeat(ToolName::MAX + 1), false);
        check("", false);
        check("2fast", false);
        check("_hidden", false);
        check("has space", false);
        check("dot.ted", false);
        check("slash/ed", false);
        check("a__b", false);
        check("ünïcode", false);
    }

    #[test]
    fn cli_spellings_map_back_to_the_tool_name() {
        let check = |raw: &str, want: Option<&str>| {
            assert_eq!(
                ToolName::from_cli_spelling(raw)
                    .as_ref()
                    .map(ToolName::as_str),
                want,
                "{raw:?}"
            );
        };
        check("mcp__forge__echo", Some("echo"));
        check("mcp_forge_read_file", Some("read_file"));
        check("forge.echo", Some("echo"));
        check("mcp__other__echo", None);
        check("mcp_forgery_echo", None);
        check("echo", None);
        check("Bash", None);
    }

    #[test]
    fn path_arguments_are_read_from_the_schema() {
        let tool = HostedTool::new(
            "read",
            "reads",
            json!({"type":"object","properties":{
                "path":{"type":"string","format":"path"},
                "mode":{"type":"string"},
                "dest":{"type":"string","format":"path"}}}),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(tool.path_args(), vec!["dest", "path"]);
        assert_eq!(tool.timeout_ms(), HostedTool::DEFAULT_TIMEOUT_MS);
    }

    #[test]
    fn schemas_that_are_not_object_schemas_are_refused() {
        assert!(HostedTool::new("t", "d", json!({"type":"string"})).is_err());
        assert!(HostedTool::new("t", "d", json!([1])).is_err());
        assert!(HostedTool::new("t", "d", json!({})).is_ok());
        assert!(HostedTool::new("t t", "d", json!({})).is_err());
    }
}
