//! The stateful decoder of `codex exec --json` stdout.
//!
//! Every line is read by one borrowed, lenient serde parse ([`crate::wire::Line`]) and
//! dispatched on its `type`; the handlers fold events into an [`EventAccumulator`] as they
//! are emitted; `finish` (in `result.rs`) builds the pieces.

use forge_domain::{
    AgentEvent, CostSource, EventAccumulator, ExecutionRequest, ExecutionStatus, ForgeError,
    PricingTable, RawJson, SessionId, ToolNames, Usage,
};
use forge_ports::{Decoder, LineShape, ProcessExit, ProviderSettings, ResultPieces};

use crate::retry::parse_reconnect;
use crate::wire::{Line, Message, WireUsage};

/// Decoder for one run.
#[derive(Debug)]
pub struct CodexDecoder {
    pub(crate) acc: EventAccumulator,
    /// `request.workdir`, to make file change paths workspace-relative.
    pub(crate) workdir: String,
    pub(crate) resuming: bool,
    /// The resumed thread's running total before this run (usage is reported per thread):
    /// from its rollout, read before the run (`rollout.rs`).
    pub(crate) baseline: Option<Usage>,
    /// The model asked for (request, else settings).
    pub(crate) model: Option<String>,
    /// The model named by the run itself (Codex's "model metadata for `X` not found" notice).
    pub(crate) model_from_run: Option<String>,
    /// The model the run's `config.toml` (or its arguments) chose, when forge named none.
    pub(crate) model_from_config: Option<String>,
    pub(crate) pricing: PricingTable,
    pub(crate) turns: u32,
    pub(crate) turn_completed: bool,
    /// The message of the last `turn.failed`.
    pub(crate) turn_failed: Option<String>,
    /// The last top-level `error` that was not a reconnect notice.
    pub(crate) last_error: Option<String>,
    /// The last `turn.completed` usage: the thread's running total.
    pub(crate) cumulative: Option<Usage>,
    /// Tool calls started and not yet finished, as indices into `acc.tool_calls` (the id is
    /// there): rarely more than one, so a Vec.
    pub(crate) open_calls: Vec<usize>,
    /// Tool names (item types), each allocated once per run.
    pub(crate) names: ToolNames,
}

impl CodexDecoder {
    pub fn new(request: &ExecutionRequest, settings: &ProviderSettings) -> Self {
        Self {
            // Results read only the last text block (`result.rs`, `on_turn_completed`).
            acc: EventAccumulator::last_text_only(),
            workdir: request.workdir.to_string_lossy().into_owned(),
            resuming: request.resume_session_id.is_some(),
            baseline: None,
            model: request.model.clone().or_else(|| settings.model.clone()),
            model_from_run: None,
            model_from_config: None,
            pricing: settings.pricing.clone(),
            turns: 0,
            turn_completed: false,
            turn_failed: None,
            last_error: None,
            cumulative: None,
            open_calls: Vec::new(),
            names: ToolNames::new(),
        }
    }

    /// The cumulative total the resumed thread last reported: this run's usage becomes the
    /// difference. Ignored for a run that does not resume.
    pub fn with_resumed_usage(mut self, baseline: Option<Usage>) -> Self {
        if self.resuming {
            self.baseline = baseline;
        }
        self
    }

    /// The model codex's own configuration chose for this run (`config_model.rs`), used when
    /// the request and settings name none.
    pub fn with_config_model(mut self, model: Option<String>) -> Self {
        self.model_from_config = model;
        self
    }

    pub(crate) fn emit(&mut self, event: AgentEvent, out: &mut Vec<AgentEvent>) {
        self.acc.observe(&event);
        out.push(event);
    }

    /// The model this run used, as far as known.
    pub(crate) fn model(&self) -> Option<&str> {
        self.model
            .as_deref()
            .or(self.model_from_run.as_deref())
            .or(self.model_from_config.as_deref())
    }

