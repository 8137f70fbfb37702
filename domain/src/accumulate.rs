//! Folding a canonical event stream into result pieces. Shared by every decoder, so tool
//! call pairing, changed files and session facts follow one rule.

use crate::event::AgentEvent;
use crate::ids::SessionId;
use crate::raw::RawJson;
use crate::shared_text::SharedText;
use crate::tool::{ToolCall, ToolCallStatus};
use crate::usage::Usage;

/// What a run's events add up to so far.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EventAccumulator {
    pub session_id: Option<SessionId>,
    pub model: Option<String>,
    pub cli_version: Option<String>,
    /// Tool calls in start order, results paired by call id.
    pub tool_calls: Vec<ToolCall>,
    /// All assistant text (unless `last_block` holds it all): delta runs joined, complete
    /// blocks separated by `\n`. One copy per text event; the views below are offsets into
    /// it (decoders are on the hot path).
    texts: String,
    /// Where the last block (or delta run) starts in `texts`, if there is one.
    last_block_start: Option<usize>,
    /// All the text held, when it is one piece (the run's first text; in last-text-only
    /// mode, the last block): shared with its event, not copied, so a huge answer is held
    /// once. `texts` is empty meanwhile; more text moves it there first.
    last_block: Option<SharedText>,
    /// A tool result came after `last_block`: no text follows the last tool.
    tool_after_last_block: bool,
    /// Where the text after the last tool result starts in `texts`.
    after_tool_start: usize,
    pub changed_files: Vec<String>,
    pub last_usage: Option<Usage>,
    /// Set by a `Completed` event, without its `result_text` (the text is
    /// [`EventAccumulator::last_text`]; copying it again per turn is waste).
    pub completed: Option<AgentEvent>,
    in_delta_run: bool,
    /// Keep only the last block (see [`EventAccumulator::last_text_only`]).
    last_text_only: bool,
}

impl EventAccumulator {
    pub fn new() -> Self {
        Self::default()
    }

    /// An accumulator for a decoder that reads only [`EventAccumulator::last_text`]: each
    /// new block replaces the previous one in place, so a long run's text is not copied
    /// into an ever-growing buffer it never reads. `all_text` and `text_after_last_tool`
    /// then see the last block only.
    pub fn last_text_only() -> Self {
        Self {
            last_text_only: true,
            ..Self::default()
        }
    }

    pub fn observe(&mut self, event: &AgentEvent) {
        match event {
            AgentEvent::SessionStarted {
                session_id,
                model,
                cli_version,
                ..
            } => {
                if self.session_id.as_ref() != Some(session_id) {
                    self.session_id = Some(session_id.clone());
                }
                if model.is_some() {
                    self.model.clone_from(model);
                }
                if cli_version.is_some() {
                    self.cli_version.clone_from(cli_version);
                }
            }
            AgentEvent::Text { text, delta } => {
                let starts_block = !(*delta && self.in_delta_run);
                let holds_nothing = self.texts.is_empty() && self.last_block.is_none();
                if starts_block && (self.last_text_only || holds_nothing) {
                    // This text is all the accumulator holds: shared with its event.
                    self.texts.clear();
                    self.after_tool_start = 0;
                    self.last_block_start = None;
                    self.last_block = Some(text.clone());
                    self.tool_after_last_block = false;
                    self.in_delta_run = *delta;
                    return;
                }
                if let Some(block) = self.last_block.take() {
                    // More text: the block becomes the start of the buffer (moved when its
                    // event is gone; `texts` is empty while a block is held).
                    self.texts = block.into_string();
                    self.last_block_start = Some(0);
                    if self.tool_after_last_block {
                        self.after_tool_start = self.texts.len();
                    }
                }
                if starts_block {
                    if self.last_text_only {
                        // The buffer keeps its capacity: no allocation once it is warm.
                        self.texts.clear();
                        self.after_tool_start = 0;
                    } else if !self.texts.is_empty() {
                        self.texts.push('\n');
                    }
                    self.last_block_start = Some(self.texts.len());
                }
                self.texts.push_str(text);
                self.in_delta_run = *delta;
            }
            AgentEvent::ToolCallStarted {
                call_id,
                kind,
                name,
                input,
            } => {
                self.in_delta_run = false;
                self.tool_calls.push(ToolCall {
                    id: call_id.clone(),
                    kind: *kind,
                    name: name.clone(),
                    input: input.clone(),
                    output: None,
                    is_error: false,
                    exit_code: None,
                    status: ToolCallStatus::Pending,
                    canonical_name: None,
                    duration_ms: None,
                });
            }
            AgentEvent::ToolCallFinished {
                call_id,
                kind,
                name,
                output,
                is_error,
                exit_code,
            } => {
                self.in_delta_run = false;
                self.after_tool_start = self.texts.len();
                self.tool_after_last_block = true;
                let status = if *is_error {
                    ToolCallStatus::Failed
                } else {
                    ToolCallStatus::Completed
                };
                match self.tool_calls.iter_mut().rev().find(|c| &c.id == call_id) {
                    Some(call) => {
                        call.output.clone_from(output);
                        call.is_error = *is_error;
                        call.exit_code = *exit_code;
                        call.status = status;
                    }
                    // A result without a start (the start line was lost): keep it anyway.
                    None => self.tool_calls.push(ToolCall {
                        id: call_id.clone(),
                        kind: *kind,
                        name: name.clone(),
                        input: RawJson::null(),
                        output: output.clone(),
                        is_error: *is_error,
                        exit_code: *exit_code,
                        status,
                        canonical_name: None,
                        duration_ms: None,
                    }),
                }
            }
            AgentEvent::FileChanged { path, .. } if !self.changed_files.contains(path) => {
                self.changed_files.push(path.clone());
            }
            AgentEvent::UsageUpdate { usage } => self.last_usage = Some(*usage),
            AgentEvent::Completed {
                status,
                stop_reason,
                result_text: _,
                usage,
                cost_usd,
                cost_source,
                num_turns,
                duration_ms,
            } => {
                if usage.is_some() {
                    self.last_usage = *usage;
                }
                self.completed = Some(AgentEvent::Completed {
                    status: *status,
                    stop_reason: stop_reason.clone(),
                    result_text: None,
                    usage: *usage,
                    cost_usd: *cost_usd,
                    cost_source: *cost_source,
                    num_turns: *num_turns,
                    duration_ms: *duration_ms,
                });
            }
            _ => {}
        }
    }

