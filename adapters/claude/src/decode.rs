//! The stateful stream-json decoder: one borrowed parse per line, dispatch on `type`,
//! canonical events out, facts for the result kept on the side.

use std::sync::Arc;

use forge_domain::{
    AgentEvent, EventAccumulator, ExecutionRequest, ExecutionStatus, FileChangeKind, ForgeError,
    PricingTable, RawJson, SessionId, SharedText, ToolKind, ToolNames,
};
use forge_ports::{Decoder, LineShape, ProcessExit, ResultPieces};
use serde_json::value::RawValue;

use crate::result::{self, ResultReport};
use crate::run_cost::{CostFacts, run_cost};
use crate::tools;
use crate::wire::lenient::Str;
use crate::wire::{
    AssistantLine, Block, Content, KindOnly, MessageField, ResultLine, StreamLine, SystemLine,
    TypeOnly, UserLine, WireUsage, WriteTarget, leading_type,
};

/// What the decoder remembers about a started tool call until its result arrives. Its id,
/// kind and name are in the accumulator's call list already: kept by index, not copied.
#[derive(Debug)]
struct PendingCall {
    /// Index into `acc.tool_calls`.
    at: usize,
    /// The file a writing tool targets, workspace-relative where possible.
    path: Option<String>,
}

/// Decodes one run of `claude -p --output-format stream-json --verbose` (and the
/// `--output-format json` document forms, see [`Decoder::decode_document`]).
#[derive(Debug, Default)]
pub struct ClaudeDecoder {
    pub(crate) acc: EventAccumulator,
    /// The request's workdir, used to shorten paths until `system/init` names the cwd.
    workdir: Option<String>,
    cwd: Option<String>,
    pub(crate) resumed: bool,
    pub(crate) pricing: PricingTable,
    /// Started calls without a result yet: a handful at most (parallel tool use), so a Vec.
    pending: Vec<PendingCall>,
    /// Text / thinking deltas arrived (partial messages on) since the last assistant line:
    /// that line repeats the same text whole, so it must not be counted twice.
    streamed_text: bool,
    streamed_thinking: bool,
    pub(crate) report: Option<ResultReport>,
    /// The session id a `result` carried (the only one in `--output-format json`).
    pub(crate) result_session: Option<SessionId>,
    /// The error category of the last synthetic (API error) assistant message.
    pub(crate) api_error: Option<String>,
    /// Tools the CLI refused to run (`system/permission_denied`).
    pub(crate) denied_tools: Vec<String>,
    /// Tool names, each allocated once per run.
    names: ToolNames,
    /// A resumed session's running totals (`modelUsage`, `total_cost_usd`): kept apart
    /// from the run's own figures.
    pub(crate) session_usage: Option<forge_domain::Usage>,
    pub(crate) session_cost_usd: Option<f64>,
}

impl ClaudeDecoder {
    pub fn new(request: &ExecutionRequest, pricing: PricingTable) -> Self {
        Self {
            workdir: Some(request.workdir.to_string_lossy().into_owned()),
            resumed: request.resume_session_id.is_some(),
            pricing,
            // The result reads only the last text block (see `result::finish`).
            acc: EventAccumulator::last_text_only(),
            ..Self::default()
        }
    }

    fn emit(&mut self, event: AgentEvent, out: &mut Vec<AgentEvent>) {
        self.acc.observe(&event);
        out.push(event);
    }

    fn unknown(&mut self, kind: String, json: &str, out: &mut Vec<AgentEvent>) {
        let raw = RawJson::from_parsed(json);
        self.emit(AgentEvent::Unknown { kind, raw }, out);
    }

