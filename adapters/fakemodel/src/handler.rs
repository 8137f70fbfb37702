//! The one request handler: route by path, account the turn, render, log.

use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{ConnectInfo, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::book::{Decision, GLOBAL_CONVERSATION, TurnBook};
use crate::conn::ConnInfo;
use crate::inspect::fill_schema;
use crate::log::{
    LoggedRequest, RequestLog, ServedUsage, loggable_body, loggable_headers, now_ms,
    request_credential,
};
use crate::reply::{FINISHED_TEXT, IdGen, ReplyPlan, estimate_tokens, model_of};
use crate::sse::{self, Delivery};
use crate::tools::{ToolCatalog, Vendor};
use crate::{anthropic, gemini, openai};

/// Text of side-call answers that ask for no particular format.
pub const SIDE_CALL_TEXT: &str = "Fake session";

/// Logged outcome of a deliberately cut stream.
const OUTCOME_CUT: &str = "cut";

/// Shared by every request of one server.
#[derive(Debug)]
pub struct AppState {
    pub book: TurnBook,
    pub log: RequestLog,
    pub ids: IdGen,
}

/// A turn request, normalised across vendors.
struct TurnRequest<'a> {
    vendor: Vendor,
    body: &'a Value,
    conversation: String,
    model: String,
    workdir: Option<String>,
    input_tokens: u64,
    stream: bool,
}

pub async fn handle(
    State(state): State<Arc<AppState>>,
    ConnectInfo(conn): ConnectInfo<ConnInfo>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    bytes: Bytes,
) -> Response {
    let body = loggable_body(&bytes);
    let mut entry = LoggedRequest {
        seq: 0,
        timestamp_ms: now_ms(),
        method: method.to_string(),
        path: uri.path().to_owned(),
        query: uri.query().map(str::to_owned),
        headers: loggable_headers(&headers),
        body: Value::Null,
        vendor: None,
        conversation: None,
        turn: None,
        side_call: None,
        outcome: String::new(),
        usage: None,
        credential: request_credential(&headers, uri.query()),
    };
    let response = route(
        &state,
        &method,
        uri.path(),
        &headers,
        &body,
        &bytes,
        &mut entry,
    );
    if entry.outcome == OUTCOME_CUT {
        tracing::debug!(peer = %conn.peer, "fake model: this stream will be cut");
        conn.reset_on_close();
    }
    entry.body = body;
    state.log.record(entry);
    response
}

fn route(
    state: &AppState,
    method: &Method,
    path: &str,
    headers: &HeaderMap,
    body: &Value,
    bytes: &[u8],
    entry: &mut LoggedRequest,
) -> Response {
    let tokens = estimate_tokens(bytes);
    if method == Method::GET && path == "/health" {
        entry.outcome = "health".into();
        return (StatusCode::OK, "ok").into_response();
    }
    if path == "/api/hello" && (method == Method::HEAD || method == Method::GET) {
        // Claude Code's connectivity probe (sent unless nonessential traffic is disabled).
        entry.vendor = Some("anthropic".into());
        return side_call(
            entry,
            "connectivity_probe",
            (StatusCode::OK, "ok").into_response(),
        );
    }
    if method != Method::POST {
        return not_found(method, path, entry);
    }
    if path == "/v1/messages/count_tokens" {
        entry.vendor = Some("anthropic".into());
        return side_call(
            entry,
            "count_tokens",
            json_response(&json!({"input_tokens": tokens})),
        );
    }
    if path == "/v1/messages" {
        entry.vendor = Some("anthropic".into());
        let model = model_of(body, "claude-fake");
        let stream = body.get("stream").and_then(Value::as_bool).unwrap_or(false);
        if let Some(reason) = anthropic::side_call_reason(body) {
            let plan = ReplyPlan::text(
                &model,
                &side_text(body.pointer("/output_config/format/schema")),
                tokens,
            );
            entry.usage = Some(served(&plan));
            return side_call(
                entry,
                reason,
                render(state, Vendor::Anthropic, &plan, stream, Delivery::default()),
            );
        }
        let conversation = anthropic::conversation_key(headers, body);
        let request = TurnRequest {
            vendor: Vendor::Anthropic,
            body,
            conversation: conversation.unwrap_or_else(|| GLOBAL_CONVERSATION.into()),
            model,
            workdir: anthropic::workdir(body),
            input_tokens: tokens,
            stream,
        };
        return play_turn(state, &request, entry);
    }
    if path == "/v1/responses" {
        entry.vendor = Some("open_ai".into());
        let model = model_of(body, "gpt-fake");
        let stream = body.get("stream").and_then(Value::as_bool).unwrap_or(true);
        if let Some(reason) = openai::side_call_reason(body) {
            let plan = ReplyPlan::text(&model, SIDE_CALL_TEXT, tokens);
            entry.usage = Some(served(&plan));
            return side_call(
                entry,
                reason,
                render(state, Vendor::OpenAi, &plan, stream, Delivery::default()),
            );
        }
        let conversation = openai::conversation_key(headers, body);
        let request = TurnRequest {
            vendor: Vendor::OpenAi,
            body,
            conversation: conversation.unwrap_or_else(|| GLOBAL_CONVERSATION.into()),
            model,
            workdir: None,
            input_tokens: tokens,
            stream,
        };
        return play_turn(state, &request, entry);
    }
    if let Some(call) = gemini::parse_path(path) {
        entry.vendor = Some("gemini".into());
        match call.method.as_str() {
            "streamGenerateContent" => {
                let conversation = gemini::conversation_key(body);
                let request = TurnRequest {
                    vendor: Vendor::Gemini,
                    body,
                    conversation: conversation.unwrap_or_else(|| GLOBAL_CONVERSATION.into()),
                    model: call.model,
                    workdir: gemini::workdir(body),
                    input_tokens: tokens,
                    stream: true,
                };
                return play_turn(state, &request, entry);
            }
            "generateContent" => {
                // The CLI's utility calls (model routing classifier, next-speaker and loop
                // checks) are non-streamed; its turns always stream.
                let schema = gemini::response_schema(body);
                let reason = if schema.is_some() {
                    "structured_output"
                } else {
                    "generate_content"
                };
                let plan = ReplyPlan::text(&call.model, &side_text(schema), tokens);
                let answer = json_response(&gemini::render_response(&plan, &state.ids));
                entry.usage = Some(served(&plan));
                return side_call(entry, reason, answer);
            }
            "countTokens" => {
                return side_call(
                    entry,
                    "count_tokens",
                    json_response(&json!({"totalTokens": tokens})),
                );
            }
            _ => {}
        }
    }
    not_found(method, path, entry)
}

