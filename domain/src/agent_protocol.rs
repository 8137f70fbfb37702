//! The rules of driving an agent over the Agent Client Protocol that need no protocol types:
//! which of an agent's modes a permission mode is, how a permission request is answered from
//! the mode, what a stop reason means for the run, and what an agent's tool kind is in forge's
//! terms. The enums carry ACP's own names (`serde`), so an adapter reads the SDK's values into
//! them by name.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::{ExecutionStatus, FileChangeKind, PermissionMode, ToolKind};

/// A tool's kind as the agent names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AgentToolKind {
    Read,
    Edit,
    Delete,
    Move,
    Search,
    Execute,
    Think,
    Fetch,
    #[default]
    #[serde(other)]
    Other,
}

impl AgentToolKind {
    /// forge's kind for it.
    pub fn canonical(self) -> ToolKind {
        match self {
            Self::Read => ToolKind::FileRead,
            Self::Edit | Self::Delete | Self::Move => ToolKind::FileWrite,
            Self::Search => ToolKind::Search,
            Self::Execute => ToolKind::Shell,
            Self::Fetch => ToolKind::Web,
            Self::Think | Self::Other => ToolKind::Other,
        }
    }

    /// What a completed call of this kind did to the files it names.
    pub fn file_change(self) -> Option<FileChangeKind> {
        match self {
            Self::Edit => Some(FileChangeKind::Modified),
            Self::Delete => Some(FileChangeKind::Deleted),
            Self::Move => Some(FileChangeKind::Renamed),
            _ => None,
        }
    }
}

/// Why the agent ended its turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AgentStopReason {
    EndTurn,
    MaxTokens,
    MaxTurnRequests,
    Refusal,
    Cancelled,
    #[default]
    #[serde(other)]
    Other,
}

impl AgentStopReason {
    pub fn name(self) -> &'static str {
        match self {
            Self::EndTurn => "end_turn",
            Self::MaxTokens => "max_tokens",
            Self::MaxTurnRequests => "max_turn_requests",
            Self::Refusal => "refusal",
            Self::Cancelled => "cancelled",
            Self::Other => "other",
        }
    }

    /// The run's status when the turn ended so.
    pub fn status(self) -> ExecutionStatus {
        match self {
            Self::EndTurn => ExecutionStatus::Success,
            Self::Cancelled => ExecutionStatus::Partial,
            _ => ExecutionStatus::Error,
        }
    }

    /// The run's error when the turn ended so (`None`: it did what was asked, or was
    /// cancelled, which the run reports itself).
    pub fn error(self) -> Option<String> {
        match self {
            Self::EndTurn | Self::Cancelled => None,
            reason => Some(format!("the agent stopped: {}", reason.name())),
        }
    }
}

/// The kinds of answer an agent offers to a permission request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PermissionOptionKind {
    AllowOnce,
    AllowAlways,
    RejectOnce,
    RejectAlways,
    #[default]
    #[serde(other)]
    Other,
}

/// The mode ids each forge mode matches, in order, among those the agents advertise.
pub fn mode_candidates(mode: PermissionMode) -> &'static [&'static str] {
    match mode {
        PermissionMode::Bypass => &["bypassPermissions", "full-access", "yolo"],
        PermissionMode::AcceptEdits => &["acceptEdits", "auto", "autoEdit", "auto_edit"],
        PermissionMode::Plan => &["plan", "read-only"],
        PermissionMode::Default => &["default"],
        // The mode in which the agent asks: claude-agent-acp's and gemini's default,
        // codex-acp's read-only (it asks before edits, commands and the network).
        PermissionMode::Ask => &["default", "read-only"],
    }
}

/// The agent's mode to switch to for `wanted`, among the `offered` ids (the session is in
/// `current`): `None` when it is in it already. `overrides` (`modes = { … }`) maps forge's
/// mode names to the agent's ids and wins.
///
/// # Errors
/// When no offered mode is the one asked for (or the override names one not offered), naming
/// the offered ones; `default` with no match is the agent's own default, not an error.
pub fn choose_mode(
    wanted: PermissionMode,
    offered: &[&str],
    current: &str,
    overrides: &BTreeMap<String, String>,
) -> Result<Option<String>, String> {
    let offered_list = offered.join(", ");
    let chosen = match overrides.get(wanted.as_str()) {
        Some(id) if offered.contains(&id.as_str()) => Some(id.as_str()),
        Some(id) => {
            return Err(format!(
                "modes.{} names mode {id:?}, which the agent does not offer (offered: {offered_list})",
                wanted.as_str(),
            ));
        }
        None => mode_candidates(wanted)
            .iter()
            .copied()
            .find(|c| offered.contains(c)),
    };
    match chosen {
        Some(id) if id == current => Ok(None),
        Some(id) => Ok(Some(id.to_owned())),
        None if wanted == PermissionMode::Default => Ok(None),
        None => Err(format!(
            "the agent offers no mode for permission mode {0} (offered: {offered_list}); name one with modes = {{ {0} = \"…\" }}",
            wanted.as_str(),
        )),
    }
}

/// Whether the run's mode lets a tool of this kind run without asking a person.
pub fn allows(mode: Option<PermissionMode>, kind: Option<AgentToolKind>) -> bool {
    use AgentToolKind::{Delete, Execute, Fetch, Read, Search, Think};
    match mode {
        Some(PermissionMode::Bypass) => true,
        Some(PermissionMode::AcceptEdits) => !matches!(kind, Some(Execute | Delete | Fetch) | None),
        Some(PermissionMode::Plan) => matches!(kind, Some(Read | Search | Think)),
        // Headless, nobody can be asked: the default refuses, like the CLIs' own. `ask`
        // never answers from the mode: the bridge does.
        Some(PermissionMode::Default | PermissionMode::Ask) | None => false,
    }
}

/// The option to answer a permission request with, among the `offered` kinds: allow once
/// (else always) when the mode allows the tool, else reject once (else always). `None` when
/// the agent offers no such option (the request is then cancelled).
pub fn permission_answer(
    mode: Option<PermissionMode>,
    kind: Option<AgentToolKind>,
    offered: &[PermissionOptionKind],
) -> Option<usize> {
    use PermissionOptionKind::{AllowAlways, AllowOnce, RejectAlways, RejectOnce};
    let wanted = match allows(mode, kind) {
        true => [AllowOnce, AllowAlways],
        false => [RejectOnce, RejectAlways],
    };
    wanted
        .into_iter()
        .find_map(|w| offered.iter().position(|o| *o == w))
}

#[cfg(test)]
mod tests;