    /// This run's own usage out of the thread's running total: the total itself for a run
    /// that started the thread, the total less the thread's total before the run for a
    /// resumed one, and `None` when that earlier total is not known (never the running total).
    pub(crate) fn run_usage(&self, cumulative: Usage) -> Option<Usage> {
        match (&self.baseline, self.resuming) {
            (_, false) => Some(cumulative),
            (Some(base), true) => Some(cumulative.saturating_sub(base)),
            (None, true) => None,
        }
    }

    /// A parsed line: dispatch on its `type`.
    fn on_line(&mut self, line: Line<'_>, raw: &str, out: &mut Vec<AgentEvent>) {
        let Some(kind) = line.kind.as_deref() else {
            // The legacy `{"id","msg"}` protocol (codex before ≈0.44) or a stray object.
            self.emit(unknown("untyped", raw), out);
            return;
        };
        match kind {
            "thread.started" => self.on_thread_started(line.thread_id.as_deref(), out),
            "turn.started" => self.turns += 1,
            "turn.completed" => self.on_turn_completed(line.usage.unwrap_or_default(), out),
            "turn.failed" => self.on_turn_failed_line(line.error, out),
            "error" => self.on_error_line(line.message.as_deref(), out),
            "item.started" | "item.updated" | "item.completed" => match line.item {
                Some(item) => self.on_item(kind, item, raw, out),
                None => self.emit(unknown(kind, raw), out),
            },
            other => self.emit(unknown(other, raw), out),
        }
    }

    fn on_turn_failed_line(&mut self, error: Option<Message<'_>>, out: &mut Vec<AgentEvent>) {
        let message = error
            .and_then(|e| e.message)
            .map(|m| m.into_owned())
            .or_else(|| self.last_error.clone())
            .unwrap_or_else(|| "turn failed".to_owned());
        self.on_turn_failed(message, out);
    }

    fn on_error_line(&mut self, message: Option<&str>, out: &mut Vec<AgentEvent>) {
        let message = message.unwrap_or("unknown error");
        match parse_reconnect(message) {
            Some(retry) => self.emit(retry, out),
            None => {
                self.last_error = Some(message.to_owned());
                let ev = AgentEvent::Error {
                    message: message.to_owned(),
                    code: None,
                };
                self.emit(ev, out);
            }
        }
    }

    fn on_thread_started(&mut self, thread_id: Option<&str>, out: &mut Vec<AgentEvent>) {
        match thread_id.map(SessionId::new) {
            Some(Ok(session_id)) => {
                let ev = AgentEvent::SessionStarted {
                    session_id,
                    model: self.model().map(str::to_owned),
                    cwd: Some(self.workdir.clone()),
                    cli_version: None,
                    tools: Vec::new(),
                };
                self.emit(ev, out);
            }
            Some(Err(e)) => self.emit(warning(format!("unusable codex thread id: {e}")), out),
            None => self.emit(
                warning("codex thread.started without a thread id".into()),
                out,
            ),
        }
    }

    fn on_turn_completed(&mut self, wire: WireUsage, out: &mut Vec<AgentEvent>) {
        self.turn_completed = true;
        let cumulative = wire.to_usage();
        self.cumulative = Some(cumulative);
        let usage = self.run_usage(cumulative);
        if let Some(usage) = usage {
            self.emit(AgentEvent::UsageUpdate { usage }, out);
        }
        let cost_usd = usage.and_then(|usage| {
            self.model()
                .and_then(|model| self.pricing.estimate(model, &usage))
        });
        let ev = AgentEvent::Completed {
            status: ExecutionStatus::Success,
            stop_reason: None,
            result_text: self.acc.last_shared_text(),
            usage,
            cost_usd,
            cost_source: cost_usd.map(|_| CostSource::Estimated),
            num_turns: Some(self.turns),
            duration_ms: None,
        };
        self.emit(ev, out);
    }

