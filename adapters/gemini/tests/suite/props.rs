//! The decoder never panics, whatever it is fed, and `finish` never panics after it; every
//! line's shape is reported truthfully.

use forge_ports::Provider;
use forge_testkit::props::{self, check_line_shapes, cut};
use proptest::prelude::*;
use serde_json::Value;

use super::support::{exit, provider, request};

const KINDS: [&str; 7] = [
    "init",
    "message",
    "tool_use",
    "tool_result",
    "error",
    "result",
    "other",
];
const FIELDS: [&str; 16] = [
    "session_id",
    "model",
    "role",
    "content",
    "delta",
    "tool_name",
    "tool_id",
    "parameters",
    "status",
    "output",
    "error",
    "severity",
    "message",
    "stats",
    "response",
    "type",
];

const STRINGS: &[&str] = &[
    "success",
    "error",
    "assistant",
    "user",
    "warning",
    "write_file",
];

fn json_value() -> impl Strategy<Value = Value> {
    props::json_value(&FIELDS, STRINGS)
}

/// An object with `type` set to a known kind and random known fields.
fn event_like() -> impl Strategy<Value = Value> {
    props::event_like(&KINDS, &FIELDS, STRINGS)
}

fn run(lines: &[String], code: i32, stderr: &str) {
    let mut dec = provider().decoder(&request("p", "/w"));
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let _ = dec.decode_line(i as u64 + 1, line, &mut out);
    }
    let _ = dec.finish(Some(&exit(code, stderr)));
    // The same input as one document.
    let mut dec = provider().decoder(&request("p", "/w"));
    let _ = dec.decode_document(&lines.join("\n"), &mut out);
    let _ = dec.finish(None);
}

fn decode_all(lines: &[String]) -> (Vec<forge_domain::AgentEvent>, usize) {
    let mut dec = provider().decoder(&request("p", "/w"));
    let mut out = Vec::new();
    let errors = lines
        .iter()
        .enumerate()
        .filter(|(i, line)| dec.decode_line(*i as u64 + 1, line, &mut out).is_err())
        .count();
    (out, errors)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// The hand-read `{"type":…,"timestamp":…,` prefix gives what the parser gives.
    #[test]
    fn fast_prefix_agrees_with_the_parser(
        events in prop::collection::vec(
            (prop::sample::select(&KINDS[..]),
             prop::collection::vec((prop::sample::select(&FIELDS[..]), json_value()), 1..6)),
            1..6),
    ) {
        let (mut fast, mut plain) = (Vec::new(), Vec::new());
        for (kind, fields) in &events {
            let body: Vec<String> = fields
                .iter()
                .map(|(k, v)| format!("{}:{v}", Value::String((*k).to_owned())))
                .collect();
            let body = body.join(",");
            fast.push(format!(r#"{{"type":"{kind}","timestamp":"2026-11-21T23:41:30.563Z",{body}}}"#));
            plain.push(format!(r#"{{{body},"type":"{kind}"}}"#));
        }
        let (a, a_errors) = decode_all(&fast);
        let (b, b_errors) = decode_all(&plain);
        prop_assert_eq!(a_errors, b_errors);
        // Unknown events keep their raw line, which differs by construction.
        let strip = |events: Vec<forge_domain::AgentEvent>| -> Vec<String> {
            events.into_iter().map(|e| match e {
                forge_domain::AgentEvent::Unknown { kind, .. } => format!("unknown:{kind}"),
                forge_domain::AgentEvent::Unparsed { .. } => "unparsed".to_owned(),
                other => serde_json::to_string(&other).unwrap(),
            }).collect()
        };
        prop_assert_eq!(strip(a), strip(b));
    }

    #[test]
    fn arbitrary_bytes_never_panic(lines in props::byte_lines(64, 8),
                                   code in -1i32..300, stderr in ".{0,40}") {
        run(&lines, code, &stderr);
    }

    /// `Json` exactly when the runtime's own check would say so (it keeps the line on that),
    /// on the hand-read fast prefix too (its strings may hold anything, control bytes too).
    #[test]
    fn line_shapes_are_reported_truthfully(
        values in prop::collection::vec(prop_oneof![event_like(), json_value()], 0..6),
        prefixed in prop::collection::vec((prop::sample::select(&KINDS[..]), "[ -~\\\u{0}-\u{1f}é]{0,6}", json_value()), 0..4),
        noise in props::byte_lines(40, 3),
        at in 0usize..80,
        pad in prop::sample::select(&["", " ", "\t", "\r", " \u{a0}"][..]),
    ) {
        let mut lines: Vec<String> = values.iter().map(|v| format!("{pad}{v}{pad}")).collect();
        for (kind, stamp, field) in &prefixed {
            lines.push(format!(r#"{{"type":"{kind}","timestamp":"{stamp}","content":{field}}}"#));
        }
        if let Some(last) = lines.last() {
            lines.push(cut(last, at));
        }
        lines.extend(noise);
        check_line_shapes(provider().decoder(&request("p", "/w")).as_mut(), &lines)?;
    }

    #[test]
    fn arbitrary_json_never_panics(values in prop::collection::vec(prop_oneof![json_value(), event_like()], 0..10),
                                   code in -1i32..300, pretty in any::<bool>()) {
        let lines: Vec<String> = values.iter().map(Value::to_string).collect();
        let stderr = values.first().map(|v| if pretty {
            serde_json::to_string_pretty(v).unwrap()
        } else {
            v.to_string()
        }).unwrap_or_default();
        run(&lines, code, &stderr);
        // A pretty document as `-o json` prints it.
        if let Some(v) = values.first() {
            run(&[serde_json::to_string_pretty(v).unwrap()], code, "");
        }
    }
}
