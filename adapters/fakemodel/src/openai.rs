//! OpenAI Responses (Codex): request inspection and SSE rendering.

use axum::http::HeaderMap;
use serde_json::{Value, json};

use crate::inspect::header;
use crate::reply::{IdGen, ReplyPlan};
use crate::sse::named_event;
use crate::tools::CallPayload;

/// Codex sends `thread-id` (kept by `exec resume`) and `session-id`; the body's
/// `prompt_cache_key` is the thread id too.
pub fn conversation_key(headers: &HeaderMap, body: &Value) -> Option<String> {
    header(headers, "thread-id")
        .or_else(|| header(headers, "session-id"))
        .or_else(|| {
            body.get("prompt_cache_key")
                .and_then(Value::as_str)
                .map(str::to_owned)
        })
        .map(|id| format!("openai:{id}"))
}

/// Codex's turns always carry its tool list; a request without tools is a utility call.
pub fn side_call_reason(body: &Value) -> Option<&'static str> {
    let has_tools = body
        .get("tools")
        .and_then(Value::as_array)
        .is_some_and(|tools| !tools.is_empty());
    (!has_tools).then_some("no_tools")
}

/// Numbers `sequence_number` as events are added.
struct Events {
    list: Vec<String>,
}

impl Events {
    fn push(&mut self, kind: &str, mut data: Value) {
        if let Some(map) = data.as_object_mut() {
            map.insert("type".into(), json!(kind));
            map.insert("sequence_number".into(), json!(self.list.len()));
        }
        self.list.push(named_event(kind, &data));
    }
}

/// The SSE events of one streamed answer.
pub fn render_stream(plan: &ReplyPlan, ids: &IdGen) -> Vec<String> {
    let response_id = ids.next("resp_");
    let mut events = Events { list: Vec::new() };
    let shell = response_shell(&response_id, plan, "in_progress", Vec::new(), None);
    events.push("response.created", json!({ "response": shell.clone() }));
    events.push("response.in_progress", json!({ "response": shell }));

    let mut output = Vec::new();
    if !plan.text_chunks.is_empty() {
        let index = output.len();
        output.push(push_message(&mut events, plan, index, &ids.next("msg_")));
    }
    for call in &plan.calls {
        let index = output.len();
        output.push(push_call(&mut events, call, index, ids));
    }

    let usage = usage(plan);
    let done = response_shell(&response_id, plan, "completed", output, Some(usage));
    events.push("response.completed", json!({ "response": done }));
    events.list
}

fn push_message(events: &mut Events, plan: &ReplyPlan, index: usize, item_id: &str) -> Value {
    let text = plan.full_text();
    let started = json!({
        "id": item_id, "type": "message", "status": "in_progress", "role": "assistant", "content": []
    });
    events.push(
        "response.output_item.added",
        json!({"output_index": index, "item": started}),
    );
    let at = json!({"item_id": item_id, "output_index": index, "content_index": 0});
    let empty_part = json!({"type": "output_text", "text": "", "annotations": []});
    events.push(
        "response.content_part.added",
        merged(&at, json!({"part": empty_part})),
    );
    for chunk in &plan.text_chunks {
        let delta = json!({"delta": chunk, "logprobs": []});
        events.push("response.output_text.delta", merged(&at, delta));
    }
    let done_text = json!({"text": text, "logprobs": []});
    events.push("response.output_text.done", merged(&at, done_text));
    let part = json!({"type": "output_text", "text": text, "annotations": []});
    events.push(
        "response.content_part.done",
        merged(&at, json!({"part": part.clone()})),
    );
    let item = json!({
        "id": item_id, "type": "message", "status": "completed", "role": "assistant",
        "content": [part]
    });
    events.push(
        "response.output_item.done",
        json!({"output_index": index, "item": item.clone()}),
    );
    item
}

