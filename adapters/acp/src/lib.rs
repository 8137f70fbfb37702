//! Any Agent Client Protocol agent as a forge provider (`kind = "acp"` in forge.toml).
//!
//! ACP is JSON-RPC 2.0, one message per line over the agent's stdio, and bidirectional: the
//! agent asks its client to read and write files and to approve tool calls. The runtime
//! spawns the agent with stdin open ([`forge_ports::Invocation::stdin_open`]); per stdout line
//! the [`session::AcpSession`] answers (the client side: `initialize`, `session/new` or
//! `session/load` / `session/resume`, the mode, `session/prompt`, `fs/*`, `terminal/*`,
//! `session/request_permission`) and the [`decode::AcpDecoder`] turns the line into events.
//! Both read the messages with the official SDK's schema types (`agent-client-protocol`)
//! and follow the conversation with a [`flow::Flow`] each, so they agree without sharing
//! state.
//!
//! `terminal/*` is advertised and served through the `ProcessRunner` port
//! ([`terminal::AcpTerminals`]); the three agents forge is verified with (gemini 0.61,
//! codex-acp 0.16, claude-agent-acp 0.23) never ask for a terminal and run commands
//! themselves, in their own process group under forge's.

mod ask;
pub mod decode;
pub mod flow;
pub mod provider;
pub mod rpc;
pub mod session;
pub mod terminal;

use std::sync::Arc;

use forge_domain::ProviderId;
use forge_ports::{Provider, ProviderSettings};

pub use decode::AcpDecoder;
pub use provider::AcpProvider;
pub use session::AcpSession;

/// The kind name in `forge.toml` (`kind = "acp"`).
pub const KIND: &str = "acp";

/// Update kinds this decoder keeps whole as `AgentEvent::Unknown` on purpose: they describe
/// the session (its commands, mode, options, title), not the run.
pub const PASSTHROUGH_KINDS: &[&str] = &[
    "available_commands_update",
    "current_mode_update",
    "config_option_update",
    "session_info_update",
    // Its cost is read into the result; the context window sizes are kept raw.
    "usage_update",
    "permission",
    // gemini's announcement of the mode forge set, kept out of the answer's text.
    "mode_update",
];

/// The provider named `id`, built from its settings (`command`, `env`, `modes`, …).
pub fn provider(id: ProviderId, settings: ProviderSettings) -> Arc<dyn Provider> {
    Arc::new(AcpProvider::new(id, settings))
}
