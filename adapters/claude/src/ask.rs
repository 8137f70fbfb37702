//! `--permission-mode ask` for claude (issue 41): the CLI runs with the stdio permission
//! prompt (`--permission-prompt-tool stdio`) over the stream-json control protocol, as the
//! Claude Agent SDK drives it. The prompt goes in as a stream-json user message; every
//! `control_request` of subtype `can_use_tool` goes to the run's [`PermissionAsker`] and is
//! answered with a `control_response` — `{"behavior":"allow","updatedInput":…}` (with the
//! CLI's suggested permissions for the session on `allow_session`) or
//! `{"behavior":"deny","message":…,"interrupt":…}` (interrupting after a timeout or a
//! cancel, so claude does not ask again). The `result` ends the conversation: stdin is
//! closed and the CLI exits.

use std::sync::Arc;

use async_trait::async_trait;
use forge_domain::permission::{PermissionRequest, ToolRequest, Verdict, edit_diff};
use forge_domain::{AgentEvent, ForgeError};
use forge_ports::{AgentSession, PermissionAsker, SessionStep};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::tools::kind_of;

/// The client side of one `ask` run.
pub struct AskSession {
    prompt: String,
    asker: Option<Arc<dyn PermissionAsker>>,
    interrupts: u32,
}

#[derive(Deserialize)]
struct ControlRequest {
    request_id: String,
    #[serde(default)]
    request: Value,
}

impl AskSession {
    pub fn new(prompt: String, asker: Option<Arc<dyn PermissionAsker>>) -> Self {
        Self {
            prompt,
            asker,
            interrupts: 0,
        }
    }

    async fn can_use_tool(&self, request_id: String, body: &Value, step: &mut SessionStep) {
        let input = body.get("input").cloned().unwrap_or(Value::Null);
        let suggestions = body
            .get("permission_suggestions")
            .cloned()
            .unwrap_or(Value::Null);
        let name = body
            .get("tool_name")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let tool = tool_request(name, input.clone());
        let Some(asker) = self.asker.clone() else {
            // Nowhere to ask (the runtime refuses such a run before it starts): never allow.
            step.send
                .push(deny(&request_id, "forge has nowhere to ask", false));
            return;
        };
        let request = match asker.ask(tool).await {
            Ok(request) => request,
            Err(e) => {
                let message = format!("forge could not record the permission request: {e}");
                step.send.push(deny(&request_id, &message, false));
                step.errors.push(e);
                return;
            }
        };
        step.events.push(AgentEvent::PermissionRequested {
            request: Box::new(request.clone()),
        });
        if !request.is_pending() {
            // A rule decided it.
            step.send
                .push(answer(&request_id, &request, &input, &suggestions));
            step.events.push(AgentEvent::PermissionDecided {
                request: Box::new(request),
            });
            return;
        }
        step.later.push(Box::pin(async move {
            let mut later = SessionStep::default();
            match asker.answer(&request.id).await {
                Ok(decided) => {
                    later
                        .send
                        .push(answer(&request_id, &decided, &input, &suggestions));
                    later.events.push(AgentEvent::PermissionDecided {
                        request: Box::new(decided),
                    });
                }
                Err(e) => {
                    let message = format!("forge lost the permission request: {e}");
                    later.send.push(deny(&request_id, &message, true));
                    later.errors.push(e);
                }
            }
            later
        }));
    }
}

#[async_trait]
impl AgentSession for AskSession {
    fn opening(&mut self) -> Vec<String> {
        vec![
            json!({
                "type": "user",
                "message": {"role": "user", "content": self.prompt},
                "parent_tool_use_id": null,
                "session_id": "",
            })
            .to_string(),
        ]
    }

    async fn on_line(&mut self, line: &str) -> SessionStep {
        let mut step = SessionStep::default();
        // Compact JSON: an unescaped `"type":"…"` is a message's own type, never text in it.
        if line.contains(r#""type":"result""#) && line.starts_with('{') {
            step.done = true;
            return step;
        }
        if !line.contains(r#""type":"control_request""#) {
            return step;
        }
        let Ok(control) = serde_json::from_str::<ControlRequest>(line) else {
            return step;
        };
        match control.request.get("subtype").and_then(Value::as_str) {
            Some("can_use_tool") => {
                self.can_use_tool(control.request_id, &control.request, &mut step)
                    .await;
            }
            other => step.send.push(
                json!({
                    "type": "control_response",
                    "response": {
                        "subtype": "error",
                        "request_id": control.request_id,
                        "error": format!("forge does not serve {}", other.unwrap_or("this request")),
                    },
                })
                .to_string(),
            ),
        }
        step
    }

    fn cancel(&mut self) -> Vec<String> {
        self.interrupts += 1;
        vec![
            json!({
                "type": "control_request",
                "request_id": format!("forge-interrupt-{}", self.interrupts),
                "request": {"subtype": "interrupt"},
            })
            .to_string(),
        ]
    }

    async fn end(&mut self) -> Result<(), ForgeError> {
        match &self.asker {
            Some(asker) => asker.close().await.map(drop),
            None => Ok(()),
        }
    }
}

/// What claude's tool input shows a person and the rules: the command, the file and its
/// edit, the URL.
pub fn tool_request(name: &str, input: Value) -> ToolRequest {
    let text = |key: &str| input.get(key).and_then(Value::as_str).map(str::to_owned);
    let path = text("file_path")
        .or_else(|| text("notebook_path"))
        .or_else(|| text("path"));
    let diff = match name {
        "Edit" => text("new_string").map(|new| edit_diff(text("old_string").as_deref(), &new)),
        "Write" => text("content").map(|new| edit_diff(None, &new)),
        "MultiEdit" => input.get("edits").and_then(Value::as_array).map(|edits| {
            edits
                .iter()
                .map(|e| {
                    let field = |k: &str| e.get(k).and_then(Value::as_str);
                    edit_diff(field("old_string"), field("new_string").unwrap_or_default())
                })
                .collect()
        }),
        _ => None,
    };
    ToolRequest {
        tool: name.to_owned(),
        kind: kind_of(name),
        command: text("command"),
        path,
        diff,
        url: text("url"),
        input,
    }
}

/// The `control_response` for a decided request.
fn answer(
    request_id: &str,
    request: &PermissionRequest,
    input: &Value,
    suggestions: &Value,
) -> String {
    let Some(decision) = &request.decision else {
        return deny(request_id, "the request was not decided", true);
    };
    match decision.decision {
        Verdict::Allow | Verdict::AllowSession => {
            let mut body = json!({"behavior": "allow", "updatedInput": input});
            let has_suggestions = suggestions.as_array().is_some_and(|s| !s.is_empty());
            if decision.decision == Verdict::AllowSession && has_suggestions {
                body["updatedPermissions"] = suggestions.clone();
            }
            success(request_id, body)
        }
        Verdict::Deny => {
            let message = decision
                .message
                .clone()
                .unwrap_or_else(|| format!("denied: {decision}"));
            deny(request_id, &message, decision.interrupt())
        }
    }
}

fn deny(request_id: &str, message: &str, interrupt: bool) -> String {
    success(
        request_id,
        json!({"behavior": "deny", "message": message, "interrupt": interrupt}),
    )
}

fn success(request_id: &str, response: Value) -> String {
    json!({
        "type": "control_response",
        "response": {"subtype": "success", "request_id": request_id, "response": response},
    })
    .to_string()
}