    /// Decodes one JSON value (a line, or an element of a JSON array document).
    fn decode_value(
        &mut self,
        line_no: u64,
        json: &str,
        out: &mut Vec<AgentEvent>,
    ) -> Result<(), ForgeError> {
        if !json.starts_with('{') {
            // A scalar or nested array where an event object belongs.
            self.emit(
                AgentEvent::Unparsed {
                    raw: json.to_owned(),
                },
                out,
            );
            return Ok(());
        }
        let read = match leading_type(json) {
            Some(kind) => self.read_kind(kind, json, out),
            // `result` prints its `type` late; any other kind without the prefix is re-read.
            None => match serde_json::from_str::<ResultLine<'_>>(json) {
                Ok(line) => match line.kind.as_deref() {
                    Some("result") => {
                        self.result(line, out);
                        Ok(())
                    }
                    Some(kind) => {
                        let kind = kind.to_owned();
                        self.read_kind(&kind, json, out)
                    }
                    None => {
                        self.unknown("untyped".to_owned(), json, out);
                        Ok(())
                    }
                },
                Err(err) => Err(err),
            },
        };
        read.map_err(|err| self.unreadable(line_no, json, &err, out))
    }

    /// Reads a line of a known kind into its own struct and handles it. `Err` only when the
    /// line does not parse (nothing was emitted then).
    fn read_kind(
        &mut self,
        kind: &str,
        json: &str,
        out: &mut Vec<AgentEvent>,
    ) -> Result<(), serde_json::Error> {
        match kind {
            "system" => self.system(serde_json::from_str(json)?, json, out),
            "assistant" => self.assistant(serde_json::from_str(json)?, json, out),
            "user" => self.user(serde_json::from_str(json)?, json, out),
            "stream_event" => self.stream_event(serde_json::from_str(json)?, out),
            "result" => self.result(serde_json::from_str(json)?, out),
            other => {
                // Syntax only (and a repeated `type`): the line is kept raw.
                serde_json::from_str::<TypeOnly>(json)?;
                self.unknown(other.to_owned(), json, out);
            }
        }
        Ok(())
    }

    /// A line that starts like JSON but could not be read: invalid JSON becomes `Unparsed`,
    /// valid JSON of an unexpected shape is kept whole as `Unknown`. Both are reported.
    fn unreadable(
        &mut self,
        line_no: u64,
        json: &str,
        err: &serde_json::Error,
        out: &mut Vec<AgentEvent>,
    ) -> ForgeError {
        let json = json.trim_ascii_end();
        if serde_json::from_str::<serde::de::IgnoredAny>(json).is_ok() {
            let kind = serde_json::from_str::<KindOnly<'_>>(json)
                .ok()
                .and_then(|k| k.kind.owned())
                .unwrap_or_else(|| "untyped".to_owned());
            self.unknown(kind, json, out);
            ForgeError::parsing(line_no, json, format_args!("unexpected shape: {err}"))
        } else {
            self.emit(
                AgentEvent::Unparsed {
                    raw: json.to_owned(),
                },
                out,
            );
            ForgeError::parsing(line_no, json, err)
        }
    }

    fn system(&mut self, mut line: SystemLine<'_>, json: &str, out: &mut Vec<AgentEvent>) {
        match line.subtype.as_deref() {
            Some("init") => {
                let Some(session_id) = line
                    .session_id
                    .as_deref()
                    .and_then(|s| SessionId::new(s).ok())
                else {
                    return self.unknown("system/init".to_owned(), json, out);
                };
                self.cwd = line.cwd.owned();
                let event = AgentEvent::SessionStarted {
                    session_id,
                    model: line.model.take(),
                    cwd: line.cwd.take(),
                    cli_version: line.claude_code_version.take(),
                    tools: {
                        let mut tools = Vec::with_capacity(line.tools.0.len());
                        tools.extend(line.tools.strings().map(str::to_owned));
                        tools
                    },
                };
                self.emit(event, out);
            }
            Some("api_retry") => {
                let status = line.error_status.get().and_then(|s| u16::try_from(s).ok());
                let category = line.error.take();
                let event = AgentEvent::Retry {
                    attempt: line.attempt.get_u32(),
                    max_attempts: line.max_retries.get_u32(),
                    delay_ms: line.retry_delay_ms.get(),
                    http_status: status,
                    rate_limited: status == Some(429) || category.as_deref() == Some("rate_limit"),
                    message: retry_message(category.as_deref(), status),
                };
                self.emit(event, out);
            }
            Some("permission_denied") => {
                let tool = line.tool_name.take().unwrap_or_else(|| "a tool".to_owned());
                let why = match line.message {
                    MessageField::Text(text) => Some(text.into_owned()),
                    _ => line.decision_reason.take(),
                };
                let message = match why {
                    Some(why) => format!("permission denied for {tool}: {why}"),
                    None => format!("permission denied for {tool}"),
                };
                self.denied_tools.push(tool);
                self.emit(AgentEvent::Warning { message }, out);
            }
            Some(other) => {
                let kind = format!("system/{other}");
                self.unknown(kind, json, out);
            }
            None => self.unknown("system".to_owned(), json, out),
        }
    }

    fn assistant(&mut self, mut line: AssistantLine<'_>, json: &str, out: &mut Vec<AgentEvent>) {
        let MessageField::Object(message) = line.message else {
            return self.unknown("assistant".to_owned(), json, out);
        };
        let streamed_text = std::mem::take(&mut self.streamed_text);
        let streamed_thinking = std::mem::take(&mut self.streamed_thinking);
        // API failures arrive as a synthetic assistant message whose text is the error.
        if message.model.is("<synthetic>") || line.error.0.is_some() {
            let code = line.error.take().or_else(|| line.api_error.take());
            let text = message.content.joined_text().unwrap_or_default();
            let message = if text.is_empty() {
                "api error".to_owned()
            } else {
                text
            };
            self.api_error.clone_from(&code);
            return self.emit(AgentEvent::Error { message, code }, out);
        }
        match message.content {
            Content::Blocks(blocks) => {
                for block in blocks {
                    self.assistant_block(block, streamed_text, streamed_thinking, out);
                }
            }
            Content::Text(text) if !streamed_text => {
                let text = text.into_owned();
                self.emit(
                    AgentEvent::Text {
                        text: text.into(),
                        delta: false,
                    },
                    out,
                );
            }
            Content::Text(_) | Content::Absent => {}
        }
    }

    fn assistant_block(
        &mut self,
        mut block: Block<'_>,
        streamed_text: bool,
        streamed_thinking: bool,
        out: &mut Vec<AgentEvent>,
    ) {
        match block.kind.as_deref() {
            Some("text") if !streamed_text => {
                if let Some(text) = block.text.take() {
                    self.emit(
                        AgentEvent::Text {
                            text: text.into(),
                            delta: false,
                        },
                        out,
                    );
                }
            }
            Some("thinking") if !streamed_thinking => {
                if let Some(text) = block.thinking.take() {
                    self.emit(AgentEvent::Thinking { text, delta: false }, out);
                }
            }
            Some("tool_use") => self.tool_started(block, out),
            _ => {}
        }
    }

    fn tool_started(&mut self, block: Block<'_>, out: &mut Vec<AgentEvent>) {
        let call_id: Arc<str> = Arc::from(block.id.as_deref().unwrap_or_default());
        let name = self.names.get(block.name.as_deref().unwrap_or_default());
        let kind = tools::kind_of(&name);
        let raw_input = block.input;
        let path = tools::written_path_field(&name).and_then(|field| {
            let target = serde_json::from_str::<WriteTarget<'_>>(raw_input?).ok()?;
            target.field(field).map(|p| self.relative(p))
        });
        let input = raw_input.map_or_else(RawJson::null, RawJson::from_parsed);
        // A repeated id replaces the older pending call, as the CLI would pair it.
        let repeated = self.pending_index(&call_id);
        let event = AgentEvent::ToolCallStarted {
            call_id,
            kind,
            name,
            input,
        };
        self.emit(event, out);
        // The accumulator has just appended this call.
        let call = PendingCall {
            at: self.acc.tool_calls.len().saturating_sub(1),
            path,
        };
        match repeated {
            Some(i) => self.pending[i] = call,
            None => self.pending.push(call),
        }
    }

    /// Where the pending call with this id is in `pending`.
    fn pending_index(&self, call_id: &str) -> Option<usize> {
        let calls = &self.acc.tool_calls;
        self.pending
            .iter()
            .position(|p| calls.get(p.at).is_some_and(|c| c.id.as_ref() == call_id))
    }

    fn user(&mut self, line: UserLine<'_>, json: &str, out: &mut Vec<AgentEvent>) {
        let MessageField::Object(message) = line.message else {
            return self.unknown("user".to_owned(), json, out);
        };
        // A plain-text user message is an echoed prompt: nothing to report.
        let Content::Blocks(blocks) = message.content else {
            return;
        };
        let results = blocks.iter().filter(|b| b.kind.is("tool_result")).count();
        // `tool_use_result` describes the line's tool result; trust it only when there is one.
        let write_kind = match line.tool_use_result.0.as_ref().map(|r| &r.kind) {
            Some(kind) if results == 1 => write_change(kind),
            _ => FileChangeKind::Unknown,
        };
        for block in blocks {
            if block.kind.is("tool_result") {
                self.tool_finished(block, write_kind, out);
            }
        }
    }

    fn tool_finished(
        &mut self,
        block: Block<'_>,
        write_kind: FileChangeKind,
        out: &mut Vec<AgentEvent>,
    ) {
        let id = block.tool_use_id.as_deref().unwrap_or_default();
        let pending = self.pending_index(id).map(|i| self.pending.swap_remove(i));
        let started = pending.as_ref().and_then(|p| self.acc.tool_calls.get(p.at));
        // The started call's id and name are shared with this event, not copied.
        let (call_id, kind, name) = match started {
            Some(c) => (Arc::clone(&c.id), c.kind, Arc::clone(&c.name)),
            None => (Arc::from(id), ToolKind::Other, self.names.get("")),
        };
        let output = block.content.shared_text();
        let is_error = block.is_error.is_true();
        let exit_code = match (kind, is_error) {
            (ToolKind::Shell, true) => output.as_deref().and_then(shell_exit_code),
            _ => None,
        };
        let change = match name.as_ref() {
            "Write" => write_kind,
            _ => FileChangeKind::Modified,
        };
        self.emit(
            AgentEvent::ToolCallFinished {
                call_id,
                kind,
                name,
                output,
                is_error,
                exit_code,
            },
            out,
        );
        // Only a write that succeeded changed a file.
        if let (Some(path), false) = (pending.and_then(|p| p.path), is_error) {
            self.emit(AgentEvent::FileChanged { path, change }, out);
        }
    }

    fn stream_event(&mut self, line: StreamLine<'_>, out: &mut Vec<AgentEvent>) {
        let Some(event) = line.event.0 else { return };
        if !event.kind.is("content_block_delta") {
            return;
        }
        let Some(mut delta) = event.delta.0 else {
            return;
        };
        match delta.kind.as_deref() {
            Some("text_delta") => {
                if let Some(text) = delta.text.take() {
                    self.streamed_text = true;
                    self.emit(
                        AgentEvent::Text {
                            text: text.into(),
                            delta: true,
                        },
                        out,
                    );
                }
            }
            Some("thinking_delta") => {
                if let Some(text) = delta.thinking.take() {
                    self.streamed_thinking = true;
                    self.emit(AgentEvent::Thinking { text, delta: true }, out);
                }
            }
            _ => {}
        }
    }

    fn result(&mut self, mut line: ResultLine<'_>, out: &mut Vec<AgentEvent>) {
        let subtype = line.subtype.take().unwrap_or_default();
        let error_subtype = subtype.starts_with("error");
        let is_error = line.is_error.is_true() || error_subtype;
        let terminal_reason = line.terminal_reason.take();
        let stop_reason = match (is_error, error_subtype) {
            (true, true) => Some(subtype.clone()),
            // An API error ends with `subtype: success, is_error: true`: say why instead.
            (true, false) => terminal_reason.clone().or_else(|| non_empty(&subtype)),
            (false, _) => line.stop_reason.take().or_else(|| terminal_reason.clone()),
        };
        let result_text = line.result.take().map(SharedText::from);
        let usage = line.usage.0.map(WireUsage::to_usage);
        let facts = CostFacts {
            resumed: self.resumed,
            run_usage: usage.as_ref(),
            total_cost_usd: line.total_cost_usd.0,
            session: line.model_usage,
            since_last_result: line.model_usage_since_last_result,
        };
        let cost = run_cost(&facts);
        if self.resumed {
            self.session_cost_usd = line.total_cost_usd.0.or(line.model_usage.cost_usd);
            self.session_usage = (line.model_usage.models > 0).then_some(line.model_usage.usage);
        }
        if let Some(session) = line
            .session_id
            .as_deref()
            .and_then(|s| SessionId::new(s).ok())
        {
            self.result_session = Some(session);
        }
        self.report = Some(ResultReport {
            subtype,
            is_error,
            text: result_text.clone(),
            errors: line.errors.strings().map(str::to_owned).collect(),
            terminal_reason,
            api_error_status: line.api_error_status.get(),
            api_error: line.api_error.take(),
            denied_tools: line
                .permission_denials
                .0
                .iter()
                .filter_map(|d| d.0.as_ref().and_then(|d| d.tool_name.owned()))
                .collect(),
        });
        let event = AgentEvent::Completed {
            status: if is_error {
                ExecutionStatus::Error
            } else {
                ExecutionStatus::Success
            },
            stop_reason,
            result_text,
            usage,
            cost_usd: cost.map(|(c, _)| c),
            cost_source: cost.map(|(_, source)| source),
            num_turns: line.num_turns.get_u32(),
            duration_ms: line.duration_ms.get(),
        };
        self.emit(event, out);
    }

    /// Where the session lives (the CLI's cwd, else the request's workdir): a resume must
    /// run there.
    pub(crate) fn workdir_for_resume(&self) -> Option<String> {
        self.cwd.clone().or_else(|| self.workdir.clone())
    }

    /// `path` relative to the session's cwd when it lies inside it.
    fn relative(&self, path: &str) -> String {
        let base = self.cwd.as_deref().or(self.workdir.as_deref());
        base.map(|b| b.trim_end_matches('/'))
            .filter(|b| !b.is_empty())
            .and_then(|b| path.strip_prefix(b))
            .and_then(|rest| rest.strip_prefix('/'))
            .filter(|rest| !rest.is_empty())
            .unwrap_or(path)
            .to_owned()
    }
}

