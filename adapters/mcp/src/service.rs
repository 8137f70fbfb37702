//! The MCP face of the engine: `tools/list` and `tools/call`, and nothing else.

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
    ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Map, Value};

use crate::engine::{Answer, Engine};

/// One run's MCP server handler (a cheap clone per session).
#[derive(Clone)]
pub struct ForgeTools {
    engine: Arc<Engine>,
    listed: Arc<[Tool]>,
}

impl ForgeTools {
    pub fn new(engine: Arc<Engine>) -> Self {
        let listed = engine.tools().iter().map(|t| describe(&t.tool)).collect();
        Self { engine, listed }
    }
}

/// A registered tool as MCP lists it.
fn describe(tool: &forge_domain::HostedTool) -> Tool {
    let schema = match &tool.input_schema {
        Value::Object(map) => {
            let mut map = map.clone();
            map.entry("type").or_insert_with(|| Value::from("object"));
            map
        }
        _ => Map::new(),
    };
    Tool::new(tool.name.to_string(), tool.description.clone(), schema).with_annotations(
        ToolAnnotations::new()
            .read_only(tool.annotations.read_only)
            .destructive(tool.annotations.destructive),
    )
}

/// The CLI's id of the call, when it passes one along in `_meta` (Claude Code does).
fn call_id_of(meta: Option<&rmcp::model::RequestMetaObject>) -> Option<String> {
    let meta = meta?;
    meta.iter()
        .find(|(key, _)| {
            let key = key.to_ascii_lowercase();
            key.ends_with("tooluseid") || key.ends_with("tool_use_id") || key.ends_with("call_id")
        })
        .and_then(|(_, value)| value.as_str())
        .map(str::to_owned)
}

impl ServerHandler for ForgeTools {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("forge", env!("CARGO_PKG_VERSION")))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.listed.to_vec()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.listed.iter().find(|t| t.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let call_id = call_id_of(request.meta.as_ref());
        let args = request.arguments.unwrap_or_default();
        match self.engine.call(&request.name, args, call_id).await {
            Answer::Ok(text) => Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into()),
            Answer::ToolError(text) => {
                Ok(CallToolResult::error(vec![ContentBlock::text(text)]).into())
            }
            Answer::Unknown(text) => Err(ErrorData::invalid_params(text, None)),
        }
    }
}
