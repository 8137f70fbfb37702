//! [`AcpDecoder`]: one run's stdout (JSON-RPC lines) → canonical events and result pieces.
//! Every message is read with the SDK's schema types; its [`Flow`] follows the conversation
//! as the session does.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use agent_client_protocol::v1::schema::{
    ContentBlock, Meta, PlanEntryStatus, PromptResponse, SessionNotification, SessionUpdate,
    ToolCallContent, ToolCallStatus,
};
use forge_domain::agent_protocol::{AgentStopReason, AgentToolKind};
use forge_domain::{
    AgentEvent, CostSource, EventAccumulator, ExecutionMetadata, ForgeError, PlanEntry, PlanStatus,
    RawJson, SessionId, Usage,
};
use forge_ports::{Decoder, LineShape, ProcessExit, ResultPieces};
use serde::Deserialize;

use crate::flow::{Flow, FlowConfig, Step};
use crate::rpc::{self, Kind};

/// The `sessionUpdate` tag alone: names an update, also one the schema cannot read.
#[derive(Deserialize)]
struct Tagged {
    update: Tag,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Tag {
    session_update: String,
}

/// A command's exit code, where an agent puts it in a tool call's `rawOutput`.
#[derive(Deserialize)]
struct Exit {
    #[serde(alias = "exitCode")]
    exit_code: i32,
}

/// A tool call until it completes: its kind, title and the paths it touches.
struct OpenCall {
    kind: AgentToolKind,
    name: Arc<str>,
    paths: Vec<PathBuf>,
}

pub struct AcpDecoder {
    flow: Flow,
    acc: EventAccumulator,
    /// Each open tool call, for its later updates.
    tools: HashMap<Arc<str>, OpenCall>,
    stop: Option<AgentStopReason>,
    usage: Option<Usage>,
    /// The cost the agent reported last (`usage_update.cost`).
    reported_cost: Option<f64>,
    failure: Option<String>,
}

impl AcpDecoder {
    pub fn new(config: FlowConfig) -> Self {
        Self {
            flow: Flow::new(config),
            acc: EventAccumulator::new(),
            tools: HashMap::new(),
            stop: None,
            usage: None,
            reported_cost: None,
            failure: None,
        }
    }

    fn emit(&mut self, out: &mut Vec<AgentEvent>, event: AgentEvent) {
        self.acc.observe(&event);
        out.push(event);
    }

    fn unknown(&mut self, out: &mut Vec<AgentEvent>, kind: &str, raw: &str) {
        let (kind, raw) = (kind.to_owned(), RawJson::from_parsed(raw));
        self.emit(out, AgentEvent::Unknown { kind, raw });
    }

    fn fail(&mut self, out: &mut Vec<AgentEvent>, message: String) {
        let code = Some("acp".into());
        self.emit(
            out,
            AgentEvent::Error {
                message: message.clone(),
                code,
            },
        );
        self.failure.get_or_insert(message);
    }

    fn cli_version(&self) -> Option<String> {
        let info = self.flow.init.as_ref()?.agent_info.as_ref()?;
        Some(info.version.clone())
    }

    fn on_answer(&mut self, step: Step, out: &mut Vec<AgentEvent>) {
        match step {
            Step::Opened(id, next) => {
                if let Ok(session_id) = SessionId::new(id) {
                    let cwd = Some(self.flow.config.workdir.display().to_string());
                    let (model, cli_version, tools) = (None, self.cli_version(), Vec::new());
                    let event = AgentEvent::SessionStarted {
                        session_id,
                        model,
                        cwd,
                        cli_version,
                        tools,
                    };
                    self.emit(out, event);
                }
                if let Err(reason) = next {
                    self.fail(out, reason);
                }
            }
            Step::Answered(done) => self.completed(done, out),
            Step::Failed(reason) => self.fail(out, reason),
            Step::Send(_) | Step::Ignored => {}
        }
    }

