//! The stateful decoder of `gemini -o stream-json` (and, through [`crate::json_output`], of
//! the single `-o json` object).

use crate::retries::RetryLines;
use std::sync::Arc;

use forge_domain::{
    AgentEvent, CostSource, EventAccumulator, ExecutionStatus, FileChangeKind, ForgeError,
    PricingTable, RawJson, SessionId, SharedText, ToolKind, ToolNames, Usage,
};
use forge_ports::{Decoder, LineShape, ProcessExit, ResultPieces};

use crate::cost;
use crate::framing::looks_like_json;
use crate::report::RunReport;
use crate::tools::{relative_to, tool_kind, written_path};
use crate::wire::{
    ErrorEvent, InitEvent, KindOnly, MessageEvent, OtherEvent, ResultEvent, StreamStats,
    ToolResultEvent, ToolUseEvent,
};

/// What a decoder needs to know about its run.
#[derive(Debug, Clone, Default)]
pub struct DecoderConfig {
    /// The run's working directory: written paths inside it are reported relative to it.
    pub workdir: String,
    /// The model the run asked for (`-m`), if any.
    pub requested_model: Option<String>,
    pub pricing: PricingTable,
    /// The run resumes a session (`--resume`), which then has content whatever this run does.
    pub resuming: bool,
}

/// Decoder of one gemini run.
#[derive(Debug)]
pub struct GeminiDecoder {
    pub(crate) config: DecoderConfig,
    pub(crate) acc: EventAccumulator,
    pub(crate) report: Option<RunReport>,
    /// `response` of a `-o json` document: the whole answer.
    pub(crate) json_response: Option<String>,
    /// Numbers tool calls that arrive without an id.
    tool_call_seq: u64,
    /// Tool names, each allocated once per run.
    names: ToolNames,
    /// Its stderr so far, read for retry reports.
    stderr: RetryLines,
}

impl GeminiDecoder {
    pub fn new(config: DecoderConfig) -> Self {
        Self {
            config,
            acc: EventAccumulator::new(),
            report: None,
            json_response: None,
            tool_call_seq: 0,
            names: ToolNames::new(),
            stderr: RetryLines::default(),
        }
    }

    pub(crate) fn emit(&mut self, out: &mut Vec<AgentEvent>, event: AgentEvent) {
        self.acc.observe(&event);
        out.push(event);
    }

    fn unknown(&mut self, out: &mut Vec<AgentEvent>, kind: &str, json: &str) {
        self.emit(
            out,
            AgentEvent::Unknown {
                kind: kind.to_owned(),
                raw: RawJson::from_parsed(json),
            },
        );
    }

    /// Reads one event of a known `kind` from `json` (the line) and emits what it says.
    /// Errors are the caller's to recover.
    fn read_event(
        &mut self,
        kind: &str,
        json: &str,
        out: &mut Vec<AgentEvent>,
    ) -> Result<(), serde_json::Error> {
        match kind {
            "init" => {
                let ev: InitEvent<'_> = serde_json::from_str(json)?;
                self.on_init(ev, json, out);
            }
            "message" => {
                let ev: MessageEvent<'_> = serde_json::from_str(json)?;
                self.on_message(ev, json, out);
            }
            "tool_use" => {
                let ev: ToolUseEvent<'_> = serde_json::from_str(json)?;
                self.on_tool_use(ev, out);
            }
            "tool_result" => {
                let ev: ToolResultEvent<'_> = serde_json::from_str(json)?;
                self.on_tool_result(ev, out);
            }
            "error" => {
                let ev: ErrorEvent<'_> = serde_json::from_str(json)?;
                let message = ev.message.map(|m| m.into_owned()).unwrap_or_default();
                let event = match ev.severity.as_deref() {
                    Some("warning") => AgentEvent::Warning { message },
                    severity => AgentEvent::Error {
                        message,
                        code: severity.map(str::to_owned),
                    },
                };
                self.emit(out, event);
            }
            "result" => {
                let ev: ResultEvent<'_> = serde_json::from_str(json)?;
                self.on_result(ev, out);
            }
            kind => {
                serde_json::from_str::<OtherEvent>(json)?;
                self.unknown(out, kind, json);
            }
        }
        Ok(())
    }

    fn on_message(&mut self, ev: MessageEvent<'_>, raw: &str, out: &mut Vec<AgentEvent>) {
        match ev.role.as_deref() {
            Some("assistant") => {
                if let Some(text) = ev.content {
                    let delta = ev.delta.unwrap_or(false);
                    let text = text.into_owned();
                    self.emit(
                        out,
                        AgentEvent::Text {
                            text: text.into(),
                            delta,
                        },
                    );
                }
            }
            // The CLI echoes the prompt once; the runtime keeps the raw line.
            Some("user") => {}
            _ => self.unknown(out, "message", raw),
        }
    }

