//! Claude Code tool names → canonical tool kinds, and which tools write files.

use forge_domain::ToolKind;

/// The canonical kind of a Claude tool; unknown names are `Other` (the raw name is kept
/// beside it in the event).
pub fn kind_of(name: &str) -> ToolKind {
    match name {
        "Bash" => ToolKind::Shell,
        "Read" => ToolKind::FileRead,
        "Write" | "Edit" | "MultiEdit" | "NotebookEdit" => ToolKind::FileWrite,
        "Glob" | "Grep" => ToolKind::Search,
        "WebFetch" | "WebSearch" => ToolKind::Web,
        "Task" | "Agent" => ToolKind::Subagent,
        _ if name.starts_with("mcp__") => ToolKind::Mcp,
        _ => ToolKind::Other,
    }
}

/// The input field naming the file a writing tool changes.
pub fn written_path_field(name: &str) -> Option<&'static str> {
    match name {
        "Write" | "Edit" | "MultiEdit" => Some("file_path"),
        "NotebookEdit" => Some("notebook_path"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_map_to_kinds() {
        let cases = [
            ("Bash", ToolKind::Shell),
            ("Read", ToolKind::FileRead),
            ("Write", ToolKind::FileWrite),
            ("Edit", ToolKind::FileWrite),
            ("MultiEdit", ToolKind::FileWrite),
            ("NotebookEdit", ToolKind::FileWrite),
            ("Glob", ToolKind::Search),
            ("Grep", ToolKind::Search),
            ("WebFetch", ToolKind::Web),
            ("WebSearch", ToolKind::Web),
            ("mcp__github__create_issue", ToolKind::Mcp),
            ("Task", ToolKind::Subagent),
            ("Agent", ToolKind::Subagent),
            ("TodoWrite", ToolKind::Other),
            ("bash", ToolKind::Other),
            ("", ToolKind::Other),
        ];
        for (name, kind) in cases {
            assert_eq!(kind_of(name), kind, "{name}");
        }
        assert_eq!(written_path_field("NotebookEdit"), Some("notebook_path"));
        assert_eq!(written_path_field("Read"), None);
    }
}
