//! One source's contribution to the configuration: every key optional.

use std::collections::BTreeMap;
use std::path::PathBuf;

use forge_domain::{ModelPrice, OnRateLimit};

use super::source::Source;

/// Global keys and per-provider sections, as one source sets them.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PartialConfig {
    pub default_provider: Option<String>,
    pub timeout_ms: Option<u64>,
    pub kill_grace_ms: Option<u64>,
    /// `wait` or `fail` when a CLI gives up on a rate or usage limit with a reset time.
    pub on_rate_limit: Option<OnRateLimit>,
    pub providers: BTreeMap<String, PartialProvider>,
    /// `[tools.NAME]` command tools, merged by name across layers.
    pub tools: BTreeMap<String, super::tools::ToolConfig>,
}

/// `[providers.<id>]`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PartialProvider {
    pub binary: Option<PathBuf>,
    pub args: Option<Vec<String>>,
    /// Merged per variable across layers.
    pub env: BTreeMap<String, String>,
    pub home: Option<PathBuf>,
    pub isolate_home: Option<bool>,
    pub copy_user_auth: Option<bool>,
    pub model: Option<String>,
    pub fix_model: Option<String>,
    pub timeout_ms: Option<u64>,
    pub max_turns: Option<u32>,
    pub max_budget_usd: Option<f64>,
    pub max_total_cost_usd: Option<f64>,
    /// Merged per model across layers.
    pub pricing: BTreeMap<String, ModelPrice>,
    /// `kind = "acp"`: a provider configured by protocol, under the section's name.
    pub kind: Option<String>,
    /// The agent's argv, with `kind`.
    pub command: Option<Vec<String>>,
    /// forge permission mode → the agent's mode id, with `kind`.
    pub modes: BTreeMap<String, String>,
    /// The authentication method the agent is asked to use, with `kind`.
    pub auth_method: Option<String>,
}

/// A [`PartialConfig`] and where all of its values came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Layer {
    pub source: Source,
    pub config: PartialConfig,
}

impl Layer {
    pub fn new(source: Source, config: PartialConfig) -> Self {
        Self { source, config }
    }

    /// A layer setting one provider's section only.
    pub fn provider(source: Source, id: &str, provider: PartialProvider) -> Self {
        let mut config = PartialConfig::default();
        config.providers.insert(id.to_owned(), provider);
        Self { source, config }
    }
}
