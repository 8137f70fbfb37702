//! [`AcpSession`]: the client side of one run's conversation. It opens the session, sets the
//! mode, sends the prompt, and serves the agent's requests: files through the workspace rule
//! and permission requests answered from the run's mode.

use std::path::Path;

use agent_client_protocol::v1::schema::{
    CancelNotification, ClientCapabilities, ContentBlock, Error as RpcError,
    FileSystemCapabilities, HttpHeader, Implementation, InitializeRequest, InitializeResponse,
    LoadSessionRequest, McpServer, McpServerHttp, NewSessionRequest, PromptRequest,
    ReadTextFileRequest, RequestId, RequestPermissionOutcome, RequestPermissionRequest,
    RequestPermissionResponse, ResumeSessionRequest, SelectedPermissionOutcome, SessionModeState,
    SetSessionModeRequest, TextContent, WriteTextFileRequest,
};
use async_trait::async_trait;
use forge_domain::{AgentEvent, FileChangeKind, ForgeError, RawJson};
use forge_ports::{AgentSession, SessionServices, SessionStep};
use serde::Deserialize;

use crate::flow::{self, FlowConfig, Open};
use crate::rpc::{self, Incoming, Kind, PROMPT, SESSION, SET_MODE};

/// JSON-RPC "resource not found" (a path that is not a file).
const NOT_FOUND: i32 = -32002;

/// What the three session-opening answers share.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Opened {
    #[serde(default)]
    session_id: Option<String>,
    #[serde(default)]
    modes: Option<SessionModeState>,
}

pub struct AcpSession {
    config: FlowConfig,
    services: SessionServices,
    session_id: Option<String>,
}

impl AcpSession {
    pub fn new(config: FlowConfig, services: SessionServices) -> Self {
        Self {
            config,
            services,
            session_id: None,
        }
    }

    fn open_request(&self, open: &Open) -> String {
        let cwd = self.config.workdir.clone();
        let servers = self.mcp_servers();
        match open {
            Open::New => rpc::request(
                SESSION,
                open.method(),
                &NewSessionRequest::new(cwd).mcp_servers(servers),
            ),
            Open::Resume(id) => rpc::request(
                SESSION,
                open.method(),
                &ResumeSessionRequest::new(id.clone(), cwd).mcp_servers(servers),
            ),
            Open::Load(id) => rpc::request(
                SESSION,
                open.method(),
                &LoadSessionRequest::new(id.clone(), cwd).mcp_servers(servers),
            ),
        }
    }

    fn mcp_servers(&self) -> Vec<McpServer> {
        self.config
            .mcp
            .iter()
            .map(|m| {
                McpServer::Http(McpServerHttp::new("forge", m.url.as_str()).headers(vec![
                    HttpHeader::new("Authorization", format!("Bearer {}", m.bearer_token)),
                ]))
            })
            .collect()
    }

    fn prompt(&self, session_id: &str) -> String {
        let text = ContentBlock::Text(TextContent::new(self.config.prompt.clone()));
        rpc::request(
            PROMPT,
            "session/prompt",
            &PromptRequest::new(session_id.to_owned(), vec![text]),
        )
    }

    /// The next step after one of forge's requests was answered.
    fn on_answer(&mut self, id: i64, result: Result<&str, RpcError>, step: &mut SessionStep) {
        let Ok(result) = result else {
            // The decoder reports the agent's error; the conversation cannot go on.
            step.done = true;
            return;
        };
        match id {
            rpc::INITIALIZE => {
                let next = serde_json::from_str::<InitializeResponse>(result)
                    .map_err(|e| e.to_string())
                    .and_then(|init| flow::open(&init, &self.config));
                match next {
                    Ok(open) => {
                        if let Open::Resume(id) | Open::Load(id) = &open {
                            self.session_id = Some(id.clone());
                        }
                        step.send.push(self.open_request(&open));
                    }
                    Err(_) => step.done = true,
                }
            }
            SESSION => {
                let Ok(opened) = serde_json::from_str::<Opened>(result) else {
                    step.done = true;
                    return;
                };
                if let Some(id) = opened.session_id {
                    self.session_id = Some(id);
                }
                let Some(session_id) = self.session_id.clone() else {
                    step.done = true;
                    return;
                };
                match flow::mode(opened.modes.as_ref(), &self.config) {
                    Ok(Some(mode)) => step.send.push(rpc::request(
                        SET_MODE,
                        "session/set_mode",
                        &SetSessionModeRequest::new(session_id.clone(), mode.clone()),
                    )),
                    Ok(None) => step.send.push(self.prompt(&session_id)),
                    Err(_) => step.done = true,
                }
            }
            SET_MODE => match self.session_id.clone() {
                Some(session_id) => step.send.push(self.prompt(&session_id)),
                None => step.done = true,
            },
            PROMPT => step.done = true,
            _ => {}
        }
    }

    /// Serves one request of the agent.
    async fn serve(
        &self,
        incoming: &Incoming<'_>,
        id: &RequestId,
        method: &str,
        step: &mut SessionStep,
    ) {
        let answer = match method {
            "session/request_permission" => match incoming.params::<RequestPermissionRequest>() {
                Some(request) => Ok(self.permission(&request, step)),
                None => Err(RpcError::invalid_params()),
            },
            "fs/read_text_file" => match incoming.params::<ReadTextFileRequest>() {
                Some(request) => self.read(&request, step).await,
                None => Err(RpcError::invalid_params()),
            },
            "fs/write_text_file" => match incoming.params::<WriteTextFileRequest>() {
                Some(request) => self.write(&request, step).await,
                None => Err(RpcError::invalid_params()),
            },
            _ => Err(RpcError::method_not_found()),
        };
        step.send.push(rpc::answer(id, answer));
    }

