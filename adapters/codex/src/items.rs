//! `item.started|updated|completed` → canonical events.
//!
//! Messages and reasoning arrive whole on `item.completed` (Codex's JSON mode never streams
//! tokens). Tool-like items pair by item id: `item.started` opens a call, `item.completed`
//! closes it, and a completion with no start (older releases report `file_change` only when
//! done) yields both events.

use std::borrow::Cow;
use std::sync::Arc;

use forge_domain::{AgentEvent, FileChangeKind, RawJson};
use serde::Serialize;
use serde_json::value::RawValue;

use crate::decode::{CodexDecoder, unknown, warning};
use crate::tools::tool_kind;
use crate::wire::{Change, Item, McpResult, Text};

/// What a tool-like item says about its call, whichever struct it was read into.
pub(crate) struct ToolItem<'a> {
    pub id: Option<Text<'a>>,
    /// `in_progress | completed | failed | declined`.
    pub status: Option<Text<'a>>,
    pub exit_code: Option<i64>,
    /// `command_execution.aggregated_output`.
    pub output: Option<Text<'a>>,
    /// `mcp_tool_call.error.message`.
    pub error: Option<Text<'a>>,
    /// `mcp_tool_call.result`.
    pub result: Option<&'a RawValue>,
    /// `file_change.changes`, as JSON text.
    pub changes: Option<&'a str>,
}

impl CodexDecoder {
    pub(crate) fn on_item(
        &mut self,
        phase: &str,
        mut item: Item<'_>,
        raw: &str,
        out: &mut Vec<AgentEvent>,
    ) {
        let completed = phase == "item.completed";
        let kind_text = item.kind.take();
        let kind = kind_text.as_deref().unwrap_or("untyped");
        match kind {
            "agent_message" | "reasoning" => self.on_message_item(kind, completed, item.text, out),
            // Non-fatal notices: config warnings, deprecations, model fallback metadata.
            "error" => {
                if let (true, Some(message)) = (completed, item.message) {
                    if self.model_from_run.is_none() {
                        self.model_from_run = model_in_metadata_notice(&message);
                    }
                    self.emit(warning(message.into_owned()), out);
                }
            }
            _ if tool_kind(kind).is_some() => {
                let input = InputFields {
                    command: item.command,
                    changes: item.changes,
                    server: item.server,
                    tool: item.tool,
                    arguments: item.arguments,
                    query: item.query,
                    action: item.action,
                };
                let tool = ToolItem {
                    id: item.id,
                    status: item.status,
                    exit_code: item.exit_code,
                    output: item.aggregated_output,
                    error: item.error.and_then(|e| e.message),
                    result: item.result,
                    changes: item.changes.map(RawValue::get),
                };
                self.on_tool_item(kind, completed, tool, || tool_input(kind, &input), out);
            }
            other => self.emit(unknown(&format!("item/{other}"), raw), out),
        }
    }

    /// `agent_message` and `reasoning`: whole text on `item.completed`.
    pub(crate) fn on_message_item(
        &mut self,
        kind: &str,
        completed: bool,
        text: Option<Text<'_>>,
        out: &mut Vec<AgentEvent>,
    ) {
        let Some(text) = text.filter(|_| completed) else {
            return;
        };
        let ev = match kind {
            "agent_message" => AgentEvent::Text {
                text: text.into_owned().into(),
                delta: false,
            },
            _ if text.is_empty() => return,
            _ => AgentEvent::Thinking {
                text: text.into_owned(),
                delta: false,
            },
        };
        self.emit(ev, out);
    }

