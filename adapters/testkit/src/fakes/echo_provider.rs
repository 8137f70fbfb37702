//! `echo`: a provider with a trivial JSONL protocol, for testing the runtime without any
//! real CLI's format.
//!
//! Lines it understands (anything else is `Unknown`, non-JSON is `Unparsed`):
//! `{"type":"session","id":"s1"}`, `{"type":"text","text":"hi"}`,
//! `{"type":"tool","id":"t1","name":"Bash","input":{}}`,
//! `{"type":"tool_result","id":"t1","output":"ok","is_error":false}`,
//! `{"type":"retry","rate_limited":true,"message":"429"}`,
//! `{"type":"result","ok":true,"text":"done"}` (optionally with `"cost_usd":0.1`).
//! On stderr, `retry: <message>` is a retry (rate limited when the message says 429).

use std::sync::Arc;

use async_trait::async_trait;
use forge_domain::{
    AgentEvent, EventAccumulator, ExecutionRequest, ExecutionStatus, ForgeError, PermissionMode,
    ProviderId, RawJson, SessionId, ToolKind,
};
use forge_ports::{
    Capabilities, Decoder, Detection, EnvSnapshot, Invocation, InvocationContext, LineShape,
    ProcessExit, ProcessRunner, Provider, ProviderSettings, ResultPieces,
};
use serde_json::Value;

#[derive(Debug, Clone, Default)]
pub struct EchoProvider {
    settings: ProviderSettings,
}

impl EchoProvider {
    pub const ID: &'static str = "echo";

    pub fn new(settings: ProviderSettings) -> Self {
        Self { settings }
    }
}

fn id() -> ProviderId {
    match ProviderId::new(EchoProvider::ID) {
        Ok(id) => id,
        Err(_) => unreachable_id(),
    }
}

#[expect(clippy::unreachable, reason = "\"echo\" is a valid provider id")]
fn unreachable_id() -> ProviderId {
    unreachable!("echo is a valid provider id")
}

#[async_trait]
impl Provider for EchoProvider {
    fn id(&self) -> ProviderId {
        id()
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            streams_text_deltas: false,
            max_turns: false,
            max_budget: false,
            resume: true,
            reports_cost: false,
            allowed_tools: false,
            append_system_prompt: false,
            permission_modes: PermissionMode::ALL.to_vec(),
        }
    }

    fn install_hint(&self) -> String {
        "cargo build -p forge-testkit --bin fake-agent-cli".into()
    }

    fn settings(&self) -> &ProviderSettings {
        &self.settings
    }

    fn invocation(
        &self,
        request: &ExecutionRequest,
        ctx: &InvocationContext,
    ) -> Result<Invocation, ForgeError> {
        let program = self
            .settings
            .binary
            .clone()
            .unwrap_or_else(|| "fake-agent-cli".into());
        let mut args = self.settings.args.clone();
        if let Some(sid) = &request.resume_session_id {
            args.push(format!("--resume={sid}"));
        }
        args.extend(request.extra_args.iter().cloned());
        let mut inv = Invocation::new(program, args, request.workdir.clone());
        inv.env.set.extend(self.settings.env.clone());
        inv.env.set.extend(request.env.clone());
        if let Some(home) = &ctx.home {
            inv.env
                .set
                .insert("HOME".into(), home.display().to_string());
        }
        inv.stdin = Some(request.prompt.clone().into_bytes());
        inv.install_hint = Some(self.install_hint());
        Ok(inv)
    }

    fn decoder(&self, _request: &ExecutionRequest) -> Box<dyn Decoder> {
        Box::new(EchoDecoder::default())
    }

    async fn detect(&self, runner: &dyn ProcessRunner, _env: &EnvSnapshot) -> Detection {
        let binary = self
            .settings
            .binary
            .clone()
            .unwrap_or_else(|| "fake-agent-cli".into());
        let path = runner.locate(&binary);
        let mut hints = Vec::new();
        if path.is_none() {
            hints.push(self.install_hint());
        }
        Detection {
            provider: Self::ID.into(),
            binary: binary.display().to_string(),
            path,
            version: None,
            supported_range: "any".into(),
            version_supported: None,
            authenticated: Some(true),
            auth_detail: None,
            hints,
        }
    }
}

#[derive(Default)]
struct EchoDecoder {
    acc: EventAccumulator,
    result: Option<(bool, String)>,
    cost_usd: Option<f64>,
}

impl EchoDecoder {
    fn emit(&mut self, ev: AgentEvent, out: &mut Vec<AgentEvent>) {
        self.acc.observe(&ev);
        out.push(ev);
    }
}

