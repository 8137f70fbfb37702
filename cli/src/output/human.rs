//! Text for people: assistant text as it arrives, a line per tool call, a spinner while the
//! agent is silent, and a footer. Live (`stream`) or summary-at-the-end (`run`).

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::Arc;

use forge_domain::{AgentEvent, ExecutionResult, RawJson, ToolCall, ToolCallStatus, ToolKind};

use super::spinner::Spinner;
use super::style::Style;
use super::{footer, tool_line};

pub struct HumanRenderer<'a> {
    out: &'a mut dyn Write,
    style: Style,
    spinner: Spinner,
    live: bool,
    at_line_start: bool,
    started: BTreeMap<Arc<str>, (ToolKind, Arc<str>, RawJson)>,
}

impl<'a> HumanRenderer<'a> {
    /// `live`: print events as they arrive (`stream`); else only the summary (`run`).
    pub fn new(out: &'a mut dyn Write, style: Style, spinner: Spinner, live: bool) -> Self {
        let mut renderer = Self {
            out,
            style,
            spinner,
            live,
            at_line_start: true,
            started: BTreeMap::new(),
        };
        renderer.spinner.show("working");
        renderer
    }

    pub fn event(&mut self, event: &AgentEvent) {
        match event {
            AgentEvent::ToolCallStarted {
                call_id,
                kind,
                name,
                input,
            } => {
                let summary = tool_line::summarize_input(name, &input.to_value());
                self.started
                    .insert(call_id.clone(), (*kind, name.clone(), input.clone()));
                // The tool's own line follows: the text before it ends here, and the
                // spinner starts on a line of its own.
                self.end_line();
                self.spin(&format!("{} {summary}", tool_line::kind_name(*kind)));
                return;
            }
            AgentEvent::Thinking { .. } => {
                self.spin("thinking");
                return;
            }
            // Asked and answered: shown in `run` too, a person may be the one to answer.
            AgentEvent::PermissionRequested { request } => {
                self.spinner.hide();
                self.end_line();
                self.line(&super::permission_line::asked(self.style, request));
                return;
            }
            AgentEvent::PermissionDecided { request } => {
                self.spinner.hide();
                self.end_line();
                if let Some(text) = super::permission_line::decided(self.style, request) {
                    self.line(&text);
                }
                self.spin("working");
                return;
            }
            _ if !self.live => return,
            _ => {}
        }
        match event {
            AgentEvent::Text { text, delta } => {
                self.spinner.hide();
                self.write(text);
                if !delta && !text.ends_with('\n') {
                    self.write("\n");
                }
            }
            AgentEvent::ToolCallFinished {
                call_id,
                kind,
                name,
                is_error,
                exit_code,
                ..
            } => {
                let (kind, name, input) =
                    self.started
                        .remove(call_id)
                        .unwrap_or((*kind, name.clone(), RawJson::null()));
                let call = ToolCall {
                    id: call_id.clone(),
                    kind,
                    name,
                    input,
                    output: None,
                    is_error: *is_error,
                    exit_code: *exit_code,
                    status: if *is_error {
                        ToolCallStatus::Failed
                    } else {
                        ToolCallStatus::Completed
                    },
                    canonical_name: None,
                    duration_ms: None,
                };
                self.line(&tool_line::render(self.style, &call));
            }
            AgentEvent::Warning { message } => {
                self.line(&format!("{} {message}", self.style.yellow("warning:")));
            }
            AgentEvent::SandboxDenied { kind, target, .. } => {
                let kind = match kind {
                    forge_domain::DenialKind::Network => "connection to",
                    forge_domain::DenialKind::Fs => "access to",
                };
                self.line(&format!(
                    "{} {kind} {target}",
                    self.style.yellow("sandbox denied:")
                ));
            }
            AgentEvent::Error { message, .. } => {
                self.line(&format!("{} {message}", self.style.red("error:")));
            }
            AgentEvent::RateLimitWait {
                wait_ms,
                resets_at_ms,
                message,
                ..
            } => {
                self.line(&format!(
                    "{} {message}; waiting {} s for the reset at {}, then resuming",
                    self.style.yellow("rate limited:"),
                    wait_ms.div_ceil(1_000),
                    crate::cmd::time::local(*resets_at_ms)
                ));
            }
            AgentEvent::Retry { message, .. } => {
                self.line(&self.style.dim(format!("retrying: {message}")));
            }
            AgentEvent::OversizeLine { size_bytes, .. } => {
                self.line(&format!(
                    "{} skipped an output line of {size_bytes} bytes",
                    self.style.yellow("warning:")
                ));
            }
            _ => {}
        }
        self.spin("working");
    }

    /// Shows the spinner, only at the start of a line: drawn after text that has not ended
    /// its line, it would share that line (and clearing it would erase the text).
    fn spin(&mut self, message: &str) {
        if self.at_line_start {
            self.spinner.show(message);
        }
    }

    /// The summary (`run`: tool lines and the answer; `stream`: unfinished tools), then the
    /// footer.
    pub fn finish(&mut self, result: &ExecutionResult) {
        self.spinner.hide();
        if self.live {
            for call in result
                .tool_calls
                .iter()
                .filter(|c| c.status == ToolCallStatus::Pending)
            {
                self.line(&tool_line::render(self.style, call));
            }
        } else {
            for call in &result.tool_calls {
                self.line(&tool_line::render(self.style, call));
            }
            if !result.content.is_empty() {
                self.line(result.content.trim_end());
            }
        }
        self.end_line();
        for line in footer::render(self.style, result) {
            self.line(&line);
        }
        let _ = self.out.flush();
    }

    fn line(&mut self, text: &str) {
        self.spinner.hide();
        self.end_line();
        self.write(text);
        self.write("\n");
    }

    fn end_line(&mut self) {
        if !self.at_line_start {
            self.write("\n");
        }
    }

    fn write(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        // A closed stdout (`| head`) must not stop the run: output is dropped, the run goes on.
        let _ = self.out.write_all(text.as_bytes());
        let _ = self.out.flush();
        self.at_line_start = text.ends_with('\n');
    }
}
