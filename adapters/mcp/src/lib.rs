//! forge-adapter-mcp: the tool-calling engine's host.
//!
//! Each run with registered tools gets its own streamable-HTTP MCP server (rmcp, mounted in
//! axum) on `127.0.0.1:0`, behind a bearer token made for the run. It lists only the
//! registered tools and answers `tools/call` by running the handler on its own task: an
//! error, a panic or a timeout becomes an error result the agent sees (and a record the run
//! keeps); a path argument that leaves the workspace is refused before the handler runs; an
//! unknown name is a protocol error. `stop` (or drop) ends the server and frees the port.

mod auth;
mod engine;
mod host;
mod service;

pub use engine::{Answer, Engine};
pub use host::{McpToolHost, McpToolServer};