    /// A tool-like item: `input` builds the call's input when a start is emitted. The call's
    /// id and name are allocated once and shared by its events and the accumulator.
    pub(crate) fn on_tool_item(
        &mut self,
        kind: &str,
        completed: bool,
        mut item: ToolItem<'_>,
        input: impl FnOnce() -> RawJson,
        out: &mut Vec<AgentEvent>,
    ) {
        let tool = tool_kind(kind).unwrap_or(forge_domain::ToolKind::Other);
        let id_text = item.id.take();
        let id: Cow<'_, str> = match &id_text {
            Some(id) => Cow::Borrowed(id),
            None => Cow::Owned(format!("{kind}_{}", self.acc.tool_calls.len())),
        };
        let calls = &self.acc.tool_calls;
        let open = self
            .open_calls
            .iter()
            .position(|&at| calls.get(at).is_some_and(|c| c.id.as_ref() == id.as_ref()));
        // An open call's id is in the accumulator already: shared, not copied again.
        let open_id = open
            .and_then(|i| self.open_calls.get(i))
            .and_then(|&at| calls.get(at))
            .map(|c| Arc::clone(&c.id));
        let call_id = open_id.unwrap_or_else(|| Arc::from(id.as_ref()));
        let name = self.names.get(kind);
        if open.is_none() && !completed {
            // A start (the usual case): the id and name move into the event.
            let ev = AgentEvent::ToolCallStarted {
                call_id,
                kind: tool,
                name,
                input: input(),
            };
            self.emit(ev, out);
            // The accumulator has just appended this call: remember where, not the id.
            self.open_calls.push(self.acc.tool_calls.len() - 1);
            return;
        }
        if open.is_none() {
            // A completion without a start: both events, sharing the id and name.
            let ev = AgentEvent::ToolCallStarted {
                call_id: Arc::clone(&call_id),
                kind: tool,
                name: Arc::clone(&name),
                input: input(),
            };
            self.emit(ev, out);
        }
        if !completed {
            return;
        }
        if let Some(at) = open {
            self.open_calls.swap_remove(at);
        }
        let status = item.status.as_deref().unwrap_or("completed");
        let failed = matches!(status, "failed" | "declined");
        let exit_code = item.exit_code.and_then(|c| i32::try_from(c).ok());
        let (output, is_error) = match kind {
            "command_execution" => (
                item.output.take().map(|o| Arc::from(o.as_ref())),
                failed || exit_code.is_some_and(|c| c != 0),
            ),
            "mcp_tool_call" => match item.error.as_deref() {
                Some(message) => (Some(Arc::from(message)), true),
                None => (item.result.map(|r| Arc::from(mcp_output(r))), failed),
            },
            _ => (None, failed),
        };
        let ev = AgentEvent::ToolCallFinished {
            call_id,
            kind: tool,
            name,
            output,
            is_error,
            exit_code,
        };
        self.emit(ev, out);
        if kind == "file_change" && !failed {
            if let Some(changes) = item.changes {
                self.emit_file_changes(changes, out);
            }
        }
    }

    fn emit_file_changes(&mut self, changes: &str, out: &mut Vec<AgentEvent>) {
        // Events go straight to `out` and are observed after: no list in between.
        let start = out.len();
        let workdir = self.workdir.as_str();
        let changed = |path: &str, kind: Option<&str>| AgentEvent::FileChanged {
            path: relative_to(workdir, path),
            change: change_kind(kind),
        };
        match serde_json::from_str::<Vec<Change<'_>>>(changes) {
            Ok(changes) => out.extend(
                changes
                    .iter()
                    .map(|c| changed(&c.path, c.kind.map(RawValue::get))),
            ),
            Err(_) => out.push(warning("codex file_change with unreadable changes".into())),
        }
        for ev in out.get(start..).unwrap_or_default() {
            self.acc.observe(ev);
        }
    }
}

/// The parts of a tool-like item that make up its call's input.
#[derive(Default)]
pub(crate) struct InputFields<'a> {
    pub command: Option<Text<'a>>,
    pub changes: Option<&'a RawValue>,
    pub server: Option<Text<'a>>,
    pub tool: Option<Text<'a>>,
    pub arguments: Option<&'a RawValue>,
    pub query: Option<Text<'a>>,
    pub action: Option<&'a RawValue>,
}