impl Decoder for ClaudeDecoder {
    fn decode_line(
        &mut self,
        line_no: u64,
        line: &str,
        out: &mut Vec<AgentEvent>,
    ) -> Result<LineShape, ForgeError> {
        // Only the start is trimmed here: the parser skips trailing whitespace itself, and
        // reading the line's last byte first would fetch its far end out of order (a cache
        // miss per long line). Paths that keep the text trim the end themselves. Every `Ok`
        // of the two JSON arms follows a parse of the whole line.
        let text = line.trim_ascii_start();
        match text.as_bytes().first() {
            None => Ok(LineShape::Blank),
            Some(b'{') => self
                .decode_value(line_no, text, out)
                .map(|()| LineShape::Json),
            Some(b'[') if looks_like_json_array(text) => self
                .decode_array(line_no, text.trim_ascii_end(), out)
                .map(|()| LineShape::Json),
            Some(_) => {
                self.emit(
                    AgentEvent::Unparsed {
                        raw: line.to_owned(),
                    },
                    out,
                );
                Ok(LineShape::classify(line))
            }
        }
    }

    /// Both `--output-format json` shapes: one result object, or (with `--verbose`) one array
    /// of every message, pretty-printed or not. Stream-json (JSONL) is not one document: it
    /// fails to parse whole at the end of its first line, cheaply.
    fn decode_single_document(
        &mut self,
        text: &str,
        out: &mut Vec<AgentEvent>,
    ) -> Option<Vec<ForgeError>> {
        let whole = text.trim_ascii();
        if !(whole.starts_with('[') || whole.starts_with('{')) {
            return None;
        }
        let raw = serde_json::from_str::<&RawValue>(whole).ok()?;
        let res = if whole.starts_with('[') {
            self.decode_array(1, raw.get(), out)
        } else {
            self.decode_value(1, raw.get(), out)
        };
        Some(res.err().into_iter().collect())
    }

