//! `McpToolHost`: one streamable-HTTP MCP server per run on 127.0.0.1:0, behind a fresh
//! bearer token, stopped (port freed) by `stop` or by dropping the server.

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use axum::Router;
use forge_domain::{ForgeError, ToolExecution};
use forge_ports::{McpEndpoint, ToolContext, ToolHost, ToolRun, ToolServer};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::auth::{Expected, fresh_token, require_bearer};
use crate::engine::Engine;
use crate::service::ForgeTools;

/// How long `stop` waits for open connections before it drops them.
const STOP_GRACE: Duration = Duration::from_secs(2);

/// Starts forge's tool server for a run.
#[derive(Debug, Clone, Default)]
pub struct McpToolHost;

impl McpToolHost {
    pub fn new() -> Self {
        Self
    }
}

#[async_trait]
impl ToolHost for McpToolHost {
    async fn start(&self, run: ToolRun) -> Result<Box<dyn ToolServer>, ForgeError> {
        Ok(Box::new(McpToolServer::start(run).await?))
    }
}

/// A running server. Dropping it cancels the server task.
pub struct McpToolServer {
    endpoint: McpEndpoint,
    addr: SocketAddr,
    engine: Arc<Engine>,
    cancel: CancellationToken,
    task: Option<JoinHandle<std::io::Result<()>>>,
}

impl McpToolServer {
    /// Binds 127.0.0.1:0 and serves `run`'s tools on `/mcp`.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when it cannot listen.
    pub async fn start(run: ToolRun) -> Result<Self, ForgeError> {
        let tool_names = run.tools.iter().map(|t| t.tool.name.to_string()).collect();
        let engine = Arc::new(Engine::new(
            run.tools,
            ToolContext {
                run_id: run.run_id,
                workspace_root: run.workspace_root,
                workspace: run.workspace,
            },
        ));
        let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .await
            .map_err(|e| ForgeError::io("tool server: bind 127.0.0.1:0", e))?;
        let addr = listener
            .local_addr()
            .map_err(|e| ForgeError::io("tool server: read the bound address", e))?;
        let token = fresh_token();
        let cancel = CancellationToken::new();

        // Stateless, plain JSON replies: every CLI accepts them, and no session outlives a call.
        let config = StreamableHttpServerConfig::default()
            .with_legacy_session_mode(false)
            .with_json_response(true)
            .with_sse_keep_alive(None)
            .with_cancellation_token(cancel.child_token());
        let handler = ForgeTools::new(Arc::clone(&engine));
        let service = StreamableHttpService::new(
            move || Ok(handler.clone()),
            Arc::new(LocalSessionManager::default()),
            config,
        );
        let app = Router::new().nest_service("/mcp", service).layer(
            axum::middleware::from_fn_with_state(
                Expected(Arc::from(token.as_str())),
                require_bearer,
            ),
        );
        let stop = cancel.clone();
        let task = tokio::spawn(async move {
            axum::serve(listener, app)
                .with_graceful_shutdown(async move { stop.cancelled().await })
                .await
        });
        Ok(Self {
            endpoint: McpEndpoint {
                url: format!("http://{addr}/mcp"),
                bearer_token: token,
                tool_names,
            },
            addr,
            engine,
            cancel,
            task: Some(task),
        })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }
}

impl Drop for McpToolServer {
    fn drop(&mut self) {
        self.cancel.cancel();
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

#[async_trait]
impl ToolServer for McpToolServer {
    fn endpoint(&self) -> &McpEndpoint {
        &self.endpoint
    }

    async fn stop(mut self: Box<Self>) -> Result<Vec<ToolExecution>, ForgeError> {
        self.cancel.cancel();
        let outcome = match self.task.take() {
            Some(mut task) => match tokio::time::timeout(STOP_GRACE, &mut task).await {
                Ok(Ok(Ok(()))) => Ok(()),
                Ok(Ok(Err(e))) => Err(ForgeError::io("tool server", e)),
                Ok(Err(e)) if e.is_cancelled() => Ok(()),
                Ok(Err(e)) => Err(ForgeError::io("tool server task", e)),
                // Connections still open (a CLI that kept one alive): drop them.
                Err(_) => {
                    task.abort();
                    let _ = task.await;
                    Ok(())
                }
            },
            None => Ok(()),
        };
        let record = self.engine.take_record();
        outcome.map(|()| record)
    }
}
