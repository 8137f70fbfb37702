//! Small helpers for reading requests: headers, strings buried in JSON, JSON-schema answers.

use axum::http::HeaderMap;
use serde_json::{Map, Value, json};

/// A header's value as text, when present and non-empty.
pub fn header(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(str::to_owned)
}

/// The rest of the line after `marker`, in the first string anywhere inside `value`.
pub fn find_line_after(value: &Value, marker: &str) -> Option<String> {
    match value {
        Value::String(text) => {
            let start = text.find(marker)? + marker.len();
            let line = text[start..].lines().next().unwrap_or("").trim();
            (!line.is_empty()).then(|| line.to_owned())
        }
        Value::Array(items) => items.iter().find_map(|item| find_line_after(item, marker)),
        Value::Object(map) => map.values().find_map(|item| find_line_after(item, marker)),
        _ => None,
    }
}

/// A short stable digest (FNV-1a), for keys derived from request text.
pub fn digest(text: &str) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in text.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{hash:016x}")
}

/// A value satisfying a JSON schema, for side calls that demand structured output.
///
/// Known routing fields get answers that steer the CLI sensibly: a Gemini complexity score
/// of 10 (the CLI then picks its flash model; 0 fails its validation) and `next_speaker`
/// `user` (otherwise the CLI would send the model another turn on its own).
pub fn fill_schema(schema: &Value) -> Value {
    fill(schema, None)
}

fn fill(schema: &Value, field: Option<&str>) -> Value {
    match field {
        Some("complexity_score") => return json!(10),
        Some("complexity_reasoning" | "reasoning") => return json!("simple (fake model)"),
        Some("next_speaker") => return json!("user"),
        Some("title") => return json!("Fake session"),
        _ => {}
    }
    if let Some(first) = schema
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
    {
        return first.clone();
    }
    let kind = schema
        .get("type")
        .and_then(Value::as_str)
        .map(str::to_ascii_lowercase);
    match kind.as_deref() {
        Some("object") => {
            let mut out = Map::new();
            let props = schema.get("properties").and_then(Value::as_object);
            for (name, sub) in props.into_iter().flatten() {
                out.insert(name.clone(), fill(sub, Some(name)));
            }
            Value::Object(out)
        }
        Some("array") => json!([]),
        Some("integer" | "number") => {
            let min = schema.get("minimum").and_then(Value::as_f64).unwrap_or(1.0);
            json!(min.max(1.0) as i64)
        }
        Some("boolean") => json!(false),
        _ => json!("fake"),
    }
}