    /// The last complete text block (or delta run), if any.
    pub fn last_text(&self) -> Option<&str> {
        if let Some(block) = &self.last_block {
            return Some(block);
        }
        self.last_block_start
            .and_then(|start| self.texts.get(start..))
    }

    /// [`EventAccumulator::last_text`] as shared text: the block itself when it is kept
    /// whole (no copy), else a copy of the joined run.
    pub fn last_shared_text(&self) -> Option<SharedText> {
        match &self.last_block {
            Some(block) => Some(block.clone()),
            None => self.last_text().map(SharedText::from),
        }
    }

    /// The final answer for a CLI that does not repeat it in a result event: the text after
    /// the last tool result, or all text when none follows it. Moved out, not copied (unless
    /// an event still shares the one piece of text); the accumulator holds no text after.
    pub fn take_text_after_last_tool_or_all(&mut self) -> String {
        if let Some(block) = self.last_block.take() {
            return block.into_string();
        }
        let after = self.text_after_last_tool();
        if !after.is_empty() {
            // Cut in place: the text before the answer is dropped, nothing copied out.
            let start = self.texts.len() - after.len();
            self.texts.drain(..start);
        }
        self.last_block_start = None;
        self.after_tool_start = 0;
        std::mem::take(&mut self.texts)
    }

    /// Moves [`EventAccumulator::last_text`] out for a result (copied only if an event still
    /// shares it); the accumulator holds no text after.
    pub fn take_last_text(&mut self) -> Option<String> {
        if let Some(block) = self.last_block.take() {
            return Some(block.into_string());
        }
        let start = self.last_block_start.take()?;
        // Cut in place: the text before the last block is dropped, nothing copied out.
        self.texts.drain(..start);
        self.after_tool_start = 0;
        Some(std::mem::take(&mut self.texts))
    }

    /// Assistant text after the last tool result (deltas joined, blocks on their own
    /// lines): the final answer for CLIs that do not repeat it in a result event.
    pub fn text_after_last_tool(&self) -> &str {
        if let Some(block) = &self.last_block {
            return if self.tool_after_last_block {
                ""
            } else {
                block
            };
        }
        let text = self.texts.get(self.after_tool_start..).unwrap_or_default();
        text.strip_prefix('\n').unwrap_or(text)
    }