    fn completed(&mut self, done: PromptResponse, out: &mut Vec<AgentEvent>) {
        let usage = done.usage.as_ref().map(|u| Usage {
            input_tokens: u.input_tokens,
            output_tokens: u.output_tokens,
            cache_read_tokens: u.cached_read_tokens.unwrap_or(0),
            cache_write_tokens: u.cached_write_tokens.unwrap_or(0),
            reasoning_tokens: u.thought_tokens.unwrap_or(0),
        });
        self.usage = usage.or_else(|| meta_usage(done.meta)).or(self.usage);
        let reason: AgentStopReason = rpc::named(done.stop_reason);
        self.stop = Some(reason);
        let event = AgentEvent::Completed {
            status: reason.status(),
            stop_reason: Some(reason.name().to_owned()),
            result_text: None,
            usage: self.usage,
            cost_usd: self.reported_cost,
            cost_source: self.reported_cost.map(|_| CostSource::Reported),
            num_turns: None,
            duration_ms: None,
        };
        self.emit(out, event);
    }

    fn on_update(&mut self, params: &str, out: &mut Vec<AgentEvent>) -> Result<(), String> {
        let tag = serde_json::from_str::<Tagged>(params).map_err(|e| e.to_string())?;
        let kind = tag.update.session_update;
        let Ok(note) = serde_json::from_str::<SessionNotification>(params) else {
            self.unknown(out, &kind, params);
            return Ok(());
        };
        match note.update {
            SessionUpdate::AgentMessageChunk(chunk) => match chunk.content {
                ContentBlock::Text(t) if self.is_mode_announcement(&t.text) => {
                    self.unknown(out, "mode_update", params);
                }
                ContentBlock::Text(t) => {
                    let text = t.text.into();
                    self.emit(out, AgentEvent::Text { text, delta: true });
                }
                _ => self.unknown(out, &kind, params),
            },
            SessionUpdate::AgentThoughtChunk(chunk) => match chunk.content {
                ContentBlock::Text(t) => {
                    let text = t.text;
                    self.emit(out, AgentEvent::Thinking { text, delta: true });
                }
                _ => self.unknown(out, &kind, params),
            },
            SessionUpdate::UserMessageChunk(_) => {}
            SessionUpdate::ToolCall(call) => {
                let id: Arc<str> = call.tool_call_id.0.clone();
                let name: Arc<str> = call.title.as_str().into();
                let paths = call.locations.iter().map(|l| l.path.clone()).collect();
                let kind: AgentToolKind = rpc::named(call.kind);
                let open = OpenCall {
                    kind,
                    name: name.clone(),
                    paths,
                };
                self.tools.insert(id.clone(), open);
                let input = match &call.raw_input {
                    Some(input) => input.to_string(),
                    None => serde_json::json!({ "locations": call.locations }).to_string(),
                };
                let (call_id, kind, input) =
                    (id.clone(), kind.canonical(), RawJson::from_parsed(&input));
                self.emit(
                    out,
                    AgentEvent::ToolCallStarted {
                        call_id,
                        kind,
                        name,
                        input,
                    },
                );
                self.finish_tool(
                    out,
                    &id,
                    call.status,
                    call.raw_output.as_ref(),
                    &call.content,
                );
            }
            SessionUpdate::ToolCallUpdate(update) => {
                let (id, fields) = (update.tool_call_id.0, update.fields);
                if let Some(open) = self.tools.get_mut(&id) {
                    open.kind = fields.kind.map_or(open.kind, rpc::named);
                    if let Some(locations) = &fields.locations {
                        open.paths = locations.iter().map(|l| l.path.clone()).collect();
                    }
                }
                if let Some(status) = fields.status {
                    let content = fields.content.unwrap_or_default();
                    self.finish_tool(out, &id, status, fields.raw_output.as_ref(), &content);
                }
            }
            SessionUpdate::Plan(plan) => {
                let entries = plan.entries.into_iter().map(|e| PlanEntry {
                    content: e.content,
                    status: match e.status {
                        PlanEntryStatus::InProgress => PlanStatus::InProgress,
                        PlanEntryStatus::Completed => PlanStatus::Completed,
                        _ => PlanStatus::Pending,
                    },
                });
                let entries = entries.collect();
                self.emit(out, AgentEvent::Plan { entries });
            }
            SessionUpdate::UsageUpdate(u) => {
                if let Some(cost) = u.cost.filter(|c| c.currency.eq_ignore_ascii_case("USD")) {
                    self.reported_cost = Some(cost.amount);
                }
                self.unknown(out, &kind, params);
            }
            _ => self.unknown(out, &kind, params),
        }
        Ok(())
    }

