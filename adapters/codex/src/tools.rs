//! Codex item types that are tool calls, and their canonical kinds. Codex names the item, not
//! the model-facing tool (`exec_command`, `apply_patch`), so the item type is the tool name.

use forge_domain::ToolKind;

/// The kind of a tool-call item type; `None` for items that are not tool calls.
pub fn tool_kind(item_type: &str) -> Option<ToolKind> {
    match item_type {
        "command_execution" => Some(ToolKind::Shell),
        "file_change" => Some(ToolKind::FileWrite),
        "mcp_tool_call" => Some(ToolKind::Mcp),
        "web_search" => Some(ToolKind::Web),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_items_map_to_kinds() {
        assert_eq!(tool_kind("command_execution"), Some(ToolKind::Shell));
        assert_eq!(tool_kind("file_change"), Some(ToolKind::FileWrite));
        assert_eq!(tool_kind("mcp_tool_call"), Some(ToolKind::Mcp));
        assert_eq!(tool_kind("web_search"), Some(ToolKind::Web));
        assert_eq!(tool_kind("todo_list"), None);
        assert_eq!(tool_kind("agent_message"), None);
    }
}
