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

#[cfg(test)]
mod tests {
    use forge_domain::RunId;
    use forge_ports::McpEndpoint;

    use super::*;

    #[test]
    fn the_server_goes_in_the_settings_and_is_allowed_by_name() {
        let mut ctx = InvocationContext {
            run_id: RunId::new("r1").unwrap(),
            run_dir: "/runs/r1".into(),
            home: Some("/runs/r1/home".into()),
            in_repository: None,
            resumed_usage: None,
            mcp: None,
        };
        assert!(args_and_overlay(&ctx).is_none());
        ctx.mcp = Some(McpEndpoint {
            url: "http://127.0.0.1:4242/mcp".into(),
            bearer_token: "tok".into(),
            tool_names: vec![],
        });
        let (args, overlay) = args_and_overlay(&ctx).unwrap();
        assert_eq!(args, ["--allowed-mcp-server-names", "forge"]);
        assert_eq!(
            overlay,
            json!({"mcpServers": {"forge": {"httpUrl": "http://127.0.0.1:4242/mcp",
                "headers": {"Authorization": "Bearer tok"}, "trust": true}}})
        );
    }
}
