//! [`AcpDecoder`]: one run's stdout (JSON-RPC lines) → canonical events and result pieces.

use std::collections::HashMap;
use std::sync::Arc;

use agent_client_protocol::v1::schema::{
    ContentBlock, InitializeResponse, PromptResponse, SessionNotification, SessionUpdate,
    StopReason, ToolCallContent, ToolCallStatus, ToolKind as AcpKind,
};
use forge_domain::{
    AgentEvent, CostSource, EventAccumulator, ExecutionStatus, ForgeError, RawJson, SessionId,
    ToolKind, Usage,
};
use forge_ports::{Decoder, LineShape, ProcessExit, ResultPieces};
use serde::Deserialize;

use crate::flow::{self, FlowConfig, Open};
use crate::rpc::{self, Incoming, Kind};

/// The `sessionUpdate` tag alone, to name an update the schema cannot read.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Tagged<'a> {
    #[serde(borrow)]
    update: UpdateTag<'a>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct UpdateTag<'a> {
    session_update: &'a str,
}

/// `_meta` usage some agents attach to a prompt's answer (token counts by another name).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct MetaUsage {
    #[serde(default, alias = "input_tokens")]
    input_tokens: u64,
    #[serde(default, alias = "output_tokens")]
    output_tokens: u64,
    #[serde(default, alias = "cache_read_input_tokens", alias = "cachedReadTokens")]
    cache_read_tokens: u64,
}

pub struct AcpDecoder {
    config: FlowConfig,
    acc: EventAccumulator,
    opened: Option<Open>,
    /// `session/load` replays the history as updates before its answer: not this run's.
    replaying: bool,
    cli_version: Option<String>,
    /// Kind and name of each tool call, for its later updates.
    tools: HashMap<Arc<str>, (ToolKind, Arc<str>)>,
    stop: Option<StopReason>,
    usage: Option<Usage>,
    /// The cost the agent reported last (`usage_update.cost`).
    reported_cost: Option<f64>,
    failure: Option<String>,
}

