//! The course of the conversation, followed alike by the session (which sends each next
//! request) and the decoder (which reports it): each holds a [`Flow`] fed the answers to
//! forge's requests, so they agree without sharing state.

use std::collections::BTreeMap;
use std::path::PathBuf;

use agent_client_protocol::v1::schema::{
    AuthenticateRequest, ClientCapabilities, ContentBlock, Error as RpcError, ErrorCode,
    FileSystemCapabilities, HttpHeader, Implementation, InitializeRequest, InitializeResponse,
    LoadSessionRequest, McpServer, McpServerHttp, NewSessionRequest, PermissionOptionId,
    PromptRequest, PromptResponse, RequestPermissionRequest, ResumeSessionRequest,
    SessionModeState, SetSessionModeRequest,
};
use forge_domain::{PermissionMode, agent_protocol};
use forge_ports::tool_host::McpEndpoint;
use serde::Deserialize;

use crate::rpc::{self, AUTHENTICATE, INITIALIZE, PROMPT, PROTOCOL, SESSION, SET_MODE, to_value};

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
    /// `auth_method = "…"`: the method to authenticate with when the agent requires it.
    pub auth_method: Option<String>,
    /// forge's tool server, given to the agent in `mcpServers`.
    pub mcp: Option<McpEndpoint>,
}

/// How the session is opened after `initialize`.
#[derive(Debug, Clone, Default)]
enum Open {
    #[default]
    New,
    Resume(String),
    Load(String),
}

/// What an answer to one of forge's requests moves the conversation to.
#[derive(Debug)]
pub enum Step {
    /// Send the next request.
    Send(String),
    /// The session is open under this id; then the next request, or why there is none.
    Opened(String, Result<String, String>),
    /// The prompt was answered: the turn is over.
    Answered(PromptResponse),
    /// The conversation cannot go on, and why.
    Failed(String),
    /// An answer to no request of forge's.
    Ignored,
}

/// What the three session-opening answers share.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Opened {
    session_id: Option<String>,
    modes: Option<SessionModeState>,
}

#[derive(Debug, Default)]
pub struct Flow {
    pub config: FlowConfig,
    /// The agent's answer to `initialize`.
    pub init: Option<InitializeResponse>,
    open: Open,
    pub session_id: Option<String>,
    /// `session/load` replays the history: those updates are not this run's.
    pub replaying: bool,
    /// The mode asked with `session/set_mode`, until the agent answers.
    pub mode_pending: Option<String>,
    authenticated: bool,
}

impl Flow {
    pub fn new(config: FlowConfig) -> Self {
        Self {
            config,
            ..Self::default()
        }
    }

    /// The next step after the agent answered forge's request `id`.
    pub fn answer(&mut self, id: i64, result: Result<&str, RpcError>) -> Step {
        match (id, result) {
            (SESSION, Err(e)) if e.code == ErrorCode::AuthRequired => self.authenticate(&e),
            (_, Err(e)) => Step::Failed(format!(
                "the agent refused {}: {}",
                self.method(id),
                rpc::describe(&e)
            )),
            (INITIALIZE, Ok(r)) => match read::<InitializeResponse>(r, "initialize") {
                Ok(init) => self.initialized(init),
                Err(e) => Step::Failed(e),
            },
            (AUTHENTICATE, Ok(_)) => Step::Send(self.open_request()),
            (SESSION, Ok(r)) => match read::<Opened>(r, self.method(SESSION)) {
                Ok(opened) => self.opened(opened),
                Err(e) => Step::Failed(e),
            },
            (SET_MODE, Ok(_)) => {
                (self.mode_pending, self.replaying) = (None, false);
                Step::Send(self.prompt_request())
            }
            (PROMPT, Ok(r)) => read(r, "session/prompt").map_or_else(Step::Failed, Step::Answered),
            _ => Step::Ignored,
        }
    }

