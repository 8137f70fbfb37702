//! Property tests: whatever arrives on stdout, the decoder never panics.

use forge_ports::Provider;
use forge_testkit::props::{check_line_shapes, cut, event_like, json_value};
use proptest::prelude::*;
use serde_json::Value;

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

fn value() -> impl Strategy<Value = Value> {
    json_value(KEYS, VALUES)
}

/// An object shaped like an event of a known kind, with random known fields.
fn event() -> impl Strategy<Value = Value> {
    event_like(KINDS, KEYS, VALUES)
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
    fn arbitrary_json_never_panics(values in prop::collection::vec(prop_oneof![value(), event()], 1..12)) {
        let lines: Vec<String> = values.iter().map(Value::to_string).collect();
        decode_all(&lines);
    }

    #[test]
    fn cut_json_never_panics(value in event(), at in any::<prop::sample::Index>()) {
        let line = value.to_string();
        decode_all(&[cut(&line, at.index(line.len() + 1))]);
    }

    /// `Json` exactly when the runtime's own check would say so (it keeps the line on that).
    #[test]
    fn line_shapes_are_reported_truthfully(
        values in prop::collection::vec(prop_oneof![event(), value()], 0..8),
        bytes in prop::collection::vec(any::<u8>(), 0..256),
        at in any::<prop::sample::Index>(),
        pad in prop::sample::select(&["", " ", "\t", "\r", " \u{a0}"][..]),
    ) {
        let mut lines: Vec<String> = values.iter().map(|v| format!("{pad}{v}{pad}")).collect();
        if let Some(last) = lines.last() {
            lines.push(cut(last, at.index(last.len() + 1)));
        }
        lines.extend(String::from_utf8_lossy(&bytes).split('\n').map(str::to_owned));
        check_line_shapes(provider().decoder(&request("p")).as_mut(), &lines)?;
    }
}
