//! Pointing claude at forge's tool server: an `--mcp-config` file in the run's directory
//! (`alwaysLoad`, so the tools are sent at once and start-up waits for the connection),
//! `--strict-mcp-config` unless the request brings its own servers, and the server's tools
//! allowed (headless runs deny MCP tools otherwise).

use forge_domain::ExecutionRequest;
use forge_domain::hosted_tool::TOOL_SERVER_NAME;
use forge_ports::{FileSource, InvocationContext, PreparedFile};
use serde_json::json;

/// The name claude's `--allowedTools` takes for every tool of forge's server.
pub fn allowed_tools_entry() -> String {
    format!("mcp__{TOOL_SERVER_NAME}")
}

/// The extra argv and the config file, when the run has a tool server.
pub fn args_and_file(
    request: &ExecutionRequest,
    ctx: &InvocationContext,
) -> Option<(Vec<String>, PreparedFile)> {
    let mcp = ctx.mcp.as_ref()?;
    let config = json!({"mcpServers": {TOOL_SERVER_NAME: {
        "type": "http",
        "url": mcp.url,
        "headers": {"Authorization": format!("Bearer {}", mcp.bearer_token)},
        "alwaysLoad": true,
    }}});
    let path = ctx.run_dir.join("forge-mcp.json");
    let mut args = vec!["--mcp-config".to_owned(), path.display().to_string()];
    if request.mcp_config.is_none() {
        args.push("--strict-mcp-config".to_owned());
    }
    let file = PreparedFile {
        path,
        source: FileSource::Contents(config.to_string().into_bytes()),
    };
    Some((args, file))
}
