//! `--permission-mode ask` over ACP (issue 41): the agent's `session/request_permission`
//! goes to the run's [`PermissionAsker`] instead of being answered from the mode. The
//! decision picks the agent's own option — `allow_once` for allow, `allow_always` for
//! allow_session, `reject_once` for a deny (the other of each pair when that one is not
//! offered) — and a cancelled run's request is answered `cancelled`.

use std::sync::{Arc, Mutex, PoisonError};

use agent_client_protocol::v1::schema::{
    RequestId, RequestPermissionOutcome, RequestPermissionRequest, RequestPermissionResponse,
    SelectedPermissionOutcome, ToolCallContent,
};
use forge_domain::AgentEvent;
use forge_domain::agent_protocol::{AgentToolKind, PermissionOptionKind};
use forge_domain::permission::{DecidedBy, PermissionRequest, ToolRequest, Verdict, edit_diff};
use forge_ports::{PermissionAsker, SessionStep};
use serde_json::Value;

use crate::rpc::{self, to_value};

/// The agent's permission requests not answered yet (their JSON-RPC ids): a cancel answers
/// each `cancelled` at once, as the protocol asks after `session/cancel`, and the decision
/// that comes later is then recorded but not sent a second time.
#[derive(Clone, Default)]
pub(crate) struct Unanswered(Arc<Mutex<Vec<RequestId>>>);

impl Unanswered {
    fn add(&self, id: RequestId) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(id);
    }

    /// Whether `id` was still unanswered (now it is answered).
    fn take(&self, id: &RequestId) -> bool {
        let mut ids = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let before = ids.len();
        ids.retain(|i| i != id);
        ids.len() != before
    }

    /// Every unanswered request answered `cancelled` (the run is being cancelled).
    pub(crate) fn cancel_all(&self) -> Vec<String> {
        let ids = std::mem::take(&mut *self.0.lock().unwrap_or_else(PoisonError::into_inner));
        let cancelled = || {
            to_value(RequestPermissionResponse::new(
                RequestPermissionOutcome::Cancelled,
            ))
        };
        ids.iter()
            .map(|id| rpc::answer(id, Ok(cancelled())))
            .collect()
    }
}

/// Hands the request to `asker`; the answer goes out now when a rule decided, else in a
/// later step when someone (or the timeout) does — unless a cancel answered it first.
pub(crate) async fn ask(
    asker: Arc<dyn PermissionAsker>,
    id: RequestId,
    request: RequestPermissionRequest,
    step: &mut SessionStep,
    unanswered: Unanswered,
) {
    let tool = tool_request(&request);
    let asked = match asker.ask(tool).await {
        Ok(asked) => asked,
        Err(e) => {
            step.send.push(answer(&id, &request, None));
            step.errors.push(e);
            return;
        }
    };
    step.events.push(AgentEvent::PermissionRequested {
        request: Box::new(asked.clone()),
    });
    if !asked.is_pending() {
        step.send.push(answer(&id, &request, Some(&asked)));
        step.events.push(AgentEvent::PermissionDecided {
            request: Box::new(asked),
        });
        return;
    }
    unanswered.add(id.clone());
    step.later.push(Box::pin(async move {
        let mut later = SessionStep::default();
        let decided = asker.answer(&asked.id).await;
        if !unanswered.take(&id) {
            // The cancel answered it already; the decision (the cancel's) is recorded.
            if let Ok(decided) = decided {
                later.events.push(AgentEvent::PermissionDecided {
                    request: Box::new(decided),
                });
            }
            return later;
        }
        match decided {
            Ok(decided) => {
                later.send.push(answer(&id, &request, Some(&decided)));
                later.events.push(AgentEvent::PermissionDecided {
                    request: Box::new(decided),
                });
            }
            Err(e) => {
                later.send.push(answer(&id, &request, None));
                later.errors.push(e);
            }
        }
        later
    }));
}

/// The JSON-RPC answer: the option the decision picks; `None` (no decision, or none of
/// the agent's options fits) denies by cancelling the request.
fn answer(
    id: &RequestId,
    request: &RequestPermissionRequest,
    decided: Option<&PermissionRequest>,
) -> String {
    use PermissionOptionKind::{AllowAlways, AllowOnce, RejectAlways, RejectOnce};
    let decision = decided.and_then(|r| r.decision.as_ref());
    let wanted = match decision.map(|d| (d.decision, &d.by)) {
        None | Some((_, DecidedBy::Cancelled)) => [].as_slice(),
        Some((Verdict::Allow, _)) => &[AllowOnce, AllowAlways],
        Some((Verdict::AllowSession, _)) => &[AllowAlways, AllowOnce],
        Some((Verdict::Deny, _)) => &[RejectOnce, RejectAlways],
    };
    let chosen = wanted.iter().find_map(|w| {
        request
            .options
            .iter()
            .find(|o| rpc::named::<PermissionOptionKind>(o.kind) == *w)
    });
    let outcome = match chosen {
        Some(option) => RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(
            option.option_id.clone(),
        )),
        None => RequestPermissionOutcome::Cancelled,
    };
    rpc::answer(id, Ok(to_value(RequestPermissionResponse::new(outcome))))
}

/// What the agent's tool call shows a person and the rules.
fn tool_request(request: &RequestPermissionRequest) -> ToolRequest {
    let fields = &request.tool_call.fields;
    let kind = fields
        .kind
        .map_or(AgentToolKind::Other, rpc::named::<AgentToolKind>);
    let input = fields.raw_input.clone().unwrap_or(Value::Null);
    let command = match input.get("command") {
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Array(words)) => {
            let words: Vec<&str> = words.iter().filter_map(Value::as_str).collect();
            Some(match words.as_slice() {
                // codex-acp: `["/bin/bash", "-lc", "touch made.txt"]` — the script is the
                // command the rules and a person judge.
                [shell, "-lc" | "-c", script] if shell.ends_with("sh") => (*script).to_owned(),
                _ => words.join(" "),
            })
        }
        _ => None,
    };
    let mut path = fields
        .locations
        .iter()
        .flatten()
        .next()
        .map(|l| l.path.display().to_string());
    let mut diff = None;
    for content in fields.content.iter().flatten() {
        if let ToolCallContent::Diff(d) = content {
            path.get_or_insert_with(|| d.path.display().to_string());
            diff = Some(edit_diff(d.old_text.as_deref(), &d.new_text));
            break;
        }
    }
    let kind = kind.canonical();
    // gemini's shell requests carry no raw input: their title is the command itself.
    let command = command.or_else(|| {
        (kind == forge_domain::ToolKind::Shell)
            .then(|| fields.title.clone())
            .flatten()
    });
    ToolRequest {
        tool: fields
            .title
            .clone()
            .or_else(|| fields.name.clone())
            .unwrap_or_else(|| "tool".to_owned()),
        kind,
        command,
        path,
        diff,
        url: input.get("url").and_then(Value::as_str).map(str::to_owned),
        input,
    }
}
