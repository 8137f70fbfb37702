//! One compact line per tool call: `✓ shell  ls -la`.

use forge_domain::{ToolCall, ToolCallStatus, ToolKind};
use serde_json::Value;

use super::style::Style;

/// How much of a tool's input a line shows.
const SUMMARY_CHARS: usize = 80;

/// The canonical kind's name (`shell`, `file_write`, …).
pub fn kind_name(kind: ToolKind) -> &'static str {
    match kind {
        ToolKind::Shell => "shell",
        ToolKind::FileRead => "file_read",
        ToolKind::FileWrite => "file_write",
        ToolKind::Search => "search",
        ToolKind::Web => "web",
        ToolKind::Mcp => "mcp",
        ToolKind::Subagent => "subagent",
        ToolKind::Other => "other",
    }
}

/// The most telling part of a tool's input: the command, the path, the pattern, else the
/// JSON, cut to one short line.
pub fn summarize_input(name: &str, input: &Value) -> String {
    const KEYS: &[&str] = &[
        "command",
        "cmd",
        "file_path",
        "path",
        "absolute_path",
        "pattern",
        "query",
        "url",
        "description",
    ];
    // Codex file changes: `{"changes":[{"path":…,"kind":"add"},…]}` → the paths.
    if let Some(Value::Array(changes)) = input.get("changes") {
        let paths: Vec<&str> = changes
            .iter()
            .filter_map(|c| c.get("path")?.as_str())
            .collect();
        if !paths.is_empty() {
            return one_line(&paths.join(" "), SUMMARY_CHARS);
        }
    }
    let text = KEYS
        .iter()
        .find_map(|k| match input.get(k)? {
            Value::String(s) => Some(s.clone()),
            Value::Array(items) => Some(
                items
                    .iter()
                    .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
                    .collect::<Vec<_>>()
                    .join(" "),
            ),
            _ => None,
        })
        .unwrap_or_else(|| match input {
            Value::Null => name.to_owned(),
            Value::Object(map) if map.is_empty() => name.to_owned(),
            other => other.to_string(),
        });
    one_line(&text, SUMMARY_CHARS)
}

fn one_line(text: &str, max: usize) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max {
        flat
    } else {
        let cut: String = flat.chars().take(max).collect();
        format!("{cut}…")
    }
}

/// `✓ shell  ls -la` (completed), `✗ shell  false (exit 1)` (failed), `… shell  sleep 9`
/// (no result).
pub fn render(style: Style, call: &ToolCall) -> String {
    let summary = summarize_input(&call.name, &call.input.to_value());
    let (mark, kind) = match call.status {
        ToolCallStatus::Completed => (style.green("✓"), kind_name(call.kind)),
        ToolCallStatus::Failed => (style.red("✗"), kind_name(call.kind)),
        ToolCallStatus::Pending => (style.yellow("…"), kind_name(call.kind)),
    };
    let exit = match (call.status, call.exit_code) {
        (ToolCallStatus::Failed, Some(code)) => style.dim(format!(" (exit {code})")),
        _ => String::new(),
    };
    format!("{mark} {}  {summary}{exit}", style.bold(kind))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(kind: ToolKind, input: Value, status: ToolCallStatus, exit: Option<i32>) -> ToolCall {
        ToolCall {
            id: "t".into(),
            kind,
            name: "Bash".into(),
            input: forge_domain::RawJson::from_value(&input),
            output: None,
            is_error: status == ToolCallStatus::Failed,
            exit_code: exit,
            status,
            canonical_name: None,
            duration_ms: None,
        }
    }

    #[test]
    fn lines_show_status_kind_and_the_telling_input() {
        let check = |c: ToolCall, want: &str| assert_eq!(render(Style::plain(), &c), want);
        check(
            call(
                ToolKind::Shell,
                json!({"command": "ls -la"}),
                ToolCallStatus::Completed,
                Some(0),
            ),
            "✓ shell  ls -la",
        );
        check(
            call(
                ToolKind::FileWrite,
                json!({"changes": [{"path": "/w/a.txt", "kind": "add"}, {"path": "/w/b.rs", "kind": "update"}]}),
                ToolCallStatus::Completed,
                None,
            ),
            "✓ file_write  /w/a.txt /w/b.rs",
        );
        check(
            call(
                ToolKind::Shell,
                json!({"command": ["bash", "-lc", "false"]}),
                ToolCallStatus::Failed,
                Some(1),
            ),
            "✗ shell  bash -lc false (exit 1)",
        );
        check(
            call(
                ToolKind::FileWrite,
                json!({"file_path": "a.txt", "content": "x"}),
                ToolCallStatus::Pending,
                None,
            ),
            "… file_write  a.txt",
        );
        check(
            call(ToolKind::Other, json!({}), ToolCallStatus::Completed, None),
            "✓ other  Bash",
        );
    }
}