    /// gemini announces the mode forge set as an `agent_message_chunk` of exactly
    /// `[MODE_UPDATE] <mode id>` before it answers `session/set_mode`: not the answer's text.
    fn is_mode_announcement(&self, text: &str) -> bool {
        let mode = self.flow.mode_pending.as_deref();
        mode.is_some_and(|m| text.strip_prefix("[MODE_UPDATE] ") == Some(m))
    }

    fn finish_tool(
        &mut self,
        out: &mut Vec<AgentEvent>,
        id: &Arc<str>,
        status: ToolCallStatus,
        raw_output: Option<&serde_json::Value>,
        content: &[ToolCallContent],
    ) {
        let done = matches!(status, ToolCallStatus::Completed | ToolCallStatus::Failed);
        let Some(open) = done.then(|| self.tools.remove(id)).flatten() else {
            return;
        };
        let text: Vec<&str> = content
            .iter()
            .filter_map(|c| match c {
                ToolCallContent::Content(c) => match &c.content {
                    ContentBlock::Text(t) => Some(t.text.as_str()),
                    _ => None,
                },
                _ => None,
            })
            .collect();
        let output = match raw_output {
            Some(serde_json::Value::String(s)) => Some(s.clone()),
            Some(v) if text.is_empty() => Some(v.to_string()),
            _ => (!text.is_empty()).then(|| text.join("\n")),
        };
        let exit = raw_output.and_then(|v| Exit::deserialize(v).ok());
        let event = AgentEvent::ToolCallFinished {
            call_id: id.clone(),
            kind: open.kind.canonical(),
            name: open.name,
            output: output.map(Into::into),
            is_error: status == ToolCallStatus::Failed,
            exit_code: exit.map(|e| e.exit_code),
        };
        self.emit(out, event);
        // A completed edit, delete or move changed the files it names.
        let Some(change) = open.kind.file_change() else {
            return;
        };
        if status == ToolCallStatus::Completed {
            for path in open.paths {
                let path = path
                    .strip_prefix(&self.flow.config.workdir)
                    .unwrap_or(&path);
                let path = path.display().to_string();
                self.emit(out, AgentEvent::FileChanged { path, change });
            }
        }
    }
}

/// How many of stderr's last lines a start-up failure quotes.
const START_STDERR_LINES: usize = 5;

/// Where to look when an agent failed during start-up: a program or file its configuration
/// does not name (a CLI it finds on its own) is hidden by the sandbox.
const START_HINT: &str = "the agent ended during start-up; inside forge's sandbox (on by \
    default) it reads only the system, its own installation, the work tree and the paths its \
    command and env name — name what it runs (CLAUDE_CODE_EXECUTABLE, NODE_PATH) in the \
    provider's env, check its refusals in the run's sandbox_denied, or compare with \
    --sandbox off";

/// A start-up failure's message with the agent's last stderr lines, and the hint.
fn start_failure(reason: String, exit: Option<&ProcessExit>) -> (String, Option<String>) {
    let lines: Vec<&str> = exit
        .map(|e| e.stderr_tail.lines())
        .into_iter()
        .flatten()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let last = &lines[lines.len().saturating_sub(START_STDERR_LINES)..];
    let message = if last.is_empty() {
        reason
    } else {
        let said = forge_domain::error::excerpt(&last.join(" / "), 600);
        format!("{reason}; the agent's stderr ends: {said}")
    };
    (message, Some(START_HINT.to_owned()))
}

/// Token counts an agent put in the prompt answer's `_meta` (gemini's
/// `quota.token_count`: `input_tokens` and `output_tokens`).
fn meta_usage(meta: Option<Meta>) -> Option<Usage> {
    let meta = serde_json::Value::Object(meta?);
    let count = meta.pointer("/quota/token_count")?;
    let tokens = |key: &str| count.get(key).and_then(serde_json::Value::as_u64);
    Some(Usage {
        input_tokens: tokens("input_tokens")?,
        output_tokens: tokens("output_tokens")?,
        ..Usage::default()
    })
}

impl Decoder for AcpDecoder {
    fn decode_line(
        &mut self,
        line_no: u64,
        line: &str,
        out: &mut Vec<AgentEvent>,
    ) -> Result<LineShape, ForgeError> {
        match rpc::read(line) {
            None => match LineShape::classify(line) {
                LineShape::Text => {
                    let raw = line.to_owned();
                    self.emit(out, AgentEvent::Unparsed { raw });
                    return Ok(LineShape::Text);
                }
                LineShape::Json => self.unknown(out, "json", line.trim()),
                shape => return Ok(shape),
            },
            Some(Kind::Notification("session/update", _)) if self.flow.replaying => {}
            Some(Kind::Notification("session/update", params)) => self
                .on_update(params, out)
                .map_err(|reason| ForgeError::parsing(line_no, line, reason))?,
            Some(Kind::Answer(id, result)) => {
                let step = self.flow.answer(id, result);
                self.on_answer(step, out);
            }
            // The session answers the agent's requests and records what it did.
            Some(Kind::Request(..)) => {}
            Some(Kind::Notification(method, _)) => self.unknown(out, method, line.trim()),
            Some(Kind::Stray) => self.unknown(out, "jsonrpc", line.trim()),
        }
        Ok(LineShape::Json)
    }

