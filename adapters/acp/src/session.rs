//! [`AcpSession`]: the client side of one run's conversation. Its [`Flow`] sends each next
//! request; it serves the agent's own requests: files through the workspace rule, commands
//! through [`AcpTerminals`], and permission requests answered from the run's mode (each
//! recorded as an event).

use agent_client_protocol::v1::schema::{
    CancelNotification, Error as RpcError, ReadTextFileRequest, ReadTextFileResponse, RequestId,
    RequestPermissionOutcome, RequestPermissionRequest, RequestPermissionResponse,
    SelectedPermissionOutcome, WriteTextFileRequest, WriteTextFileResponse,
};
use async_trait::async_trait;
use forge_domain::{AgentEvent, ForgeError, PermissionMode, RawJson};
use forge_ports::{AgentSession, SessionServices, SessionStep};
use serde_json::{Value, json};

use crate::flow::{self, Flow, FlowConfig, Step};
use crate::rpc::{self, Kind, parse, to_value};
use crate::terminal::AcpTerminals;

/// JSON-RPC "resource not found" (a path that is not a file).
const NOT_FOUND: i32 = -32002;

pub struct AcpSession {
    flow: Flow,
    services: SessionServices,
    terminals: AcpTerminals,
    /// `ask`: the permission requests waiting for a decision.
    unanswered: crate::ask::Unanswered,
}

pub(crate) type Answer = Result<Value, RpcError>;

impl AcpSession {
    pub fn new(config: FlowConfig, services: SessionServices) -> Self {
        let flow = Flow::new(config);
        let terminals = AcpTerminals::new(&services);
        Self {
            flow,
            services,
            terminals,
            unanswered: crate::ask::Unanswered::default(),
        }
    }

    /// Serves one request of the agent: its answer, or `Ok(None)` when a later step carries
    /// it.
    async fn serve(
        &mut self,
        id: &RequestId,
        method: &str,
        params: &str,
        step: &mut SessionStep,
    ) -> Result<Option<Value>, RpcError> {
        // `ask`: the bridge answers, later (a person may take minutes).
        if method == "session/request_permission"
            && self.flow.config.permission_mode == Some(PermissionMode::Ask)
            && let Some(asker) = self.services.permissions.clone()
        {
            let unanswered = self.unanswered.clone();
            crate::ask::ask(asker, id.clone(), parse(params)?, step, unanswered).await;
            return Ok(None);
        }
        let answer = match method {
            "session/request_permission" => Ok(self.permission(parse(params)?, step)),
            "fs/read_text_file" => self.read(parse(params)?, step).await,
            "fs/write_text_file" => self.write(parse(params)?, step).await,
            _ => match method.strip_prefix("terminal/") {
                Some(method) => return self.terminals.serve(id, method, params, step).await,
                None => Err(RpcError::method_not_found()),
            },
        };
        answer.map(Some)
    }

