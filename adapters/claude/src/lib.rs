//! Claude Code provider: argv builder and stream-json decoder.
//!
//! A pure translator. [`ClaudeProvider::invocation`](forge_ports::Provider::invocation)
//! turns a request into `claude -p --output-format stream-json --verbose` with the prompt on
//! stdin; [`ClaudeDecoder`] turns each stdout line into canonical events (one borrowed parse
//! per line) and the end of the run into result pieces. It spawns nothing itself: `detect`
//! probes `claude --version` / `claude auth status` through the `ProcessRunner` port.

use std::sync::Arc;

use forge_domain::ProviderId;
use forge_ports::{Provider, ProviderSettings};

pub mod argv;
pub mod ask;
pub mod decode;
pub mod health;
pub mod hints;
pub mod home;
pub mod mcp;
pub mod provider;
pub mod result;
mod run_cost;
pub mod tools;
pub mod travel;
pub mod wire;

pub use argv::DEFAULT_BINARY;
pub use decode::ClaudeDecoder;
pub use health::SUPPORTED_VERSIONS;
pub use home::UserPaths;
pub use provider::ClaudeProvider;

/// Event kinds this decoder knows and deliberately keeps whole as `AgentEvent::Unknown`:
/// progress notes (`status: "requesting"`, thinking token counts) with no canonical event.
/// Any other `Unknown` kind in a recorded transcript is drift: the drift test
/// (`cli/tests/suite/drift.rs`) fails naming it.
pub const PASSTHROUGH_KINDS: &[&str] = &["system/status", "system/thinking_tokens"];

/// The registry name.
pub const ID: &str = "claude";

/// [`ID`] as a checked id.
pub fn provider_id() -> ProviderId {
    forge_adapter_support::provider::checked_id(ID)
}

/// The Claude Code provider, configured by `settings`.
pub fn provider(settings: ProviderSettings) -> Arc<dyn Provider> {
    Arc::new(ClaudeProvider::new(settings))
}