fn push_call(
    events: &mut Events,
    call: &crate::tools::ConcreteCall,
    index: usize,
    ids: &IdGen,
) -> Value {
    let call_id = ids.next("call_");
    if let CallPayload::ToolSearch(args) = &call.payload {
        // A client-side search: one whole item, no argument deltas.
        let item = json!({
            "id": ids.next("tsc_"), "type": "tool_search_call", "status": "completed",
            "call_id": call_id, "execution": "client", "arguments": args
        });
        events.push(
            "response.output_item.added",
            json!({"output_index": index, "item": item.clone()}),
        );
        events.push(
            "response.output_item.done",
            json!({"output_index": index, "item": item.clone()}),
        );
        return item;
    }
    let namespace = match &call.payload {
        CallPayload::Namespaced { namespace, .. } => Some(namespace.clone()),
        _ => None,
    };
    let (item_id, kind, field, value, delta_kind) = match &call.payload {
        CallPayload::Json(args) | CallPayload::Namespaced { args, .. } => (
            ids.next("fc_"),
            "function_call",
            "arguments",
            args.to_string(),
            "response.function_call_arguments",
        ),
        CallPayload::ToolSearch(args) => (
            ids.next("fc_"),
            "function_call",
            "arguments",
            args.to_string(),
            "response.function_call_arguments",
        ),
        CallPayload::Custom(input) => (
            ids.next("ctc_"),
            "custom_tool_call",
            "input",
            input.clone(),
            "response.custom_tool_call_input",
        ),
    };
    let item_with = |status: &str, value: &str| {
        let mut item = json!({
            "id": item_id, "type": kind, "status": status, "call_id": call_id,
            "name": call.name, field: value
        });
        if let (Some(namespace), Some(map)) = (&namespace, item.as_object_mut()) {
            map.insert("namespace".into(), json!(namespace));
        }
        item
    };
    events.push(
        "response.output_item.added",
        json!({"output_index": index, "item": item_with("in_progress", "")}),
    );
    let at = json!({"item_id": item_id, "output_index": index});
    events.push(
        &format!("{delta_kind}.delta"),
        merged(&at, json!({"delta": value})),
    );
    let done_key = if kind == "function_call" {
        "arguments"
    } else {
        "input"
    };
    events.push(
        &format!("{delta_kind}.done"),
        merged(&at, json!({done_key: value})),
    );
    let item = item_with("completed", &value);
    events.push(
        "response.output_item.done",
        json!({"output_index": index, "item": item.clone()}),
    );
    item
}

/// A stream that fails as the Responses API reports a mid-stream failure: `response.created`,
/// then `response.failed` whose `response.error` carries the code `status` stands for (429:
/// `rate_limit_exceeded`) and `message`.
pub fn render_failed_stream(model: &str, status: u16, message: &str, ids: &IdGen) -> Vec<String> {
    let response_id = ids.next("resp_");
    let code = error_body(status, message)["error"]["code"].clone();
    let shell = |state: &str, error: Value| {
        json!({
            "id": response_id, "object": "response", "created_at": 0, "status": state,
            "model": model, "output": [], "usage": null,
            "error": error, "incomplete_details": null
        })
    };
    let mut events = Events { list: Vec::new() };
    events.push(
        "response.created",
        json!({ "response": shell("in_progress", Value::Null) }),
    );
    events.push(
        "response.failed",
        json!({ "response": shell("failed", json!({"code": code, "message": message})) }),
    );
    events.list
}

fn response_shell(
    id: &str,
    plan: &ReplyPlan,
    status: &str,
    output: Vec<Value>,
    usage: Option<Value>,
) -> Value {
    json!({
        "id": id, "object": "response", "created_at": 0, "status": status,
        "model": plan.model, "output": output, "usage": usage,
        "error": null, "incomplete_details": null
    })
}

fn usage(plan: &ReplyPlan) -> Value {
    let output = plan.output_tokens();
    json!({
        "input_tokens": plan.input_tokens,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": output,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": plan.input_tokens + output
    })
}

fn merged(base: &Value, extra: Value) -> Value {
    let mut out = base.clone();
    if let (Some(map), Value::Object(more)) = (out.as_object_mut(), extra) {
        map.extend(more);
    }
    out
}

/// The error body for an injected HTTP failure.
pub fn error_body(status: u16, message: &str) -> Value {
    let (kind, code) = match status {
        400 => ("invalid_request_error", "invalid_request"),
        401 => ("invalid_request_error", "invalid_api_key"),
        429 => ("requests", "rate_limit_exceeded"),
        _ => ("server_error", "server_error"),
    };
    json!({"error": {"message": message, "type": kind, "code": code}})
}