    fn on_init(&mut self, ev: InitEvent<'_>, json: &str, out: &mut Vec<AgentEvent>) {
        let session = ev
            .session_id
            .and_then(|id| SessionId::new(id.into_owned()).ok());
        match session {
            Some(session_id) => self.emit(
                out,
                AgentEvent::SessionStarted {
                    session_id,
                    model: ev.model.map(|m| m.into_owned()),
                    cwd: None,
                    cli_version: None,
                    tools: Vec::new(),
                },
            ),
            None => self.unknown(out, "init", json),
        }
    }

    fn on_tool_use(&mut self, ev: ToolUseEvent<'_>, out: &mut Vec<AgentEvent>) {
        let name = self.names.get(ev.tool_name.as_deref().unwrap_or("unknown"));
        self.tool_call_seq += 1;
        let call_id: Arc<str> = match ev.tool_id {
            Some(id) => Arc::from(id.as_ref()),
            None => Arc::from(format!("{name}#{}", self.tool_call_seq)),
        };
        // Copied as the CLI printed it: no tree is built.
        let input = ev
            .parameters
            .map_or_else(RawJson::null, RawJson::from_parsed);
        let kind = tool_kind(&name);
        self.emit(
            out,
            AgentEvent::ToolCallStarted {
                call_id,
                kind,
                name,
                input,
            },
        );
    }

    fn on_tool_result(&mut self, ev: ToolResultEvent<'_>, out: &mut Vec<AgentEvent>) {
        let id = ev.tool_id.as_deref().unwrap_or_default();
        let success = ev.status.as_deref() == Some("success");
        // The accumulator holds the started call (usually the last one): its id, name, kind
        // and input pair with this result without a second map, and are shared, not copied.
        let started = self
            .acc
            .tool_calls
            .iter()
            .rev()
            .find(|c| c.id.as_ref() == id);
        let (call_id, name, kind, written) = match started {
            Some(call) => {
                let written = (success && call.kind == ToolKind::FileWrite)
                    .then(|| written_path(&call.input))
                    .flatten()
                    .map(|p| relative_to(&p, &self.config.workdir));
                (
                    Arc::clone(&call.id),
                    Arc::clone(&call.name),
                    call.kind,
                    written,
                )
            }
            None => (
                Arc::from(id),
                self.names.get("unknown"),
                ToolKind::Other,
                None,
            ),
        };
        let output = ev
            .output
            .as_deref()
            .or_else(|| ev.error.as_ref().and_then(|e| e.message.as_deref()))
            .map(Arc::from);
        let change = if name.as_ref() == "write_file" {
            FileChangeKind::Unknown
        } else {
            FileChangeKind::Modified
        };
        self.emit(
            out,
            AgentEvent::ToolCallFinished {
                call_id,
                kind,
                name,
                output,
                is_error: !success,
                exit_code: None,
            },
        );
        if let (true, Some(path)) = (success, written) {
            self.emit(out, AgentEvent::FileChanged { path, change });
        }
    }

    fn on_result(&mut self, ev: ResultEvent<'_>, out: &mut Vec<AgentEvent>) {
        let success = ev.status.as_deref() == Some("success");
        let (error_type, error_message) = match ev.error {
            Some(e) => (
                e.kind.map(|k| k.into_owned()),
                e.message.map(|m| m.into_owned()),
            ),
            None => (None, None),
        };
        let stats = ev.stats;
        let usage = stats.as_ref().map(stream_usage);
        let models_json = stats
            .as_ref()
            .and_then(|s| s.models)
            .map(|raw| raw.get().to_owned());
        let duration_ms = stats.as_ref().and_then(|s| s.duration_ms);
        let report = RunReport {
            success,
            error_type,
            error_message,
            usage,
            models: Vec::new(),
            models_json,
            cost_usd: None,
            duration_ms,
        };
        self.close_run(report, None, out);
    }

    /// Emits the end of a run (usage, error, `Completed`) and keeps the report for `finish`.
    pub(crate) fn close_run(
        &mut self,
        mut report: RunReport,
        result_text: Option<String>,
        out: &mut Vec<AgentEvent>,
    ) {
        if let (Some(usage), false) = (report.usage, self.config.pricing.models.is_empty()) {
            let models = report.resolve_models();
            report.cost_usd = cost::estimate(
                &self.config.pricing,
                self.config.requested_model.as_deref(),
                models,
                &usage,
            );
        }
        if let Some(usage) = report.usage {
            self.emit(out, AgentEvent::UsageUpdate { usage });
        }
        if !report.success {
            let message = report
                .error_message
                .clone()
                .unwrap_or_else(|| "gemini reported an error".to_owned());
            self.emit(
                out,
                AgentEvent::Error {
                    message,
                    code: report.error_type.clone(),
                },
            );
        }
        let status = if report.success {
            ExecutionStatus::Success
        } else {
            ExecutionStatus::Error
        };
        self.emit(
            out,
            AgentEvent::Completed {
                status,
                stop_reason: report.error_type.clone(),
                result_text: result_text.map(SharedText::from),
                usage: report.usage,
                cost_usd: report.cost_usd,
                cost_source: report.cost_usd.map(|_| CostSource::Estimated),
                num_turns: None,
                duration_ms: report.duration_ms,
            },
        );
        self.report = Some(report);
    }

