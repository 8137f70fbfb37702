//! ACP's `terminal/*`, served by [`Terminals`] (commands run through the `ProcessRunner`
//! port): this module only reads the requests and writes the answers. `wait_for_exit` and
//! `release` answer later (a [`SessionStep::later`]), so the runtime keeps reading the
//! agent's lines, and a cancel still works, while a command runs.
//!
//! A terminal that no tool call of the agent shows (ACP's `{"type": "terminal"}` content) is
//! recorded as a tool call of its own when it is released: its command, output and exit code.

use std::collections::HashSet;
use std::sync::Arc;

use agent_client_protocol::v1::schema::{
    CreateTerminalRequest, CreateTerminalResponse, Error as RpcError, KillTerminalRequest,
    KillTerminalResponse, ReleaseTerminalRequest, ReleaseTerminalResponse, RequestId,
    SessionNotification, SessionUpdate, TerminalExitStatus, TerminalOutputRequest,
    TerminalOutputResponse, ToolCallContent, WaitForTerminalExitRequest,
    WaitForTerminalExitResponse,
};
use forge_adapter_terminal::{Command, Exit, Terminals, record};
use forge_domain::AgentEvent;
use forge_ports::{SessionServices, SessionStep};
use serde_json::Value;

use crate::rpc::{self, parse, to_value};
use crate::session::{Answer, failed};

pub struct AcpTerminals {
    terminals: Terminals,
    /// Terminals a tool call of the agent shows: the agent records those itself.
    shown: HashSet<Arc<str>>,
}

impl AcpTerminals {
    pub fn new(services: &SessionServices) -> Self {
        Self {
            terminals: Terminals::new(services),
            shown: HashSet::new(),
        }
    }

    /// Serves `terminal/<method>`: the answer now, or `Ok(None)` when a later step of
    /// `step` will carry it.
    pub async fn serve(
        &mut self,
        id: &RequestId,
        method: &str,
        params: &str,
        step: &mut SessionStep,
    ) -> Result<Option<Value>, RpcError> {
        let answer = match method {
            "create" => self.create(parse(params)?, step).await,
            "output" => self.output(&parse(params)?, step),
            "kill" => {
                let request: KillTerminalRequest = parse(params)?;
                let killed = self.terminals.kill(&request.terminal_id.0);
                killed.map_err(|e| failed(e, step))?;
                Ok(to_value(KillTerminalResponse::new()))
            }
            "wait_for_exit" => {
                let request: WaitForTerminalExitRequest = parse(params)?;
                let exited = self.terminals.exited(&request.terminal_id.0);
                let exited = exited.map_err(|e| failed(e, step))?;
                let id = id.clone();
                step.later.push(Box::pin(async move {
                    let answer = WaitForTerminalExitResponse::new(status(exited.await));
                    answered(&id, to_value(answer), Vec::new())
                }));
                return Ok(None);
            }
            "release" => {
                let request: ReleaseTerminalRequest = parse(params)?;
                let terminal = request.terminal_id.0;
                let released = self.terminals.release(&terminal);
                let released = released.map_err(|e| failed(e, step))?;
                let (id, shown) = (id.clone(), self.shown.contains(&terminal));
                step.later.push(Box::pin(async move {
                    let (command, last) = released.await;
                    let call_id = format!("terminal:{terminal}");
                    let events = match shown {
                        true => Vec::new(),
                        false => record::tool_call(&call_id, &command, &last).into(),
                    };
                    answered(&id, to_value(ReleaseTerminalResponse::new()), events)
                }));
                return Ok(None);
            }
            _ => Err(RpcError::method_not_found()),
        };
        answer.map(Some)
    }

    async fn create(&mut self, request: CreateTerminalRequest, step: &mut SessionStep) -> Answer {
        let command = Command {
            program: request.command,
            args: request.args,
            env: request.env.into_iter().map(|e| (e.name, e.value)).collect(),
            cwd: request.cwd,
            output_limit: request.output_byte_limit,
        };
        match self.terminals.create(command).await {
            Ok(id) => Ok(to_value(CreateTerminalResponse::new(id))),
            Err(e) => Err(failed(e, step)),
        }
    }

    fn output(&self, request: &TerminalOutputRequest, step: &mut SessionStep) -> Answer {
        let snapshot = self.terminals.output(&request.terminal_id.0);
        let snapshot = snapshot.map_err(|e| failed(e, step))?;
        let answer = TerminalOutputResponse::new(snapshot.output, snapshot.truncated);
        Ok(to_value(answer.exit_status(snapshot.exit.map(status))))
    }

    /// Notes the terminals an update's tool call shows.
    pub fn observe(&mut self, line: &str) {
        // Most lines name no terminal: only those are read whole.
        if !line.contains("\"terminal\"") {
            return;
        }
        let Some(rpc::Kind::Notification("session/update", params)) = rpc::read(line) else {
            return;
        };
        let Ok(note) = serde_json::from_str::<SessionNotification>(params) else {
            return;
        };
        let content = match note.update {
            SessionUpdate::ToolCall(call) => call.content,
            SessionUpdate::ToolCallUpdate(update) => update.fields.content.unwrap_or_default(),
            _ => return,
        };
        for item in content {
            if let ToolCallContent::Terminal(t) = item {
                self.shown.insert(t.terminal_id.0);
            }
        }
    }

    /// Ends every command still running (the run is over).
    ///
    /// # Errors
    /// As [`Terminals::end`].
    pub async fn end(&mut self) -> Result<(), forge_domain::ForgeError> {
        self.terminals.end().await
    }
}

fn answered(id: &RequestId, answer: Value, events: Vec<AgentEvent>) -> SessionStep {
    SessionStep {
        send: vec![rpc::answer(id, Ok(answer))],
        events,
        ..SessionStep::default()
    }
}

/// ACP's exit status: the code, or the signal's name.
fn status(exit: Exit) -> TerminalExitStatus {
    let code = exit.code.and_then(|c| u32::try_from(c).ok());
    TerminalExitStatus::new()
        .exit_code(code)
        .signal(exit.signal_name())
}
