//! Codex provider: argv builder and `codex exec --json` decoder.
//!
//! A pure translator: request → [`forge_ports::Invocation`] (`codex exec --json … -`, prompt
//! on stdin), stdout line → canonical [`forge_domain::AgentEvent`]s, end → result pieces.
//! It spawns nothing itself; `detect` runs `codex --version` and `codex login status` through
//! the [`forge_ports::ProcessRunner`] port.

pub mod argv;
pub mod config_model;
pub mod decode;
pub mod features;
pub mod health;
pub mod home;
mod items;
pub mod mcp;
pub mod provider;
mod result;
mod retry;
pub mod rollout;
pub mod tools;
pub mod travel;
mod wire;

use std::sync::Arc;

use forge_domain::ProviderId;
use forge_ports::{Provider, ProviderSettings};

pub use argv::{DEFAULT_BINARY, INSTALL_HINT};
pub use decode::CodexDecoder;
pub use features::{CliFeatures, PINNED_VERSION, SUPPORTED_RANGE};
pub use home::{MOCK_API_KEY_ENV, mock_provider_config};
pub use provider::CodexProvider;

/// Event kinds this decoder knows and deliberately keeps whole as `AgentEvent::Unknown`:
/// none: every kind codex 0.169 prints maps to a canonical event.
/// Any other `Unknown` kind in a recorded transcript is drift: the drift test
/// (`cli/tests/suite/drift.rs`) fails naming it.
pub const PASSTHROUGH_KINDS: &[&str] = &[];

/// The provider's registry name.
pub const ID: &str = "codex";

/// The provider id `codex`.
pub fn provider_id() -> ProviderId {
    forge_adapter_support::provider::checked_id(ID)
}

/// The Codex provider, configured by `settings`.
pub fn provider(settings: ProviderSettings) -> Arc<dyn Provider> {
    Arc::new(CodexProvider::new(settings))
}
