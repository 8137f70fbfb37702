//! The decisions the session acts on and the decoder reports, as pure functions of what the
//! agent said and what the run asked: both call these, so they always agree.

use std::collections::BTreeMap;
use std::path::PathBuf;

use agent_client_protocol::v1::schema::{
    InitializeResponse, PermissionOptionId, PermissionOptionKind, RequestPermissionRequest,
    SessionModeState, ToolKind as AcpKind,
};
use forge_domain::PermissionMode;
use forge_ports::tool_host::McpEndpoint;

use crate::rpc::PROTOCOL;

/// What the run asks of the conversation.
#[derive(Debug, Clone, Default)]
pub struct FlowConfig {
    pub workdir: PathBuf,
    pub prompt: String,
    /// `--resume <session_id>`.
    pub resume: Option<String>,
    pub permission_mode: Option<PermissionMode>,
    /// `modes = { … }` from the provider's settings: forge mode → the agent's mode id.
    pub modes: BTreeMap<String, String>,
    /// forge's tool server, given to the agent in `mcpServers`.
    pub mcp: Option<McpEndpoint>,
}

/// How the session is opened after `initialize`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Open {
    New,
    Resume(String),
    Load(String),
}

impl Open {
    pub fn method(&self) -> &'static str {
        match self {
            Open::New => "session/new",
            Open::Resume(_) => "session/resume",
            Open::Load(_) => "session/load",
        }
    }
}

/// The session request that follows `init`, or why there is none: a protocol version forge
/// does not speak, or a resume the agent cannot do (never a silent new session).
///
/// # Errors
/// The reason, as a sentence naming what the agent said.
pub fn open(init: &InitializeResponse, config: &FlowConfig) -> Result<Open, String> {
    if init.protocol_version != PROTOCOL {
        return Err(format!(
            "the agent speaks ACP protocol version {}; forge speaks version {PROTOCOL}",
            init.protocol_version
        ));
    }
    let Some(id) = &config.resume else {
        return Ok(Open::New);
    };
    let caps = &init.agent_capabilities;
    if caps.session_capabilities.resume.is_some() {
        Ok(Open::Resume(id.clone()))
    } else if caps.load_session {
        Ok(Open::Load(id.clone()))
    } else {
        Err(format!(
            "cannot resume session {id}: the agent advertises neither session/resume nor session/load"
        ))
    }
}

/// The mode ids each forge mode matches, in order, among those the agents advertise.
fn candidates(mode: PermissionMode) -> &'static [&'static str] {
    match mode {
        PermissionMode::Bypass => &["bypassPermissions", "full-access", "yolo"],
        PermissionMode::AcceptEdits => &["acceptEdits", "auto", "autoEdit", "auto_edit"],
        PermissionMode::Plan => &["plan", "read-only"],
        PermissionMode::Default => &["default"],
    }
}

/// The mode to switch to with `session/set_mode`: `None` when the run asked for none, or the
/// session is in it already, or the agent has no modes (permission requests are then
/// answered from the run's mode).
///
/// # Errors
/// When the agent has modes and none is the one asked for (or the `modes` override names a
/// mode it does not offer), naming the offered ones.
pub fn mode(
    modes: Option<&SessionModeState>,
    config: &FlowConfig,
) -> Result<Option<String>, String> {
    let (Some(wanted), Some(modes)) = (config.permission_mode, modes) else {
        return Ok(None);
    };
    let offered: Vec<&str> = modes.available_modes.iter().map(|m| &*m.id.0).collect();
    let chosen = match config.modes.get(wanted.as_str()) {
        Some(id) if offered.contains(&id.as_str()) => Some(id.as_str()),
        Some(id) => {
            return Err(format!(
                "modes.{} names mode {id:?}, which the agent does not offer (offered: {})",
                wanted.as_str(),
                offered.join(", ")
            ));
        }
        None => candidates(wanted)
            .iter()
            .copied()
            .find(|c| offered.contains(c)),
    };
    match chosen {
        Some(id) if id == &*modes.current_mode_id.0 => Ok(None),
        Some(id) => Ok(Some(id.to_owned())),
        // The agent's own default is what `default` means.
        None if wanted == PermissionMode::Default => Ok(None),
        None => Err(format!(
            "the agent offers no mode for permission mode {} (offered: {}); name one with modes = {{ {} = \"…\" }}",
            wanted.as_str(),
            offered.join(", "),
            wanted.as_str()
        )),
    }
}

/// Whether the run's mode lets a tool of this kind run without asking a person.
fn allowed(mode: Option<PermissionMode>, kind: Option<AcpKind>) -> bool {
    match mode {
        Some(PermissionMode::Bypass) => true,
        Some(PermissionMode::AcceptEdits) => !matches!(
            kind,
            Some(AcpKind::Execute | AcpKind::Delete | AcpKind::Fetch) | None
        ),
        Some(PermissionMode::Plan) => {
            matches!(kind, Some(AcpKind::Read | AcpKind::Search | AcpKind::Think))
        }
        // Headless, nobody can be asked: the default refuses, like the CLIs' own.
        Some(PermissionMode::Default) | None => false,
    }
}

/// The option forge picks for a permission request: allow once when the mode allows it,
/// else reject once; `None` (the request is cancelled) when the agent offers no such option.
pub fn permission(
    mode: Option<PermissionMode>,
    request: &RequestPermissionRequest,
) -> Option<PermissionOptionId> {
    let allow = allowed(mode, request.tool_call.fields.kind);
    let wanted: &[PermissionOptionKind] = if allow {
        &[
            PermissionOptionKind::AllowOnce,
            PermissionOptionKind::AllowAlways,
        ]
    } else {
        &[
            PermissionOptionKind::RejectOnce,
            PermissionOptionKind::RejectAlways,
        ]
    };
    wanted.iter().find_map(|kind| {
        request
            .options
            .iter()
            .find(|o| o.kind == *kind)
            .map(|o| o.option_id.clone())
    })
}