    /// All assistant text of the run.
    pub fn all_text(&self) -> &str {
        if let Some(block) = &self.last_block {
            return block;
        }
        &self.texts
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool::ToolKind;

    #[test]
    fn pairs_tool_calls_and_joins_deltas() {
        let mut acc = EventAccumulator::new();
        let events = [
            AgentEvent::Text {
                text: "I'll ".into(),
                delta: true,
            },
            AgentEvent::Text {
                text: "write.".into(),
                delta: true,
            },
            AgentEvent::ToolCallStarted {
                call_id: "t1".into(),
                kind: ToolKind::FileWrite,
                name: "Write".into(),
                input: RawJson::from_parsed(r#"{"file_path": "a"}"#),
            },
            AgentEvent::ToolCallFinished {
                call_id: "t1".into(),
                kind: ToolKind::FileWrite,
                name: "Write".into(),
                output: Some("ok".into()),
                is_error: false,
                exit_code: None,
            },
            AgentEvent::Text {
                text: "Done".into(),
                delta: true,
            },
            AgentEvent::Text {
                text: ".".into(),
                delta: true,
            },
        ];
        for e in &events {
            acc.observe(e);
        }
        assert_eq!(acc.all_text(), "I'll write.\nDone.");
        assert_eq!(acc.last_text(), Some("Done."));
        assert_eq!(acc.text_after_last_tool(), "Done.");
        assert_eq!(acc.tool_calls.len(), 1);
        assert_eq!(acc.tool_calls[0].status, ToolCallStatus::Completed);
        assert_eq!(acc.tool_calls[0].output.as_deref(), Some("ok"));
    }

    fn text(text: &str, delta: bool) -> AgentEvent {
        AgentEvent::Text {
            text: text.into(),
            delta,
        }
    }

    fn finished() -> AgentEvent {
        AgentEvent::ToolCallFinished {
            call_id: "t1".into(),
            kind: ToolKind::Shell,
            name: "Bash".into(),
            output: None,
            is_error: false,
            exit_code: None,
        }
    }

    #[test]
    fn last_text_only_keeps_the_last_block() {
        let finished = finished();
        let check = |events: &[AgentEvent], last: Option<&str>, after_tool: &str| {
            let mut full = EventAccumulator::new();
            let mut lean = EventAccumulator::last_text_only();
            for e in events {
                full.observe(e);
                lean.observe(e);
            }
            assert_eq!(lean.last_text(), full.last_text(), "{events:?}");
            assert_eq!(lean.last_text(), last, "{events:?}");
            assert_eq!(lean.text_after_last_tool(), after_tool, "{events:?}");
            let last = last.map(str::to_owned);
            assert_eq!(lean.take_last_text(), last, "{events:?}");
            assert_eq!(full.take_last_text(), last, "{events:?}");
        };
        check(&[], None, "");
        check(&[text("a", false), text("b", false)], Some("b"), "b");
        check(&[text("a", true), text("b", true)], Some("ab"), "ab");
        check(
            &[text("a", false), finished.clone(), text("c", true)],
            Some("c"),
            "c",
        );
        check(&[text("a", false), finished], Some("a"), "");
        check(
            &[text("a", false), text("b", true), text("c", true)],
            Some("bc"),
            "bc",
        );
        check(&[text("a", true), text("b", false)], Some("b"), "b");
    }

    #[test]
    fn one_piece_of_text_stays_shared_and_more_joins_it() {
        let finished = finished();
        // (events, all_text, last_text, text_after_last_tool, the final answer taken)
        let check = |events: &[AgentEvent], all: &str, last: Option<&str>, after: &str| {
            let mut acc = EventAccumulator::new();
            for e in events {
                acc.observe(e);
            }
            assert_eq!(acc.all_text(), all, "{events:?}");
            assert_eq!(acc.last_text(), last, "{events:?}");
            assert_eq!(acc.text_after_last_tool(), after, "{events:?}");
            let answer = if after.is_empty() { all } else { after };
            assert_eq!(acc.take_text_after_last_tool_or_all(), answer, "{events:?}");
        };
        check(&[text("a", false)], "a", Some("a"), "a");
        check(&[text("a", true)], "a", Some("a"), "a");
        check(&[text("a", false), finished.clone()], "a", Some("a"), "");
        check(&[text("a", true), text("b", true)], "ab", Some("ab"), "ab");
        check(
            &[text("a", false), text("b", false)],
            "a\nb",
            Some("b"),
            "a\nb",
        );
        check(
            &[text("a", false), finished.clone(), text("b", true)],
            "a\nb",
            Some("b"),
            "b",
        );
        check(
            &[
                text("a", true),
                finished.clone(),
                text("b", true),
                text("c", true),
            ],
            "a\nbc",
            Some("bc"),
            "bc",
        );
        check(&[finished, text("b", false)], "b", Some("b"), "b");
    }

    #[test]
    fn last_text_only_shares_a_whole_block_with_its_event() {
        let block = SharedText::from("a long answer");
        let mut lean = EventAccumulator::last_text_only();
        lean.observe(&AgentEvent::Text {
            text: block.clone(),
            delta: false,
        });
        let kept = lean.last_text().map(str::as_ptr);
        assert_eq!(kept, Some(block.as_ptr()), "the same buffer, not a copy");
    }
}
