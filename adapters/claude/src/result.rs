//! End of a run: the decoder's facts plus the process exit → `ResultPieces`.
//!
//! Status facts only (`reported_success`); the runtime applies the one status rule
//! (`forge_domain::derive_status`) with exit code, timeout and cancel.

use forge_domain::{AgentEvent, CostSource, ExecutionMetadata, ForgeError, SharedText};
use forge_ports::{ProcessExit, ResultPieces};

use crate::decode::ClaudeDecoder;
use crate::hints;

/// What the CLI's `result` event said, kept for the error and the metadata.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ResultReport {
    pub subtype: String,
    pub is_error: bool,
    pub text: Option<SharedText>,
    pub errors: Vec<String>,
    pub terminal_reason: Option<String>,
    pub api_error_status: Option<u64>,
    pub api_error: Option<String>,
    pub denied_tools: Vec<String>,
}

impl ResultReport {
    /// One line saying what went wrong, from the richest field the CLI filled.
    pub fn summary(&self) -> String {
        let interrupted = self
            .terminal_reason
            .as_deref()
            .filter(|r| r.starts_with("aborted"));
        let mut text = match (&self.text, self.errors.is_empty()) {
            // SIGINT (or an interrupt request): errors[] then holds only internal diagnostics.
            _ if interrupted.is_some() => "claude was interrupted before finishing".to_owned(),
            (Some(t), _) if !t.trim().is_empty() => t.trim().to_owned(),
            (_, false) => self.errors.join("; "),
            _ => format!("claude reported {}", self.subtype),
        };
        let mut facts = Vec::new();
        if let Some(reason) = &self.terminal_reason {
            facts.push(format!("terminal_reason {reason}"));
        }
        if let Some(status) = self.api_error_status {
            facts.push(format!("api_error_status {status}"));
        }
        if !facts.is_empty() {
            text.push_str(&format!(" ({})", facts.join(", ")));
        }
        text
    }
}

pub(crate) fn finish(d: &mut ClaudeDecoder, exit: Option<&ProcessExit>) -> ResultPieces {
    let exit_code = exit.and_then(|e| e.code);
    let stderr = exit.map_or("", |e| e.stderr_tail.as_str());
    // Taken, like the tool calls below: `finish` ends the run.
    let mut report = d.report.take();

    let mut errors = Vec::new();
    match &report {
        Some(r) if r.is_error => errors.push(ForgeError::ProviderExecution {
            exit_code,
            stderr_summary: r.summary(),
            hint: hints::for_report(r, d.api_error.as_deref(), stderr),
        }),
        Some(_) => {
            if let Some(code) = exit_code.filter(|c| *c != 0) {
                errors.push(ForgeError::ProviderExecution {
                    exit_code,
                    stderr_summary: stderr_summary(stderr, code, "after reporting success"),
                    hint: hints::for_stderr(stderr),
                });
            }
        }
        None => {
            if let Some(code) = exit_code.filter(|c| *c != 0) {
                errors.push(ForgeError::ProviderExecution {
                    exit_code,
                    stderr_summary: stderr_summary(stderr, code, "without a result"),
                    hint: hints::for_stderr(stderr),
                });
            }
        }
    }

    let mut metadata = ExecutionMetadata {
        session_id: d
            .acc
            .session_id
            .clone()
            .or_else(|| d.result_session.clone()),
        cli_version: d.acc.cli_version.clone(),
        model: d.acc.model.clone(),
        usage: d.acc.last_usage.unwrap_or_default(),
        exit_code,
        workdir: d.workdir_for_resume(),
        changed_files: d.acc.changed_files.clone(),
        ..ExecutionMetadata::default()
    };
    if let Some(AgentEvent::Completed {
        stop_reason,
        cost_usd,
        cost_source,
        num_turns,
        duration_ms,
        ..
    }) = &d.acc.completed
    {
        metadata.stop_reason.clone_from(stop_reason);
        metadata.cost_usd = *cost_usd;
        metadata.cost_source = *cost_source;
        metadata.num_turns = *num_turns;
        metadata.duration_ms = *duration_ms;
    }
    // Tokens but no cost (a result cut off before it): priced from the table.
    if metadata.cost_usd.is_none() && !metadata.usage.is_zero() {
        let estimate = metadata
            .model
            .as_deref()
            .and_then(|model| d.pricing.estimate(model, &metadata.usage));
        if let Some(cost) = estimate {
            metadata.cost_usd = Some(cost);
            metadata.cost_source = Some(CostSource::Estimated);
        }
    }
    if d.resumed {
        metadata.session_usage = d.session_usage;
        metadata.session_cost_usd = d.session_cost_usd;
        if metadata.cost_source == Some(CostSource::Derived) {
            metadata.notes.push(
                "cost_usd is this run's share: the session's cost per token (modelUsage) \
                 applied to this run's usage; session_cost_usd is the session's running total"
                    .to_owned(),
            );
        }
    }
    let mut denied: Vec<&str> = d.denied_tools.iter().map(String::as_str).collect();
    if let Some(r) = &report {
        denied.extend(r.denied_tools.iter().map(String::as_str));
    }
    denied.sort_unstable();
    denied.dedup();
    if !denied.is_empty() {
        metadata
            .notes
            .push(format!("permission denied for: {}", denied.join(", ")));
    }

    // Moved out, not copied: the events that shared these texts have been delivered.
    let content = report
        .as_mut()
        .and_then(|r| r.text.take())
        .map(SharedText::into_string)
        .or_else(|| d.acc.take_last_text())
        .unwrap_or_default();

    ResultPieces {
        reported_success: report.as_ref().map(|r| !r.is_error),
        content,
        tool_calls: std::mem::take(&mut d.acc.tool_calls),
        errors,
        metadata,
    }
}

/// The end of stderr, trimmed to a readable size, or a sentence when it is empty.
fn stderr_summary(stderr: &str, code: i32, when: &str) -> String {
    let tail: Vec<&str> = stderr
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let start = tail.len().saturating_sub(5);
    let text = tail[start..].join(" | ");
    if text.is_empty() {
        format!("claude exited with code {code} {when}, and printed nothing on stderr")
    } else {
        forge_domain::error::excerpt(&text, 600)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summaries_prefer_text_then_errors_then_subtype() {
        let mut r = ResultReport {
            subtype: "error_max_turns".into(),
            is_error: true,
            errors: vec!["Reached maximum number of turns (1)".into()],
            terminal_reason: Some("max_turns".into()),
            ..ResultReport::default()
        };
        assert_eq!(
            r.summary(),
            "Reached maximum number of turns (1) (terminal_reason max_turns)"
        );
        r.text = Some("API Error: 401".into());
        r.api_error_status = Some(401);
        assert_eq!(
            r.summary(),
            "API Error: 401 (terminal_reason max_turns, api_error_status 401)"
        );
        let bare = ResultReport {
            subtype: "error_during_execution".into(),
            ..ResultReport::default()
        };
        assert_eq!(bare.summary(), "claude reported error_during_execution");
    }

    #[test]
    fn stderr_summaries_keep_the_last_lines() {
        let err = "a\n\nb\nc\nd\ne\nf\n";
        assert_eq!(stderr_summary(err, 1, "x"), "b | c | d | e | f");
        assert_eq!(
            stderr_summary("", 143, "without a result"),
            "claude exited with code 143 without a result, and printed nothing on stderr"
        );
    }
}
