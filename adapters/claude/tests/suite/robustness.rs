//! Lines the CLI should not print but might: the decoder reports, keeps going, never panics.

use forge_domain::{AgentEvent, ForgeError, ToolKind};
use forge_ports::Provider;

use super::support::{provider, request};

/// Decodes `lines` and checks the event kinds and which lines were reported as errors.
fn check(lines: &[&str], want_kinds: &[&str], want_error_lines: &[u64]) -> Vec<AgentEvent> {
    let mut decoder = provider().decoder(&request("p"));
    let mut out = Vec::new();
    let mut error_lines = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if let Err(e) = decoder.decode_line(i as u64 + 1, line, &mut out) {
            match e {
                ForgeError::Parsing { line, .. } => error_lines.push(line),
                other => panic!("unexpected error {other:?}"),
            }
        }
    }
    let kinds: Vec<_> = out.iter().map(AgentEvent::kind).collect();
    let shown: Vec<String> = lines
        .iter()
        .map(|l| forge_domain::error::excerpt(l, 80))
        .collect();
    assert_eq!(kinds, want_kinds, "{shown:?}");
    assert_eq!(error_lines, want_error_lines, "{shown:?}");
    let _ = decoder.finish(None);
    out
}

#[test]
fn blank_and_non_json_lines() {
    check(&["", "   ", "\r"], &[], &[]);
    let out = check(
        &[
            "[SandboxDebug] hello",
            "Warning: no stdin data received in 3s",
            "[]",
        ],
        &["unparsed", "unparsed"],
        &[],
    );
    assert_eq!(
        out[0],
        AgentEvent::Unparsed {
            raw: "[SandboxDebug] hello".into()
        }
    );
}

#[test]
fn truncated_json_is_unparsed_and_reported() {
    let out = check(
        &[
            r#"{"type":"assistant","message":{"content":[{"type":"text","text":"cut"#,
            r#"{"type":"rate_limit_event"}"#,
        ],
        &["unparsed", "unknown"],
        &[1],
    );
    assert!(matches!(&out[0], AgentEvent::Unparsed { raw } if raw.ends_with("cut")));
    check(&["[1, 2"], &["unparsed"], &[1]);
}

#[test]
fn unknown_kinds_and_untyped_objects_are_kept_raw() {
    let out = check(
        &[
            r#"{"type":"brand_new","x":1}"#,
            r#"{"a":1}"#,
            r#"{"type":"system","subtype":"hook_started","hook":"x"}"#,
            r#"{"type":"system"}"#,
        ],
        &["unknown", "unknown", "unknown", "unknown"],
        &[],
    );
    let kinds: Vec<_> = out
        .iter()
        .map(|e| match e {
            AgentEvent::Unknown { kind, raw } => {
                assert!(raw.as_str().starts_with('{'));
                kind.as_str()
            }
            _ => unreachable!(),
        })
        .collect();
    assert_eq!(
        kinds,
        ["brand_new", "untyped", "system/hook_started", "system"]
    );
}

#[test]
fn fields_of_the_wrong_type_are_ignored_not_fatal() {
    let out = check(
        &[
            r#"{"type":"result","subtype":5,"is_error":"yes","usage":[1],"result":{"a":1},"num_turns":-2,"total_cost_usd":"1"}"#,
            r#"{"type":"assistant","message":"hi"}"#,
            r#"{"type":"assistant","message":{"content":[7,"x",{"type":"text","text":5},{"type":"text","text":"ok"}]}}"#,
            r#"{"type":"user","message":{"content":"an echoed prompt"}}"#,
            r#"{"type":"system","subtype":"init","session_id":"has space"}"#,
            r#"{"type":"stream_event","event":{"type":"content_block_delta","delta":{"type":"input_json_delta","partial_json":"{"}}}"#,
            r#"{"type":"stream_event","event":[]}"#,
        ],
        &["completed", "unknown", "text", "unknown"],
        &[],
    );
    assert!(matches!(
        &out[0],
        AgentEvent::Completed {
            status: forge_domain::ExecutionStatus::Success,
            usage: None,
            cost_usd: None,
            num_turns: None,
            ..
        }
    ));
}

