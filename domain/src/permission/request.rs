//! A permission request as forge keeps it.

use serde::{Deserialize, Serialize};

use super::decision::PermissionDecision;
use crate::ids::{IdError, ProviderId, RunId, check};
use crate::task::TaskId;
use crate::tool::ToolKind;

/// A request's id (what `permissions allow ID` names): `[A-Za-z0-9_-]`, at most 64.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub struct PermissionId(String);

impl PermissionId {
    /// Checks and wraps `value`.
    ///
    /// # Errors
    /// [`IdError`] when it is empty, longer than 64 or has a character outside the set.
    pub fn new(value: impl Into<String>) -> Result<Self, IdError> {
        let value = value.into();
        check("permission request id", &value, 64, "A-Za-z0-9_-", |c| {
            c.is_ascii_alphanumeric() || c == '-' || c == '_'
        })?;
        Ok(Self(value))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for PermissionId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for PermissionId {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Self::new(String::deserialize(d)?).map_err(serde::de::Error::custom)
    }
}

/// What the request belongs to: a run (`run`, `serve`'s runs) or a task (a queued task's
/// worker asks through the queue).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PermissionOwner {
    Run(RunId),
    Task(TaskId),
}

impl PermissionOwner {
    /// `run` or `task` (the stores' `owner_kind` column).
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Run(_) => "run",
            Self::Task(_) => "task",
        }
    }

    pub fn id(&self) -> &str {
        match self {
            Self::Run(id) => id.as_str(),
            Self::Task(id) => id.as_str(),
        }
    }

    /// Reads the stores' two columns back.
    ///
    /// # Errors
    /// A reason when the kind is neither or the id is not one.
    pub fn from_parts(kind: &str, id: &str) -> Result<Self, String> {
        match kind {
            "run" => RunId::new(id).map(Self::Run).map_err(|e| e.to_string()),
            "task" => TaskId::new(id).map(Self::Task).map_err(|e| e.to_string()),
            other => Err(format!("unknown owner kind {other:?}")),
        }
    }
}

/// The tool an agent wants to use, as a person needs to see it and the rules need to match
/// it: the command for a shell, the file (and its diff) for an edit, the URL for a fetch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolRequest {
    /// The agent's own tool name (`Bash`, `Edit`, an ACP tool call's title).
    pub tool: String,
    pub kind: ToolKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// For an edit: the change as a unified diff (or the new text for a new file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The input as the agent sent it (claude: `updatedInput` of an allow repeats it).
    #[serde(default)]
    pub input: serde_json::Value,
}

impl ToolRequest {
    /// One line for a person: `Bash: cargo test`, `Edit: src/lib.rs`.
    pub fn summary(&self) -> String {
        let what = self
            .command
            .as_deref()
            .or(self.path.as_deref())
            .or(self.url.as_deref());
        match what {
            Some(what) => format!("{}: {}", self.tool, what.lines().next().unwrap_or(what)),
            None => self.tool.clone(),
        }
    }
}

/// One request, pending or decided.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PermissionRequest {
    pub id: PermissionId,
    pub provider: ProviderId,
    pub owner: PermissionOwner,
    pub tool: ToolRequest,
    /// When it was stored (Unix ms, the store's clock); ignored when storing.
    #[serde(default)]
    pub requested_at_ms: u64,
    /// When nobody answering denies it (the store's clock).
    #[serde(default)]
    pub expires_at_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<PermissionDecision>,
}

impl PermissionRequest {
    pub fn is_pending(&self) -> bool {
        self.decision.is_none()
    }

    /// Pending and past its time at `now_ms`: the next sweep denies it.
    pub fn is_overdue(&self, now_ms: u64) -> bool {
        self.is_pending() && now_ms >= self.expires_at_ms
    }
}

/// An edit as a person reads it in a request: the old lines `-`, the new `+` (a new file:
/// only `+`). Not a minimal diff — the agent's own old and new text, both whole.
pub fn edit_diff(old: Option<&str>, new: &str) -> String {
    let mut out = String::new();
    for line in old.unwrap_or_default().lines() {
        out.push('-');
        out.push_str(line);
        out.push('\n');
    }
    for line in new.lines() {
        out.push('+');
        out.push_str(line);
        out.push('\n');
    }
    out
}
