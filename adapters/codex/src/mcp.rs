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

#[cfg(test)]
mod tests {
    use forge_domain::RunId;
    use forge_ports::McpEndpoint;

    use super::*;

    #[test]
    fn the_server_is_configured_with_c_overrides_and_the_token_in_the_environment() {
        let mut ctx = InvocationContext {
            run_id: RunId::new("r1").unwrap(),
            run_dir: "/runs/r1".into(),
            home: None,
            in_repository: None,
            resumed_usage: None,
            mcp: None,
        };
        assert!(args_and_env(&ctx).is_none());
        ctx.mcp = Some(McpEndpoint {
            url: "http://127.0.0.1:4242/mcp".into(),
            bearer_token: "tok".into(),
            tool_names: vec![],
        });
        let (args, env) = args_and_env(&ctx).unwrap();
        assert_eq!(
            args,
            [
                "-c",
                r#"mcp_servers.forge.url="http://127.0.0.1:4242/mcp""#,
                "-c",
                r#"mcp_servers.forge.bearer_token_env_var="FORGE_MCP_BEARER_TOKEN""#,
                "-c",
                r#"mcp_servers.forge.default_tools_approval_mode="approve""#,
            ]
        );
        assert_eq!(env, ("FORGE_MCP_BEARER_TOKEN".into(), "tok".into()));
        // The sandbox lets exactly this variable through to the agent.
        assert!(forge_domain::sandbox::env::RUN_MARKERS.contains(&TOKEN_ENV));
        assert!(
            !args.iter().any(|a| a.contains("tok\"")),
            "no token in argv"
        );
    }
}