impl AcpDecoder {
    pub fn new(config: FlowConfig) -> Self {
        Self {
            config,
            acc: EventAccumulator::new(),
            opened: None,
            replaying: false,
            cli_version: None,
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

    fn fail(&mut self, out: &mut Vec<AgentEvent>, message: String) {
        self.emit(
            out,
            AgentEvent::Error {
                message: message.clone(),
                code: Some("acp".into()),
            },
        );
        self.failure.get_or_insert(message);
    }

    fn on_answer(&mut self, id: i64, result: Result<&str, String>, out: &mut Vec<AgentEvent>) {
        let result = match result {
            Ok(r) => r,
            Err(message) => {
                let what = match id {
                    rpc::INITIALIZE => "initialize",
                    rpc::SESSION => self.opened.as_ref().map_or("session", Open::method),
                    rpc::SET_MODE => "session/set_mode",
                    _ => "session/prompt",
                };
                return self.fail(out, format!("the agent refused {what}: {message}"));
            }
        };
        match id {
            rpc::INITIALIZE => match serde_json::from_str::<InitializeResponse>(result) {
                Ok(init) => {
                    self.cli_version = init.agent_info.as_ref().map(|i| i.version.clone());
                    match flow::open(&init, &self.config) {
                        Ok(open) => {
                            self.replaying = matches!(open, Open::Load(_));
                            self.opened = Some(open);
                        }
                        Err(reason) => self.fail(out, reason),
                    }
                }
                Err(e) => self.fail(out, format!("unreadable initialize answer: {e}")),
            },
            rpc::SESSION => self.on_opened(result, out),
            rpc::PROMPT => match serde_json::from_str::<PromptResponse>(result) {
                Ok(done) => self.on_prompt_done(done, result, out),
                Err(e) => self.fail(out, format!("unreadable session/prompt answer: {e}")),
            },
            _ => {}
        }
    }

    fn on_opened(&mut self, result: &str, out: &mut Vec<AgentEvent>) {
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Opened {
            #[serde(default)]
            session_id: Option<String>,
            #[serde(default)]
            modes: Option<agent_client_protocol::v1::schema::SessionModeState>,
        }
        self.replaying = false;
        let Ok(opened) = serde_json::from_str::<Opened>(result) else {
            return self.fail(out, "unreadable answer opening the session".into());
        };
        let resumed = match &self.opened {
            Some(Open::Resume(id) | Open::Load(id)) => Some(id.clone()),
            _ => None,
        };
        if let Some(Ok(session_id)) = opened.session_id.or(resumed).map(SessionId::new) {
            let cwd = Some(self.config.workdir.display().to_string());
            let cli_version = self.cli_version.clone();
            self.emit(
                out,
                AgentEvent::SessionStarted {
                    session_id,
                    model: None,
                    cwd,
                    cli_version,
                    tools: Vec::new(),
                },
            );
        }
        if let Err(reason) = flow::mode(opened.modes.as_ref(), &self.config) {
            self.fail(out, reason);
        }
    }

    fn on_prompt_done(&mut self, done: PromptResponse, raw: &str, out: &mut Vec<AgentEvent>) {
        let usage = done.usage.as_ref().map(|u| Usage {
            input_tokens: u.input_tokens,
            output_tokens: u.output_tokens,
            cache_read_tokens: u.cached_read_tokens.unwrap_or(0),
            cache_write_tokens: u.cached_write_tokens.unwrap_or(0),
            reasoning_tokens: u.thought_tokens.unwrap_or(0),
        });
        let usage = usage.or_else(|| meta_usage(raw)).or(self.usage);
        self.usage = usage;
        let status = match done.stop_reason {
            StopReason::EndTurn => ExecutionStatus::Success,
            StopReason::Cancelled => ExecutionStatus::Partial,
            _ => ExecutionStatus::Error,
        };
        let stop_reason = stop_name(done.stop_reason).to_owned();
        self.stop = Some(done.stop_reason);
        let event = AgentEvent::Completed {
            status,
            stop_reason: Some(stop_reason),
            result_text: None,
            usage,
            cost_usd: self.reported_cost,
            cost_source: self.reported_cost.map(|_| CostSource::Reported),
            num_turns: None,
            duration_ms: None,
        };
        self.emit(out, event);
    }

    fn on_update(&mut self, params: &str, out: &mut Vec<AgentEvent>) -> Result<(), String> {
        let note = match serde_json::from_str::<SessionNotification>(params) {
            Ok(note) => note,
            Err(e) => {
                let kind = serde_json::from_str::<Tagged<'_>>(params)
                    .map(|t| t.update.session_update.to_owned())
                    .map_err(|_| e.to_string())?;
                let raw = RawJson::from_parsed(params);
                self.emit(out, AgentEvent::Unknown { kind, raw });
                return Ok(());
            }
        };
        match note.update {
            SessionUpdate::AgentMessageChunk(chunk) => match chunk.content {
                ContentBlock::Text(t) => self.emit(
                    out,
                    AgentEvent::Text {
                        text: t.text.into(),
                        delta: true,
                    },
                ),
                _ => self.unknown(out, "agent_message_chunk", params),
            },
            SessionUpdate::AgentThoughtChunk(chunk) => match chunk.content {
                ContentBlock::Text(t) => self.emit(
                    out,
                    AgentEvent::Thinking {
                        text: t.text,
                        delta: true,
                    },
                ),
                _ => self.unknown(out, "agent_thought_chunk", params),
            },
            SessionUpdate::UserMessageChunk(_) => {}
            SessionUpdate::ToolCall(call) => {
                let id: Arc<str> = call.tool_call_id.0.clone();
                let kind = tool_kind(call.kind);
                let name: Arc<str> = call.title.as_str().into();
                self.tools.insert(id.clone(), (kind, name.clone()));
                let input = call
                    .raw_input
                    .clone()
                    .unwrap_or_else(|| serde_json::json!({ "locations": call.locations }));
                self.emit(
                    out,
                    AgentEvent::ToolCallStarted {
                        call_id: id.clone(),
                        kind,
                        name,
                        input: RawJson::from_parsed(&input.to_string()),
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
                let id = update.tool_call_id.0.clone();
                if let (Some(kind), Some((known, _))) =
                    (update.fields.kind, self.tools.get_mut(&id))
                {
                    *known = tool_kind(kind);
                }
                let content = update.fields.content.clone().unwrap_or_default();
                if let Some(status) = update.fields.status {
                    self.finish_tool(
                        out,
                        &id,
                        status,
                        update.fields.raw_output.as_ref(),
                        &content,
                    );
                }
            }
            SessionUpdate::UsageUpdate(u) => {
                if let Some(cost) = u.cost.filter(|c| c.currency.eq_ignore_ascii_case("USD")) {
                    self.reported_cost = Some(cost.amount);
                }
                self.unknown(out, "usage_update", params);
            }
            SessionUpdate::Plan(_) => self.unknown(out, "plan", params),
            _ => {
                let kind = serde_json::from_str::<Tagged<'_>>(params).map_or_else(
                    |_| "session/update".to_owned(),
                    |t| t.update.session_update.to_owned(),
                );
                self.unknown(out, &kind, params);
            }
        }
        Ok(())
    }

    fn finish_tool(
        &mut self,
        out: &mut Vec<AgentEvent>,
        id: &Arc<str>,
        status: ToolCallStatus,
        raw_output: Option<&serde_json::Value>,
        content: &[ToolCallContent],
    ) {
        if !matches!(status, ToolCallStatus::Completed | ToolCallStatus::Failed) {
            return;
        }
        let Some((kind, name)) = self.tools.remove(id) else {
            return;
        };
        let text: String = content
            .iter()
            .filter_map(|c| match c {
                ToolCallContent::Content(c) => match &c.content {
                    ContentBlock::Text(t) => Some(t.text.as_str()),
                    _ => None,
                },
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n");
        let output = match raw_output {
            Some(serde_json::Value::String(s)) => Some(s.clone()),
            Some(v) if text.is_empty() => Some(v.to_string()),
            _ => (!text.is_empty()).then_some(text),
        };
        let exit_code = raw_output
            .and_then(|v| v.get("exit_code").or_else(|| v.get("exitCode")))
            .and_then(serde_json::Value::as_i64)
            .and_then(|c| i32::try_from(c).ok());
        let event = AgentEvent::ToolCallFinished {
            call_id: id.clone(),
            kind,
            name,
            output: output.map(Into::into),
            is_error: status == ToolCallStatus::Failed,
            exit_code,
        };
        self.emit(out, event);
    }

    fn unknown(&mut self, out: &mut Vec<AgentEvent>, kind: &str, raw: &str) {
        self.emit(
            out,
            AgentEvent::Unknown {
                kind: kind.to_owned(),
                raw: RawJson::from_parsed(raw),
            },
        );
    }
}

/// ACP's tool kinds → forge's.
pub fn tool_kind(kind: AcpKind) -> ToolKind {
    match kind {
        AcpKind::Read => ToolKind::FileRead,
        AcpKind::Edit | AcpKind::Delete | AcpKind::Move => ToolKind::FileWrite,
        AcpKind::Search => ToolKind::Search,
        AcpKind::Execute => ToolKind::Shell,
        AcpKind::Fetch => ToolKind::Web,
        _ => ToolKind::Other,
    }
}

fn stop_name(reason: StopReason) -> &'static str {
    match reason {
        StopReason::EndTurn => "end_turn",
        StopReason::MaxTokens => "max_tokens",
        StopReason::MaxTurnRequests => "max_turn_requests",
        StopReason::Refusal => "refusal",
        StopReason::Cancelled => "cancelled",
        _ => "other",
    }
}

/// Token counts an agent put in the prompt answer's `_meta`.
fn meta_usage(raw: &str) -> Option<Usage> {
    let value: serde_json::Value = serde_json::from_str(raw).ok()?;
    let meta = value.get("_meta")?;
    // `_meta.usage`, `_meta.<agent>.usage`, or gemini's `_meta.quota.token_count`.
    let found = meta.get("usage").cloned().or_else(|| {
        meta.as_object()?
            .values()
            .find_map(|v| v.get("usage").or_else(|| v.get("token_count")).cloned())
    })?;
    let m: MetaUsage = serde_json::from_value(found).ok()?;
    Some(Usage {
        input_tokens: m.input_tokens,
        output_tokens: m.output_tokens,
        cache_read_tokens: m.cache_read_tokens,
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
        let Some(incoming) = Incoming::read(line) else {
            let shape = LineShape::classify(line);
            if shape == LineShape::Text {
                self.emit(
                    out,
                    AgentEvent::Unparsed {
                        raw: line.to_owned(),
                    },
                );
            } else if shape == LineShape::Json {
                self.unknown(out, "json", line.trim());
            }
            return Ok(shape);
        };
        match incoming.kind() {
            Kind::Notification("session/update") if self.replaying => {}
            Kind::Notification("session/update") => {
                let params = incoming.params.map_or("null", |p| p.get());
                self.on_update(params, out)
                    .map_err(|reason| ForgeError::parsing(line_no, line, reason))?;
            }
            Kind::Answer(id, result) => {
                self.on_answer(
                    id,
                    result.map(|r| r.get()).map_err(|e| rpc::describe(&e)),
                    out,
                );
            }
            // The session answers the agent's requests and records what it did.
            Kind::Request(..) => {}
            Kind::Notification(method) => self.unknown(out, method, line.trim()),
            Kind::Stray => self.unknown(out, "jsonrpc", line.trim()),
        }
        Ok(LineShape::Json)
    }

    fn finish(&mut self, exit: Option<&ProcessExit>) -> ResultPieces {
        let content = self.acc.take_text_after_last_tool_or_all();
        let mut errors = Vec::new();
        let reported_success = match (&self.failure, self.stop) {
            (Some(message), _) => {
                errors.push(ForgeError::ProviderExecution {
                    exit_code: None,
                    stderr_summary: message.clone(),
                    hint: None,
                });
                Some(false)
            }
            (None, Some(StopReason::EndTurn)) => Some(true),
            (None, Some(StopReason::Cancelled)) => None,
            (None, Some(reason)) => {
                errors.push(ForgeError::ProviderExecution {
                    exit_code: None,
                    stderr_summary: format!("the agent stopped: {}", stop_name(reason)),
                    hint: None,
                });
                Some(false)
            }
            (None, None) => None,
        };
        // A crash before the answer: the stderr tail says why (the runtime adds it).
        let _ = exit;
        let mut metadata = forge_domain::ExecutionMetadata {
            session_id: self.acc.session_id.clone(),
            cli_version: self.cli_version.clone(),
            usage: self.usage.unwrap_or_default(),
            cost_usd: self.reported_cost,
            cost_source: self.reported_cost.map(|_| CostSource::Reported),
            stop_reason: self.stop.map(|s| stop_name(s).to_owned()),
            changed_files: std::mem::take(&mut self.acc.changed_files),
            ..Default::default()
        };
        if self.reported_cost.is_some() {
            metadata
                .notes
                .push("cost_usd is the agent's own report (usage_update.cost)".to_owned());
        }
        ResultPieces {
            reported_success,
            content,
            tool_calls: std::mem::take(&mut self.acc.tool_calls),
            errors,
            metadata,
        }
    }
}