    fn finish(&mut self, exit: Option<&ProcessExit>) -> ResultPieces {
        // A crash before the answer: the runtime adds the stderr tail.
        let stopped = self.stop.and_then(AgentStopReason::error);
        let error = self.failure.clone().or(stopped);
        let reported_success = match self.stop {
            _ if error.is_some() => Some(false),
            Some(AgentStopReason::EndTurn) => Some(true),
            _ => None,
        };
        // Ended before a session opened: what the agent said on stderr is the reason the
        // protocol's answer leaves out ("Query closed before response received").
        let starting = self.acc.session_id.is_none();
        let errors = error.map(|reason| {
            let (stderr_summary, hint) = if starting {
                start_failure(reason, exit)
            } else {
                (reason, None)
            };
            ForgeError::ProviderExecution {
                exit_code: None,
                stderr_summary,
                hint,
            }
        });
        let mut metadata = ExecutionMetadata {
            session_id: self.acc.session_id.clone(),
            cli_version: self.cli_version(),
            usage: self.usage.unwrap_or_default(),
            cost_usd: self.reported_cost,
            cost_source: self.reported_cost.map(|_| CostSource::Reported),
            stop_reason: self.stop.map(|s| s.name().to_owned()),
            changed_files: std::mem::take(&mut self.acc.changed_files),
            ..Default::default()
        };
        if self.reported_cost.is_some() {
            let note = "cost_usd is the agent's own report (usage_update.cost)";
            metadata.notes.push(note.to_owned());
        }
        ResultPieces {
            reported_success,
            content: self.acc.take_text_after_last_tool_or_all(),
            tool_calls: std::mem::take(&mut self.acc.tool_calls),
            errors: errors.into_iter().collect(),
            metadata,
        }
    }
}
