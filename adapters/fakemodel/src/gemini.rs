//! Gemini API (Gemini CLI): request inspection and SSE rendering.

use serde_json::{Value, json};

use crate::inspect::{digest, find_line_after};
use crate::reply::{IdGen, ReplyPlan};
use crate::sse::data_event;

/// What a `/v1beta/models/{model}:{method}` path asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GeminiCall {
    pub model: String,
    pub method: String,
}

/// Split `/v1beta/models/gemini-x:streamGenerateContent` (any API version) into its parts.
pub fn parse_path(path: &str) -> Option<GeminiCall> {
    let rest = path.strip_prefix('/')?;
    let (_version, rest) = rest.split_once('/')?;
    let rest = rest.strip_prefix("models/")?;
    let (model, method) = rest.rsplit_once(':')?;
    Some(GeminiCall {
        model: model.to_owned(),
        method: method.to_owned(),
    })
}

/// The CLI sends no session header; a conversation is identified by its workspace and its
/// first real prompt (the `<session_context>` part is skipped: it is rebuilt on resume).
pub fn conversation_key(body: &Value) -> Option<String> {
    let contents = body.get("contents").and_then(Value::as_array)?;
    let prompt = contents
        .iter()
        .filter(|c| c.get("role").and_then(Value::as_str) != Some("model"))
        .flat_map(|c| {
            c.get("parts")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
        })
        .filter_map(|part| part.get("text").and_then(Value::as_str))
        .find(|text| {
            let text = text.trim_start();
            !text.is_empty()
                && !text.starts_with("<session_context>")
                && !text.starts_with("<hook_context>")
        })?;
    let dir = workdir(body).unwrap_or_default();
    Some(format!("gemini:{}", digest(&format!("{dir}\n{prompt}"))))
}

/// The workspace, from the `**Workspace Directories:**` list in `<session_context>`.
pub fn workdir(body: &Value) -> Option<String> {
    body.get("contents")
        .and_then(|c| find_line_after(c, "**Workspace Directories:**\n  - "))
}

/// The JSON schema a `generateContent` side call asks the answer to follow, if any.
pub fn response_schema(body: &Value) -> Option<&Value> {
    let config = body.get("generationConfig")?;
    config
        .get("responseJsonSchema")
        .or_else(|| config.get("responseSchema"))
}

fn usage(plan: &ReplyPlan) -> Value {
    let output = plan.output_tokens();
    json!({
        "promptTokenCount": plan.input_tokens,
        "candidatesTokenCount": output,
        "totalTokenCount": plan.input_tokens + output
    })
}

fn parts(plan: &ReplyPlan, with_text: bool) -> Vec<Value> {
    let mut parts = Vec::new();
    if with_text && !plan.text_chunks.is_empty() {
        parts.push(json!({"text": plan.full_text()}));
    }
    for call in &plan.calls {
        let args = call.payload.as_json();
        parts.push(json!({"functionCall": {"name": call.name, "args": args}}));
    }
    parts
}

fn chunk(plan: &ReplyPlan, response_id: &str, parts: Vec<Value>, last: bool) -> Value {
    let mut candidate = json!({"content": {"role": "model", "parts": parts}, "index": 0});
    if let (true, Some(map)) = (last, candidate.as_object_mut()) {
        map.insert("finishReason".into(), json!("STOP"));
    }
    json!({
        "candidates": [candidate], "usageMetadata": usage(plan),
        "modelVersion": plan.model, "responseId": response_id
    })
}

/// The SSE events of one streamed answer: one chunk per text delta, the function calls
/// and `finishReason: STOP` on the last (a stream without it is retried as invalid).
pub fn render_stream(plan: &ReplyPlan, ids: &IdGen) -> Vec<String> {
    let response_id = ids.next("resp_");
    let mut chunks: Vec<Vec<Value>> = plan
        .text_chunks
        .iter()
        .map(|text| vec![json!({"text": text})])
        .collect();
    let calls = parts(plan, false);
    if !calls.is_empty() || chunks.is_empty() {
        chunks.push(calls);
    }
    let last = chunks.len().saturating_sub(1);
    chunks
        .into_iter()
        .enumerate()
        .map(|(i, parts)| data_event(&chunk(plan, &response_id, parts, i == last)))
        .collect()
}

/// The same answer as one `generateContent` response.
pub fn render_response(plan: &ReplyPlan, ids: &IdGen) -> Value {
    chunk(plan, &ids.next("resp_"), parts(plan, true), true)
}

/// The error body for an injected HTTP failure, with a `RetryInfo` detail of `retry_delay`
/// (protobuf duration text) unless `None`.
pub fn error_body(status: u16, message: &str, retry_delay: Option<&str>) -> Value {
    let code_name = match status {
        400 => "INVALID_ARGUMENT",
        401 => "UNAUTHENTICATED",
        403 => "PERMISSION_DENIED",
        404 => "NOT_FOUND",
        429 => "RESOURCE_EXHAUSTED",
        503 => "UNAVAILABLE",
        _ => "INTERNAL",
    };
    let details: Vec<Value> = retry_delay
        .map(|delay| json!({"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": delay}))
        .into_iter()
        .collect();
    json!({"error": {
        "code": status, "message": message, "status": code_name, "details": details
    }})
}
