//! Lines the decoder must survive: truncated JSON, unknown kinds, wrong field types, huge
//! lines, non-JSON text, CRLF, legacy-format objects.

use forge_domain::{AgentEvent, ForgeError};
use forge_ports::Provider;

use forge_adapter_codex::CodexProvider;

use super::common::{request, settings};

/// Decodes one line; returns its events and whether it was a parsing error.
fn line(text: &str) -> (Vec<AgentEvent>, Option<ForgeError>) {
    let provider = CodexProvider::new(settings());
    let mut dec = provider.decoder(&request("p"));
    let mut out = Vec::new();
    let err = dec.decode_line(7, text, &mut out).err();
    (out, err)
}

fn kinds(events: &[AgentEvent]) -> Vec<String> {
    events
        .iter()
        .map(|e| match e {
            AgentEvent::Unknown { kind, .. } => format!("unknown:{kind}"),
            other => other.kind().to_owned(),
        })
        .collect()
}

#[test]
fn cases() {
    let check = |text: &str, want: &[&str], is_err: bool| {
        let (events, err) = line(text);
        assert_eq!(kinds(&events), want, "{text:.80}");
        assert_eq!(err.is_some(), is_err, "{text:.80}: {err:?}");
        if let Some(ForgeError::Parsing { line, .. }) = &err {
            assert_eq!(*line, 7);
        }
    };
    check("", &[], false);
    check("   ", &[], false);
    check("\r", &[], false);
    check(r#"{"type":"turn.started"}"#, &[], false);
    check("{\"type\":\"turn.started\"}\r", &[], false);
    check(
        r#"{"type":"item.completed","item":{"id":"item_0","type":"agent_mess"#,
        &["unparsed"],
        true,
    );
    check(r#"{"type":"#, &["unparsed"], true);
    check("[1, 2", &["unparsed"], true);
    check("[1, 2]", &["unknown:array"], false);
    check(
        "WARNING: proceeding, even though we could not create PATH aliases",
        &["unparsed"],
        false,
    );
    check("42", &["unparsed"], false);
    check(
        r#"{"type":"item.plan.delta","item_id":"i","delta":"x"}"#,
        &["unknown:item.plan.delta"],
        false,
    );
    check(
        r#"{"type":"brand.new","x":{"y":[1,2,3]}}"#,
        &["unknown:brand.new"],
        false,
    );
    check(
        r#"{"id":"0","msg":{"type":"task_started"}}"#,
        &["unknown:untyped"],
        false,
    );
    check(
        r#"{"type":"item.completed"}"#,
        &["unknown:item.completed"],
        false,
    );
    check(
        r#"{"type":"item.completed","item":{"id":"x"}}"#,
        &["unknown:item/untyped"],
        false,
    );
    check(
        r#"{"type":"item.completed","item":{"id":"x","type":"collab_tool_call"}}"#,
        &["unknown:item/collab_tool_call"],
        false,
    );
    // Valid JSON whose fields have unexpected types: kept whole, reported as a parse error.
    check(
        r#"{"type":"item.completed","item":{"id":"i","type":"command_execution","exit_code":"three"}}"#,
        &["unknown:unreadable/item.completed"],
        true,
    );
    check(r#"{"type":7}"#, &["unknown:unreadable/"], true);
    check(
        r#"{"type":"thread.started","thread_id":"has space"}"#,
        &["warning"],
        false,
    );
    check(r#"{"type":"thread.started"}"#, &["warning"], false);
    check(r#"{"type":"turn.failed"}"#, &["error", "completed"], false);
    check(r#"{"type":"error"}"#, &["error"], false);
    check(
        r#"{"type":"turn.completed"}"#,
        &["usage_update", "completed"],
        false,
    );
    check(
        r#"{"type":"item.completed","item":{"id":"c","type":"file_change","changes":"not a list","status":"completed"}}"#,
        &["tool_call_started", "tool_call_finished", "warning"],
        false,
    );
    check(
        r#"{"type":"item.completed","item":{"id":"c","type":"file_change","changes":[{"path":"/a","kind":{"type":"update","move_path":"/b"}}]}}"#,
        &["tool_call_started", "tool_call_finished", "file_changed"],
        false,
    );
    check(
        r#"{"type":"item.completed","item":{"id":"c","type":"command_execution","exit_code":99999999999}}"#,
        &["tool_call_started", "tool_call_finished"],
        false,
    );
}

#[test]
fn escaped_text_is_unescaped() {
    let (events, _) = line(
        r#"{"type":"item.completed","item":{"id":"a","type":"agent_message","text":"tab\there \"quoted\" \u00e9"}}"#,
    );
    assert_eq!(
        events,
        vec![AgentEvent::Text {
            text: "tab\there \"quoted\" é".into(),
            delta: false
        }]
    );
}

#[test]
fn huge_lines_decode_whole() {
    let big = "x".repeat(20 * 1024 * 1024);
    let text = format!(
        r#"{{"type":"item.completed","item":{{"id":"a","type":"agent_message","text":"{big}"}}}}"#
    );
    let (events, err) = line(&text);
    assert!(err.is_none());
    assert!(matches!(&events[..], [AgentEvent::Text { text, .. }] if text.len() == big.len()));

    let (events, err) = line(&text[..text.len() / 2]);
    assert!(matches!(err, Some(ForgeError::Parsing { ref excerpt, .. }) if excerpt.len() < 200));
    assert!(matches!(&events[..], [AgentEvent::Unparsed { .. }]));
}

#[test]
fn the_decoder_goes_on_after_a_bad_line() {
    let provider = CodexProvider::new(settings());
    let mut dec = provider.decoder(&request("p"));
    let mut out = Vec::new();
    let doc = concat!(
        "{\"type\":\"thread.started\",\"thread_id\":\"t1\"}\n",
        "{\"type\":\"item.completed\",\"item\":{\n",
        "not json at all\n",
        "{\"type\":\"item.completed\",\"item\":{\"id\":\"i\",\"type\":\"agent_message\",\"text\":\"done\"}}\r\n",
        "{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}\n",
    );
    let errors = dec.decode_document(doc, &mut out);
    assert_eq!(errors.len(), 1);
    let pieces = dec.finish(None);
    assert_eq!(pieces.reported_success, Some(true));
    assert_eq!(pieces.content, "done");
    assert_eq!(pieces.metadata.session_id.unwrap().as_str(), "t1");
}

/// Codex prints `type` first (and an item's `id`, `type` first); the same lines with their
/// keys in another order must give the same events and the same errors.
#[test]
fn key_order_does_not_change_what_a_line_decodes_to() {
    let mut lines: Vec<String> = forge_testkit::fixtures::transcripts("codex")
        .iter()
        .flat_map(|t| t.stdout.lines().map(str::to_owned).collect::<Vec<_>>())
        .collect();
    lines.extend(
        [
            r#"{"type":"item.started","item":{"id":"m1","type":"mcp_tool_call","server":"s","tool":"t","arguments":{"b":1,"a":[2]},"status":"in_progress"}}"#,
            r#"{"type":"item.completed","item":{"id":"m1","type":"mcp_tool_call","server":"s","tool":"t","arguments":{"b":1,"a":[2]},"result":{"content":[{"type":"text","text":"ok"}]},"status":"completed"}}"#,
            r#"{"type":"item.completed","item":{"id":"w1","type":"web_search","query":"q","action":{"type":"search"}}}"#,
            r#"{"type":"item.completed","item":{"id":"r1","type":"reasoning","text":""}}"#,
            r#"{"type":"item.completed","item":{"id":"e1","type":"error","message":"Model metadata for `m` not found."}}"#,
            r#"{"type":"item.completed","item":{"id":"c9","type":"command_execution","command":"false","aggregated_output":"","exit_code":1,"status":"failed"}}"#,
            r#"{"type":"item.completed","item":{"id":"i","type":"command_execution","exit_code":"three"}}"#,
            r#"{"type":"item.completed","item":{"id":"i","type":"agent_message","text":7}}"#,
            r#"{"type":"turn.failed","error":{"message":"boom"}}"#,
            r#"{"type":"error","message":"Reconnecting... 2/5"}"#,
            r#"{"type":"thread.started","thread_id":"has space"}"#,
        ]
        .map(str::to_owned),
    );
    // With keys sorted, `type` comes after `item`, and an item's `id` after most of its fields.
    forge_testkit::reorder::assert_paths_agree(
        || CodexProvider::new(settings()).decoder(&request("p")),
        &lines,
    );

    // A repeated key (which a reordering through a map would drop) is an error either way.
    let repeated = [
        (
            r#"{"type":"item.completed","item":{"id":"i","type":"agent_message","text":"a","type":"reasoning"}}"#,
            "unknown:unreadable/item.completed",
        ),
        (
            r#"{"type":"turn.started","type":"turn.completed"}"#,
            "unknown:unreadable/",
        ),
    ];
    for (text, want) in repeated {
        let (events, err) = line(text);
        assert!(err.is_some(), "{text}");
        assert_eq!(kinds(&events), [want], "{text}");
    }
}
