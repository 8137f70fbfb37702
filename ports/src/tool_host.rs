//! The tool-calling engine's host: serves the registered tools to one run's CLI (over MCP),
//! and hands back forge's record of every call when the run ends.

use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use forge_domain::{ForgeError, HostedTool, RunId, ToolExecution};
use serde_json::Value;

use crate::workspace::Workspace;

/// What a handler knows about the call it serves.
#[derive(Clone)]
pub struct ToolContext {
    pub run_id: RunId,
    /// The run's workspace root (canonical).
    pub workspace_root: PathBuf,
    /// Sandboxed file access: resolve or read paths through this, never around it.
    pub workspace: Arc<dyn Workspace>,
}

/// The code behind one registered tool.
#[async_trait]
pub trait ToolHandler: Send + Sync {
    /// Runs the tool with the agent's arguments (path arguments already resolved to
    /// absolute paths inside the workspace).
    ///
    /// # Errors
    /// Any [`ForgeError`]: the agent gets its message as an error result; the run records a
    /// [`ForgeError::ToolExecution`] (or the error itself when it is a
    /// [`ForgeError::WorkspaceSecurity`]) unless the tool's error policy says otherwise.
    async fn call(&self, args: Value, ctx: ToolContext) -> Result<Value, ForgeError>;
}

/// A tool and its handler, as registered.
#[derive(Clone)]
pub struct RegisteredTool {
    pub tool: HostedTool,
    pub handler: Arc<dyn ToolHandler>,
}

/// Where a run's CLI reaches the tool server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpEndpoint {
    /// `http://127.0.0.1:<port>/mcp`.
    pub url: String,
    /// Sent as `Authorization: Bearer <token>`; anything else is refused.
    pub bearer_token: String,
    /// The registered tools' names (for CLIs that allow tools one by one).
    pub tool_names: Vec<String>,
}

/// One run's tools, for [`ToolHost::start`].
#[derive(Clone)]
pub struct ToolRun {
    pub run_id: RunId,
    pub workspace_root: PathBuf,
    pub workspace: Arc<dyn Workspace>,
    pub tools: Arc<[RegisteredTool]>,
}

/// Starts one tool server per run.
#[async_trait]
pub trait ToolHost: Send + Sync {
    /// Starts a server for `run` on a loopback port with a fresh bearer token.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when it cannot listen.
    async fn start(&self, run: ToolRun) -> Result<Box<dyn ToolServer>, ForgeError>;
}

/// A running tool server. Dropping it stops it too; [`ToolServer::stop`] also waits until
/// the port is free and returns the record.
#[async_trait]
pub trait ToolServer: Send + Sync {
    fn endpoint(&self) -> &McpEndpoint;

    /// Stops serving (in-flight calls are abandoned), frees the port, and returns every call
    /// answered, in order.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when the server task failed.
    async fn stop(self: Box<Self>) -> Result<Vec<ToolExecution>, ForgeError>;
}
