//! Configuration: one documented precedence, every value tagged with where it came from.
//!
//! **Precedence** (highest first): command-line flags > environment > project `forge.toml`
//! (in the workdir) > user config file (`$FORGE_CONFIG`, else
//! `$XDG_CONFIG_HOME/forge-code-agent/config.toml`, else
//! `~/.config/forge-code-agent/config.toml`) > built-in defaults.
//!
//! This module is pure: it never reads a file or the environment. The binary reads them and
//! hands in text and maps; each source becomes one or more [`Layer`]s, and [`merge`] folds
//! them into an [`EffectiveConfig`] whose values are [`Sourced`] (`flag`, `env:NAME`,
//! `file:PATH`, `default`) so `config show` can say where each one came from.
//!
//! Keys (file form; the same names appear in `config show`):
//!
//! ```toml
//! default_provider = "claude"
//! timeout_ms = 1800000        # global fallback deadline of a run
//! kill_grace_ms = 2000        # each grace of the kill ladder (SIGINT → SIGTERM → SIGKILL)
//! on_rate_limit = "wait"      # or "fail" (default): wait out a CLI's rate limit, then resume
//!
//! [providers.codex]
//! binary = "/opt/codex/bin/codex"
//! args = ["--config", "x=1"]
//! env = { RUST_LOG = "warn" }
//! home = "/srv/codex-home"    # a fixed CLI home
//! isolate_home = true         # or: a private home per run
//! copy_user_auth = true
//! model = "gpt-5.5"
//! fix_model = "gpt-5.5"       # recorded for the guarded executor (a later phase)
//! timeout_ms = 600000
//! max_turns = 20
//! max_budget_usd = 1.5
//! max_total_cost_usd = 50.0   # cap across runs: recorded, enforced in a later phase
//!
//! [providers.codex.pricing."gpt-5.5"]
//! input_per_mtok = 1.25
//! cached_input_per_mtok = 0.125
//! output_per_mtok = 10.0
//!
//! [tools.shout]               # a command tool served to the agent over MCP
//! description = "Upper-cases its text"
//! input_schema = { type = "object", properties = { text = { type = "string" } } }
//! command = ["sh", "-c", "tr a-z A-Z"]
//! timeout_ms = 10000
//!
//! [forges.lab]               # a forge pull requests open on (user config only)
//! kind = "gitlab"
//! host = "gitlab.example.com"
//!
//! [review]                    # `review`'s outputs (user config or forge.toml)
//! out_dir = "project/reviews"
//! ```

mod defaults;
mod delivery_file;
mod effective;
mod env;
mod error;
mod file;
mod forges_file;
mod layer;
mod permissions_file;
mod pricing;
mod repository;
mod review_file;
mod sandbox_file;
mod section;
mod source;
mod task_file;
mod tools;

pub use defaults::{DEFAULT_GLOBAL_TIMEOUT_MS, DEFAULT_KILL_GRACE_MS, DEFAULT_PROVIDER, defaults};
pub use delivery_file::{
    DEFAULT_REMOTE, DEFAULT_TELEGRAM_API_BASE, DeliveryConfig, parse_author, parse_delivery_config,
};
pub use effective::{EffectiveConfig, EffectiveProvider, merge};
pub use env::env_layers;
pub use error::ConfigError;
pub use file::parse_file;
pub use forges_file::{ForgesConfig, parse_forges_config, refuse_project_forges};
pub use layer::{Layer, PartialConfig, PartialProvider};
pub use permissions_file::{PermissionsConfig, PermissionsSection, parse_permissions_config};
pub use pricing::{PriceRow, SHIPPED_PRICES, shipped_pricing};
pub use repository::{
    IgnoredKeys, delivery_keys, repository_delivery, repository_layer, repository_task_config,
};
pub use review_file::{DEFAULT_REVIEW_OUT_DIR, ReviewConfig, parse_review_config};
pub use sandbox_file::{SandboxConfig, parse_sandbox_config, refuse_project_sandbox};
pub use source::{Source, Sourced};
pub use task_file::{CacheConfig, TaskConfig, ValidationConfig, parse_task_config};
pub use tools::{ToolConfig, parse_tools};

/// File name of the project configuration, looked up in the workdir.
pub const PROJECT_FILE: &str = "forge.toml";
/// Environment variable naming the user configuration file.
pub const CONFIG_PATH_ENV: &str = "FORGE_CONFIG";
/// Directory (under the XDG config home) and file name of the user configuration.
pub const USER_DIR: &str = "forge-code-agent";
pub const USER_FILE: &str = "config.toml";