/// The tool call's input: what the item says the agent asked for, written as JSON straight
/// from the borrowed fields (nested parts verbatim). Keys in sorted order, as before.
pub(crate) fn tool_input(kind: &str, item: &InputFields<'_>) -> RawJson {
    #[derive(Serialize)]
    struct Command<'a> {
        command: Option<&'a str>,
    }
    #[derive(Serialize)]
    struct FileChange<'a> {
        changes: Option<&'a RawValue>,
    }
    #[derive(Serialize)]
    struct McpCall<'a> {
        arguments: Option<&'a RawValue>,
        server: Option<&'a str>,
        tool: Option<&'a str>,
    }
    #[derive(Serialize)]
    struct WebSearch<'a> {
        #[serde(skip_serializing_if = "Option::is_none")]
        action: Option<&'a RawValue>,
        query: Option<&'a str>,
    }
    match kind {
        "command_execution" => RawJson::from_serialize(&Command {
            command: item.command.as_deref(),
        }),
        "file_change" => RawJson::from_serialize(&FileChange {
            changes: item.changes,
        }),
        "mcp_tool_call" => RawJson::from_serialize(&McpCall {
            arguments: item.arguments,
            server: item.server.as_deref(),
            tool: item.tool.as_deref(),
        }),
        "web_search" => RawJson::from_serialize(&WebSearch {
            action: item.action,
            query: item.query.as_deref(),
        }),
        _ => RawJson::from_parsed("{}"),
    }
}

/// An MCP result as text: its text contents joined, else the result JSON itself.
fn mcp_output(result: &RawValue) -> String {
    let texts: Vec<String> = serde_json::from_str::<McpResult<'_>>(result.get())
        .map(|r| {
            r.content
                .into_iter()
                .filter(|c| c.kind.as_deref().is_none_or(|k| k == "text"))
                .filter_map(|c| c.text.map(|t| t.into_owned()))
                .collect()
        })
        .unwrap_or_default();
    if texts.is_empty() {
        result.get().to_owned()
    } else {
        texts.join("\n")
    }
}

/// A change's `kind` as JSON text.
fn change_kind(kind: Option<&str>) -> FileChangeKind {
    match kind {
        Some("\"add\"") => FileChangeKind::Added,
        Some("\"update\"") => FileChangeKind::Modified,
        Some("\"delete\"") => FileChangeKind::Deleted,
        _ => FileChangeKind::Unknown,
    }
}

/// `path` relative to `workdir` when it lies inside it; unchanged otherwise.
pub(crate) fn relative_to(workdir: &str, path: &str) -> String {
    let base = workdir.trim_end_matches('/');
    if base.is_empty() {
        return path.to_owned();
    }
    match path
        .strip_prefix(base)
        .and_then(|rest| rest.strip_prefix('/'))
    {
        Some(rest) if !rest.is_empty() => rest.to_owned(),
        _ => path.to_owned(),
    }
}

/// `gpt-5-codex` from "Model metadata for `gpt-5-codex` not found. Defaulting to …".
fn model_in_metadata_notice(message: &str) -> Option<String> {
    let rest = message.strip_prefix("Model metadata for `")?;
    let end = rest.find('`')?;
    Some(rest[..end].to_owned()).filter(|m| !m.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_inside_the_workdir_become_relative() {
        let check = |workdir: &str, path: &str, want: &str| {
            assert_eq!(relative_to(workdir, path), want, "{workdir} {path}");
        };
        check("/w", "/w/a/b.txt", "a/b.txt");
        check("/w/", "/w/a.txt", "a.txt");
        check("/w", "/wx/a.txt", "/wx/a.txt");
        check("/w", "/w", "/w");
        check("/w", "rel.txt", "rel.txt");
        check("", "/a", "/a");
    }

    #[test]
    fn model_names_come_from_the_fallback_notice() {
        assert_eq!(
            model_in_metadata_notice("Model metadata for `gpt-fake` not found. Defaulting"),
            Some("gpt-fake".to_owned())
        );
        assert_eq!(model_in_metadata_notice("something else"), None);
    }
}
