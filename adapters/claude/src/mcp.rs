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

#[cfg(test)]
mod tests {
    use forge_domain::{ProviderId, RunId};
    use forge_ports::McpEndpoint;

    use super::*;

    fn ctx(mcp: Option<McpEndpoint>) -> InvocationContext {
        InvocationContext {
            run_id: RunId::new("r1").unwrap(),
            run_dir: "/runs/r1".into(),
            home: None,
            in_repository: None,
            resumed_usage: None,
            mcp,
        }
    }

    fn endpoint() -> McpEndpoint {
        McpEndpoint {
            url: "http://127.0.0.1:4242/mcp".into(),
            bearer_token: "tok".into(),
            tool_names: vec!["echo".into()],
        }
    }

    #[test]
    fn the_server_goes_in_a_config_file_loaded_at_once_and_strictly() {
        let request = ExecutionRequest::new(ProviderId::new("claude").unwrap(), "p", "/w");
        assert!(args_and_file(&request, &ctx(None)).is_none());
        let (args, file) = args_and_file(&request, &ctx(Some(endpoint()))).unwrap();
        assert_eq!(
            args,
            [
                "--mcp-config",
                "/runs/r1/forge-mcp.json",
                "--strict-mcp-config"
            ]
        );
        let FileSource::Contents(bytes) = file.source else {
            panic!("inline contents expected")
        };
        let config: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(
            config,
            json!({"mcpServers": {"forge": {"type": "http", "url": "http://127.0.0.1:4242/mcp",
                "headers": {"Authorization": "Bearer tok"}, "alwaysLoad": true}}})
        );
        assert_eq!(allowed_tools_entry(), "mcp__forge");

        // The caller's own servers stay allowed: no --strict-mcp-config then.
        let mut own = request.clone();
        own.mcp_config = Some("{}".into());
        let (args, _) = args_and_file(&own, &ctx(Some(endpoint()))).unwrap();
        assert!(!args.contains(&"--strict-mcp-config".to_owned()));
    }
}
