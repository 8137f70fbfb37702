//! Property tests: no input makes the decoder (or `finish`) panic, and every line's shape is
//! reported truthfully.

use forge_adapter_codex::CodexProvider;
use forge_domain::SessionId;
use forge_ports::{ProcessExit, Provider};
use forge_testkit::props::{byte_lines, check_line_shapes, cut, fields, json_value};
use proptest::prelude::*;
use serde_json::Value;

use super::common::{request, settings};

const KINDS: &[&str] = &[
    "thread.started",
    "turn.started",
    "turn.completed",
    "turn.failed",
    "error",
    "item.started",
    "item.updated",
    "item.completed",
];
const ITEM_KINDS: &[&str] = &[
    "agent_message",
    "reasoning",
    "command_execution",
    "file_change",
    "mcp_tool_call",
    "web_search",
    "todo_list",
    "error",
    "collab_tool_call",
];
const FIELDS: &[&str] = &[
    "id",
    "thread_id",
    "usage",
    "error",
    "message",
    "text",
    "command",
    "aggregated_output",
    "exit_code",
    "status",
    "changes",
    "server",
    "tool",
    "arguments",
    "result",
    "query",
    "path",
    "kind",
    "content",
    "input_tokens",
];
const STRINGS: &[&str] = &[
    "Reconnecting... 2/5",
    "Reconnecting... 10/3",
    "completed",
    "failed",
    "declined",
    "add",
    "update",
    "text",
    "item_1",
    "/w/a.txt",
];

fn value() -> impl Strategy<Value = Value> {
    json_value(FIELDS, STRINGS)
}

/// An object shaped like a Codex event: a known `type`, maybe an item of a known type, and
/// random fields of random types.
fn event() -> impl Strategy<Value = Value> {
    (
        prop::sample::select(KINDS),
        prop::option::of(prop::sample::select(ITEM_KINDS)),
        fields(FIELDS, value(), 5),
        fields(FIELDS, value(), 5),
    )
        .prop_map(|(kind, item_kind, mut obj, mut item)| {
            obj.insert("type".into(), Value::from(kind));
            if let Some(item_kind) = item_kind {
                item.insert("type".into(), Value::from(item_kind));
                obj.insert("item".into(), Value::Object(item));
            }
            Value::Object(obj)
        })
}

fn decoder(resume: bool) -> Box<dyn forge_ports::Decoder> {
    let mut req = request("p");
    if resume {
        req.resume_session_id = Some(SessionId::new("t").unwrap());
    }
    CodexProvider::new(settings()).decoder(&req)
}

fn run(lines: &[String], resume: bool) {
    let mut dec = decoder(resume);
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let _ = dec.decode_line(i as u64, l, &mut out);
    }
    let _ = dec.finish(Some(&ProcessExit {
        code: Some(1),
        stderr_tail: "Reading additional input from stdin...\nError: x".into(),
        ..ProcessExit::default()
    }));
    let _ = dec.finish(None);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn arbitrary_bytes_never_panic(lines in byte_lines(200, 8)) {
        run(&lines, false);
    }

    #[test]
    fn arbitrary_json_never_panics(values in prop::collection::vec(value(), 0..8), resume in any::<bool>()) {
        let lines: Vec<String> = values.iter().map(Value::to_string).collect();
        run(&lines, resume);
    }

    #[test]
    fn codex_shaped_events_never_panic(values in prop::collection::vec(event(), 0..12), resume in any::<bool>(), at in 0usize..64) {
        let mut lines: Vec<String> = values.iter().map(Value::to_string).collect();
        // Also a truncated copy of the last line.
        if let Some(last) = lines.last() {
            lines.push(cut(last, at));
        }
        run(&lines, resume);
    }

    /// `Json` exactly when the runtime's own check would say so (it keeps the line on that).
    #[test]
    fn line_shapes_are_reported_truthfully(
        values in prop::collection::vec(prop_oneof![event(), value()], 0..8),
        noise in byte_lines(40, 3),
        at in 0usize..64,
        pad in prop::sample::select(&["", " ", "\t", "\r", " \u{a0}"][..]),
    ) {
        let mut lines: Vec<String> = values.iter().map(|v| format!("{pad}{v}{pad}")).collect();
        if let Some(last) = lines.last() {
            lines.push(cut(last, at));
        }
        lines.extend(noise);
        check_line_shapes(decoder(false).as_mut(), &lines)?;
    }
}
