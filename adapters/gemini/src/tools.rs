//! Gemini CLI tool names → canonical [`ToolKind`]s.

use forge_domain::{RawJson, ToolKind};
use serde::Deserialize;

/// The canonical kind of a Gemini tool (names as of 0.61, plus older aliases).
pub fn tool_kind(name: &str) -> ToolKind {
    match name {
        "run_shell_command" => ToolKind::Shell,
        "read_file" | "read_many_files" => ToolKind::FileRead,
        "write_file" | "replace" | "edit" => ToolKind::FileWrite,
        "glob" | "search_file_content" | "grep" | "grep_search" | "list_directory" | "ls" => {
            ToolKind::Search
        }
        "web_fetch" | "google_web_search" => ToolKind::Web,
        "invoke_agent" | "delegate_to_agent" | "codebase_investigator" => ToolKind::Subagent,
        "list_mcp_resources" | "read_mcp_resource" => ToolKind::Mcp,
        // MCP tools are `mcp_<server>_<tool>` in 0.61, `<server>__<tool>` before.
        _ if name.starts_with("mcp_") || name.contains("__") => ToolKind::Mcp,
        _ => ToolKind::Other,
    }
}

/// The path fields a writing tool's parameters may carry; everything else (the file's
/// content, say) is skipped unread.
#[derive(Deserialize)]
struct PathFields {
    #[serde(default)]
    file_path: Option<serde_json::Value>,
    #[serde(default)]
    absolute_path: Option<serde_json::Value>,
    #[serde(default)]
    path: Option<serde_json::Value>,
}

/// The file a writing tool touches, from its raw parameters (`file_path` for both
/// `write_file` and `replace`; older builds said `absolute_path` or `path`): the first of
/// them that is a string. Read only for writes that succeeded.
pub fn written_path(parameters: &RawJson) -> Option<String> {
    let fields: PathFields = serde_json::from_str(parameters.as_str()).ok()?;
    [fields.file_path, fields.absolute_path, fields.path]
        .into_iter()
        .find_map(|v| match v {
            Some(serde_json::Value::String(s)) => Some(s),
            _ => None,
        })
}

/// `path` relative to `workdir` when it lies inside it; unchanged otherwise.
pub fn relative_to(path: &str, workdir: &str) -> String {
    let workdir = workdir.trim_end_matches('/');
    if workdir.is_empty() {
        return path.to_owned();
    }
    match path.strip_prefix(workdir) {
        Some(rest) if rest.starts_with('/') => rest.trim_start_matches('/').to_owned(),
        _ => path.strip_prefix("./").unwrap_or(path).to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_follow_the_tool_names() {
        let cases = [
            ("run_shell_command", ToolKind::Shell),
            ("read_many_files", ToolKind::FileRead),
            ("replace", ToolKind::FileWrite),
            ("grep_search", ToolKind::Search),
            ("list_directory", ToolKind::Search),
            ("google_web_search", ToolKind::Web),
            ("mcp_github_create_issue", ToolKind::Mcp),
            ("github__create_issue", ToolKind::Mcp),
            ("write_todos", ToolKind::Other),
        ];
        for (name, kind) in cases {
            assert_eq!(tool_kind(name), kind, "{name}");
        }
    }

    #[test]
    fn written_paths_come_from_the_first_string_path_field() {
        let check = |params: &str, want: Option<&str>| {
            let got = written_path(&RawJson::from_parsed(params));
            assert_eq!(got.as_deref(), want, "{params}");
        };
        check(
            r#"{"file_path":"/w/a.txt","content":"x"}"#,
            Some("/w/a.txt"),
        );
        check(r#"{"content":"x","absolute_path":"/w/b"}"#, Some("/w/b"));
        check(r#"{"file_path":5,"path":"c"}"#, Some("c"));
        check(r#"{"content":"x"}"#, None);
        check(r#"{"path":"p","file_path":null}"#, Some("p"));
        check(r#"{"file_\u0070ath":"esc"}"#, Some("esc"));
        check(r#"{"file_path":"a","file_path":"b"}"#, None);
        check("[1]", None);
        check("null", None);
    }

    #[test]
    fn paths_inside_the_workdir_become_relative() {
        assert_eq!(relative_to("/w/src/a.rs", "/w"), "src/a.rs");
        assert_eq!(relative_to("/w/src/a.rs", "/w/"), "src/a.rs");
        assert_eq!(relative_to("/wx/a.rs", "/w"), "/wx/a.rs");
        assert_eq!(relative_to("./a.rs", "/w"), "a.rs");
        assert_eq!(relative_to("a.rs", ""), "a.rs");
    }
}