    fn finish(&mut self, exit: Option<&ProcessExit>) -> ResultPieces {
        result::finish(self, exit)
    }
}

impl ClaudeDecoder {
    /// A JSON array of messages (`--output-format json --verbose`): each element is decoded
    /// as a line of its own.
    fn decode_array(
        &mut self,
        line_no: u64,
        json: &str,
        out: &mut Vec<AgentEvent>,
    ) -> Result<(), ForgeError> {
        let items: Vec<&RawValue> = match serde_json::from_str(json) {
            Ok(items) => items,
            Err(err) => return Err(self.unreadable(line_no, json, &err, out)),
        };
        let mut first_err = None;
        for item in items {
            if let Err(e) = self.decode_value(line_no, item.get(), out) {
                first_err.get_or_insert(e);
            }
        }
        first_err.map_or(Ok(()), Err)
    }
}

/// `[{…` or `[1, …` is a JSON array; `[SandboxDebug] …` (printed by some builds) is not.
fn looks_like_json_array(text: &str) -> bool {
    let rest = text[1..].trim_start();
    rest.is_empty()
        || rest.starts_with(['{', '[', ']', '"', '-'])
        || rest.starts_with(|c: char| c.is_ascii_digit())
}

/// `Write` reports whether it created or replaced its file.
fn write_change(kind: &Str<'_>) -> FileChangeKind {
    match kind.as_deref() {
        Some("create") => FileChangeKind::Added,
        Some("update") => FileChangeKind::Modified,
        _ => FileChangeKind::Unknown,
    }
}