/// Text of a side-call answer: a JSON document matching the schema when one is demanded.
fn side_text(schema: Option<&Value>) -> String {
    schema.map_or_else(|| SIDE_CALL_TEXT.to_owned(), |s| fill_schema(s).to_string())
}

fn play_turn(state: &AppState, request: &TurnRequest<'_>, entry: &mut LoggedRequest) -> Response {
    entry.conversation = Some(request.conversation.clone());
    if let Some(search) = codex_tool_search(state, request) {
        // Codex must load the MCP namespace first; the scripted turn waits for the next request.
        entry.outcome = "tool_search".into();
        return search;
    }
    let route = state.book.route_for(request.body);
    let decision = state.book.decide_in(route, &request.conversation);
    let plan_for = |index: usize| {
        let catalog = ToolCatalog::from_request(request.vendor, request.body);
        state.book.turn_in(route, index).map(|turn| {
            let mut plan = ReplyPlan::for_turn(
                request.vendor,
                turn,
                &catalog,
                request.workdir.as_deref(),
                &request.model,
                request.input_tokens,
            );
            echo_last_tool_output(&mut plan, request);
            (plan, Duration::from_millis(turn.chunk_delay_ms))
        })
    };
    let finished = || ReplyPlan::text(&request.model, FINISHED_TEXT, request.input_tokens);
    match decision {
        Decision::Fail {
            index,
            status,
            message,
            in_stream,
            retry_delay,
        } => {
            entry.turn = Some(index);
            entry.outcome = format!("failed {status}");
            if in_stream && request.vendor == Vendor::OpenAi {
                let message = message.unwrap_or_else(|| default_error_message(status));
                let events =
                    openai::render_failed_stream(&request.model, status, &message, &state.ids);
                return sse_response(events, Delivery::default());
            }
            error_response(
                request.vendor,
                status,
                message.as_deref(),
                retry_delay.as_deref(),
            )
        }
        Decision::Cut { index, after } => {
            entry.turn = Some(index);
            entry.outcome = OUTCOME_CUT.into();
            let (plan, delay) = plan_for(index).unwrap_or_else(|| (finished(), Duration::ZERO));
            let delivery = Delivery {
                delay,
                cut_after: Some(after),
            };
            render(state, request.vendor, &plan, true, delivery)
        }
        Decision::Serve { index } => {
            entry.turn = Some(index);
            entry.outcome = "served".into();
            let (plan, delay) = plan_for(index).unwrap_or_else(|| (finished(), Duration::ZERO));
            entry.usage = Some(served(&plan));
            let delivery = Delivery {
                delay,
                cut_after: None,
            };
            render(state, request.vendor, &plan, request.stream, delivery)
        }
        Decision::Finished => {
            entry.outcome = "finished".into();
            let plan = finished();
            entry.usage = Some(served(&plan));
            render(
                state,
                request.vendor,
                &plan,
                request.stream,
                Delivery::default(),
            )
        }
    }
}