    fn permission(&self, request: RequestPermissionRequest, step: &mut SessionStep) -> Value {
        let mode = self.flow.config.permission_mode;
        let choice = flow::permission(mode, &request);
        let record = json!({
            "type": "permission",
            "tool_call_id": request.tool_call.tool_call_id,
            "title": request.tool_call.fields.title,
            "kind": request.tool_call.fields.kind,
            "mode": mode.map(|m| m.as_str()),
            "answer": choice.as_ref().map(|c| c.0.to_string()),
        });
        step.events.push(AgentEvent::Unknown {
            kind: "permission".to_owned(),
            raw: RawJson::from_parsed(&record.to_string()),
        });
        let outcome = match choice {
            Some(option) => {
                RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(option))
            }
            None => RequestPermissionOutcome::Cancelled,
        };
        to_value(RequestPermissionResponse::new(outcome))
    }

    async fn read(&self, request: ReadTextFileRequest, step: &mut SessionStep) -> Answer {
        let root = &self.services.workdir;
        let bytes = match self.services.workspace.read_file(root, &request.path).await {
            Ok(bytes) => bytes,
            // A missing file inside the workspace reads as empty: gemini 0.61 reads a file
            // before writing it and fails the write on any error (its check for a missing
            // file never matches the JSON-RPC error object its SDK hands it).
            Err(e) if is_missing(&e) => Vec::new(),
            Err(e) => return Err(refused(e, &request.path, step)),
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
        Ok(to_value(ReadTextFileResponse::new(content)))
    }

    async fn write(&self, request: WriteTextFileRequest, step: &mut SessionStep) -> Answer {
        let root = &self.services.workdir;
        let content = request.content.as_bytes();
        // The edit's tool call reports the change (the decoder's `file_changed`).
        match self
            .services
            .workspace
            .write_file(root, &request.path, content)
            .await
        {
            Ok(()) => Ok(to_value(WriteTextFileResponse::new())),
            Err(e) => Err(refused(e, &request.path, step)),
        }
    }
}

/// The JSON-RPC error for a refused or failed file access.
fn refused(error: ForgeError, path: &std::path::Path, step: &mut SessionStep) -> RpcError {
    match is_missing(&error) {
        true => RpcError::new(NOT_FOUND, format!("Resource not found: {}", path.display())),
        false => failed(error, step),
    }
}

/// The JSON-RPC error for a refused or failed request; an escape from the workspace is also
/// kept in the result.
pub(crate) fn failed(error: ForgeError, step: &mut SessionStep) -> RpcError {
    let rpc = match &error {
        ForgeError::InvalidRequest { reason } => RpcError::invalid_params().data(reason.clone()),
        error => RpcError::new(-32603, error.to_string()),
    };
    if matches!(error, ForgeError::WorkspaceSecurity { .. }) {
        step.errors.push(error);
    }
    rpc
}

/// Whether a workspace error means the file does not exist.
fn is_missing(error: &ForgeError) -> bool {
    matches!(error, ForgeError::Io { message, .. } if message.contains("No such file"))
}

#[async_trait]
impl AgentSession for AcpSession {
    fn opening(&mut self) -> Vec<String> {
        vec![flow::initialize_request()]
    }

    async fn on_line(&mut self, line: &str) -> SessionStep {
        let mut step = SessionStep::default();
        match rpc::read(line) {
            Some(Kind::Request(id, method, params)) => {
                match self.serve(&id, method, params, &mut step).await {
                    Ok(Some(answer)) => step.send.push(rpc::answer(&id, Ok(answer))),
                    Ok(None) => {}
                    Err(e) => step.send.push(rpc::answer(&id, Err(e))),
                }
            }
            Some(Kind::Notification(..)) => self.terminals.observe(line),
            Some(Kind::Answer(id, result)) => match self.flow.answer(id, result) {
                Step::Send(next) | Step::Opened(_, Ok(next)) => step.send.push(next),
                Step::Ignored => {}
                // The decoder reports why; the conversation cannot go on.
                Step::Opened(_, Err(_)) | Step::Answered(_) | Step::Failed(_) => step.done = true,
            },
            _ => {}
        }
        step
    }

    fn cancel(&mut self) -> Vec<String> {
        let cancel = |id: &String| CancelNotification::new(id.clone());
        let line = |id| rpc::notification("session/cancel", &cancel(id));
        let mut lines: Vec<String> = self.flow.session_id.iter().map(line).collect();
        // The protocol: after `session/cancel` every pending permission request is
        // answered `cancelled` (the agent waits for them before it ends its turn).
        lines.extend(self.unanswered.cancel_all());
        lines
    }

    async fn end(&mut self) -> Result<(), ForgeError> {
        if let Some(asker) = &self.services.permissions {
            // What is still pending was asked by a run that is over.
            asker.close().await?;
        }
        self.terminals.end().await
    }
}
