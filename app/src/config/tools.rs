//! `[tools.NAME]`: command tools declared in a configuration file, served to the agent like
//! tools registered in code.
//!
//! ```toml
//! [tools.word_count]
//! description = "Counts the words of a file in the workspace"
//! input_schema = { type = "object", properties = { path = { type = "string", format = "path" } } }
//! command = ["python3", "tools/word_count.py"]   # run in the workspace, args JSON on stdin
//! timeout_ms = 10000
//! ```

use forge_domain::HostedTool;
use serde::Serialize;
use toml::{Table, Value};

use super::error::ConfigError;

const TOOL_KEYS: &[&str] = &["description", "input_schema", "command", "timeout_ms"];

/// One configured command tool.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolConfig {
    pub tool: HostedTool,
    /// Program and arguments; run in the workspace with the call's arguments on stdin.
    pub command: Vec<String>,
}

/// Reads the `tools` table of a file.
///
/// # Errors
/// [`ConfigError`] naming the key for an unknown key, a bad name or schema, a missing or
/// empty command, or a value of the wrong type.
pub fn parse_tools(tools: &Table, origin: &str) -> Result<Vec<(String, ToolConfig)>, ConfigError> {
    let mut out = Vec::new();
    for (name, section) in tools {
        let prefix = format!("tools.{name}");
        let err = |key: &str, reason: String| {
            let key = if key.is_empty() {
                prefix.clone()
            } else {
                format!("{prefix}.{key}")
            };
            ConfigError::new(origin, key, reason)
        };
        let Value::Table(section) = section else {
            return Err(err(
                "",
                format!("expected a table, found {}", section.type_str()),
            ));
        };
        if let Some(key) = section.keys().find(|k| !TOOL_KEYS.contains(&k.as_str())) {
            return Err(err(
                key,
                format!("unknown key (expected one of: {})", TOOL_KEYS.join(", ")),
            ));
        }
        let description = match section.get("description") {
            Some(Value::String(text)) => text.clone(),
            None => String::new(),
            Some(other) => {
                return Err(err(
                    "description",
                    format!("expected a string, found {}", other.type_str()),
                ));
            }
        };
        let schema = match section.get("input_schema") {
            None => serde_json::json!({"type": "object"}),
            Some(value) => {
                serde_json::to_value(value).map_err(|e| err("input_schema", e.to_string()))?
            }
        };
        let command: Vec<String> = match section.get("command") {
            Some(Value::Array(items)) => items
                .iter()
                .map(|item| item.as_str().map(str::to_owned))
                .collect::<Option<_>>()
                .ok_or_else(|| err("command", "expected an array of strings".into()))?,
            Some(other) => {
                return Err(err(
                    "command",
                    format!("expected an array of strings, found {}", other.type_str()),
                ));
            }
            None => return Err(err("command", "missing (required for a tool)".into())),
        };
        if command.first().is_none_or(String::is_empty) {
            return Err(err("command", "must name a program".into()));
        }
        let mut tool =
            HostedTool::new(name, description, schema).map_err(|e| err("", e.to_string()))?;
        match section.get("timeout_ms") {
            None => {}
            Some(Value::Integer(ms)) if *ms > 0 => {
                tool = tool.with_timeout_ms(u64::try_from(*ms).unwrap_or(u64::MAX));
            }
            Some(other) => {
                return Err(err(
                    "timeout_ms",
                    format!("expected a positive integer, found {other}"),
                ));
            }
        }
        out.push((name.clone(), ToolConfig { tool, command }));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Vec<(String, ToolConfig)>, String> {
        let table: Table = text.parse().map_err(|e| format!("{e}"))?;
        let tools = table
            .get("tools")
            .and_then(Value::as_table)
            .cloned()
            .unwrap_or_default();
        parse_tools(&tools, "file f").map_err(|e| e.to_string())
    }

    #[test]
    fn tools_parse_and_look_alikes_are_refused_by_key() {
        let ok = parse(
            r#"[tools.wc]
description = "count"
input_schema = { type = "object", properties = { path = { type = "string", format = "path" } } }
command = ["wc", "-w"]
timeout_ms = 500"#,
        )
        .unwrap();
        assert_eq!(ok.len(), 1);
        let (name, config) = &ok[0];
        assert_eq!(name, "wc");
        assert_eq!(config.command, ["wc", "-w"]);
        assert_eq!(config.tool.timeout_ms(), 500);
        assert_eq!(config.tool.path_args(), ["path"]);

        let check = |text: &str, key: &str| {
            let e = parse(text).unwrap_err();
            assert!(e.contains(key), "{text}: {e}");
        };
        check("[tools.wc]\ncommand = []", "tools.wc.command");
        check("[tools.wc]\ncommnd = [\"wc\"]", "tools.wc.commnd");
        check("[tools.wc]\ndescription = \"x\"", "tools.wc.command");
        check(
            "[tools.wc]\ncommand = [\"wc\"]\ntimeout_ms = -1",
            "tools.wc.timeout_ms",
        );
        check("[tools.\"bad name\"]\ncommand = [\"wc\"]", "tools.bad name");
        check(
            "[tools.wc]\ncommand = [\"wc\"]\ninput_schema = { type = \"string\" }",
            "tools.wc",
        );
        check("[tools]\nwc = 1", "tools.wc");
    }
}