/// A `tool_search` answer when the conversation's next turn calls an MCP tool Codex has not
/// loaded yet.
fn codex_tool_search(state: &AppState, request: &TurnRequest<'_>) -> Option<Response> {
    if request.vendor != Vendor::OpenAi {
        return None;
    }
    let turn = state.book.peek(&request.conversation)?;
    let calls_mcp = turn
        .tool_calls
        .iter()
        .any(|a| matches!(a, crate::scenario::ToolAction::Mcp { .. }));
    if !calls_mcp || !crate::mcp::codex_needs_search(request.body) {
        return None;
    }
    let plan = ReplyPlan {
        model: request.model.clone(),
        thinking: None,
        text_chunks: Vec::new(),
        calls: vec![crate::mcp::tool_search_call()],
        input_tokens: request.input_tokens,
    };
    Some(render(
        state,
        request.vendor,
        &plan,
        request.stream,
        Delivery::default(),
    ))
}

/// `{last_tool_output}` in a turn's text becomes the last tool result the request carries.
fn echo_last_tool_output(plan: &mut ReplyPlan, request: &TurnRequest<'_>) {
    let marker = crate::mcp::LAST_TOOL_OUTPUT;
    if !plan.full_text().contains(marker) {
        return;
    }
    let output = crate::mcp::last_tool_output(request.vendor, request.body).unwrap_or_default();
    let text = plan.full_text().replace(marker, &output);
    plan.text_chunks = vec![text];
}

/// The usage a plan's response reports (every vendor renders the same two counts).
fn served(plan: &ReplyPlan) -> ServedUsage {
    ServedUsage {
        input_tokens: plan.input_tokens,
        output_tokens: plan.output_tokens(),
    }
}

fn render(
    state: &AppState,
    vendor: Vendor,
    plan: &ReplyPlan,
    stream: bool,
    delivery: Delivery,
) -> Response {
    if !stream {
        let body = match vendor {
            Vendor::Anthropic => anthropic::render_message(plan, &state.ids),
            Vendor::Gemini => gemini::render_response(plan, &state.ids),
            // Codex always streams; a non-streamed Responses call gets the final response object.
            Vendor::OpenAi => final_openai_response(plan, &state.ids),
        };
        return json_response(&body);
    }
    let events = match vendor {
        Vendor::Anthropic => anthropic::render_stream(plan, &state.ids),
        Vendor::OpenAi => openai::render_stream(plan, &state.ids),
        Vendor::Gemini => gemini::render_stream(plan, &state.ids),
    };
    sse_response(events, delivery)
}

fn sse_response(events: Vec<String>, delivery: Delivery) -> Response {
    let mut response = Response::new(sse::body(events, delivery));
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

fn final_openai_response(plan: &ReplyPlan, ids: &IdGen) -> Value {
    // The last event of the stream carries the complete response object.
    openai::render_stream(plan, ids)
        .last()
        .and_then(|event| {
            event
                .lines()
                .find_map(|l| l.strip_prefix("data: "))
                .map(str::to_owned)
        })
        .and_then(|data| serde_json::from_str::<Value>(&data).ok())
        .and_then(|event| event.get("response").cloned())
        .unwrap_or(Value::Null)
}

/// An injected HTTP failure in the vendor's error shape, retryable at once (gemini's after
/// `retry_delay`, its `RetryInfo` detail, which `None` leaves out).
pub fn error_response(
    vendor: Vendor,
    status: u16,
    message: Option<&str>,
    retry_delay: Option<&str>,
) -> Response {
    let default = default_error_message(status);
    let message = message.unwrap_or(&default);
    let body = match vendor {
        Vendor::Anthropic => anthropic::error_body(status, message),
        Vendor::OpenAi => openai::error_body(status, message),
        Vendor::Gemini => gemini::error_body(status, message, retry_delay),
    };
    let code = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut response = (code, json_response(&body)).into_response();
    let headers = response.headers_mut();
    headers.insert("retry-after", HeaderValue::from_static("0"));
    headers.insert("retry-after-ms", HeaderValue::from_static("0"));
    headers.insert("x-request-id", HeaderValue::from_static("req_fake_error"));
    headers.insert("request-id", HeaderValue::from_static("req_fake_error"));
    response
}

fn default_error_message(status: u16) -> String {
    match status {
        429 => "fake model: rate limited, please try again in 0s".to_owned(),
        500 => "fake model: internal server error".to_owned(),
        other => format!("fake model: injected error {other}"),
    }
}

fn side_call(entry: &mut LoggedRequest, reason: &str, response: Response) -> Response {
    entry.side_call = Some(reason.to_owned());
    entry.outcome = "side_call".into();
    response
}

fn json_response(body: &Value) -> Response {
    let mut response = Response::new(Body::from(body.to_string()));
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

fn not_found(method: &Method, path: &str, entry: &mut LoggedRequest) -> Response {
    entry.outcome = "not_found".into();
    let body = json!({"error": {"message": format!("fake model: no route for {method} {path}"), "code": 404}});
    (StatusCode::NOT_FOUND, json_response(&body)).into_response()
}
