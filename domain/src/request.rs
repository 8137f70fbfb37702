//! What a caller asks forge to do: one task for one provider in one workspace.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::ids::{ProviderId, SessionId};

/// Whether the caller wants only the final result or live events too. Both share one code
/// path (run = stream + collect); the mode is recorded for the artifact bundle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExecutionMode {
    #[default]
    Run,
    Stream,
}

/// forge's provider-neutral permission modes; each adapter maps them to its CLI's flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PermissionMode {
    /// The CLI's own default: asks (and in headless mode usually refuses) risky tools.
    Default,
    /// File edits are allowed without asking; shell still guarded where the CLI can.
    AcceptEdits,
    /// Everything allowed: the caller vouches for the sandbox around the run.
    Bypass,
    /// Read-only planning.
    Plan,
    /// A person decides each request the agent makes, through forge's approval bridge
    /// (issue 41): the terminal, the API, the board or the CLI; rules decide first.
    Ask,
}

impl PermissionMode {
    pub const ALL: [PermissionMode; 5] = [
        PermissionMode::Default,
        PermissionMode::AcceptEdits,
        PermissionMode::Bypass,
        PermissionMode::Plan,
        PermissionMode::Ask,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            PermissionMode::Default => "default",
            PermissionMode::AcceptEdits => "accept-edits",
            PermissionMode::Bypass => "bypass",
            PermissionMode::Plan => "plan",
            PermissionMode::Ask => "ask",
        }
    }
}

impl std::str::FromStr for PermissionMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        PermissionMode::ALL
            .into_iter()
            .find(|m| m.as_str() == s)
            .ok_or_else(|| {
                format!(
                    "unknown permission mode {s:?}: expected default, accept-edits, bypass, plan or ask"
                )
            })
    }
}

/// One task for one provider. Field names are the serialised names (snake_case).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExecutionRequest {
    pub provider: ProviderId,
    pub prompt: String,
    #[serde(default)]
    pub mode: ExecutionMode,
    /// Call-level timeout; see [`crate::resolve_timeout`] for how it combines with others.
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub max_turns: Option<u32>,
    #[serde(default)]
    pub max_budget_usd: Option<f64>,
    #[serde(default)]
    pub allowed_tools: Vec<String>,
    #[serde(default)]
    pub disallowed_tools: Vec<String>,
    #[serde(default)]
    pub permission_mode: Option<PermissionMode>,
    #[serde(default)]
    pub resume_session_id: Option<SessionId>,
    #[serde(default)]
    pub append_system_prompt: Option<String>,
    /// Extra directories the agent may touch besides `workdir`.
    #[serde(default)]
    pub add_dirs: Vec<PathBuf>,
    /// An MCP configuration (file path or inline JSON) for CLIs that take one.
    #[serde(default)]
    pub mcp_config: Option<String>,
    /// A JSON schema file for structured final output, for CLIs that take one.
    #[serde(default)]
    pub output_schema: Option<PathBuf>,
    /// Passed to the CLI after forge's own arguments, verbatim.
    #[serde(default)]
    pub extra_args: Vec<String>,
    /// Set in the child's environment on top of what it inherits.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    pub workdir: PathBuf,
}

impl ExecutionRequest {
    /// A request with every optional knob unset.
    pub fn new(
        provider: ProviderId,
        prompt: impl Into<String>,
        workdir: impl Into<PathBuf>,
    ) -> Self {
        Self {
            provider,
            prompt: prompt.into(),
            mode: ExecutionMode::Run,
            timeout_ms: None,
            model: None,
            max_turns: None,
            max_budget_usd: None,
            allowed_tools: Vec::new(),
            disallowed_tools: Vec::new(),
            permission_mode: None,
            resume_session_id: None,
            append_system_prompt: None,
            add_dirs: Vec::new(),
            mcp_config: None,
            output_schema: None,
            extra_args: Vec::new(),
            env: BTreeMap::new(),
            workdir: workdir.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permission_modes_round_trip_through_their_names() {
        for mode in PermissionMode::ALL {
            assert_eq!(mode.as_str().parse::<PermissionMode>(), Ok(mode));
        }
        assert!("yolo".parse::<PermissionMode>().is_err());
    }

    #[test]
    fn minimal_json_request_fills_defaults() {
        let req: ExecutionRequest =
            serde_json::from_str(r#"{"provider":"claude","prompt":"hi","workdir":"/w"}"#).unwrap();
        assert_eq!(
            req,
            ExecutionRequest::new(ProviderId::new("claude").unwrap(), "hi", "/w")
        );
    }
}