    fn on_turn_failed(&mut self, message: String, out: &mut Vec<AgentEvent>) {
        self.turn_failed = Some(message.clone());
        self.emit(
            AgentEvent::Error {
                message,
                code: None,
            },
            out,
        );
        let ev = AgentEvent::Completed {
            status: ExecutionStatus::Error,
            stop_reason: None,
            result_text: None,
            usage: None,
            cost_usd: None,
            cost_source: None,
            num_turns: Some(self.turns),
            duration_ms: None,
        };
        self.emit(ev, out);
    }
}

impl Decoder for CodexDecoder {
    fn decode_line(
        &mut self,
        line_no: u64,
        line: &str,
        out: &mut Vec<AgentEvent>,
    ) -> Result<LineShape, ForgeError> {
        // Only the start is looked at before parsing (the parser skips a trailing `\r`):
        // reading the last byte first would fetch a long line's far end out of order.
        // Paths that keep the text strip the `\r` themselves. Every `Ok` below follows a
        // parse of the whole line, so it is one JSON document.
        // Codex starts every line with `{`: trimming is for the others.
        let trimmed = if line.starts_with('{') {
            line
        } else {
            line.trim_start()
        };
        match trimmed.as_bytes().first() {
            None => Ok(LineShape::Blank),
            Some(b'{') => match serde_json::from_str::<Line<'_>>(trimmed) {
                Ok(parsed) => {
                    self.on_line(parsed, trimmed, out);
                    Ok(LineShape::Json)
                }
                Err(e) => Err(self.unreadable(line_no, line, trimmed, &e, out)),
            },
            Some(b'[') => match serde_json::from_str::<serde::de::IgnoredAny>(trimmed) {
                Ok(_) => {
                    self.emit(unknown("array", trimmed), out);
                    Ok(LineShape::Json)
                }
                Err(e) => Err(self.unreadable(line_no, line, trimmed, &e, out)),
            },
            // Warnings and banners some builds print on stdout: kept, never fatal.
            Some(_) => {
                self.emit(
                    AgentEvent::Unparsed {
                        raw: without_cr(line).to_owned(),
                    },
                    out,
                );
                Ok(LineShape::classify(line))
            }
        }
    }

    fn finish(&mut self, exit: Option<&ProcessExit>) -> ResultPieces {
        crate::result::finish(self, exit)
    }
}

impl CodexDecoder {
    /// A line that looks like JSON but could not be read. Valid JSON of an unexpected shape
    /// (a field of another type) is kept whole as `Unknown`; broken JSON as `Unparsed`.
    fn unreadable(
        &mut self,
        line_no: u64,
        line: &str,
        trimmed: &str,
        err: &serde_json::Error,
        out: &mut Vec<AgentEvent>,
    ) -> ForgeError {
        let line = without_cr(line);
        let trimmed = without_cr(trimmed);
        if serde_json::from_str::<serde::de::IgnoredAny>(trimmed).is_ok() {
            let kind = serde_json::from_str::<TypeOnly<'_>>(trimmed)
                .ok()
                .and_then(|t| t.kind)
                .unwrap_or_default();
            let ev = unknown(&format!("unreadable/{kind}"), trimmed);
            self.emit(ev, out);
        } else {
            let ev = AgentEvent::Unparsed {
                raw: line.to_owned(),
            };
            self.emit(ev, out);
        }
        ForgeError::parsing(line_no, line, err)
    }
}

fn without_cr(line: &str) -> &str {
    line.strip_suffix('\r').unwrap_or(line)
}

#[derive(serde::Deserialize)]
struct TypeOnly<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<std::borrow::Cow<'a, str>>,
}

pub(crate) fn unknown(kind: &str, raw: &str) -> AgentEvent {
    AgentEvent::Unknown {
        kind: kind.to_owned(),
        raw: RawJson::from_parsed(raw),
    }
}

pub(crate) fn warning(message: String) -> AgentEvent {
    AgentEvent::Warning { message }
}
