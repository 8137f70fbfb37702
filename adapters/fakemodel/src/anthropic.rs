//! Anthropic Messages (Claude Code): request inspection and SSE rendering.

use axum::http::HeaderMap;
use serde_json::{Value, json};

use crate::inspect::{find_line_after, header};
use crate::reply::{IdGen, ReplyPlan};
use crate::sse::named_event;
use crate::tools::CallPayload;

/// Partial-JSON pieces of a tool input are this many characters, like the real API.
const INPUT_PIECE: usize = 64;

/// Claude Code tags every request of a session with this header; resume keeps it.
pub fn conversation_key(headers: &HeaderMap, body: &Value) -> Option<String> {
    if let Some(id) = header(headers, "x-claude-code-session-id") {
        return Some(format!("anthropic:{id}"));
    }
    body.pointer("/metadata/user_id")
        .and_then(Value::as_str)
        .map(|id| format!("anthropic:{id}"))
}

/// Why a Messages request is a side call rather than a scripted turn.
///
/// Claude Code's main loop always advertises its tools and asks for a large `max_tokens`
/// (128000 in 2.1.330); its utility calls (session titles, summaries, quota probes, topic or
/// safety classification) go out without tools or with a small budget.
pub fn side_call_reason(body: &Value) -> Option<&'static str> {
    let has_tools = body
        .get("tools")
        .and_then(Value::as_array)
        .is_some_and(|tools| !tools.is_empty());
    if !has_tools {
        return Some("no_tools");
    }
    let max_tokens = body.get("max_tokens").and_then(Value::as_u64);
    if max_tokens.is_some_and(|n| n <= 1024) {
        return Some("small_max_tokens");
    }
    None
}

/// The workspace, from the `Primary working directory: …` line of the environment block
/// (a `role: "system"` entry inside `messages` in 2.1.330; in `system` in older builds).
pub fn workdir(body: &Value) -> Option<String> {
    const MARKER: &str = "Primary working directory: ";
    body.get("messages")
        .and_then(|m| find_line_after(m, MARKER))
        .or_else(|| body.get("system").and_then(|s| find_line_after(s, MARKER)))
}

/// The SSE events of one streamed answer.
pub fn render_stream(plan: &ReplyPlan, ids: &IdGen) -> Vec<String> {
    let mut events = Vec::new();
    let message_id = ids.next("msg_");
    let start = json!({
        "type": "message_start",
        "message": {
            "id": message_id, "type": "message", "role": "assistant", "model": plan.model,
            "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": {
                "input_tokens": plan.input_tokens, "output_tokens": 1,
                "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0
            }
        }
    });
    events.push(named_event("message_start", &start));
    events.push(named_event("ping", &json!({"type": "ping"})));

    let mut index = 0usize;
    if let Some(thinking) = &plan.thinking {
        let block = json!({"type": "thinking", "thinking": "", "signature": ""});
        let deltas = [
            json!({"type": "thinking_delta", "thinking": thinking}),
            json!({"type": "signature_delta", "signature": "fake-signature"}),
        ];
        push_block(&mut events, index, &block, &deltas);
        index += 1;
    }
    if !plan.text_chunks.is_empty() {
        let deltas: Vec<Value> = plan
            .text_chunks
            .iter()
            .map(|chunk| json!({"type": "text_delta", "text": chunk}))
            .collect();
        push_block(
            &mut events,
            index,
            &json!({"type": "text", "text": ""}),
            &deltas,
        );
        index += 1;
    }
    for call in &plan.calls {
        let block = json!({
            "type": "tool_use", "id": ids.next("toolu_"), "name": call.name, "input": {}
        });
        let input = input_json(&call.payload).to_string();
        let deltas: Vec<Value> = pieces(&input, INPUT_PIECE)
            .into_iter()
            .map(|piece| json!({"type": "input_json_delta", "partial_json": piece}))
            .collect();
        push_block(&mut events, index, &block, &deltas);
        index += 1;
    }

    let delta = json!({
        "type": "message_delta",
        "delta": {"stop_reason": stop_reason(plan), "stop_sequence": null},
        "usage": {"output_tokens": plan.output_tokens()}
    });
    events.push(named_event("message_delta", &delta));
    events.push(named_event(
        "message_stop",
        &json!({"type": "message_stop"}),
    ));
    events
}

/// The same answer as one JSON message (`"stream": false` requests).
pub fn render_message(plan: &ReplyPlan, ids: &IdGen) -> Value {
    let mut content = Vec::new();
    if let Some(thinking) = &plan.thinking {
        content
            .push(json!({"type": "thinking", "thinking": thinking, "signature": "fake-signature"}));
    }
    if !plan.text_chunks.is_empty() {
        content.push(json!({"type": "text", "text": plan.full_text()}));
    }
    for call in &plan.calls {
        content.push(json!({
            "type": "tool_use", "id": ids.next("toolu_"), "name": call.name,
            "input": input_json(&call.payload)
        }));
    }
    json!({
        "id": ids.next("msg_"), "type": "message", "role": "assistant", "model": plan.model,
        "content": content, "stop_reason": stop_reason(plan), "stop_sequence": null,
        "usage": {
            "input_tokens": plan.input_tokens, "output_tokens": plan.output_tokens(),
            "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0
        }
    })
}

/// The error body for an injected HTTP failure.
pub fn error_body(status: u16, message: &str) -> Value {
    let kind = match status {
        400 => "invalid_request_error",
        401 => "authentication_error",
        403 => "permission_error",
        404 => "not_found_error",
        413 => "request_too_large",
        429 => "rate_limit_error",
        529 => "overloaded_error",
        _ => "api_error",
    };
    json!({"type": "error", "error": {"type": kind, "message": message}})
}

fn stop_reason(plan: &ReplyPlan) -> &'static str {
    if plan.is_tool_use() {
        "tool_use"
    } else {
        "end_turn"
    }
}

fn input_json(payload: &CallPayload) -> Value {
    payload.as_json()
}

fn push_block(events: &mut Vec<String>, index: usize, block: &Value, deltas: &[Value]) {
    let start = json!({"type": "content_block_start", "index": index, "content_block": block});
    events.push(named_event("content_block_start", &start));
    for delta in deltas {
        let event = json!({"type": "content_block_delta", "index": index, "delta": delta});
        events.push(named_event("content_block_delta", &event));
    }
    let stop = json!({"type": "content_block_stop", "index": index});
    events.push(named_event("content_block_stop", &stop));
}

/// `text` cut into pieces of at most `size` chars.
fn pieces(text: &str, size: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    chars.chunks(size).map(|c| c.iter().collect()).collect()
}
