//! The failures forge reports, one variant per thing a caller can act on.
//!
//! The same enum is carried inside [`crate::ExecutionResult::errors`] (serialised with a
//! `kind` tag), so a result on disk says exactly what went wrong.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ForgeError {
    /// No provider of that name is registered.
    #[error("provider {provider:?} is not supported (registered: {registered})")]
    ProviderNotSupported {
        provider: String,
        registered: String,
    },

    /// The CLI failed: non-zero exit, or an error it reported itself.
    #[error("provider execution failed ({}): {stderr_summary}", describe_exit(.exit_code))]
    ProviderExecution {
        exit_code: Option<i32>,
        stderr_summary: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        hint: Option<String>,
    },

    /// One line of the CLI's output could not be decoded; the stream went on.
    #[error("could not parse output line {line}: {reason} (starts with {excerpt:?})")]
    Parsing {
        line: u64,
        excerpt: String,
        reason: String,
    },

    /// A path would leave the workspace.
    #[error("path {path:?} is outside the workspace: {reason}")]
    WorkspaceSecurity { path: String, reason: String },

    /// A tool the agent ran failed in a way forge must report (not an ordinary failed command).
    #[error("tool {tool:?} failed: {message}")]
    ToolExecution { tool: String, message: String },

    /// forge's deadline passed; the run was stopped through the kill ladder.
    #[error("provider timed out after {after_ms} ms")]
    ProviderTimeout { after_ms: u64 },

    /// The caller cancelled the run.
    #[error("run cancelled")]
    Cancelled,

    /// The CLI binary is not installed or not on PATH.
    #[error("executable {program:?} not found: {hint}")]
    ExecutableNotFound { program: String, hint: String },

    /// forge could not do its own I/O (spawn, pipes, artifact files).
    #[error("{context}: {message}")]
    Io { context: String, message: String },

    /// A request or configuration value forge cannot act on.
    #[error("invalid request: {reason}")]
    InvalidRequest { reason: String },
}

impl ForgeError {
    /// The serialised `kind` tag.
    pub fn kind(&self) -> &'static str {
        match self {
            ForgeError::ProviderNotSupported { .. } => "provider_not_supported",
            ForgeError::ProviderExecution { .. } => "provider_execution",
            ForgeError::Parsing { .. } => "parsing",
            ForgeError::WorkspaceSecurity { .. } => "workspace_security",
            ForgeError::ToolExecution { .. } => "tool_execution",
            ForgeError::ProviderTimeout { .. } => "provider_timeout",
            ForgeError::Cancelled => "cancelled",
            ForgeError::ExecutableNotFound { .. } => "executable_not_found",
            ForgeError::Io { .. } => "io",
            ForgeError::InvalidRequest { .. } => "invalid_request",
        }
    }

    /// Shorthand for an I/O failure with context.
    pub fn io(context: impl Into<String>, err: impl std::fmt::Display) -> Self {
        ForgeError::Io {
            context: context.into(),
            message: err.to_string(),
        }
    }

    /// A `Parsing` error with the excerpt cut to a readable length on a char boundary.
    pub fn parsing(line: u64, text: &str, reason: impl std::fmt::Display) -> Self {
        ForgeError::Parsing {
            line,
            excerpt: excerpt(text, 120),
            reason: reason.to_string(),
        }
    }
}

fn describe_exit(code: &Option<i32>) -> String {
    match code {
        Some(code) => format!("exit code {code}"),
        None => "killed by a signal".to_owned(),
    }
}

/// The first `max` bytes of `text`, cut on a char boundary, with `…` when cut.
pub fn excerpt(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_serialise_with_a_kind_tag_and_read_well() {
        let err = ForgeError::ExecutableNotFound {
            program: "claude".into(),
            hint: "npm i -g @anthropic-ai/claude-code".into(),
        };
        let json = serde_json::to_value(&err).unwrap();
        assert_eq!(json["kind"], "executable_not_found");
        assert_eq!(err.kind(), "executable_not_found");
        assert_eq!(
            err.to_string(),
            "executable \"claude\" not found: npm i -g @anthropic-ai/claude-code"
        );
    }

    #[test]
    fn excerpts_cut_on_char_boundaries() {
        assert_eq!(excerpt("héllo", 2), "h…");
        assert_eq!(excerpt("abc", 10), "abc");
    }
}
