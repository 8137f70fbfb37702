//! `gemini -o json`: one pretty-printed object at the end of the run instead of events.
//! On success it is on stdout (`session_id`, `response`, `stats`); on failure stdout stays
//! empty and the object (`session_id`, `error{type,message,code}`) goes to stderr, after
//! any log lines and stack traces.

use forge_domain::{AgentEvent, SessionId, Usage};

use crate::cost::ModelUsage;
use crate::decode::GeminiDecoder;
use crate::report::RunReport;
use crate::wire::{JsonDocument, JsonError, JsonStats};

/// Decodes `text` when it is one `-o json` object; `false` (nothing emitted) otherwise.
pub(crate) fn decode_json_document(
    dec: &mut GeminiDecoder,
    text: &str,
    out: &mut Vec<AgentEvent>,
) -> bool {
    let trimmed = text.trim();
    // Pretty output starts with a line holding only `{`; a one-line object may be either a
    // compact document or a one-event stream, which `is_document` tells apart. Anything else
    // is JSONL and is not parsed twice.
    let first_line = trimmed.lines().next().unwrap_or_default().trim();
    if !(first_line == "{" || (trimmed.starts_with('{') && !trimmed.contains('\n'))) {
        return false;
    }
    let Ok(doc) = serde_json::from_str::<JsonDocument<'_>>(trimmed) else {
        return false;
    };
    if !doc.is_document() {
        return false;
    }
    if let Some(session_id) = doc
        .session_id
        .as_deref()
        .and_then(|id| SessionId::new(id).ok())
    {
        dec.emit(
            out,
            AgentEvent::SessionStarted {
                session_id,
                model: None,
                cwd: None,
                cli_version: None,
                tools: Vec::new(),
            },
        );
    }
    for message in doc.warnings {
        dec.emit(out, AgentEvent::Warning { message });
    }
    let response = doc.response.map(|r| r.into_owned());
    if let Some(text) = response.as_ref().filter(|t| !t.is_empty()) {
        dec.emit(
            out,
            AgentEvent::Text {
                text: text.clone().into(),
                delta: false,
            },
        );
    }
    let models = doc.stats.as_ref().map(json_models).unwrap_or_default();
    let usage = doc.stats.as_ref().map(|_| {
        models
            .iter()
            .fold(Usage::default(), |sum, m| sum.saturating_add(&m.usage))
    });
    let duration_ms = doc.stats.as_ref().and_then(json_latency);
    let (error_type, error_message) = match doc.error {
        Some(JsonError { kind, message, .. }) => (
            Some(kind.map_or_else(|| "error".to_owned(), |k| k.into_owned())),
            message.map(|m| m.into_owned()),
        ),
        None => (None, None),
    };
    let report = RunReport {
        success: error_type.is_none(),
        error_type,
        error_message,
        usage,
        models,
        models_json: None,
        cost_usd: None,
        duration_ms,
    };
    dec.json_response.clone_from(&response);
    dec.close_run(report, response, out);
    true
}

fn json_models(stats: &JsonStats) -> Vec<ModelUsage> {
    stats
        .models
        .iter()
        .map(|(model, m)| ModelUsage {
            model: model.clone(),
            usage: Usage {
                input_tokens: m.tokens.prompt,
                output_tokens: m.tokens.candidates,
                cache_read_tokens: m.tokens.cached,
                reasoning_tokens: m.tokens.thoughts,
                ..Usage::default()
            },
        })
        .collect()
}

/// Time spent in model calls, the only duration `-o json` reports.
fn json_latency(stats: &JsonStats) -> Option<u64> {
    let latencies: Vec<u64> = stats
        .models
        .values()
        .filter_map(|m| m.api.as_ref().map(|a| a.total_latency_ms))
        .collect();
    (!latencies.is_empty()).then(|| latencies.iter().sum())
}

/// The error object `-o json` leaves on stderr.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StderrError {
    pub session_id: Option<String>,
    pub kind: Option<String>,
    pub message: String,
    /// An HTTP status or exit code, when the CLI gave one.
    pub code: Option<i64>,
}

/// The last JSON object with an `error` in `stderr` (it can be printed twice, once behind
/// an `[ERROR] ` prefix); log lines and stack traces around it are skipped.
pub fn stderr_error(stderr: &str) -> Option<StderrError> {
    // Offsets of `{` that open a line (or follow an `[ERROR] ` prefix).
    let mut starts = Vec::new();
    let mut offset = 0;
    for line in stderr.split_inclusive('\n') {
        let body = line.trim_start();
        let body = body.strip_prefix("[ERROR]").map_or(body, str::trim_start);
        if body.starts_with('{') {
            starts.push(offset + (line.len() - body.len()));
        }
        offset += line.len();
    }
    starts.into_iter().rev().find_map(|start| {
        let mut stream =
            serde_json::Deserializer::from_str(&stderr[start..]).into_iter::<JsonDocument<'_>>();
        let doc = stream.next()?.ok()?;
        let error = doc.error?;
        Some(StderrError {
            session_id: doc.session_id.map(|s| s.into_owned()),
            kind: error.kind.map(|k| k.into_owned()),
            message: error.message.map(|m| m.into_owned()).unwrap_or_default(),
            code: error.code.as_ref().and_then(|c| {
                c.as_i64()
                    .or_else(|| c.as_str().and_then(|s| s.parse().ok()))
            }),
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_error_object_after_a_stack_trace() {
        let stderr = "Error when talking to Gemini API _ApiError: {\"error\":{\"code\":401}}\n    at x (file.js:1:2) {\n  status: 401\n}\n{\n  \"session_id\": \"s-1\",\n  \"error\": {\n    \"type\": \"Error\",\n    \"message\": \"boom\",\n    \"code\": 401\n  }\n}\n";
        let err = stderr_error(stderr).unwrap();
        assert_eq!(
            err,
            StderrError {
                session_id: Some("s-1".into()),
                kind: Some("Error".into()),
                message: "boom".into(),
                code: Some(401),
            }
        );
        assert_eq!(stderr_error("no json here\n{ status: 1 }\n"), None);
        let prefixed = "[ERROR] {\"error\":{\"type\":\"FatalTurnLimitedError\",\"message\":\"m\",\"code\":\"53\"}}";
        assert_eq!(stderr_error(prefixed).unwrap().code, Some(53));
    }
}