/// The Bash tool prefixes a failed command's output with `Exit code N`.
fn shell_exit_code(output: &str) -> Option<i32> {
    let rest = output.strip_prefix("Exit code ")?;
    let digits = rest
        .split(|c: char| !c.is_ascii_digit() && c != '-')
        .next()?;
    digits.parse().ok()
}

fn retry_message(category: Option<&str>, status: Option<u16>) -> String {
    let cause = match (category, status) {
        (Some(c), Some(s)) => format!("{c}, http {s}"),
        (Some(c), None) => c.to_owned(),
        (None, Some(s)) => format!("http {s}"),
        (None, None) => "unknown error".to_owned(),
    };
    format!("model request failed ({cause}); the cli will retry")
}

fn non_empty(s: &str) -> Option<String> {
    (!s.is_empty()).then(|| s.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_exit_codes_come_from_the_output_prefix() {
        assert_eq!(shell_exit_code("Exit code 3\nboom"), Some(3));
        assert_eq!(shell_exit_code("Exit code 127"), Some(127));
        assert_eq!(shell_exit_code("boom"), None);
        assert_eq!(shell_exit_code("Exit code x"), None);
    }

    #[test]
    fn paths_inside_the_cwd_become_relative() {
        let mut d = ClaudeDecoder {
            cwd: Some("/w/".into()),
            ..ClaudeDecoder::default()
        };
        assert_eq!(d.relative("/w/a/b.txt"), "a/b.txt");
        assert_eq!(d.relative("/wx/a"), "/wx/a");
        assert_eq!(d.relative("/w"), "/w");
        d.cwd = None;
        assert_eq!(d.relative("/w/a"), "/w/a");
    }
}
