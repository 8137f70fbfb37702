//! Property tests: whatever arrives on stdout, the decoder never panics.

use forge_ports::Provider;
use proptest::prelude::*;
use serde_json::{Map, Value};

use super::support::{provider, request};

const KINDS: &[&str] = &[
    "system",
    "assistant",
    "user",
    "stream_event",
    "result",
    "rate_limit_event",
];
const KEYS: &[&str] = &[
    "type",
    "subtype",
    "session_id",
    "model",
    "cwd",
    "tools",
    "claude_code_version",
    "message",
    "content",
    "text",
    "thinking",
    "id",
    "name",
    "input",
    "tool_use_id",
    "is_error",
    "result",
    "errors",
    "usage",
    "input_tokens",
    "event",
    "delta",
    "attempt",
    "error_status",
    "error",
    "tool_use_result",
    "total_cost_usd",
    "num_turns",
    "permission_denials",
    "tool_name",
];
const VALUES: &[&str] = &[
    "init",
    "api_retry",
    "permission_denied",
    "text",
    "thinking",
    "tool_use",
    "tool_result",
    "content_block_delta",
    "text_delta",
    "thinking_delta",
    "success",
    "error_max_turns",
    "<synthetic>",
    "Write",
    "Bash",
    "create",
    "<WORKDIR>/a.txt",
    "t1",
];

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        prop::sample::select(VALUES).prop_map(Value::from),
        ".{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(5, 64, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((prop::sample::select(KEYS), inner), 0..8).prop_map(|kv| {
                Value::Object(
                    kv.into_iter()
                        .map(|(k, v)| (k.to_owned(), v))
                        .collect::<Map<_, _>>(),
                )
            }),
        ]
    })
}

/// An object shaped like an event of a known kind, with random known fields.
fn event_like() -> impl Strategy<Value = Value> {
    (
        prop::sample::select(KINDS),
        prop::collection::vec((prop::sample::select(KEYS), json_value()), 0..10),
    )
        .prop_map(|(kind, fields)| {
            let mut map: Map<String, Value> =
                fields.into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
            map.insert("type".into(), Value::from(kind));
            Value::Object(map)
        })
}

fn decode_all(lines: &[String]) {
    let mut decoder = provider().decoder(&request("p"));
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let _ = decoder.decode_line(i as u64 + 1, line, &mut out);
    }
    let _ = decoder.finish(None);
    let mut again = provider().decoder(&request("p"));
    let _ = again.decode_document(&lines.join("\n"), &mut out);
    let _ = again.finish(Some(&forge_ports::ProcessExit {
        code: Some(1),
        ..Default::default()
    }));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..2048)) {
        let text = String::from_utf8_lossy(&bytes);
        let lines: Vec<String> = text.split('\n').map(str::to_owned).collect();
        decode_all(&lines);
    }

    #[test]
    fn arbitrary_json_never_panics(values in prop::collection::vec(prop_oneof![json_value(), event_like()], 1..12)) {
        let lines: Vec<String> = values.iter().map(Value::to_string).collect();
        decode_all(&lines);
    }

    #[test]
    fn cut_json_never_panics(value in event_like(), cut in any::<prop::sample::Index>()) {
        let line = value.to_string();
        let mut end = cut.index(line.len() + 1);
        while !line.is_char_boundary(end) { end -= 1; }
        decode_all(&[line[..end].to_owned()]);
    }
}