#[test]
fn duplicate_keys_are_kept_raw_and_reported() {
    let out = check(&[r#"{"type":"x","type":"y"}"#], &["unknown"], &[1]);
    assert!(
        matches!(&out[0], AgentEvent::Unknown { kind, raw } if kind == "untyped" && raw.as_str().contains(r#""y""#))
    );
}

#[test]
fn deep_nesting_does_not_overflow_the_stack() {
    // A valid (if silly) array: its one element is not an event object.
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    check(&[&deep], &["unparsed"], &[]);
    let cut = "[".repeat(100_000);
    check(&[&cut], &["unparsed"], &[1]);
    let deep_obj = format!(
        r#"{{"type":"x","a":{}1{}}}"#,
        "[".repeat(10_000),
        "]".repeat(10_000)
    );
    // Skipped fields are not built, so their depth costs nothing.
    check(&[&deep_obj], &["unknown"], &[]);
}

#[test]
fn a_huge_line_decodes_whole() {
    let text = "é".repeat(10 * 1024 * 1024);
    let line = format!(
        r#"{{"type":"assistant","message":{{"content":[{{"type":"text","text":"{text}"}}]}}}}"#
    );
    let out = check(&[&line], &["text"], &[]);
    assert!(matches!(&out[0], AgentEvent::Text { text: t, delta: false } if t.len() == text.len()));
}

#[test]
fn a_json_array_line_decodes_each_element() {
    let out = check(
        &[
            r#"[{"type":"rate_limit_event"}, 5, {"type":"result","subtype":"success","is_error":false,"result":"ok"}]"#,
        ],
        &["unknown", "unparsed", "completed"],
        &[],
    );
    assert!(matches!(&out[2], AgentEvent::Completed { result_text: Some(t), .. } if t == "ok"));
}

#[test]
fn a_tool_result_without_its_start_is_kept() {
    let out = check(
        &[
            r#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"lost","content":[{"type":"text","text":"a"},{"type":"image"},{"type":"text","text":"b"}]}]}}"#,
        ],
        &["tool_call_finished"],
        &[],
    );
    assert_eq!(
        out[0],
        AgentEvent::ToolCallFinished {
            call_id: "lost".into(),
            kind: ToolKind::Other,
            name: "".into(),
            output: Some("a\nb".into()),
            is_error: false,
            exit_code: None,
        }
    );
}

#[test]
fn error_results_take_their_stop_reason_from_the_subtype_or_terminal_reason() {
    let cases = [
        (
            r#"{"type":"result","subtype":"error_max_budget_usd","is_error":true,"terminal_reason":"budget_exhausted"}"#,
            "error_max_budget_usd",
        ),
        (
            r#"{"type":"result","subtype":"success","is_error":true,"terminal_reason":"api_error"}"#,
            "api_error",
        ),
        (
            r#"{"type":"result","subtype":"success","is_error":false,"stop_reason":"end_turn","terminal_reason":"completed"}"#,
            "end_turn",
        ),
        (
            r#"{"type":"result","subtype":"success","terminal_reason":"completed"}"#,
            "completed",
        ),
    ];
    for (line, want) in cases {
        let out = check(&[line], &["completed"], &[]);
        assert!(
            matches!(&out[0], AgentEvent::Completed { stop_reason: Some(s), .. } if s == want),
            "{line}: {out:?}"
        );
    }
}

#[test]
fn a_multi_line_json_document_decodes_whole() {
    let doc = "[\n  {\"type\": \"system\", \"subtype\": \"init\", \"session_id\": \"s-1\"},\n  {\"type\": \"result\", \"subtype\": \"success\", \"is_error\": false, \"result\": \"done\"}\n]\n";
    let mut decoder = provider().decoder(&request("p"));
    let mut out = Vec::new();
    assert!(decoder.decode_document(doc, &mut out).is_empty());
    let kinds: Vec<_> = out.iter().map(AgentEvent::kind).collect();
    assert_eq!(kinds, ["session_started", "completed"]);
    let pieces = decoder.finish(None);
    assert_eq!(pieces.content, "done");
    assert_eq!(pieces.metadata.session_id.unwrap().as_str(), "s-1");
}

/// The CLI prints `type` first in every kind but `result`; the decoder reads the kind off
/// the line's start and parses the line into that kind's struct. The same lines with their
/// keys in another order take the general path (read as a result first, then re-read):
/// both must give the same events and the same errors.
#[test]
fn the_kind_prefix_path_agrees_with_the_general_path() {
    let mut lines: Vec<String> = super::support::all_transcripts()
        .iter()
        .flat_map(|t| t.stdout.lines().map(str::to_owned).collect::<Vec<_>>())
        .collect();
    lines.extend(
        [
            r#"{"type":"system","subtype":"permission_denied","tool_name":"Bash","message":"no"}"#,
            r#"{"type":"system","subtype":"brand_new","x":1}"#,
            r#"{"type":"brand_new","x":{"y":[1]}}"#,
            r#"{"type":"assistant","message":"not an object"}"#,
            r#"{"type":"user","message":{"content":"echoed prompt"}}"#,
            r#"{"type":"stream_event","event":{"type":"content_block_delta","delta":{"type":"text_delta","text":"a"}}}"#,
            r#"{"no_type":true}"#,
        ]
        .map(str::to_owned),
    );
    forge_testkit::reorder::assert_paths_agree(|| provider().decoder(&request("p")), &lines);
}