    fn method(&self, id: i64) -> &'static str {
        match (id, &self.open) {
            (INITIALIZE, _) => "initialize",
            (AUTHENTICATE, _) => "authenticate",
            (SESSION, Open::New) => "session/new",
            (SESSION, Open::Resume(_)) => "session/resume",
            (SESSION, Open::Load(_)) => "session/load",
            (SET_MODE, _) => "session/set_mode",
            _ => "session/prompt",
        }
    }

    /// Opens the session, or says why not: a protocol version forge does not speak, or a
    /// resume the agent cannot do (never a silent new session).
    fn initialized(&mut self, init: InitializeResponse) -> Step {
        let caps = &init.agent_capabilities;
        let open = match &self.config.resume {
            _ if init.protocol_version != PROTOCOL => Err(format!(
                "the agent speaks ACP protocol version {}; forge speaks version {PROTOCOL}",
                init.protocol_version
            )),
            None => Ok(Open::New),
            Some(id) if caps.session_capabilities.resume.is_some() => Ok(Open::Resume(id.clone())),
            Some(id) if caps.load_session => Ok(Open::Load(id.clone())),
            Some(id) => Err(format!(
                "cannot resume session {id}: the agent advertises neither session/resume nor session/load"
            )),
        };
        self.init = Some(init);
        match open {
            Ok(open) => {
                if let Open::Resume(id) | Open::Load(id) = &open {
                    self.session_id = Some(id.clone());
                }
                self.replaying = matches!(open, Open::Load(_));
                self.open = open;
                Step::Send(self.open_request())
            }
            Err(reason) => Step::Failed(reason),
        }
    }

    /// The agent requires authentication: once, with the configured method.
    fn authenticate(&mut self, error: &RpcError) -> Step {
        let offered = self.init.as_ref().map(auth_methods).unwrap_or_default();
        let why = format!(
            "the agent requires authentication ({}); methods offered: {}",
            rpc::describe(error),
            offered.join(", ")
        );
        match &self.config.auth_method {
            None => Step::Failed(format!("{why}; name one with auth_method = \"…\"")),
            Some(m) if !offered.contains(m) => {
                Step::Failed(format!("{why}; auth_method = {m:?} is not one of them"))
            }
            Some(m) if self.authenticated => {
                Step::Failed(format!("{why}, still after authenticate with {m:?}"))
            }
            Some(m) => {
                self.authenticated = true;
                let request = AuthenticateRequest::new(m.clone());
                Step::Send(rpc::request(AUTHENTICATE, "authenticate", &request))
            }
        }
    }

    fn opened(&mut self, opened: Opened) -> Step {
        let Some(id) = opened.session_id.or_else(|| self.session_id.clone()) else {
            return Step::Failed("the agent answered session/new without a sessionId".into());
        };
        self.session_id = Some(id.clone());
        // gemini 0.61 answers `session/load` before its replay ends: after a load, the
        // session's mode is set (to the one it is in when the run asked for none), and the
        // replay ends with that answer, which comes after the replayed updates.
        let current = opened
            .modes
            .as_ref()
            .map(|m| m.current_mode_id.0.to_string());
        let sync = current.filter(|_| self.replaying);
        let next = mode(opened.modes.as_ref(), &self.config).map(|m| match m.or(sync) {
            Some(mode) => {
                self.mode_pending = Some(mode.clone());
                let request = SetSessionModeRequest::new(id.clone(), mode);
                rpc::request(SET_MODE, "session/set_mode", &request)
            }
            None => self.prompt_request(),
        });
        self.replaying &= self.mode_pending.is_some();
        Step::Opened(id, next)
    }

    fn open_request(&self) -> String {
        let (cwd, servers) = (self.config.workdir.clone(), self.mcp_servers());
        let params = match &self.open {
            Open::New => to_value(NewSessionRequest::new(cwd).mcp_servers(servers)),
            Open::Resume(id) => {
                to_value(ResumeSessionRequest::new(id.clone(), cwd).mcp_servers(servers))
            }
            Open::Load(id) => {
                to_value(LoadSessionRequest::new(id.clone(), cwd).mcp_servers(servers))
            }
        };
        rpc::request(SESSION, self.method(SESSION), &params)
    }

    fn mcp_servers(&self) -> Vec<McpServer> {
        let bearer = |m: &McpEndpoint| format!("Bearer {}", m.bearer_token);
        let server = |m: &McpEndpoint| {
            McpServerHttp::new("forge", m.url.as_str())
                .headers(vec![HttpHeader::new("Authorization", bearer(m))])
        };
        self.config
            .mcp
            .iter()
            .map(|m| McpServer::Http(server(m)))
            .collect()
    }

    fn prompt_request(&self) -> String {
        let text = ContentBlock::from(self.config.prompt.clone());
        let id = self.session_id.clone().unwrap_or_default();
        rpc::request(
            PROMPT,
            "session/prompt",
            &PromptRequest::new(id, vec![text]),
        )
    }
}

/// The ids of the authentication methods the agent offers.
pub fn auth_methods(init: &InitializeResponse) -> Vec<String> {
    init.auth_methods
        .iter()
        .map(|m| m.id().0.to_string())
        .collect()
}

fn read<'a, T: Deserialize<'a>>(result: &'a str, method: &str) -> Result<T, String> {
    serde_json::from_str(result).map_err(|e| format!("unreadable answer to {method}: {e}"))
}

/// The `initialize` request: protocol version 1, files and terminals served.
pub fn initialize_request() -> String {
    let fs = FileSystemCapabilities::new()
        .read_text_file(true)
        .write_text_file(true);
    let request = InitializeRequest::new(PROTOCOL)
        .client_capabilities(ClientCapabilities::new().fs(fs).terminal(true))
        .client_info(Implementation::new(
            "forge-code-agent",
            env!("CARGO_PKG_VERSION"),
        ));
    rpc::request(INITIALIZE, "initialize", &request)
}

/// The mode to switch to with `session/set_mode` ([`agent_protocol::choose_mode`]): `None`
/// also when the run asked for none, or the agent has no modes (permission requests are then
/// answered from the run's mode).
///
/// # Errors
/// As [`agent_protocol::choose_mode`].
pub fn mode(
    modes: Option<&SessionModeState>,
    config: &FlowConfig,
) -> Result<Option<String>, String> {
    let (Some(wanted), Some(modes)) = (config.permission_mode, modes) else {
        return Ok(None);
    };
    let offered: Vec<&str> = modes.available_modes.iter().map(|m| &*m.id.0).collect();
    let current = &modes.current_mode_id.0;
    agent_protocol::choose_mode(wanted, &offered, current, &config.modes)
}

/// The option forge picks for a permission request ([`agent_protocol::permission_answer`]);
/// `None` (the request is cancelled) when the agent offers no such option.
pub fn permission(
    mode: Option<PermissionMode>,
    request: &RequestPermissionRequest,
) -> Option<PermissionOptionId> {
    let offered: Vec<_> = request.options.iter().map(|o| rpc::named(o.kind)).collect();
    let kind = request.tool_call.fields.kind.map(rpc::named);
    let chosen = agent_protocol::permission_answer(mode, kind, &offered)?;
    request.options.get(chosen).map(|o| o.option_id.clone())
}