    /// A line that looked like JSON but did not read as an event. `Ok` only for valid JSON.
    fn recover(
        &mut self,
        line_no: u64,
        line: &str,
        json: &str,
        err: &serde_json::Error,
        out: &mut Vec<AgentEvent>,
    ) -> Result<LineShape, ForgeError> {
        let json = json.trim_ascii_end();
        if serde_json::from_str::<serde::de::IgnoredAny>(json).is_err() {
            self.emit(
                out,
                AgentEvent::Unparsed {
                    raw: line.to_owned(),
                },
            );
            return Err(ForgeError::parsing(line_no, line, err));
        }
        // Valid JSON of another shape: keep it whole. An event kind we know with fields of
        // unexpected types is format drift worth reporting; anything else is just unknown.
        let kind = serde_json::from_str::<KindOnly<'_>>(json)
            .ok()
            .and_then(|k| k.kind.map(|k| k.into_owned()));
        let known = kind.as_deref().is_some_and(is_known_kind);
        let label = kind.unwrap_or_else(|| {
            if json.starts_with('[') {
                "array"
            } else {
                "untyped"
            }
            .to_owned()
        });
        self.unknown(out, &label, json);
        if known {
            return Err(ForgeError::parsing(
                line_no,
                line,
                format!("unexpected shape of a {label:?} event: {err}"),
            ));
        }
        Ok(LineShape::Json)
    }
}

fn is_known_kind(kind: &str) -> bool {
    matches!(
        kind,
        "init" | "message" | "tool_use" | "tool_result" | "error" | "result"
    )
}

fn stream_usage(stats: &StreamStats<'_>) -> Usage {
    Usage {
        input_tokens: stats.input_tokens,
        output_tokens: stats.output_tokens,
        cache_read_tokens: stats.cached,
        ..Usage::default()
    }
}

impl Decoder for GeminiDecoder {
    fn decode_line(
        &mut self,
        line_no: u64,
        line: &str,
        out: &mut Vec<AgentEvent>,
    ) -> Result<LineShape, ForgeError> {
        // JSON whitespace is ASCII; `trim_ascii_start` is cheaper than the Unicode-aware
        // `trim`. Only the start: the parser skips trailing whitespace itself, and reading
        // the last byte first would fetch a long line's far end out of order. Paths that keep
        // the text trim the end themselves (`RawJson::from_parsed`, `recover`). Every `Ok`
        // past the text check follows a serde read of the whole line.
        let trimmed = line.trim_ascii_start();
        if trimmed.is_empty() {
            return Ok(LineShape::Blank);
        }
        if !looks_like_json(trimmed) {
            self.emit(
                out,
                AgentEvent::Unparsed {
                    raw: line.to_owned(),
                },
            );
            return Ok(LineShape::classify(line));
        }
        let kind = match serde_json::from_str::<KindOnly<'_>>(trimmed) {
            Ok(k) => k.kind,
            Err(err) => return self.recover(line_no, line, trimmed, &err, out),
        };
        match kind {
            Some(kind) => match self.read_event(&kind, trimmed, out) {
                Ok(_) => Ok(LineShape::Json),
                Err(err) => self.recover(line_no, line, trimmed, &err, out),
            },
            None => {
                self.unknown(out, "untyped", trimmed);
                Ok(LineShape::Json)
            }
        }
    }

    /// The single object of `-o json`.
    fn decode_single_document(
        &mut self,
        text: &str,
        out: &mut Vec<AgentEvent>,
    ) -> Option<Vec<ForgeError>> {
        crate::json_output::decode_json_document(self, text, out).then(Vec::new)
    }

    /// Gemini prints its retries on stderr only (`retries.rs`).
    fn decode_stderr_line(&mut self, line: &str, out: &mut Vec<AgentEvent>) {
        if let Some(event) = self.stderr.push(line) {
            self.emit(out, event);
        }
    }

    fn finish(&mut self, exit: Option<&ProcessExit>) -> ResultPieces {
        crate::result::finish(self, exit)
    }
}