fn str_field(v: &Value, key: &str) -> String {
    v.get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

impl Decoder for EchoDecoder {
    fn decode_line(
        &mut self,
        line_no: u64,
        line: &str,
        out: &mut Vec<AgentEvent>,
    ) -> Result<LineShape, ForgeError> {
        let trimmed = line.trim();
        if trimmed.is_empty() {
            return Ok(LineShape::Blank);
        }
        let value: Value = match serde_json::from_str(trimmed) {
            Ok(v) => v,
            Err(e) => {
                out.push(AgentEvent::Unparsed {
                    raw: line.to_owned(),
                });
                if trimmed.starts_with('{') || trimmed.starts_with('[') {
                    return Err(ForgeError::parsing(line_no, line, e));
                }
                return Ok(LineShape::Text);
            }
        };
        let kind = str_field(&value, "type");
        let ev = match kind.as_str() {
            "session" => match SessionId::new(str_field(&value, "id")) {
                Ok(session_id) => AgentEvent::SessionStarted {
                    session_id,
                    model: None,
                    cwd: None,
                    cli_version: None,
                    tools: Vec::new(),
                },
                Err(e) => return Err(ForgeError::parsing(line_no, line, e)),
            },
            "text" => AgentEvent::Text {
                text: str_field(&value, "text").into(),
                delta: false,
            },
            "tool" => AgentEvent::ToolCallStarted {
                call_id: str_field(&value, "id").into(),
                kind: if str_field(&value, "name") == "Bash" {
                    ToolKind::Shell
                } else {
                    ToolKind::Other
                },
                name: str_field(&value, "name").into(),
                input: value
                    .get("input")
                    .map_or_else(RawJson::null, RawJson::from_value),
            },
            "tool_result" => AgentEvent::ToolCallFinished {
                call_id: str_field(&value, "id").into(),
                kind: ToolKind::Other,
                name: "".into(),
                output: value.get("output").and_then(Value::as_str).map(Arc::from),
                is_error: value
                    .get("is_error")
                    .and_then(Value::as_bool)
                    .unwrap_or(false),
                exit_code: None,
            },
            "retry" => AgentEvent::Retry {
                attempt: None,
                max_attempts: None,
                delay_ms: None,
                http_status: None,
                rate_limited: value
                    .get("rate_limited")
                    .and_then(Value::as_bool)
                    .unwrap_or(false),
                message: str_field(&value, "message"),
            },
            "result" => {
                let ok = value.get("ok").and_then(Value::as_bool).unwrap_or(false);
                let text = str_field(&value, "text");
                self.result = Some((ok, text.clone()));
                self.cost_usd = value.get("cost_usd").and_then(Value::as_f64);
                AgentEvent::Completed {
                    status: if ok {
                        ExecutionStatus::Success
                    } else {
                        ExecutionStatus::Error
                    },
                    stop_reason: None,
                    result_text: Some(text.into()),
                    usage: None,
                    // Optional `"cost_usd": 0.1`, for callers that sum costs.
                    cost_usd: value.get("cost_usd").and_then(Value::as_f64),
                    cost_source: value
                        .get("cost_usd")
                        .map(|_| forge_domain::CostSource::Reported),
                    num_turns: None,
                    duration_ms: None,
                }
            }
            other => AgentEvent::Unknown {
                kind: other.to_owned(),
                raw: RawJson::from_parsed(trimmed),
            },
        };
        self.emit(ev, out);
        Ok(LineShape::Json)
    }

    fn decode_stderr_line(&mut self, line: &str, out: &mut Vec<AgentEvent>) {
        if let Some(message) = line.strip_prefix("retry: ") {
            let event = AgentEvent::Retry {
                attempt: None,
                max_attempts: None,
                delay_ms: None,
                http_status: None,
                rate_limited: message.contains("429"),
                message: message.to_owned(),
            };
            self.emit(event, out);
        }
    }

    fn finish(&mut self, exit: Option<&ProcessExit>) -> ResultPieces {
        let mut pieces = ResultPieces {
            reported_success: self.result.as_ref().map(|(ok, _)| *ok),
            content: self
                .result
                .as_ref()
                .map(|(_, t)| t.clone())
                .or_else(|| self.acc.last_text().map(str::to_owned))
                .unwrap_or_default(),
            tool_calls: self.acc.tool_calls.clone(),
            errors: Vec::new(),
            metadata: Default::default(),
        };
        pieces.metadata.session_id = self.acc.session_id.clone();
        pieces.metadata.cost_usd = self.cost_usd;
        pieces.metadata.changed_files = self.acc.changed_files.clone();
        if let Some(exit) = exit {
            if exit.code.is_some_and(|c| c != 0) {
                pieces.errors.push(ForgeError::ProviderExecution {
                    exit_code: exit.code,
                    stderr_summary: exit.stderr_tail.clone(),
                    hint: None,
                });
            }
        }
        pieces
    }
}