    fn permission(
        &self,
        request: &RequestPermissionRequest,
        step: &mut SessionStep,
    ) -> serde_json::Value {
        let choice = flow::permission(self.config.permission_mode, request);
        let outcome = match &choice {
            Some(option) => {
                RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(option.clone()))
            }
            None => RequestPermissionOutcome::Cancelled,
        };
        let record = serde_json::json!({
            "type": "permission",
            "tool_call_id": request.tool_call.tool_call_id,
            "title": request.tool_call.fields.title,
            "kind": request.tool_call.fields.kind,
            "mode": self.config.permission_mode.map(|m| m.as_str()),
            "answer": choice.as_ref().map(|c| c.0.to_string()),
        });
        step.events.push(AgentEvent::Unknown {
            kind: "permission".to_owned(),
            raw: RawJson::from_parsed(&record.to_string()),
        });
        serde_json::to_value(RequestPermissionResponse::new(outcome)).unwrap_or_default()
    }

    async fn read(
        &self,
        request: &ReadTextFileRequest,
        step: &mut SessionStep,
    ) -> Result<serde_json::Value, RpcError> {
        let root = &self.services.workdir;
        let bytes = match self.services.workspace.read_file(root, &request.path).await {
            Ok(bytes) => bytes,
            // A missing file inside the workspace reads as empty: gemini 0.61 reads a file
            // before writing it and fails the write on any error (its check for a missing
            // file never matches the JSON-RPC error object its SDK hands it).
            Err(e) if is_missing(&e) => Vec::new(),
            Err(e) => return Err(self.refused(e, &request.path, step)),
        };
        let text = String::from_utf8_lossy(&bytes);
        let start = request.line.map_or(0, |l| l.saturating_sub(1) as usize);
        let content = match (start, request.limit) {
            (0, None) => text.into_owned(),
            (start, limit) => text
                .split_inclusive('\n')
                .skip(start)
                .take(limit.map_or(usize::MAX, |l| l as usize))
                .collect(),
        };
        Ok(serde_json::json!({ "content": content }))
    }

    async fn write(
        &self,
        request: &WriteTextFileRequest,
        step: &mut SessionStep,
    ) -> Result<serde_json::Value, RpcError> {
        let root = &self.services.workdir;
        let existed = self
            .services
            .workspace
            .read_file(root, &request.path)
            .await
            .is_ok();
        if let Err(e) = self
            .services
            .workspace
            .write_file(root, &request.path, request.content.as_bytes())
            .await
        {
            return Err(self.refused(e, &request.path, step));
        }
        let path = request.path.strip_prefix(root).unwrap_or(&request.path);
        step.events.push(AgentEvent::FileChanged {
            path: path.display().to_string(),
            change: if existed {
                FileChangeKind::Modified
            } else {
                FileChangeKind::Added
            },
        });
        Ok(serde_json::json!({}))
    }

    /// The JSON-RPC error for a refused or failed file access; an escape from the
    /// workspace is also kept in the result.
    fn refused(&self, error: ForgeError, path: &Path, step: &mut SessionStep) -> RpcError {
        let rpc = if is_missing(&error) {
            RpcError::new(NOT_FOUND, format!("Resource not found: {}", path.display()))
        } else {
            RpcError::new(-32603, error.to_string())
        };
        if matches!(error, ForgeError::WorkspaceSecurity { .. }) {
            step.errors.push(error);
        }
        rpc
    }
}

/// Whether a workspace error means the file does not exist.
fn is_missing(error: &ForgeError) -> bool {
    matches!(error, ForgeError::Io { message, .. } if message.contains("No such file"))
}

/// The `initialize` request: protocol version 1, files served, no terminals (the agents then
/// run commands themselves).
pub fn initialize_line() -> String {
    let capabilities = ClientCapabilities::new()
        .fs(FileSystemCapabilities::new()
            .read_text_file(true)
            .write_text_file(true))
        .terminal(false);
    let request = InitializeRequest::new(rpc::PROTOCOL)
        .client_capabilities(capabilities)
        .client_info(Implementation::new(
            "forge-code-agent",
            env!("CARGO_PKG_VERSION"),
        ));
    rpc::request(rpc::INITIALIZE, "initialize", &request)
}

#[async_trait]
impl AgentSession for AcpSession {
    fn opening(&mut self) -> Vec<String> {
        vec![initialize_line()]
    }

    async fn on_line(&mut self, line: &str) -> SessionStep {
        let mut step = SessionStep::default();
        let Some(incoming) = Incoming::read(line) else {
            return step;
        };
        match incoming.kind() {
            Kind::Request(id, method) => self.serve(&incoming, &id, method, &mut step).await,
            Kind::Answer(id, result) => self.on_answer(id, result.map(|r| r.get()), &mut step),
            Kind::Notification(_) | Kind::Stray => {}
        }
        step
    }

    fn cancel(&mut self) -> Vec<String> {
        self.session_id
            .iter()
            .map(|id| rpc::notification("session/cancel", &CancelNotification::new(id.clone())))
            .collect()
    }
}
