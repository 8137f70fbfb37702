//! Which requests are side calls, how conversations are told apart, where the workdir is.

use axum::http::{HeaderMap, HeaderValue};
use forge_adapter_fakemodel::inspect::fill_schema;
use forge_adapter_fakemodel::{anthropic, gemini, openai};
use serde_json::{Value, json};

use super::fixtures::tools_request;
use forge_adapter_fakemodel::tools::Vendor;

fn with(mut body: Value, key: &str, value: Value) -> Value {
    body[key] = value;
    body
}

#[test]
fn anthropic_side_calls_lack_tools_or_budget() {
    let turn = with(
        tools_request(Vendor::Anthropic),
        "max_tokens",
        json!(128_000),
    );
    let cases = [
        (turn.clone(), None),
        (with(turn.clone(), "tools", json!([])), Some("no_tools")),
        (json!({"messages": [], "max_tokens": 512}), Some("no_tools")),
        (
            with(turn.clone(), "max_tokens", json!(1)),
            Some("small_max_tokens"),
        ),
        (with(turn, "max_tokens", json!(32_000)), None),
    ];
    for (body, expected) in cases {
        assert_eq!(
            anthropic::side_call_reason(&body),
            expected,
            "{}",
            body["max_tokens"]
        );
    }
}

#[test]
fn openai_side_calls_lack_tools() {
    assert_eq!(
        openai::side_call_reason(&tools_request(Vendor::OpenAi)),
        None
    );
    assert_eq!(
        openai::side_call_reason(&json!({"input": []})),
        Some("no_tools")
    );
}

#[test]
fn conversations_are_keyed_by_session_headers() {
    let mut headers = HeaderMap::new();
    headers.insert("x-claude-code-session-id", HeaderValue::from_static("s-1"));
    assert_eq!(
        anthropic::conversation_key(&headers, &json!({})).as_deref(),
        Some("anthropic:s-1")
    );
    let mut codex = HeaderMap::new();
    codex.insert("session-id", HeaderValue::from_static("sess"));
    codex.insert("thread-id", HeaderValue::from_static("thr"));
    assert_eq!(
        openai::conversation_key(&codex, &json!({})).as_deref(),
        Some("openai:thr")
    );
    let by_cache_key = json!({"prompt_cache_key": "thr2"});
    assert_eq!(
        openai::conversation_key(&HeaderMap::new(), &by_cache_key).as_deref(),
        Some("openai:thr2")
    );
    assert_eq!(
        anthropic::conversation_key(&HeaderMap::new(), &json!({})),
        None
    );
}

fn gemini_body(dir: &str, prompt: &str, date: &str) -> Value {
    let context = format!(
        "<session_context>\nToday's date is {date}.\n- **Workspace Directories:**\n  - {dir}\n- **Directory Structure:**\n</session_context>"
    );
    json!({"contents": [
        {"role": "user", "parts": [{"text": context}, {"text": prompt}]},
        {"role": "model", "parts": [{"text": "ok"}]}
    ]})
}

#[test]
fn gemini_conversations_are_workspace_plus_first_prompt() {
    let a = gemini::conversation_key(&gemini_body("/w/a", "Say hello.", "Monday")).unwrap();
    let same_later =
        gemini::conversation_key(&gemini_body("/w/a", "Say hello.", "Tuesday")).unwrap();
    let other_dir = gemini::conversation_key(&gemini_body("/w/b", "Say hello.", "Monday")).unwrap();
    assert_eq!(
        a, same_later,
        "the rebuilt session context must not change the key"
    );
    assert_ne!(a, other_dir);
    assert_eq!(
        gemini::workdir(&gemini_body("/w/a", "x", "d")).as_deref(),
        Some("/w/a")
    );
    assert_eq!(gemini::conversation_key(&json!({"contents": []})), None);
}

#[test]
fn anthropic_workdir_comes_from_the_environment_block() {
    let body = json!({"messages": [
        {"role": "system", "content": [{"type": "text", "text": "# Environment\n - Primary working directory: /w/x\n - Is a git repository: true"}]},
        {"role": "user", "content": "hi"}
    ]});
    assert_eq!(anthropic::workdir(&body).as_deref(), Some("/w/x"));
    let older = json!({"system": "Primary working directory: /w/y\n"});
    assert_eq!(anthropic::workdir(&older).as_deref(), Some("/w/y"));
}

#[test]
fn gemini_paths_parse_for_any_api_version() {
    let call = gemini::parse_path("/v1beta/models/gemini-3.8-flash:streamGenerateContent").unwrap();
    assert_eq!(
        (call.model.as_str(), call.method.as_str()),
        ("gemini-3.8-flash", "streamGenerateContent")
    );
    assert!(gemini::parse_path("/v1/models/m:generateContent").is_some());
    assert_eq!(gemini::parse_path("/v1/responses"), None);
}

#[test]
fn structured_side_calls_get_schema_shaped_answers() {
    // The routing classifier gemini 0.61.0 sends (a score of 10 picks its flash model).
    let classifier = json!({"type": "OBJECT", "required": ["complexity_reasoning", "complexity_score"],
        "properties": {"complexity_reasoning": {"type": "STRING"}, "complexity_score": {"type": "INTEGER"}}});
    assert_eq!(
        fill_schema(&classifier),
        json!({"complexity_reasoning": "simple (fake model)", "complexity_score": 10})
    );
    let next_speaker = json!({"type": "object", "properties": {
        "reasoning": {"type": "string"}, "next_speaker": {"type": "string", "enum": ["model", "user"]}}});
    assert_eq!(fill_schema(&next_speaker)["next_speaker"], "user");
    let misc = json!({"type": "object", "properties": {"n": {"type": "number", "minimum": 3},
        "ok": {"type": "boolean"}, "tags": {"type": "array"}, "kind": {"enum": ["a", "b"]}}});
    assert_eq!(
        fill_schema(&misc),
        json!({"n": 3, "ok": false, "tags": [], "kind": "a"})
    );
}
