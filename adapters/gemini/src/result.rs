//! `finish`: the decoder's state plus how the process ended → [`ResultPieces`].

use forge_domain::error::excerpt;
use forge_domain::{CostSource, ExecutionMetadata, ForgeError, SessionId};
use forge_ports::{ProcessExit, ResultPieces};

use crate::cost::main_model;
use crate::decode::GeminiDecoder;
use crate::exit_codes::{self, api_error, hint_for_error_type, http_status_in_message};
use crate::json_output::{StderrError, stderr_error};
use crate::stderr::summarize;

pub(crate) fn finish(dec: &mut GeminiDecoder, exit: Option<&ProcessExit>) -> ResultPieces {
    let exit_code = exit.and_then(|e| e.code);
    let stderr_json = exit.and_then(|e| stderr_error(&e.stderr_tail));
    if let Some(report) = dec.report.as_mut() {
        report.resolve_models();
    }
    let report = dec.report.as_ref();

    // `finish` is called once: the accumulator's collections are moved out, not cloned.
    let content = match dec.json_response.take() {
        Some(response) => response,
        None => dec.acc.take_text_after_last_tool_or_all(),
    };

    let mut errors = Vec::new();
    let reported_error = report.filter(|r| !r.success);
    if let Some(r) = reported_error {
        let message = r
            .error_message
            .clone()
            .unwrap_or_else(|| "gemini reported an error".to_owned());
        let hint = r
            .error_type
            .as_deref()
            .and_then(hint_for_error_type)
            .map(str::to_owned)
            .or_else(|| http_status_in_message(&message).and_then(|s| api_error(s).hint))
            .or_else(|| exit_code.and_then(exit_codes::meaning).and_then(|m| m.hint));
        errors.push(ForgeError::ProviderExecution {
            exit_code,
            stderr_summary: message,
            hint,
        });
    } else if let Some(code) = exit_code.filter(|c| *c != 0) {
        errors.push(exit_error(code, stderr_json.as_ref(), exit));
    }

    let mut notes = Vec::new();
    let (usage, cost_usd, duration_ms, stop_reason, models) = match report {
        Some(r) => (
            r.usage.unwrap_or_default(),
            r.cost_usd,
            r.duration_ms,
            r.error_type.clone(),
            r.models.as_slice(),
        ),
        None => (
            dec.acc.last_usage.unwrap_or_default(),
            None,
            None,
            None,
            &[][..],
        ),
    };
    if cost_usd.is_some() {
        notes.push("cost_usd is estimated from the configured pricing table".to_owned());
    }
    if models.len() > 1 {
        notes.push(format!(
            "usage sums {} models (gemini's auto router calls a classifier model too)",
            models.len()
        ));
    }
    let model = dec
        .config
        .requested_model
        .clone()
        .or_else(|| dec.acc.model.clone().filter(|m| m != "auto"))
        .or_else(|| main_model(models).map(str::to_owned))
        .or_else(|| dec.acc.model.clone());
    let mut session_id = dec.acc.session_id.clone().or_else(|| {
        stderr_json
            .as_ref()
            .and_then(|e| e.session_id.as_deref())
            .and_then(|id| SessionId::new(id).ok())
    });
    // Gemini takes a prompt the API refused back out of its chat record, so a new session
    // whose only prompt failed has nothing to resume (`--resume` then exits 42 "No previous
    // sessions found for this project", 0.61): report none, so a retry starts over.
    let nothing_to_resume = reported_error.is_some()
        && !dec.config.resuming
        && content.is_empty()
        && dec.acc.tool_calls.is_empty();
    if nothing_to_resume && session_id.take().is_some() {
        notes.push(
            "no session: gemini keeps none whose only prompt failed, so there is nothing to resume"
                .to_owned(),
        );
    }

    ResultPieces {
        reported_success: report.map(|r| r.success),
        content,
        tool_calls: std::mem::take(&mut dec.acc.tool_calls),
        errors,
        metadata: ExecutionMetadata {
            session_id,
            cli_version: dec.acc.cli_version.clone(),
            model,
            usage,
            cost_usd,
            cost_source: cost_usd.map(|_| CostSource::Estimated),
            duration_ms,
            exit_code,
            stop_reason,
            workdir: (!dec.config.workdir.is_empty()).then(|| dec.config.workdir.clone()),
            changed_files: std::mem::take(&mut dec.acc.changed_files),
            notes,
            ..ExecutionMetadata::default()
        },
    }
}

/// A non-zero exit without a reported error: the exit code's meaning, the `-o json` error
/// object when stderr has one, else the telling lines of stderr.
fn exit_error(code: i32, json: Option<&StderrError>, exit: Option<&ProcessExit>) -> ForgeError {
    let meaning = exit_codes::meaning(code);
    let json_status = json
        .and_then(|e| e.code)
        .and_then(|c| u16::try_from(c).ok())
        .filter(|s| (400..600).contains(s));
    let hint = json_status
        .and_then(|s| api_error(s).hint)
        .or_else(|| meaning.as_ref().and_then(|m| m.hint.clone()));
    let detail = match json {
        Some(e) if !e.message.is_empty() => Some(excerpt(&e.message, 500)),
        _ => exit
            .map(|e| summarize(&e.stderr_tail))
            .filter(|s| !s.is_empty()),
    };
    let summary = match (meaning, detail) {
        (Some(m), Some(d)) => format!("{}: {d}", m.summary),
        (Some(m), None) => m.summary,
        (None, Some(d)) => d,
        (None, None) => format!("gemini exited with code {code}"),
    };
    ForgeError::ProviderExecution {
        exit_code: Some(code),
        stderr_summary: summary,
        hint,
    }
}
