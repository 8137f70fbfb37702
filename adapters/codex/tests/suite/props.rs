//! Property tests: no input makes the decoder (or `finish`) panic.

use forge_adapter_codex::CodexProvider;
use forge_domain::SessionId;
use forge_ports::{ProcessExit, Provider};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

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

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<f64>().prop_map(|f| json!(f)),
        "[a-z_/. …]{0,12}".prop_map(Value::String),
        "Reconnecting... [0-9]{1,3}/[0-9]{1,3}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::vec((prop::sample::select(FIELDS), inner), 0..6).prop_map(|kv| {
                Value::Object(kv.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
            }),
        ]
    })
}

/// An object shaped like a Codex event: a known `type`, maybe an item of a known type, and
/// random fields of random types.
fn event() -> impl Strategy<Value = Value> {
    (
        prop::sample::select(KINDS),
        prop::option::of(prop::sample::select(ITEM_KINDS)),
        prop::collection::vec((prop::sample::select(FIELDS), json_value()), 0..5),
        prop::collection::vec((prop::sample::select(FIELDS), json_value()), 0..5),
    )
        .prop_map(|(kind, item_kind, fields, item_fields)| {
            let mut obj: Map<String, Value> =
                fields.into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
            obj.insert("type".into(), json!(kind));
            if let Some(item_kind) = item_kind {
                let mut item: Map<String, Value> = item_fields
                    .into_iter()
                    .map(|(k, v)| (k.to_owned(), v))
                    .collect();
                item.insert("type".into(), json!(item_kind));
                obj.insert("item".into(), Value::Object(item));
            }
            Value::Object(obj)
        })
}

fn run(lines: &[String], resume: bool) {
    let provider = CodexProvider::new(settings());
    let mut req = request("p");
    if resume {
        req.resume_session_id = Some(SessionId::new("t").unwrap());
    }
    let mut dec = provider.decoder(&req);
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
    fn arbitrary_bytes_never_panic(chunks in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..200), 0..8)) {
        let lines: Vec<String> = chunks.iter().map(|c| String::from_utf8_lossy(c).into_owned()).collect();
        run(&lines, false);
    }

    #[test]
    fn arbitrary_json_never_panics(values in prop::collection::vec(json_value(), 0..8), resume in any::<bool>()) {
        let lines: Vec<String> = values.iter().map(Value::to_string).collect();
        run(&lines, resume);
    }

    #[test]
    fn codex_shaped_events_never_panic(values in prop::collection::vec(event(), 0..12), resume in any::<bool>(), cut in 0usize..64) {
        let mut lines: Vec<String> = values.iter().map(Value::to_string).collect();
        // Also a truncated copy of the last line.
        if let Some(last) = lines.last().cloned() {
            let mut end = cut.min(last.len());
            while !last.is_char_boundary(end) { end -= 1; }
            lines.push(last[..end].to_owned());
        }
        run(&lines, resume);
    }
}
