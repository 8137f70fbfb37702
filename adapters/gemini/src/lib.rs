//! Gemini CLI provider: argv builder and stream-json decoder.
//!
//! A pure translator between forge and `gemini` (Google's Gemini CLI, written against
//! 0.61.0, supported `>=0.50.0, <1.0.0`):
//!
//! - **Invocation** ([`argv`]): `gemini --output-format stream-json -p "" [-m M]
//!   [--approval-mode default|auto_edit|yolo|plan] [--allowed-tools a,b]
//!   [--include-directories d1,d2] [--resume ID] <settings.args> <extra_args>`, the prompt
//!   on stdin. gemini appends the `-p` text to piped stdin, and an empty `-p` still means
//!   headless mode, so the model receives exactly the prompt.
//! - **Trusted folder**: headless gemini refuses untrusted folders (exit 55) since 0.41;
//!   every invocation sets `GEMINI_CLI_TRUST_WORKSPACE=true` (the environment of the
//!   settings or request may override it). `--skip-trust` is avoided: older versions reject
//!   unknown flags.
//! - **Private home** ([`home`]): with a run home, `HOME` and `GEMINI_CLI_HOME` point at it
//!   and `.gemini/settings.json` is written: API-key auth (`GEMINI_API_KEY`) and no usage
//!   statistics, or with `copy_user_auth` a copy of the user's settings and login files.
//!   Max turns (`model.maxSessionTurns`), disallowed tools (`tools.exclude`) and forge's
//!   tool server (`mcpServers`) exist only as settings, so they are written there.
//! - **The user's own home** ([`home_view`]): the same settings go into a run-private
//!   view of the user's gemini home (`GEMINI_CLI_HOME=<run dir>/gemini-home`): links to
//!   every entry of the user's `~/.gemini/` but `settings.json`, which is theirs merged with
//!   forge's. Their auth, sessions and MCP servers keep working, for any user in any
//!   directory, and no file of theirs is written by forge. A workspace `.gemini/settings.json`
//!   that would override max turns or forge's server refuses the run.
//! - **Decoding** ([`decode`]): `init`, `message`, `tool_use`, `tool_result`, `error`,
//!   `result` → canonical events; the `-o json` object too (`decode_document`), and the
//!   `-o json` error object gemini leaves on stderr (in `finish`).
//! - **Exit codes** ([`exit_codes`]): 41 auth, 42 input, 44 sandbox, 52 config, 53 turn
//!   limit, 54 tool, 55 untrusted folder, 130 cancelled, and API errors as HTTP status
//!   mod 256 (401 → 145, 429 → 173, 500 → 244), each mapped to a typed error with a hint.

pub mod argv;
pub mod cost;
pub mod decode;
pub mod exit_codes;
mod framing;
pub mod health;
pub mod home;
pub mod home_view;
pub mod json_output;
pub mod mcp;
pub mod provider;
mod report;
mod result;
pub mod retries;
pub mod stderr;
pub mod tools;
pub mod travel;
pub mod wire;

use std::sync::Arc;

use forge_domain::ProviderId;
use forge_ports::{Provider, ProviderSettings};

pub use decode::{DecoderConfig, GeminiDecoder};
pub use provider::GeminiProvider;

/// Event kinds this decoder knows and deliberately keeps whole as `AgentEvent::Unknown`:
/// none: every kind gemini 0.61 prints maps to a canonical event.
/// Any other `Unknown` kind in a recorded transcript is drift: the drift test
/// (`cli/tests/suite/drift.rs`) fails naming it.
pub const PASSTHROUGH_KINDS: &[&str] = &[];

/// The provider's registry name.
pub const ID: &str = "gemini";

/// [`ID`] as a checked id.
pub fn provider_id() -> ProviderId {
    forge_adapter_support::provider::checked_id(ID)
}

/// The provider, built from its settings.
pub fn provider(settings: ProviderSettings) -> Arc<dyn Provider> {
    Arc::new(GeminiProvider::new(settings))
}
