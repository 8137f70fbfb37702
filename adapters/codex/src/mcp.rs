//! Pointing codex at forge's tool server: `-c mcp_servers.forge.*` overrides (url, the bearer
//! token read from an environment variable so it never shows in argv, and every tool
//! approved: `codex exec` never asks, so an unapproved MCP call just fails).

use forge_domain::hosted_tool::TOOL_SERVER_NAME;
use forge_ports::InvocationContext;

use crate::home::toml_string;

/// The variable codex reads the bearer token from.
pub const TOKEN_ENV: &str = "FORGE_MCP_BEARER_TOKEN";

/// The `-c` overrides and the token variable, when the run has a tool server.
pub fn args_and_env(ctx: &InvocationContext) -> Option<(Vec<String>, (String, String))> {
    let mcp = ctx.mcp.as_ref()?;
    let key = |field: &str| format!("mcp_servers.{TOOL_SERVER_NAME}.{field}");
    let overrides = [
        format!("{}={}", key("url"), toml_string(&mcp.url)),
        format!("{}={}", key("bearer_token_env_var"), toml_string(TOKEN_ENV)),
        format!(
            "{}={}",
            key("default_tools_approval_mode"),
            toml_string("approve")
        ),
    ];
    let args = overrides
        .into_iter()
        .flat_map(|value| ["-c".to_owned(), value])
        .collect();
    Some((args, (TOKEN_ENV.to_owned(), mcp.bearer_token.clone())))
}
