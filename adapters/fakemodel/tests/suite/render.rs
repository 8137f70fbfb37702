//! The SSE bodies of each wire format, for a text turn and a tool turn (ids are sequential).

use forge_adapter_fakemodel::reply::{IdGen, ReplyPlan};
use forge_adapter_fakemodel::tools::{ToolCatalog, Vendor};
use forge_adapter_fakemodel::{Scenario, ToolAction, Turn};
use forge_adapter_fakemodel::{anthropic, gemini, openai};
use serde_json::Value;

use super::fixtures::tools_request;

fn text_turn() -> Turn {
    Turn {
        text: Some("Hello from the fake model.".into()),
        chunks: Some(2),
        ..Turn::default()
    }
}

fn tool_turn() -> Turn {
    let scenario = Scenario::builtin("write_file").unwrap();
    let mut turn = scenario.turns[0].clone();
    turn.tool_calls.push(ToolAction::Shell {
        command: "echo a long command that spans more than sixty-four characters of JSON input"
            .into(),
        description: None,
        escalate: false,
    });
    turn
}

fn plan(vendor: Vendor, turn: &Turn) -> ReplyPlan {
    let body = tools_request(vendor);
    let catalog = ToolCatalog::from_request(vendor, &body);
    ReplyPlan::for_turn(vendor, turn, &catalog, Some("/work"), "fake-model", 42)
}

fn render(vendor: Vendor, turn: &Turn) -> String {
    let plan = plan(vendor, turn);
    let ids = IdGen::sequential();
    let events = match vendor {
        Vendor::Anthropic => anthropic::render_stream(&plan, &ids),
        Vendor::OpenAi => openai::render_stream(&plan, &ids),
        Vendor::Gemini => gemini::render_stream(&plan, &ids),
    };
    events.concat()
}

#[test]
fn anthropic_text_turn() {
    insta::assert_snapshot!(render(Vendor::Anthropic, &text_turn()));
}

#[test]
fn anthropic_tool_turn() {
    let sse = render(Vendor::Anthropic, &tool_turn());
    // Tool input arrives as 64-character partial-JSON pieces that rebuild the arguments.
    let pieces: Vec<String> = sse
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .map(|d| serde_json::from_str::<Value>(d).unwrap())
        .filter(|v| v["delta"]["type"] == "input_json_delta")
        .map(|v| v["delta"]["partial_json"].as_str().unwrap().to_owned())
        .collect();
    assert!(pieces.iter().all(|p| p.chars().count() <= 64), "{pieces:?}");
    assert!(pieces.len() > 2, "{pieces:?}");
    insta::assert_snapshot!(sse);
}

#[test]
fn anthropic_thinking_block_comes_first() {
    let turn = Turn {
        thinking: Some("Let me think.".into()),
        ..text_turn()
    };
    insta::assert_snapshot!(render(Vendor::Anthropic, &turn));
}

#[test]
fn openai_text_turn() {
    insta::assert_snapshot!(render(Vendor::OpenAi, &text_turn()));
}

#[test]
fn openai_tool_turn() {
    insta::assert_snapshot!(render(Vendor::OpenAi, &tool_turn()));
}

#[test]
fn openai_sequence_numbers_count_up_from_zero() {
    let sse = render(Vendor::OpenAi, &tool_turn());
    let numbers: Vec<u64> = sse
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .map(|d| {
            serde_json::from_str::<Value>(d).unwrap()["sequence_number"]
                .as_u64()
                .unwrap()
        })
        .collect();
    assert_eq!(numbers, (0..numbers.len() as u64).collect::<Vec<_>>());
}

#[test]
fn gemini_text_turn() {
    insta::assert_snapshot!(render(Vendor::Gemini, &text_turn()));
}

#[test]
fn gemini_tool_turn() {
    insta::assert_snapshot!(render(Vendor::Gemini, &tool_turn()));
}

#[test]
fn non_streamed_answers_carry_the_whole_turn() {
    let ids = IdGen::sequential();
    let message = anthropic::render_message(&plan(Vendor::Anthropic, &tool_turn()), &ids);
    assert_eq!(message["stop_reason"], "tool_use");
    assert_eq!(message["content"][0]["text"], "I'll create the file.");
    assert_eq!(
        message["content"][1]["input"]["file_path"],
        "/work/hello.txt"
    );
    let response = gemini::render_response(&plan(Vendor::Gemini, &text_turn()), &ids);
    assert_eq!(
        response["candidates"][0]["content"]["parts"][0]["text"],
        "Hello from the fake model."
    );
    assert_eq!(response["candidates"][0]["finishReason"], "STOP");
}

#[test]
fn error_bodies_follow_each_vendor() {
    insta::assert_json_snapshot!(serde_json::json!({
        "anthropic_429": anthropic::error_body(429, "slow down"),
        "anthropic_500": anthropic::error_body(500, "boom"),
        "openai_429": openai::error_body(429, "slow down"),
        "openai_500": openai::error_body(500, "boom"),
        "gemini_429": gemini::error_body(429, "slow down", Some("0s")),
        "gemini_429_suggesting_2s": gemini::error_body(429, "slow down", Some("2s")),
        "gemini_429_without_retry_info": gemini::error_body(429, "slow down", None),
        "gemini_500": gemini::error_body(500, "boom", Some("0s")),
    }));
}
