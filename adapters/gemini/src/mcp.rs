//! Pointing gemini at forge's tool server: the server goes into the run's settings
//! (`mcpServers`, gemini has no flag for it) and `--allowed-mcp-server-names forge` lets its
//! tools run headlessly (and keeps any other configured server from connecting).

use forge_domain::hosted_tool::TOOL_SERVER_NAME;
use forge_ports::InvocationContext;
use serde_json::{Value, json};

/// The argv and the settings overlay, when the run has a tool server.
pub fn args_and_overlay(ctx: &InvocationContext) -> Option<(Vec<String>, Value)> {
    let mcp = ctx.mcp.as_ref()?;
    let overlay = json!({"mcpServers": {TOOL_SERVER_NAME: {
        "httpUrl": mcp.url,
        "headers": {"Authorization": format!("Bearer {}", mcp.bearer_token)},
        "trust": true,
    }}});
    let args = vec![
        "--allowed-mcp-server-names".to_owned(),
        TOOL_SERVER_NAME.to_owned(),
    ];
    Some((args, overlay))
}
