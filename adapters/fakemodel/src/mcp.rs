//! Calling the MCP tools a CLI was given (forge's tool server, named `forge`), the way each
//! CLI spells them: Claude `mcp__forge__<tool>`, Gemini `mcp_forge_<tool>`, Codex a function
//! `<tool>` in namespace `mcp__forge`, reachable only after a client-side `tool_search` for
//! models Codex knows. Also reads the last tool result back out of a request, so a scenario
//! can echo it (`{last_tool_output}` in a turn's text).

use serde_json::{Value, json};

use crate::tools::{CallPayload, ConcreteCall, Vendor};

/// The MCP server name the calls address.
pub const SERVER: &str = "forge";

/// Replaced in a turn's text by the last tool result the request carries.
pub const LAST_TOOL_OUTPUT: &str = "{last_tool_output}";

/// Codex's namespace of the server's tools.
pub fn codex_namespace() -> String {
    format!("mcp__{SERVER}")
}

/// The call of MCP tool `tool` with `arguments`, as `vendor`'s CLI expects it.
pub fn map_mcp(vendor: Vendor, tool: &str, arguments: &Value) -> ConcreteCall {
    let args = if arguments.is_null() {
        json!({})
    } else {
        arguments.clone()
    };
    match vendor {
        Vendor::Anthropic => ConcreteCall {
            name: format!("mcp__{SERVER}__{tool}"),
            payload: CallPayload::Json(args),
        },
        Vendor::Gemini => ConcreteCall {
            name: format!("mcp_{SERVER}_{tool}"),
            payload: CallPayload::Json(args),
        },
        Vendor::OpenAi => ConcreteCall {
            name: tool.to_owned(),
            payload: CallPayload::Namespaced {
                namespace: codex_namespace(),
                args,
            },
        },
    }
}

/// The `tool_search` call Codex must answer before the namespace is callable.
pub fn tool_search_call() -> ConcreteCall {
    ConcreteCall {
        name: "tool_search".to_owned(),
        payload: CallPayload::ToolSearch(json!({"query": SERVER, "limit": 8})),
    }
}

/// Whether a Codex request must search first: it offers `tool_search` and neither lists the
/// namespace among its tools nor carries a search result that loaded it.
pub fn codex_needs_search(body: &Value) -> bool {
    let namespace = codex_namespace();
    let tools = body.get("tools").and_then(Value::as_array);
    let offers_search = tools.into_iter().flatten().any(|t| {
        t.get("type").and_then(Value::as_str) == Some("tool_search")
            || t.get("name").and_then(Value::as_str) == Some("tool_search")
    });
    let listed = tools
        .into_iter()
        .flatten()
        .any(|t| t.get("name").and_then(Value::as_str) == Some(namespace.as_str()));
    let searched = body
        .get("input")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .any(|item| item.get("type").and_then(Value::as_str) == Some("tool_search_output"));
    offers_search && !listed && !searched
}

/// The text of the last tool result in a request, in `vendor`'s shape.
pub fn last_tool_output(vendor: Vendor, body: &Value) -> Option<String> {
    match vendor {
        Vendor::Anthropic => body
            .get("messages")?
            .as_array()?
            .iter()
            .rev()
            .filter_map(|m| m.get("content").and_then(Value::as_array))
            .flat_map(|blocks| blocks.iter().rev())
            .find(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"))
            .and_then(|b| b.get("content"))
            .map(text_of),
        Vendor::OpenAi => body
            .get("input")?
            .as_array()?
            .iter()
            .rev()
            .find(|i| i.get("type").and_then(Value::as_str) == Some("function_call_output"))
            .and_then(|i| i.get("output"))
            .map(text_of),
        Vendor::Gemini => body
            .get("contents")?
            .as_array()?
            .iter()
            .rev()
            .filter_map(|c| c.get("parts").and_then(Value::as_array))
            .flat_map(|parts| parts.iter().rev())
            .find_map(|p| p.pointer("/functionResponse/response"))
            .map(|r| r.get("output").map_or_else(|| text_of(r), text_of)),
    }
}

/// A string as is; an array of content blocks as their texts joined; anything else as JSON.
fn text_of(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .map(|b| b.get("text").map_or_else(|| text_of(b), text_of))
            .collect::<Vec<_>>()
            .join("\n"),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_cli_gets_its_own_spelling() {
        let args = json!({"text": "hi"});
        assert_eq!(
            map_mcp(Vendor::Anthropic, "echo", &args).name,
            "mcp__forge__echo"
        );
        assert_eq!(
            map_mcp(Vendor::Gemini, "echo", &args).name,
            "mcp_forge_echo"
        );
        let codex = map_mcp(Vendor::OpenAi, "echo", &Value::Null);
        assert_eq!(codex.name, "echo");
        assert_eq!(
            codex.payload,
            CallPayload::Namespaced {
                namespace: "mcp__forge".into(),
                args: json!({})
            }
        );
    }

    #[test]
    fn codex_searches_only_until_the_namespace_is_loaded() {
        let check = |body: Value, want: bool| assert_eq!(codex_needs_search(&body), want, "{body}");
        check(
            json!({"tools": [{"type": "tool_search"}], "input": []}),
            true,
        );
        check(
            json!({"tools": [{"type": "function", "name": "exec_command"}]}),
            false,
        );
        check(
            json!({"tools": [{"type": "tool_search"}], "input": [{"type": "tool_search_output"}]}),
            false,
        );
        check(
            json!({"tools": [{"type": "tool_search"}, {"type": "namespace", "name": "mcp__forge"}]}),
            false,
        );
    }

    #[test]
    fn the_last_tool_result_is_read_in_each_shape() {
        let check = |vendor, body: Value, want: &str| {
            assert_eq!(
                last_tool_output(vendor, &body).as_deref(),
                Some(want),
                "{body}"
            );
        };
        check(
            Vendor::Anthropic,
            json!({"messages": [{"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "t", "content": [{"type": "text", "text": "old"}]}]},
                {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "u", "content": [{"type": "text", "text": "new"}]}]}]}),
            "new",
        );
        check(
            Vendor::OpenAi,
            json!({"input": [{"type": "function_call_output", "call_id": "c", "output": "out"}]}),
            "out",
        );
        check(
            Vendor::Gemini,
            json!({"contents": [{"role": "user", "parts": [
                {"functionResponse": {"name": "x", "response": {"output": "gem"}}}]}]}),
            "gem",
        );
        assert_eq!(
            last_tool_output(Vendor::OpenAi, &json!({"input": []})),
            None
        );
    }
}
